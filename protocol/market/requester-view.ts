/**
 * A provider's view of requesters (issue 11; protocol/README §5.6 "Refusing requesters"), pure: the
 * trust layer's evidence store (protocol/trust/reputation.ts) keyed by requester. This node's own
 * outcomes count fully — a job paid in full is a success, a job it stopped for nonpayment (or a payment
 * that bounced) a failure; others' gossiped `nonpayment` failure reports count as far as this node
 * trusts their signers (trust reaches a reporter only along this node's own experience: a requester
 * that paid it, and whom that requester vouched for); a requester no one reported on scores the prior.
 *
 *   score = (ok + m × k) / (ok + failed + k)        m = REQUESTER_PRIOR_MEAN (0.5), k = REQUESTER_PRIOR_WEIGHT (2)
 *
 * The reference rule: refuse a job request when score < minRequesterTrust (default
 * DEFAULT_MIN_REQUESTER_TRUST = 0.45). So a stranger (0.5) and a requester exactly at the threshold
 * are served; one own nonpayment (1/3 = 0.333), or one report from a reporter trusted at the weight cap
 * 0.5 (1/2.5 = 0.4), refuses; one paid job and one stop (2/4 = 0.5) does not.
 *
 * The job-request budget grows with trust (`requesterRate`): `requesterTrust` maps the score above the
 * prior linearly onto 0..1 (a stranger, or anyone at or below the prior: 0, a stranger's rate), and
 * protocol/trust/budget.ts `rateForTrust` turns that into a bucket between a stranger's 32-burst / 1 per
 * s and TRUSTED_JOB_RATE's 320 / 10 per s. A requester with n own paid jobs and nothing else has trust
 * n / (n + 2): 1 paid job → 1/3 (burst 128), 8 → 0.8 (burst 262).
 */
import { ReputationStore, type ReputationExplanation } from '../trust/reputation.js'
import type { ReputationParams } from '../trust/reputation-params.js'
import type { Evidence } from '../trust/reputation-evidence.js'
import { rateForTrust, type JobRate } from '../trust/budget.js'

/** A requester no one reported on scores this: even odds. */
export const REQUESTER_PRIOR_MEAN = 0.5
/** The prior is worth two outcomes: one own nonpayment drops a stranger to 1/3. */
export const REQUESTER_PRIOR_WEIGHT = 2
/** Below this a provider refuses a requester's job requests (the default `provider.minRequesterTrust`). */
export const DEFAULT_MIN_REQUESTER_TRUST = 0.45

/** Why a job request was refused before any bid decision (the `reason` of the agent's note and the status line). */
export const RequesterRefusal = {
  /** The requester's score in this provider's view is below `minRequesterTrust`. */
  LOW_TRUST: 'LOW_TRUST'
} as const
export type RequesterRefusal = typeof RequesterRefusal[keyof typeof RequesterRefusal]

/** An out-of-range `minRequesterTrust`. */
export class InvalidRequesterTrustError extends RangeError {
  override readonly name = 'InvalidRequesterTrustError'
  constructor (readonly value: unknown) {
    super(`minRequesterTrust must be a number in 0..1, got ${String(value)}`)
  }
}

/** Throw InvalidRequesterTrustError unless `min` is a finite number in 0..1. */
export function validateMinRequesterTrust (min: number): number {
  if (typeof min !== 'number' || !Number.isFinite(min) || min < 0 || min > 1) throw new InvalidRequesterTrustError(min)
  return min
}

/** The reference rule: whether a requester scoring `score` is refused under `min` (strictly below). */
export function refusesRequester (score: number, min: number): boolean {
  return score < min
}

/** 0..1: how far `score` is above the prior `mean`, as a share of the way to 1 (0 at or below the prior). */
export function requesterTrust (score: number, mean = REQUESTER_PRIOR_MEAN): number {
  if (!Number.isFinite(score) || mean >= 1) return 0
  return Math.min(1, Math.max(0, (score - mean) / (1 - mean)))
}

export class RequesterView extends ReputationStore {
  constructor (self: string, params: Partial<ReputationParams> = {}) {
    super(self, { priorMean: REQUESTER_PRIOR_MEAN, priorWeight: REQUESTER_PRIOR_WEIGHT, ...params })
  }

  /** This node's own outcome with `requester` at `at`: paid in full (true) or stopped unpaid / bounced (false). */
  record (requester: string, paid: boolean, at: number): void {
    this.add(paid
      ? { signer: this.self, subject: requester, kind: 'settlement', at }
      : { signer: this.self, subject: requester, kind: 'failure', reason: 'nonpayment', at })
  }

  /**
   * Another peer's evidence, when it speaks of a requester's paying: a `nonpayment` failure report, or
   * a payment (its signer vouching for the payee it paid, which carries trust to that payee as a
   * reporter). Other failure reasons are about providers and are left out. Returns whether it was taken.
   */
  addReport (e: Evidence): boolean {
    if (e.kind === 'failure' && e.reason !== 'nonpayment') return false
    if (e.kind !== 'failure' && e.kind !== 'settlement') return false
    const r = this.add(e)
    return r === 'own' || r === 'counted'
  }

  /**
   * `requester`'s score for a decision at `now`, read at whole seconds (`now` rounded down): the trust
   * computation is cached per change and instant, so a burst of job requests within a second costs one.
   * The prior, with no work, for a requester no one reported on.
   */
  decisionScore (requester: string, now: number): number {
    return this.reliability(requester, Math.floor(now / SCORE_STEP_MS) * SCORE_STEP_MS) ?? this.params.priorMean
  }

  /** The job-request bucket `requester` gets at `now`: a stranger's, growing with trust. */
  rate (requester: string, now: number): JobRate {
    return requesterRate({ score: this.decisionScore(requester, now) }, this.params.priorMean)
  }
}

/** Decisions read scores at whole seconds (decisionScore): half-lives are days, so nothing is lost. */
export const SCORE_STEP_MS = 1_000

/** The bucket a requester with this explanation gets (a stranger: STRANGER_JOB_RATE). */
export function requesterRate (e: Pick<ReputationExplanation, 'score'>, mean = REQUESTER_PRIOR_MEAN): JobRate {
  return rateForTrust(requesterTrust(e.score, mean))
}
