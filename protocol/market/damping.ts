/**
 * Bid damping (DESIGN §5): bids per job stay bounded as the network grows. A provider that could bid waits
 * in proportion to how badly it fits, ⌊(1 − fit) × (D − S)⌋ with D = BID_DELAY_FRACTION × bidWindowMs and
 * S = BID_SPREAD_SHARE × D, plus a suppression timer in [0, S] for ties (below), so better fits bid first and
 * every bid still lands inside the window (the rest of the window absorbs gossip latency).
 * When its turn comes it stays silent if it has already seen ENOUGH_BETTER_BIDS bids at least as good as its
 * own. Bids are bounded because the fit follows the price order (see bidFit in bid-policy.ts): the first
 * providers to bid are the cheapest, and once `enough` of them have, everyone after them is worse.
 *
 * "As good" is judged by the score the award ranks by (scoring.ts), as far as a provider can compute it
 * (`dampingScore`, protocol/README §5.6 "Damping"): a bid that fails the award's screening (`screenBid`)
 * at the window's close, or whose signer is excluded from the round, does not count at all, and every counted bid, the provider's own included, is
 * scored with the public formula at the one prior's reliability (reliability.ts) and the default RTT,
 * because a provider cannot know the requester's views of the other bidders.
 *
 * Ties. Providers with the same fit (a fleet of one model at one floor) would all wait the same delay and
 * bid at once, before any sees another's bid: with 1,213 such providers a job drew ≈ 290 bids. So the
 * damping span (bidDelayFraction of the window) is split: the fit delay takes (1 − BID_SPREAD_SHARE) of it,
 * and a suppression timer (`suppressionDelayMs`) drawn from an exponential-family distribution the rest (Nonnenmacher & Biersack, "Scalable feedback for large groups",
 * IEEE/ACM ToN 1999): t = S × max(0, 1 + ln u / ln G) for a uniform u, so of N tied providers about
 * N × G^(L/S − 1) bid before the first bid (latency L) reaches the rest — a handful for N up to G
 * (`DAMPING_GROUP_SIZE`). u comes from the provider's id, the job and the round (`tieBreakUniform`):
 * pure, the same on every replay, different between providers.
 */
import type { CID } from '../../crypto/index.js'
import { screenBid, type AuctionBid, type AuctionJob } from './award.js'
import { cacheFactor } from './input-cache.js'
import { estimateReliability } from './reliability.js'
import { defaultScoringParams, effectivePrice, type ScoringParams } from './scoring.js'

/** Share of the bid window over which delays spread; the remaining 40 % is left for gossip latency. */
export const BID_DELAY_FRACTION = 0.6

/** Share of the damping span (bidDelayFraction of the window) given to the suppression timer; the fit delay has the rest. */
export const BID_SPREAD_SHARE = 0.25

/** The group size the suppression timers are tuned for: few bids for up to this many tied providers. */
export const DAMPING_GROUP_SIZE = 10_000

/** A provider stays silent after seeing this many bids at least as good as its own. */
export const ENOUGH_BETTER_BIDS = 5

/**
 * The whole damping delay of a provider with `fit` and tie-break uniform `u`: the fit delay over
 * (1 − spreadShare) of the span plus the suppression timer over spreadShare of it, so the sum stays within
 * fraction × bidWindowMs (the floors of the two parts can only shorten it).
 */
export function dampingDelayMs (fit: number, u: number, bidWindowMs: number, fraction: number = BID_DELAY_FRACTION, spreadShare: number = BID_SPREAD_SHARE, groupSize: number = DAMPING_GROUP_SIZE): number {
  const share = Math.min(1, Math.max(0, spreadShare))
  const f = Number.isNaN(fit) ? 0 : Math.min(1, Math.max(0, fit))
  const span = Math.min(1, Math.max(0, fraction)) * Math.max(0, bidWindowMs)
  const spread = span * share
  // the fit part as span − spread (not span × (1 − share): 0.6 × 0.75 × 1000 is 449.99… in floating point)
  return Math.floor((1 - f) * (span - spread)) + suppressionDelayMs(u, bidWindowMs, bidWindowMs > 0 ? spread / bidWindowMs : 0, groupSize)
}

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
 * The suppression timer, whole ms in [0, spread × bidWindowMs]: S × max(0, 1 + ln u / ln G), S = spread ×
 * bidWindowMs, G = groupSize. u outside (0, 1] is clamped (u ≤ 0 or NaN → 0 ms: bids first; u ≥ 1 → S).
 * P(t = 0) = 1/G, and the density grows exponentially towards S, so few tied providers fire early.
 */
export function suppressionDelayMs (u: number, bidWindowMs: number, spread: number = BID_DELAY_FRACTION * BID_SPREAD_SHARE, groupSize: number = DAMPING_GROUP_SIZE): number {
  const s = Math.min(1, Math.max(0, spread)) * Math.max(0, bidWindowMs)
  if (!(u > 0) || s === 0) return 0
  if (u >= 1) return Math.floor(s)
  const g = Math.max(2, groupSize)
  return Math.floor(s * Math.max(0, 1 + Math.log(u) / Math.log(g)))
}

/**
 * A uniform number in (0, 1) for `provider` bidding on `job` in `round`: FNV-1a (32 bits) of the three,
 * joined by newlines, then MurmurHash3's fmix32 finalizer (FNV alone leaves the high bits of ids that
 * differ in their last characters clustered, and the timer reads exactly the low tail of u), as
 * (h + 0.5) / 2³². Deterministic, different between providers and between jobs.
 */
export function tieBreakUniform (provider: string, job: string, round: number): number {
  const text = `${provider}\n${job}\n${round}`
  let h = 0x811c9dc5
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i)
    h = Math.imul(h, 0x01000193) >>> 0
  }
  h ^= h >>> 16
  h = Math.imul(h, 0x85ebca6b) >>> 0
  h ^= h >>> 13
  h = Math.imul(h, 0xc2b2ae35) >>> 0
  h ^= h >>> 16
  return ((h >>> 0) + 0.5) / 4_294_967_296
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
export function dampingScore (price: number, job: AuctionJob, params: ScoringParams = defaultScoringParams, cached?: readonly CID[]): number {
  return effectivePrice({ price, reliability: estimateReliability({ ok: 0, failed: 0 }, params), cacheFactor: cacheFactor(job.payload.workload, cached) }, job.payload.sla.tier, params)
}

/** What `shouldStaySilent` weighs: the job, this provider's ask and the other providers' bids it saw. */
export interface DampingInput {
  job: AuctionJob
  /** This provider's ask, micros per GPU-hour. */
  price: number
  /** The job's inputs this provider's bid will list as cached (input-cache.ts), if any. */
  cached?: readonly CID[] | undefined
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
  const workload = input.job.payload.workload
  const mine = effectivePrice({ price: input.price, reliability, cacheFactor: cacheFactor(workload, input.cached) }, tier, params)
  let better = 0
  for (const bid of input.seen) {
    if (better >= enough) return true
    if (!(effectivePrice({ price: bid.payload.price, reliability, cacheFactor: cacheFactor(workload, bid.payload.cached) }, tier, params) <= mine)) continue
    if (excluded.includes(bid.signer) || screenBid(bid, input.job, input.decidedAt) !== undefined) continue
    better++
  }
  return better >= enough
}
