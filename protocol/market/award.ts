/**
 * The requester's auction decision and its audit (DESIGN §5, protocol/README §5.4–§5.5). Pure: the
 * bids, the requester's views of the providers and the clock come in as arguments; out comes the
 * award's fields (the caller adds `v`, `issuedAt` = the `now` given here, and `expiresAt`, then signs)
 * or the reason there is none.
 *
 * Decision, in order:
 *  1. Screening (view-independent). A bid is dropped when it is for another job (WRONG_JOB), asks more
 *     than the job's maxPrice (OVER_MAX_PRICE), has expired at `now` (EXPIRED), offers fewer GPUs, less
 *     VRAM or another model than the job asks (HARDWARE), lies outside a strict job's regions (REGION),
 *     promises a start later than maxStartDelaySec after `now` (LATE_START), has a payload CID that
 *     several peers signed (CID_CONFLICT: the award names bids by CID, so a CID must name one
 *     signer), comes from a provider the requester convicted on a fraud proof (CONVICTED; its own view,
    like reliability: such a bid is never considered, so the award stays auditable), or comes from an
    excluded provider (EXCLUDED). A job with `placement.maxRttMs` also drops, in the requester's own
    RTT view, providers further away than that or of unknown RTT (TOO_FAR; decideAward only, like
    CONVICTED). The same (CID, signer) received twice
 *     counts once. Of several bids from one signer only the lowest price is kept, ties to the lowest CID
 *     string (DUPLICATE_SIGNER): a provider's best offer, chosen without any view so third parties can
 *     check it.
 *  2. Ranking with `rankBids` (scoring.ts) under the requester's reliability and RTT views, with the
 *     job's scoring parameters (`scoringParamsForJob`: a latency-sensitive job weighs distance more;
 *     every auditor derives the same from the job). At most
 *     MAX_CONSIDERED_BIDS bids, the best ranked, are considered (CONSIDERED_LIMIT for the rest).
 *  3. The best ranked bid wins. `considered` lists the considered bids' CIDs sorted by string.
 *  4. Payment (job.auction.paymentRule):
 *     - `first-price`: the winner's ask.
 *     - `second-score`: the highest integer price at which the winner would still have won against the
 *       runner-up with the same views (its effective price ≤ the runner-up's, ties by CID), never below
 *       its ask and never above maxPrice. With a single considered bid it pays its ask, not maxPrice:
 *       a reserve price of maxPrice would hand a lone bidder the buyer's whole budget, and a sybil
 *       runner-up could force the same, so we keep the buyer-safe choice. The cost: a provider that
 *       expects no competition has a reason to ask above its true cost, as under first-price.
 *
 * Audit. Reliability views are each node's own (DESIGN §7) and the award cannot carry the requester's,
 * so what a third party can check differs from what the requester (or anyone handed its views) can:
 *  - `auditAward` checks what holds under every view: the award is for this job with its payment rule;
 *    `considered` is sorted, unique and contains `bid`; every considered bid is known to the auditor,
 *    passes screening at the award's issuedAt with the award's `excluded`; the winner signed the
 *    winning bid; some admissible view (reliability 0..1, RTT ≥ 0) makes the winner the best; and the
 *    price is the ask (first-price, or a lone bid) or lies in [ask, min(maxPrice, the lowest other
 *    ask × the worst score factor)].
 *  - `verifyAward` additionally recomputes the decision under the views it is given: same views →
 *    same winner and price. A third node passing its own or uniform views learns whether it agrees,
 *    which is not proof of cheating.
 *  - Nobody can check, from the award alone, that the requester considered every bid it received
 *    (gossip may lose bids), nor `attempt`, `leaseMs` and `billingIntervalSec`, nor that the excluded
 *    providers really failed (that is what signed failure reports are for).
 */
import type { CID } from '../../crypto/index.js'
import type { Award } from '../messages/award.js'
import type { Bid } from '../messages/bid.js'
import type { JobRequest } from '../messages/job-request.js'
import {
  compareRanked, compareStrings, defaultScoringParams, rankBids, scoreFactor, scoringParamsForJob, worstScoreFactor,
  type RankedBid, type ScoringParams
} from './scoring.js'
import type { Tier } from './types.js'
import { cacheFactor, cachedFitsJob } from './input-cache.js'
import { modelInFamily, regionWithin, vramMeetsGB } from '../constants.js'
import {
  MAX_AWARD_ATTEMPTS, MAX_BILLING_INTERVAL_SEC, MAX_CONSIDERED_BIDS, MAX_EXCLUDED_PEERS, MAX_LEASE_MS, MIN_BILLING_INTERVAL_SEC,
  MIN_LEASE_MS, SECOND_MS
} from '../limits.js'

