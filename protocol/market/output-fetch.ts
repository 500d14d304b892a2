/**
 * Whether the requester fetches a receipt's outputs again (protocol/README.md §7.7, §7.8): a fetch
 * cut because the provider could not be reached — its connection or stream went away, it did not
 * answer in time, or it did not offer the blob yet (a provider restarting grants its outputs again
 * only once its market is up) — is tried again with back-off, for one lease from the first such
 * failure; only bytes that do not match what the receipt and manifest name fail the attempt at once
 * (`output-mismatch`), as does a provider still unreachable when that lease has run out. Outputs this
 * node fetched and checked but could not store (its own disk) are fetched again the same way, and
 * when the lease runs out the job fails here without blame (`outputs-unsaved`). Pure: the caller
 * classifies the failure and passes the time in.
 */

/** First wait before trying a provider again, ms: the exec stream's re-open and the output fetch share it. */
export const RECONNECT_FIRST_MS = 250
/** Longest wait between tries, ms (the wait doubles from RECONNECT_FIRST_MS up to this). */
export const RECONNECT_MAX_MS = 4_000

/**
 * `unreachable`: the provider could not be reached or did not serve (worth another try); `local`: this
 * node could not store what it fetched and checked (its own disk; worth another try, never the
 * provider's fault); `mismatch`: what it served is wrong.
 */
export type OutputFetchFailure = 'unreachable' | 'local' | 'mismatch'

/** The retries so far of one receipt's output fetch: when the first failed, and the last wait. */
export interface OutputFetchRetries {
  firstFailedAt: number
  wait?: number
}

export type OutputFetchDecision =
  | { retry: true, at: number, retries: OutputFetchRetries }
  | { retry: false, why: 'mismatch' | 'lease' }

/** The next wait of the back-off: RECONNECT_FIRST_MS, doubled after each try, at most RECONNECT_MAX_MS. */
export function nextBackoff (wait: number | undefined): number {
  return wait === undefined ? RECONNECT_FIRST_MS : Math.min(RECONNECT_MAX_MS, wait * 2)
}

/**
 * After a failed fetch at `now`: fetch again at `at`, or give up. A mismatch gives up at once; an
 * unreachable provider, or a local store that failed, is tried again while the next try still falls
 * within `leaseMs` of the first failure (`retries` undefined: this is the first).
 */
export function nextOutputFetch (failure: OutputFetchFailure, retries: OutputFetchRetries | undefined, now: number, leaseMs: number): OutputFetchDecision {
  if (failure === 'mismatch') return { retry: false, why: 'mismatch' }
  const firstFailedAt = retries?.firstFailedAt ?? now
  const wait = nextBackoff(retries?.wait)
  const at = now + wait
  if (at > firstFailedAt + leaseMs) return { retry: false, why: 'lease' }
  return { retry: true, at, retries: { firstFailedAt, wait } }
}
