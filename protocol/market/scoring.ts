/**
 * The auction's scoring rule (DESIGN §5): public, pure and deterministic, so every node that feeds it
 * the same inputs ranks the same bids in the same order.
 *
 *     effectivePrice = price × (reliabilityFactor × distanceFactor × cacheFactor)   (lower is better)
 *     reliabilityFactor = 1 + TIER_RELIABILITY_WEIGHT[tier] × (1 − reliability)
 *     distanceFactor    = 1 + min(maxDistancePenalty, distancePenaltyPer100Ms × rttMs / 100)
 *     cacheFactor       = the bid's transfer saving for its job (input-cache.ts), 1 when nothing is cached
 *
 * A perfectly reliable provider next door is scored at its ask; an unreliable one far away is scored
 * at up to (1 + w_tier) × (1 + maxDistancePenalty) times its ask. `reliability` is the requester's own
 * view (DESIGN §7), 0..1; a provider it knows nothing about is scored at `unknownReliability`, which is
 * low, because new identities start low. An unknown RTT is scored at `defaultRttMs`.
 *
 * Ties on the effective price are broken by the bid CID's string form, ascending (plain code-unit
 * order, not locale order). The arithmetic is IEEE-754 double multiplication and division only, which
 * every JavaScript engine computes bit for bit alike, so recomputation on another node agrees exactly.
 *
 * The award does not carry these parameters: an award can only be audited by nodes that score with
 * the same ones, so the network uses `defaultScoringParams`. Other values are for experiments (the
 * simulator) and for a requester's private decisions.
 */
import type { Tier } from './types.js'

/**
 * How much each tier cares about reliability: the effective price of a provider with reliability r is
 * raised by w × (1 − r). Gold (reserved capacity) pays up to double for an unknown provider's risk;
 * bronze (preemptible, restartable work) barely cares.
 */
export const TIER_RELIABILITY_WEIGHT: Readonly<Record<Tier, number>> = Object.freeze({
  gold: 1.0,
  silver: 0.5,
  bronze: 0.15
})

/** Effective-price penalty per 100 ms of round-trip time: 2 % (inputs, outputs and heartbeats travel further). */
export const DISTANCE_PENALTY_PER_100MS = 0.02

/** The distance penalty never exceeds 10 % (reached at 500 ms RTT): GPU jobs are batch work, price dominates. */
export const MAX_DISTANCE_PENALTY = 0.1

/**
 * A latency-sensitive job (`placement.latencySensitive`, protocol/README §3.4) weighs distance far more:
 * 25 % of the price per 100 ms of RTT, so a provider 100 ms further away must ask 20 % less to win.
 */
export const LATENCY_SENSITIVE_DISTANCE_PENALTY_PER_100MS = 0.25

/** … capped at double the price (reached at 400 ms RTT): beyond that, every provider is equally far. */
export const LATENCY_SENSITIVE_MAX_DISTANCE_PENALTY = 1.0

/** RTT assumed for a provider never measured: a typical cross-continent path (a 4 % penalty). */
export const DEFAULT_RTT_MS = 200

/**
 * Reliability assumed for a provider the requester knows nothing about: new identities start low. It is
 * also the mean of the one prior every estimate starts from (reliability.ts), so no history ranks worse.
 */
export const UNKNOWN_RELIABILITY = 0.25

/** The scoring parameters (a plain-data object, so it survives structuredClone). */
export interface ScoringParams {
  /** Per tier, ≥ 0: weight of (1 − reliability). */
  tierWeights: Readonly<Record<Tier, number>>
  /** ≥ 0: fraction of the price added per 100 ms RTT. */
  distancePenaltyPer100Ms: number
  /** ≥ 0: cap on the distance penalty. */
  maxDistancePenalty: number
  /** ≥ 0: the distance penalty per 100 ms for a latency-sensitive job (replaces distancePenaltyPer100Ms). */
  latencySensitiveDistancePenaltyPer100Ms: number
  /** ≥ 0: the cap for a latency-sensitive job (replaces maxDistancePenalty). */
  latencySensitiveMaxDistancePenalty: number
  /** ≥ 0: RTT used when none is known. */
  defaultRttMs: number
  /** 0..1: reliability used when none is known. */
  unknownReliability: number
}