/**
 * The award schema's limits on `considered`, `excluded` and `attempt` (protocol/limits.ts), under the
 * names this module's callers know.
 */
export { MAX_CONSIDERED_BIDS as MAX_CONSIDERED, MAX_EXCLUDED_PEERS as MAX_EXCLUDED, MAX_AWARD_ATTEMPTS as MAX_ATTEMPTS } from '../limits.js'

/** A job as the auction reads it: an opened `job-request` (its CID is the job id). */
export interface AuctionJob {
  readonly cid: CID
  readonly payload: JobRequest
}

/** A bid as the auction reads it: an opened `bid` (OpenedMessage<'bid'> fits). */
export interface AuctionBid {
  readonly cid: CID
  /** Peer id of the provider that signed it. */
  readonly signer: string
  readonly payload: Bid
}

/** A node's view of peers (reliability 0..1, or RTT in ms): a map or a lookup; undefined = unknown. */
export type PeerView = ReadonlyMap<string, number> | ((peerId: string) => number | undefined)

/** The award's fields without its header (`v`, `issuedAt`, `expiresAt`), which the caller adds. */
export type AwardFields = Omit<Award, 'v' | 'issuedAt' | 'expiresAt'>

export const BidRejection = {
  WRONG_JOB: 'WRONG_JOB',
  OVER_MAX_PRICE: 'OVER_MAX_PRICE',
  EXPIRED: 'EXPIRED',
  /** Several peers signed the same payload. */
  CID_CONFLICT: 'CID_CONFLICT',
  EXCLUDED: 'EXCLUDED',
  /** The bid offers fewer GPUs, less VRAM per GPU or another model than the job asks for. */
  HARDWARE: 'HARDWARE',
  /** The job's residency is strict and the bid's region is outside its regions. */
  REGION: 'REGION',
  /** The bid promises to start later than the job's maxStartDelaySec after the decision. */
  LATE_START: 'LATE_START',
  /**
   * The bid's `cached` names a CID that is not one of the job's inputs, names one twice, or is out of
   * the job's order (input-cache.ts `cachedFitsJob`).
   */
  BAD_CACHED: 'BAD_CACHED',
  /** The signer has a better bid for this job. */
  DUPLICATE_SIGNER: 'DUPLICATE_SIGNER',
  /** Valid, but ranked beyond MAX_CONSIDERED_BIDS. */
  CONSIDERED_LIMIT: 'CONSIDERED_LIMIT',
  /** The signer is convicted in the requester's view (a verified fraud proof, protocol/README.md §5.9). */
  CONVICTED: 'CONVICTED',
  /**
   * The job has `placement.maxRttMs` and the signer's RTT in the requester's view is above it, or
   * unknown (neither measured nor estimable: such a job fails closed).
   */
  TOO_FAR: 'TOO_FAR'
} as const
export type BidRejection = typeof BidRejection[keyof typeof BidRejection]

export interface RejectedBid {
  cid: string
  signer: string
  reason: BidRejection
}

export interface AwardInput {
  job: AuctionJob
  bids: readonly AuctionBid[]
  /** The requester's reliability view; providers it lacks score at `params.unknownReliability`. */
  reliability?: PeerView
  /** The requester's RTT view; providers it lacks score at `params.defaultRttMs`. */
  rtt?: PeerView
  /** Providers that failed earlier attempts. At most MAX_EXCLUDED_PEERS. */
  excluded?: readonly string[]
  /** Providers convicted on a fraud proof in the requester's view: their bids are screened out (CONVICTED). */
  convicted?: (peer: string) => boolean
  /** 1..MAX_AWARD_ATTEMPTS. */
  attempt: number
  /** Decision time, ms since the epoch; the award's issuedAt should be this. */
  now: number
  /** 1,000..3,600,000. */
  leaseMs: number
  /** 1..86,400. */
  billingIntervalSec: number
  params?: ScoringParams
}

