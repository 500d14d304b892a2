/**
 * When a provider's bid window closes, by its own clock (protocol/README §5.4, "When a provider may bid").
 * The window opens at the requester's `issuedAt` (of the job request, or of the auction round) and lasts
 * `bidWindowMs` by the requester's clock. A provider whose clock runs ahead would see a short window as
 * closed before it arrived if it timed it from `issuedAt`, so it times the window from when it received
 * the job instead — but from no later than `issuedAt` + the clock-skew allowance by its own clock, so a
 * job delivered late, or a clock off by more than the allowance, does not get a fresh window.
 */
import { DEFAULT_CLOCK_SKEW_MS } from '../constants.js'

/**
 * The instant (ms, provider's clock) from which the provider may no longer bid:
 * min(receivedAt, opensAt + clockSkewMs) + bidWindowMs. A provider bids only while its clock reads
 * less than this. (A job issued more than `clockSkewMs` in the provider's future never gets here: it
 * is refused as FUTURE_DATED, §6.3.)
 */
export function bidWindowClosesAt (opensAt: number, bidWindowMs: number, receivedAt: number, clockSkewMs: number = DEFAULT_CLOCK_SKEW_MS): number {
  return Math.min(receivedAt, opensAt + Math.max(0, clockSkewMs)) + Math.max(0, bidWindowMs)
}