export const defaultScoringParams: Readonly<ScoringParams> = Object.freeze({
  tierWeights: TIER_RELIABILITY_WEIGHT,
  distancePenaltyPer100Ms: DISTANCE_PENALTY_PER_100MS,
  maxDistancePenalty: MAX_DISTANCE_PENALTY,
  latencySensitiveDistancePenaltyPer100Ms: LATENCY_SENSITIVE_DISTANCE_PENALTY_PER_100MS,
  latencySensitiveMaxDistancePenalty: LATENCY_SENSITIVE_MAX_DISTANCE_PENALTY,
  defaultRttMs: DEFAULT_RTT_MS,
  unknownReliability: UNKNOWN_RELIABILITY
})

/** Scoring parameters out of range. */
export class InvalidScoringParamsError extends Error {
  override readonly name = 'InvalidScoringParamsError'
  constructor (readonly field: string, message: string) {
    super(`${field}: ${message}`)
  }
}

function isNonNegative (x: number): boolean {
  return Number.isFinite(x) && x >= 0
}

/** Throw InvalidScoringParamsError unless every parameter is finite and in range. */
export function validateScoringParams (params: ScoringParams): void {
  for (const tier of ['gold', 'silver', 'bronze'] as const) {
    if (!isNonNegative(params.tierWeights[tier])) throw new InvalidScoringParamsError(`tierWeights.${tier}`, 'expected a finite number ≥ 0')
  }
  for (const field of ['distancePenaltyPer100Ms', 'maxDistancePenalty', 'latencySensitiveDistancePenaltyPer100Ms', 'latencySensitiveMaxDistancePenalty', 'defaultRttMs'] as const) {
    if (!isNonNegative(params[field])) throw new InvalidScoringParamsError(field, 'expected a finite number ≥ 0')
  }
  const r = params.unknownReliability
  if (!(Number.isFinite(r) && r >= 0 && r <= 1)) throw new InvalidScoringParamsError('unknownReliability', 'expected a number in 0..1')
}

/** Overrides for createScoringParams; tier weights may be given per tier. */
export type ScoringParamsInit = Partial<Omit<ScoringParams, 'tierWeights'>> & { tierWeights?: Partial<Record<Tier, number>> }

/** Defaults overridden by `partial` (tier weights merge per tier), validated. */
export function createScoringParams (partial: ScoringParamsInit = {}): ScoringParams {
  const params: ScoringParams = {
    ...defaultScoringParams,
    ...partial,
    tierWeights: { ...defaultScoringParams.tierWeights, ...partial.tierWeights }
  }
  validateScoringParams(params)
  return params
}

/**
 * The parameters a job is scored with: `params` as given, or, for a job whose placement is
 * latency-sensitive, with the latency-sensitive distance penalty and cap in place of the usual ones.
 * Every node derives it from the job alone, so awards of such jobs stay auditable.
 */
export function scoringParamsForJob (params: ScoringParams, placement: { latencySensitive?: boolean | undefined }): ScoringParams {
  if (placement.latencySensitive !== true) return params
  return { ...params, distancePenaltyPer100Ms: params.latencySensitiveDistancePenaltyPer100Ms, maxDistancePenalty: params.latencySensitiveMaxDistancePenalty }
}

/** What scoring reads about one bid. */
export interface ScoreInput {
  /** Asked price, micros per GPU-hour. */
  price: number
  /** The requester's view of the provider, 0..1; undefined = unknown provider. */
  reliability?: number | undefined
  /** Round-trip time to the provider; undefined = never measured. */
  rttMs?: number | undefined
  /**
   * The bid's cached-input factor (input-cache.ts `cacheFactor`, from the job and the bid alone, no
   * view); undefined = 1 (nothing cached).
   */
  cacheFactor?: number | undefined
}