export type AwardDecision =
  | {
    kind: 'award'
    award: AwardFields
    /** The considered bids, best first, with their effective prices. */
    ranking: RankedBid[]
    rejected: RejectedBid[]
  }
  | { kind: 'none', reason: 'NO_BIDS' | 'NO_VALID_BIDS', detail: string, rejected: RejectedBid[] }

/** decideAward was called with values an award cannot carry. */
export class InvalidAwardInputError extends Error {
  override readonly name = 'InvalidAwardInputError'
  constructor (readonly field: string, message: string) {
    super(`${field}: ${message}`)
  }
}

/** The view's value for `peer`, if any. */
export function lookupView (view: PeerView | undefined, peer: string): number | undefined {
  if (view === undefined) return undefined
  return typeof view === 'function' ? view(peer) : view.get(peer)
}

function checkInt (field: string, value: number, min: number, max: number): void {
  if (!Number.isInteger(value) || value < min || value > max) throw new InvalidAwardInputError(field, `expected an integer in ${min}..${max}`)
}

/** Sorted, unique peer ids. */
function sortedUnique (peers: readonly string[]): string[] {
  return [...new Set(peers)].sort(compareStrings)
}

function compareRejected (a: RejectedBid, b: RejectedBid): number {
  return compareStrings(a.cid, b.cid) || compareStrings(a.signer, b.signer)
}

/** The result of screening: what can be considered and what was dropped, with why. */
export interface ScreenedBids {
  /** At most one bid per signer, keyed by CID string. */
  valid: Map<string, AuctionBid>
  /** Sorted by CID string, then signer. */
  rejected: RejectedBid[]
}

/**
 * The first payload-level reason `bid` cannot be considered for `job` at `now`, if any: screening's
 * step 2, used on arrival by the round's bid store (bid-store.ts) and again at the decision.
 */
export function screenBid (bid: AuctionBid, job: AuctionJob, now: number): BidRejection | undefined {
  if (!bid.payload.job.equals(job.cid)) return BidRejection.WRONG_JOB
  if (bid.payload.price > job.payload.sla.maxPrice) return BidRejection.OVER_MAX_PRICE
  if (bid.payload.expiresAt <= now) return BidRejection.EXPIRED
  const { resources, placement, sla } = job.payload
  const b = bid.payload
  if (resources.gpus > 0 && (b.gpus.length < resources.gpus || !vramMeetsGB(b.vramMiB, resources.minVramGB) ||
    (resources.models.length > 0 && !resources.models.some((m) => modelInFamily(b.model, m))))) return BidRejection.HARDWARE
  if (placement.residency === 'strict' && placement.regions.length > 0 && !placement.regions.some((r) => regionWithin(b.region, r))) return BidRejection.REGION
  if (b.startBy > now + sla.maxStartDelaySec * SECOND_MS) return BidRejection.LATE_START
  if (!cachedFitsJob(job.payload.workload.inputs, b.cached)) return BidRejection.BAD_CACHED
  return undefined
}

/** Lower price, then lower CID string: which of one signer's offers counts (also the bid store's rule). */
export function betterOwnOffer (a: { price: number, cid: string }, b: { price: number, cid: string }): boolean {
  if (a.price !== b.price) return a.price < b.price
  return a.cid < b.cid
}

function betterOwnBid (a: AuctionBid, b: AuctionBid): boolean {
  return betterOwnOffer({ price: a.payload.price, cid: a.cid.toString() }, { price: b.payload.price, cid: b.cid.toString() })
}

function rejection (bid: AuctionBid, reason: BidRejection): RejectedBid {
  return { cid: bid.cid.toString(), signer: bid.signer, reason }
}

/** Each (CID, signer) once. */
function distinct (bids: readonly AuctionBid[]): AuctionBid[] {
  return [...new Map(bids.map((bid) => [`${bid.cid.toString()} ${bid.signer}`, bid])).values()]
}

/** CID strings that more than one peer signed. */
function conflictingCids (bids: readonly AuctionBid[]): Set<string> {
  const signers = new Map<string, Set<string>>()
  for (const bid of bids) signers.set(bid.cid.toString(), (signers.get(bid.cid.toString()) ?? new Set()).add(bid.signer))
  return new Set([...signers].filter(([, peers]) => peers.size > 1).map(([cid]) => cid))
}

