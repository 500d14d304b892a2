/**
 * What became of one of this provider's bids, read from the award (DESIGN §5: the award names the bids
 * it considered and the winner). Pure: the caller hands in its bid, the award's names and, when it saw
 * it, the winning bid with the score inputs (scoring.ts) it believes the requester used.
 *
 * A loss gets the term of the public scoring rule that decided it:
 *
 *  - `price`: the winner asked less.
 *  - `cache`: the winner asked as much or more, but its cached inputs (input-cache.ts) brought its
 *    effective price below ours.
 *  - `reliability` / `distance`: ask and cache together favoured our bid (or tied it), so the
 *    requester's view of the two providers decided: (1 + w × (1 − reliability)) or the RTT term
 *    (1 + min(cap, per100 × rtt / 100)). The requester's views are its own (DESIGN §7), so the split
 *    rests first on what holds under every view: the distance term moves an effective price by at most
 *    (1 + cap), the reliability term by at most (1 + w_tier). A gap only one of them can close is that
 *    one's; a gap either could close goes to the one whose ratio, under the views handed in (the
 *    caller's best estimate; unknown = the scoring defaults), is the larger against us — ties to
 *    reliability, the requester's private term.
 *  - `tie`: under the views handed in the effective prices are equal and the winner's bid CID sorts
 *    first (scoring's tie-break).
 *  - `not-considered`: the award does not name our bid (it came late, was screened out, or lost in
 *    gossip).
 *
 * A loss whose winning bid the caller never saw has no reason: the winner's ask is unknown.
 */
import {
  compareStrings, defaultScoringParams, distanceFactor, effectivePrice, reliabilityFactor, scoringParamsForJob,
  type ScoringParams
} from './scoring.js'
import type { Tier } from './types.js'

export const LossReason = {
  PRICE: 'price',
  CACHE: 'cache',
  RELIABILITY: 'reliability',
  DISTANCE: 'distance',
  TIE: 'tie',
  NOT_CONSIDERED: 'not-considered'
} as const
export type LossReason = typeof LossReason[keyof typeof LossReason]

/** Every loss reason, in a fixed order (metric labels, API documentation). */
export const LOSS_REASONS: readonly LossReason[] = Object.freeze(Object.values(LossReason))

/** One bid as the outcome reads it. */
export interface OutcomeBid {
  /** The bid's CID, string form. */
  cid: string
  /** Asked price, micros per GPU-hour. */
  price: number
  /** The bid's cached-input factor for its job (award.ts `bidCacheFactor`); undefined = 1. */
  cacheFactor?: number | undefined
  /** The caller's estimate of the requester's reliability view of the bid's signer; undefined = unknown. */
  reliability?: number | undefined
  /** The caller's estimate of the requester's RTT to the bid's signer; undefined = unknown. */
  rttMs?: number | undefined
}

/** The award's names (its payload's `bid`, `winner` and `considered`, as strings). */
export interface OutcomeAward {
  bid: string
  winner: string
  considered: readonly string[]
}

export interface BidOutcomeInput {
  ours: OutcomeBid
  award: OutcomeAward
  /** The winning bid, when the caller saw it; its `cid` must be the award's `bid`. */
  winner?: OutcomeBid | undefined
  tier: Tier
  /** The job's placement (a latency-sensitive job weighs distance more: scoringParamsForJob). */
  placement?: { latencySensitive?: boolean | undefined }
  params?: ScoringParams
}

export type BidOutcome =
  | { outcome: 'won' }
  | { outcome: 'lost', winner: string, reason?: LossReason }

/** bidOutcome was given inputs that do not describe one award (a clear, typed error). */
export class InvalidBidOutcomeInputError extends Error {
  override readonly name = 'InvalidBidOutcomeInputError'
  constructor (readonly field: string, message: string) {
    super(`${field}: ${message}`)
  }
}

function checkBid (field: string, bid: OutcomeBid): void {
  if (typeof bid.cid !== 'string' || bid.cid === '') throw new InvalidBidOutcomeInputError(`${field}.cid`, 'expected a CID string')
  if (!Number.isFinite(bid.price) || bid.price < 0) throw new InvalidBidOutcomeInputError(`${field}.price`, 'expected a finite price ≥ 0')
}

/** The cache factor scoring uses (scoring.ts effectiveCacheFactor, repeated so a bad value reads as 1 here too). */
function cache (bid: OutcomeBid): number {
  const f = bid.cacheFactor
  return f !== undefined && f > 0 && f <= 1 ? f : 1
}

/** Which view term closed a gap of `need` (≥ 1) against our bid: see the file comment. */
function viewTerm (ours: OutcomeBid, winner: OutcomeBid, need: number, tier: Tier, params: ScoringParams): LossReason {
  const maxDistance = 1 + params.maxDistancePenalty
  const maxReliability = 1 + params.tierWeights[tier]
  if (need > maxDistance) return LossReason.RELIABILITY
  if (need > maxReliability) return LossReason.DISTANCE
  const r = reliabilityFactor(ours.reliability, tier, params) / reliabilityFactor(winner.reliability, tier, params)
  const d = distanceFactor(ours.rttMs, params) / distanceFactor(winner.rttMs, params)
  return d > r ? LossReason.DISTANCE : LossReason.RELIABILITY
}

/** Won, or lost and why (see the file comment). Throws InvalidBidOutcomeInputError on inconsistent input. */
export function bidOutcome (input: BidOutcomeInput): BidOutcome {
  const { ours, award, winner, tier } = input
  checkBid('ours', ours)
  if (award.bid === ours.cid) return { outcome: 'won' }
  const lost = { outcome: 'lost', winner: award.winner } as const
  if (!award.considered.includes(ours.cid)) return { ...lost, reason: LossReason.NOT_CONSIDERED }
  if (winner === undefined) return lost
  checkBid('winner', winner)
  if (winner.cid !== award.bid) throw new InvalidBidOutcomeInputError('winner.cid', `the award names ${award.bid}, not ${winner.cid}`)
  if (winner.price < ours.price) return { ...lost, reason: LossReason.PRICE }
  const oursAsk = ours.price * cache(ours)
  const winnerAsk = winner.price * cache(winner)
  if (winnerAsk < oursAsk) return { ...lost, reason: LossReason.CACHE }
  const params = scoringParamsForJob(input.params ?? defaultScoringParams, input.placement ?? {})
  const oursScore = effectivePrice(ours, tier, params)
  const winnerScore = effectivePrice(winner, tier, params)
  if (oursScore === winnerScore && compareStrings(winner.cid, ours.cid) < 0) return { ...lost, reason: LossReason.TIE }
  // a free bid (price 0) that lost to another free bid: no ratio, the views decided
  const need = oursAsk === 0 ? 1 : winnerAsk / oursAsk
  return { ...lost, reason: viewTerm(ours, winner, need, tier, params) }
}