/** A bid as the ranking sees it. */
export interface ScoredBidInput extends ScoreInput {
  /** The bid's CID, string form: the tie-breaker. */
  cid: string
  /** Peer id of the provider that signed the bid. */
  provider: string
}

export interface RankedBid extends ScoredBidInput {
  effectivePrice: number
}

/** The reliability scoring uses: clamped to 0..1; unknown, NaN or infinite → `unknownReliability`. */
export function effectiveReliability (reliability: number | undefined, params: ScoringParams = defaultScoringParams): number {
  if (reliability === undefined || Number.isNaN(reliability)) return params.unknownReliability
  return Math.min(1, Math.max(0, reliability))
}

/** The RTT scoring uses: unknown, negative or non-finite → `defaultRttMs`. */
export function effectiveRttMs (rttMs: number | undefined, params: ScoringParams = defaultScoringParams): number {
  return rttMs !== undefined && Number.isFinite(rttMs) && rttMs >= 0 ? rttMs : params.defaultRttMs
}

/** 1 + w_tier × (1 − reliability). */
export function reliabilityFactor (reliability: number | undefined, tier: Tier, params: ScoringParams = defaultScoringParams): number {
  return 1 + params.tierWeights[tier] * (1 - effectiveReliability(reliability, params))
}

/** 1 + min(cap, penalty per 100 ms × rtt / 100). */
export function distanceFactor (rttMs: number | undefined, params: ScoringParams = defaultScoringParams): number {
  return 1 + Math.min(params.maxDistancePenalty, params.distancePenaltyPer100Ms * (effectiveRttMs(rttMs, params) / 100))
}

/** The cache factor scoring uses: in (0, 1]; unknown, NaN or out of range → 1. */
export function effectiveCacheFactor (factor: number | undefined): number {
  return factor !== undefined && factor > 0 && factor <= 1 ? factor : 1
}

/**
 * The multiplier applied to a provider's price: (reliabilityFactor × distanceFactor) × cacheFactor,
 * in that order; ≥ 1 when nothing is cached (× 1 leaves the product's bits as they were).
 */
export function scoreFactor (input: Omit<ScoreInput, 'price'>, tier: Tier, params: ScoringParams = defaultScoringParams): number {
  return reliabilityFactor(input.reliability, tier, params) * distanceFactor(input.rttMs, params) * effectiveCacheFactor(input.cacheFactor)
}

/**
 * The largest factor any provider can get in `tier` (reliability 0, RTT at or beyond the cap), before
 * its cache factor: a bid's worst factor is this × its own cache factor, which is view-independent.
 */
export function worstScoreFactor (tier: Tier, params: ScoringParams = defaultScoringParams): number {
  return (1 + params.tierWeights[tier]) * (1 + params.maxDistancePenalty)
}

/** The price a requester weighs a bid at in `tier`: price × scoreFactor. Lower is better. */
export function effectivePrice (input: ScoreInput, tier: Tier, params: ScoringParams = defaultScoringParams): number {
  return input.price * scoreFactor(input, tier, params)
}

/** Order of two ranked bids: effective price ascending, then CID string ascending. */
export function compareRanked (a: Pick<RankedBid, 'effectivePrice' | 'cid'>, b: Pick<RankedBid, 'effectivePrice' | 'cid'>): number {
  if (a.effectivePrice !== b.effectivePrice) return a.effectivePrice < b.effectivePrice ? -1 : 1
  return compareStrings(a.cid, b.cid)
}

/** Plain code-unit order (what `<` does), never locale order. */
export function compareStrings (a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0
}

/**
 * Score `bids` for a job of `tier` and sort them best first. Deterministic: the result depends only
 * on the set of bids, not on their order (bids with the same CID are kept as given; the auction
 * removes such duplicates before ranking).
 */
export function rankBids (bids: readonly ScoredBidInput[], tier: Tier, params: ScoringParams = defaultScoringParams): RankedBid[] {
  return bids
    .map((bid) => ({ ...bid, effectivePrice: effectivePrice(bid, tier, params) }))
    .sort(compareRanked)
}