/** Each signer's best bid (betterOwnBid); the others are rejected as DUPLICATE_SIGNER. */
function bestPerSigner (bids: readonly AuctionBid[], rejected: RejectedBid[]): Map<string, AuctionBid> {
  const best = new Map<string, AuctionBid>()
  for (const bid of bids) {
    const held = best.get(bid.signer)
    if (held !== undefined && !betterOwnBid(bid, held)) { rejected.push(rejection(bid, BidRejection.DUPLICATE_SIGNER)); continue }
    if (held !== undefined) rejected.push(rejection(held, BidRejection.DUPLICATE_SIGNER))
    best.set(bid.signer, bid)
  }
  return best
}

/** Step 1 of the decision: drop the bids that cannot be considered (see the file comment). */
export function screenBids (job: AuctionJob, bids: readonly AuctionBid[], excluded: ReadonlySet<string>, now: number, convicted?: (peer: string) => boolean, tooFar?: (peer: string) => boolean): ScreenedBids {
  const rejected: RejectedBid[] = []
  const sound = distinct(bids).filter((bid) => {
    const fault = screenBid(bid, job, now)
    if (fault !== undefined) rejected.push(rejection(bid, fault))
    return fault === undefined
  })
  const conflicts = conflictingCids(sound)
  const eligible = sound.filter((bid) => {
    const fault = conflicts.has(bid.cid.toString())
      ? BidRejection.CID_CONFLICT
      : convicted?.(bid.signer) === true
        ? BidRejection.CONVICTED
        : tooFar?.(bid.signer) === true ? BidRejection.TOO_FAR : excluded.has(bid.signer) ? BidRejection.EXCLUDED : undefined
    if (fault !== undefined) rejected.push(rejection(bid, fault))
    return fault === undefined
  })
  const valid = new Map([...bestPerSigner(eligible, rejected).values()].map((bid) => [bid.cid.toString(), bid]))
  return { valid, rejected: rejected.sort(compareRejected) }
}

/**
 * Second-score payment: the highest integer price p ≥ the winner's ask at which the winner still beats
 * the runner-up (p × winner's factor below the runner-up's effective price, or equal with the winner's
 * CID first), capped at maxPrice.
 */
export function secondScorePrice (winner: RankedBid, runnerUp: RankedBid | undefined, tier: Tier, maxPrice: number, params: ScoringParams = defaultScoringParams): number {
  if (runnerUp === undefined) return winner.price
  const factor = scoreFactor(winner, tier, params)
  const target = runnerUp.effectivePrice
  const wins = (p: number): boolean => compareRanked({ effectivePrice: p * factor, cid: winner.cid }, runnerUp) < 0
  // The division lands within a unit or two of the answer; the bounded steps settle the rounding.
  let p = Math.floor(target / factor)
  for (let i = 0; i < 4 && p > winner.price && !wins(p); i++) p--
  for (let i = 0; i < 4 && p < maxPrice && wins(p + 1); i++) p++
  return Math.min(maxPrice, Math.max(winner.price, p))
}

/** The price the winner is paid under `rule`. */
function paymentFor (rule: JobRequest['auction']['paymentRule'], ranking: readonly RankedBid[], tier: Tier, maxPrice: number, params: ScoringParams): number {
  const winner = ranking[0] as RankedBid
  return rule === 'first-price' ? winner.price : secondScorePrice(winner, ranking[1], tier, maxPrice, params)
}

interface DecideCore {
  job: AuctionJob
  bids: readonly AuctionBid[]
  reliability: PeerView | undefined
  rtt: PeerView | undefined
  excluded: string[]
  convicted: ((peer: string) => boolean) | undefined
  /** The job's maxRttMs screen under the requester's RTT view (decideAward only; see TOO_FAR). */
  tooFar: ((peer: string) => boolean) | undefined
  now: number
  params: ScoringParams
  header: Pick<AwardFields, 'attempt' | 'leaseMs' | 'billingIntervalSec'>
}

