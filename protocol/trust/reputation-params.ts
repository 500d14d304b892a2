/**
 * The reputation view's parameters (DESIGN §7), as the usual trio: an interface, `defaultReputationParams`
 * and `createReputationParams(partial)` + `validateReputationParams()`, which throws a typed error.
 * Plain data, so one set survives structuredClone and travels in a snapshot.
 */
import { RELIABILITY_PRIOR_WEIGHT } from '../market/reliability.js'
import { UNKNOWN_RELIABILITY } from '../market/scoring.js'
import { DAY_MS } from '../limits.js'

/**
 * Evidence loses half its weight every 14 days: a provider that stopped delivering drifts back to the
 * prior within a few months, while a month of history (the node keeps evidence for a month) still counts.
 */
export const REPUTATION_HALF_LIFE_MS = 14 * DAY_MS

/**
 * Personalised PageRank damping: the share of a reporter's trust passed on along its own vouches. 0.5
 * halves trust per hop, so a peer two hops from this node counts at most a quarter, and the iteration
 * converges to 2^-TRUST_ITERATIONS.
 */
export const TRUST_DAMPING = 0.5

/** Power iterations of the trust computation: with damping 0.5, 32 leave an error below 2.4e-10. */
export const TRUST_ITERATIONS = 32

/**
 * The most one other reporter's evidence can count, relative to this node's own (which counts 1): no
 * peer, however trusted, is worth more than half of what this node saw itself.
 */
export const REPORTER_WEIGHT_CAP = 0.5

/** Reporters kept per subject (this node's own record is kept besides): 256. */
export const MAX_REPORTERS_PER_SUBJECT = 256

/** Subjects kept per other reporter: 1,024. */
export const MAX_SUBJECTS_PER_REPORTER = 1024

/** Subjects this node keeps its own outcomes for: 16,384. */
export const MAX_OWN_SUBJECTS = 16_384

/** Reporter–subject pairs kept from others in all: 131,072 (≈ 60 MiB at the ≈ 450 B per pair bench:trust measures). */
export const MAX_OTHERS_PAIRS = 131_072

export interface ReputationParams {
  /** > 0: the age at which a record counts half. */
  halfLifeMs: number
  /** 0..1: the score of an identity with no weighted evidence (new identities start low). */
  priorMean: number
  /** > 0: how many outcomes the prior is worth. */
  priorWeight: number
  /** 0 ≤ damping < 1. */
  damping: number
  /** ≥ 1, whole. */
  iterations: number
  /** 0..1 (below 1, so own experience always outweighs the same evidence from anyone else). */
  reporterWeightCap: number
  maxReportersPerSubject: number
  maxSubjectsPerReporter: number
  maxOwnSubjects: number
  maxOthersPairs: number
}

export const defaultReputationParams: Readonly<ReputationParams> = Object.freeze({
  halfLifeMs: REPUTATION_HALF_LIFE_MS,
  priorMean: UNKNOWN_RELIABILITY,
  priorWeight: RELIABILITY_PRIOR_WEIGHT,
  damping: TRUST_DAMPING,
  iterations: TRUST_ITERATIONS,
  reporterWeightCap: REPORTER_WEIGHT_CAP,
  maxReportersPerSubject: MAX_REPORTERS_PER_SUBJECT,
  maxSubjectsPerReporter: MAX_SUBJECTS_PER_REPORTER,
  maxOwnSubjects: MAX_OWN_SUBJECTS,
  maxOthersPairs: MAX_OTHERS_PAIRS
})

/** Reputation parameters out of range. */
export class InvalidReputationParamsError extends Error {
  override readonly name = 'InvalidReputationParamsError'
  constructor (readonly field: string, message: string) {
    super(`${field}: ${message}`)
  }
}

const CAPS = ['maxReportersPerSubject', 'maxSubjectsPerReporter', 'maxOwnSubjects', 'maxOthersPairs', 'iterations'] as const

/** Throw InvalidReputationParamsError unless every parameter is finite and in range. */
export function validateReputationParams (p: ReputationParams): void {
  const bad = (field: string, what: string): never => { throw new InvalidReputationParamsError(field, `expected ${what}`) }
  if (!(Number.isFinite(p.halfLifeMs) && p.halfLifeMs > 0)) bad('halfLifeMs', 'a finite number > 0')
  if (!(Number.isFinite(p.priorMean) && p.priorMean >= 0 && p.priorMean <= 1)) bad('priorMean', 'a number in 0..1')
  if (!(Number.isFinite(p.priorWeight) && p.priorWeight > 0)) bad('priorWeight', 'a finite number > 0')
  if (!(Number.isFinite(p.damping) && p.damping >= 0 && p.damping < 1)) bad('damping', 'a number in [0, 1)')
  if (!(Number.isFinite(p.reporterWeightCap) && p.reporterWeightCap >= 0 && p.reporterWeightCap < 1)) bad('reporterWeightCap', 'a number in [0, 1)')
  for (const field of CAPS) if (!(Number.isSafeInteger(p[field]) && p[field] >= 1)) bad(field, 'a whole number ≥ 1')
}

/** Defaults overridden by `partial`, validated. */
export function createReputationParams (partial: Partial<ReputationParams> = {}): ReputationParams {
  const params = { ...defaultReputationParams, ...partial }
  validateReputationParams(params)
  return params
}
