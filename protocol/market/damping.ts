/**
 * Bid damping (DESIGN §5): bids per job stay bounded as the network grows. A provider that could bid waits
 * in proportion to how badly it fits, delay = ⌊(1 − fit) × BID_DELAY_FRACTION × bidWindowMs⌋, so better fits
 * bid first and every bid still lands inside the window (the rest of the window absorbs gossip latency).
 * When its turn comes it stays silent if it has already seen ENOUGH_BETTER_BIDS bids at least as good as its
 * own. Bids are bounded because the fit follows the price order (see bidFit in bid-policy.ts): the first
 * providers to bid are the cheapest, and once `enough` of them have, everyone after them is worse.
 *
 * "As good" is judged by the score the award ranks by (scoring.ts), as far as a provider can compute it
 * (`dampingScore`, protocol/README §5.6 "Damping"): a bid that fails the award's screening (`screenBid`)
 * at the window's close, or whose signer is excluded from the round, does not count at all, and every counted bid, the provider's own included, is
 * scored with the public formula at the one prior's reliability (reliability.ts) and the default RTT,
 * because a provider cannot know the requester's views of the other bidders.
 */
import { screenBid, type AuctionBid, type AuctionJob } from './award.js'
import { estimateReliability } from './reliability.js'
import { defaultScoringParams, effectivePrice, type ScoringParams } from './scoring.js'

/** Share of the bid window over which delays spread; the remaining 40 % is left for gossip latency. */
export const BID_DELAY_FRACTION = 0.6

/** A provider stays silent after seeing this many bids at least as good as its own. */
export const ENOUGH_BETTER_BIDS = 5

/**
 * How long to wait before bidding, in whole ms: ⌊(1 − fit) × fraction × bidWindowMs⌋. A fit outside [0, 1]
 * (or NaN) is clamped (NaN counts as 0), so the delay always lies in [0, fraction × bidWindowMs].
 */
export function bidDelayMs (fit: number, bidWindowMs: number, fraction: number = BID_DELAY_FRACTION): number {
  const f = Number.isNaN(fit) ? 0 : Math.min(1, Math.max(0, fit))
  const share = Math.min(1, Math.max(0, fraction))
  return Math.floor((1 - f) * (share * Math.max(0, bidWindowMs)))
}

/**
 * True once at least `enough` of the seen bids' scores are at least as good as `myScore` (lower wins, e.g.
 * effective price). Equal scores count: an equally good bid serves the requester as well as this one (the
 * final tie-break by bid CID is arbitrary), so the best score is always sent by the first to reach it.
 */
export function stayingSilent (myScore: number, seenScores: Iterable<number>, enough: number = ENOUGH_BETTER_BIDS): boolean {
  let better = 0
  for (const score of seenScores) {
    if (score <= myScore && ++better >= enough) return true
  }
  return better >= enough
}

/**
 * The score damping compares (lower is better): the award's effective price of `price` for `job`'s tier,
 * at the prior's reliability (`estimateReliability` of no outcomes) and the default RTT. The same for
 * every bidder, so a provider's own bid and the others' are weighed alike.
 */
export function dampingScore (price: number, job: AuctionJob, params: ScoringParams = defaultScoringParams): number {
  return effectivePrice({ price, reliability: estimateReliability({ ok: 0, failed: 0 }, params) }, job.payload.sla.tier, params)
}

/** What `shouldStaySilent` weighs: the job, this provider's ask and the other providers' bids it saw. */
export interface DampingInput {
  job: AuctionJob
  /** This provider's ask, micros per GPU-hour. */
  price: number
  /** Other providers' bids for this round (OpenedMessage<'bid'> fits). */
  seen: Iterable<AuctionBid>
  /** When the award will be decided, as this provider estimates it (the round's close): screening's now. */
  decidedAt: number
  /** Providers excluded from the round (§5.4a): their bids are not considered, so they do not count. */
  excluded?: readonly string[] | undefined
  enough?: number
  params?: ScoringParams
}

/**
 * Damping's decision: true once `enough` of the seen bids that pass the award's screening at `decidedAt`
 * (and whose signers are not excluded) score at least as well as this provider's ask (`dampingScore`; equal scores count, see stayingSilent).
 */
export function shouldStaySilent (input: DampingInput): boolean {
  const params = input.params ?? defaultScoringParams
  const excluded = input.excluded ?? []
  const enough = input.enough ?? ENOUGH_BETTER_BIDS
  // stayingSilent over the counted bids' scores, in one pass: a bid scoring worse than this one cannot
  // count, so it is not screened, and the pass stops once `enough` have counted (the same answer)
  const tier = input.job.payload.sla.tier
  const reliability = estimateReliability({ ok: 0, failed: 0 }, params)
  const mine = effectivePrice({ price: input.price, reliability }, tier, params)
  let better = 0
  for (const bid of input.seen) {
    if (better >= enough) return true
    if (!(effectivePrice({ price: bid.payload.price, reliability }, tier, params) <= mine)) continue
    if (excluded.includes(bid.signer) || screenBid(bid, input.job, input.decidedAt) !== undefined) continue
    better++
  }
  return better >= enough
}