/** Steps 1–4 on checked input. */
function decide (input: DecideCore): AwardDecision {
  if (input.bids.length === 0) return { kind: 'none', reason: 'NO_BIDS', detail: 'no bids arrived', rejected: [] }
  const { job, params } = input
  const tier = job.payload.sla.tier
  const { valid, rejected } = screenBids(job, input.bids, new Set(input.excluded), input.now, input.convicted, input.tooFar)
  const ranked = rankBids([...valid.values()].map((bid) => ({
    cid: bid.cid.toString(),
    provider: bid.signer,
    price: bid.payload.price,
    reliability: lookupView(input.reliability, bid.signer),
    rttMs: lookupView(input.rtt, bid.signer),
    cacheFactor: bidCacheFactor(job, bid)
  })), tier, params)
  for (const bid of ranked.slice(MAX_CONSIDERED_BIDS)) rejected.push({ cid: bid.cid, signer: bid.provider, reason: BidRejection.CONSIDERED_LIMIT })
  rejected.sort(compareRejected)
  const ranking = ranked.slice(0, MAX_CONSIDERED_BIDS)
  const winner = ranking[0]
  if (winner === undefined) {
    return { kind: 'none', reason: 'NO_VALID_BIDS', detail: `all ${input.bids.length} bids were rejected`, rejected }
  }
  const winningBid = valid.get(winner.cid) as AuctionBid
  const award: AwardFields = {
    job: job.cid,
    ...input.header,
    winner: winner.provider,
    bid: winningBid.cid,
    price: paymentFor(job.payload.auction.paymentRule, ranking, tier, job.payload.sla.maxPrice, params),
    paymentRule: job.payload.auction.paymentRule,
    considered: ranking.map((r) => r.cid).sort(compareStrings).map((cid) => (valid.get(cid) as AuctionBid).cid),
    excluded: input.excluded
  }
  return { kind: 'award', award, ranking, rejected }
}

/** The parameters `job` is scored with: `params` (default: the network's), latency-sensitive as the job asks. */
function jobParams (job: AuctionJob, params: ScoringParams | undefined): ScoringParams {
  return scoringParamsForJob(params ?? defaultScoringParams, job.payload.placement)
}

/**
 * A job with `placement.maxRttMs`: a provider is too far when its RTT in `rtt` is above it, or is not
 * known (fail closed). Like CONVICTED it is the requester's own view: such bids are never considered.
 */
export function tooFarScreen (job: AuctionJob, rtt: PeerView | undefined): ((peer: string) => boolean) | undefined {
  const max = job.payload.placement.maxRttMs
  if (max === undefined) return undefined
  return (peer) => {
    const ms = lookupView(rtt, peer)
    return !(ms !== undefined && ms >= 0 && ms <= max)
  }
}

/**
 * Decide a job's auction (see the file comment). Deterministic: the result depends on the set of
 * bids and excluded providers, not their order. Throws InvalidAwardInputError for an attempt, lease,
 * billing interval or excluded list that an award cannot carry.
 */
export function decideAward (input: AwardInput): AwardDecision {
  checkInt('attempt', input.attempt, 1, MAX_AWARD_ATTEMPTS)
  checkInt('leaseMs', input.leaseMs, MIN_LEASE_MS, MAX_LEASE_MS)
  checkInt('billingIntervalSec', input.billingIntervalSec, MIN_BILLING_INTERVAL_SEC, MAX_BILLING_INTERVAL_SEC)
  const excluded = sortedUnique(input.excluded ?? [])
  if (excluded.length > MAX_EXCLUDED_PEERS) throw new InvalidAwardInputError('excluded', `at most ${MAX_EXCLUDED_PEERS} providers`)
  return decide({
    job: input.job,
    bids: input.bids,
    reliability: input.reliability,
    rtt: input.rtt,
    excluded,
    convicted: input.convicted,
    tooFar: tooFarScreen(input.job, input.rtt),
    now: input.now,
    params: jobParams(input.job, input.params),
    header: { attempt: input.attempt, leaseMs: input.leaseMs, billingIntervalSec: input.billingIntervalSec }
  })
}

export const AwardFault = {
  /** The award is for another job. */
  WRONG_JOB: 'WRONG_JOB',
  /** The payment rule differs from the job's. */
  WRONG_PAYMENT_RULE: 'WRONG_PAYMENT_RULE',
  /** `considered` is not sorted and unique, too long, or lacks `bid`. */
  BAD_CONSIDERED: 'BAD_CONSIDERED',
  /** A considered bid is not among the bids given to the check: it cannot be checked. */
  MISSING_BID: 'MISSING_BID',
  /** A considered bid fails screening. */
  INVALID_BID: 'INVALID_BID',
  /** `winner` did not sign `bid`. */
  WINNER_MISMATCH: 'WINNER_MISMATCH',
  /** Another considered bid beats the winner (under the given views, or under every view). */
  WRONG_WINNER: 'WRONG_WINNER',
  /** The price does not follow the payment rule. */
  WRONG_PRICE: 'WRONG_PRICE'
} as const
export type AwardFault = typeof AwardFault[keyof typeof AwardFault]

export type AwardCheck = { ok: true } | { ok: false, reason: AwardFault, detail: string }

/** What an auditor knows: the job, the bids it has seen, and the scoring parameters. */
export interface AuditInput {
  job: AuctionJob
  /** Bids the auditor holds; it needs at least every considered one. Others are ignored. */
  bids: readonly AuctionBid[]
  params?: ScoringParams
  /** The decision time used for expiry; default: the award's issuedAt. */
  now?: number
}

/** An award with its header (what a node receives); a header-less AwardFields works too, given `now`. */
export type AwardToCheck = AwardFields & { issuedAt?: number }

export interface VerifyInput extends AuditInput {
  /** The reliability view to recompute with (the requester's claimed view, the node's own, or uniform). */
  reliability?: PeerView
  rtt?: PeerView
}

function fault (reason: AwardFault, detail: string): AwardCheck {
  return { ok: false, reason, detail }
}

/** The considered bids among `bids`, or the first considered CID missing from them. */
function consideredBids (award: AwardToCheck, bids: readonly AuctionBid[]): { found: AuctionBid[] } | { missing: string } {
  const wanted = new Set(award.considered.map((c) => c.toString()))
  const found = bids.filter((b) => wanted.has(b.cid.toString()))
  const have = new Set(found.map((b) => b.cid.toString()))
  const missing = [...wanted].find((c) => !have.has(c))
  return missing === undefined ? { found } : { missing }
}

/** `considered` sorted by CID string, unique, within MAX_CONSIDERED_BIDS and containing `bid`. */
function consideredWellFormed (award: AwardToCheck): boolean {
  const strings = award.considered.map((c) => c.toString())
  const sorted = strings.every((s, i) => i === 0 || (strings[i - 1] as string) < s)
  return sorted && strings.length >= 1 && strings.length <= MAX_CONSIDERED_BIDS && strings.includes(award.bid.toString())
}

/** Checks shared by audit and verify; on success the screened, considered bids keyed by CID. */
function checkCommon (award: AwardToCheck, input: AuditInput): AwardCheck & { valid?: Map<string, AuctionBid> } {
  const { job } = input
  const rule: string = job.payload.auction.paymentRule
  const [awarded, jobId] = [award.job.toString(), job.cid.toString()]
  if (awarded !== jobId) return fault(AwardFault.WRONG_JOB, `award for ${awarded}, the job is ${jobId}`)
  if (award.paymentRule !== rule) return fault(AwardFault.WRONG_PAYMENT_RULE, `${award.paymentRule}, the job asks ${rule}`)
  if (!consideredWellFormed(award)) return fault(AwardFault.BAD_CONSIDERED, `considered must be sorted by CID string, unique, at most ${MAX_CONSIDERED_BIDS} and contain bid`)
  const lookup = consideredBids(award, input.bids)
  if ('missing' in lookup) return fault(AwardFault.MISSING_BID, `considered bid ${lookup.missing} is unknown here`)
  const now = input.now ?? award.issuedAt
  if (now === undefined) throw new InvalidAwardInputError('now', 'give now, or an award with issuedAt')
  const { valid, rejected } = screenBids(job, lookup.found, new Set(award.excluded), now)
  const bad = rejected[0]
  if (bad !== undefined) return fault(AwardFault.INVALID_BID, `considered bid ${bad.cid} from ${bad.signer}: ${bad.reason}`)
  const winning = valid.get(award.bid.toString())
  if (winning === undefined || winning.signer !== award.winner) return fault(AwardFault.WINNER_MISMATCH, `${award.winner} did not sign ${award.bid.toString()}`)
  return { ok: true, valid }
}

/** A bid's cached-input factor for `job` (input-cache.ts): view-independent, so auditors compute it too. */
export function bidCacheFactor (job: AuctionJob, bid: AuctionBid): number {
  return cacheFactor(job.payload.workload, bid.payload.cached)
}

/** A bid's effective price under the view that favours it least: ask × (worst factor × its cache factor). */
function worstEffectivePrice (bid: AuctionBid, job: AuctionJob, worst: number): number {
  return bid.payload.price * (worst * bidCacheFactor(job, bid))
}

/**
 * Whether some admissible view makes `winner` the best: its ask at its best factor (its cache factor
 * alone: reliability 1, RTT 0) against every other ask at its worst factor (worstEffectivePrice).
 */
function admissibleWinner (winner: AuctionBid, others: readonly AuctionBid[], job: AuctionJob, params: ScoringParams): AuctionBid | undefined {
  const worst = worstScoreFactor(job.payload.sla.tier, params)
  const best = { effectivePrice: winner.payload.price * bidCacheFactor(job, winner), cid: winner.cid.toString() }
  return others.find((o) => compareRanked(best, { effectivePrice: worstEffectivePrice(o, job, worst), cid: o.cid.toString() }) > 0)
}

/**
 * The view-independent price bounds: exactly the ask, or [ask, min(maxPrice, ⌊lowest other worst
 * effective price ÷ the winner's cache factor⌋)] — the most a winner at its best factor can be paid
 * and still rank before the runner-up at its worst.
 */
function priceBounds (award: AwardToCheck, winner: AuctionBid, others: readonly AuctionBid[], job: AuctionJob, params: ScoringParams): [number, number] {
  const ask = winner.payload.price
  if (award.paymentRule === 'first-price' || others.length === 0) return [ask, ask]
  const worst = worstScoreFactor(job.payload.sla.tier, params)
  const lowestOther = Math.min(...others.map((o) => worstEffectivePrice(o, job, worst)))
  return [ask, Math.min(job.payload.sla.maxPrice, Math.floor(lowestOther / bidCacheFactor(job, winner)))]
}

/** auditAward's checks; on success also the screened, considered bids keyed by CID string. */
function auditCore (award: AwardToCheck, input: AuditInput): AwardCheck & { valid?: Map<string, AuctionBid> } {
  const common = checkCommon(award, input)
  if (!common.ok || common.valid === undefined) return common
  const params = jobParams(input.job, input.params)
  const winner = common.valid.get(award.bid.toString()) as AuctionBid
  const others = [...common.valid.values()].filter((b) => b !== winner)
  const beaten = admissibleWinner(winner, others, input.job, params)
  if (beaten !== undefined) return fault(AwardFault.WRONG_WINNER, `${beaten.cid.toString()} beats the winner under every view`)
  const [low, high] = priceBounds(award, winner, others, input.job, params)
  if (award.price < low || award.price > high) return fault(AwardFault.WRONG_PRICE, `price ${award.price} outside ${low}..${high}`)
  return common
}

/**
 * What any node can check without the requester's views (see the file comment). `{ ok: true }` means
 * some admissible view and the payment rule explain the award, not that the requester used them.
 */
export function auditAward (award: AwardToCheck, input: AuditInput): AwardCheck {
  const check = auditCore(award, input)
  return check.ok ? { ok: true } : check
}

/**
 * Recompute the award from its considered bids under the given views: same inputs → same winner and
 * price. Runs auditAward's checks first and fails with the first fault found.
 */
export function verifyAward (award: AwardToCheck, input: VerifyInput): AwardCheck {
  const audit = auditCore(award, input)
  if (!audit.ok || audit.valid === undefined) return audit
  const decision = decide({
    job: input.job,
    bids: [...audit.valid.values()],
    reliability: input.reliability,
    rtt: input.rtt,
    excluded: sortedUnique(award.excluded),
    convicted: undefined,
    tooFar: undefined,
    now: input.now ?? award.issuedAt as number,
    params: jobParams(input.job, input.params),
    header: { attempt: award.attempt, leaseMs: award.leaseMs, billingIntervalSec: award.billingIntervalSec }
  })
  if (decision.kind !== 'award') return fault(AwardFault.INVALID_BID, 'no considered bid survives screening')
  const expected = decision.award
  if (!expected.bid.equals(award.bid)) return fault(AwardFault.WRONG_WINNER, `these views pick ${expected.bid.toString()}`)
  if (expected.price !== award.price) return fault(AwardFault.WRONG_PRICE, `these views pay ${expected.price}, the award ${award.price}`)
  return { ok: true }
}
