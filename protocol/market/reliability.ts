/**
 * An estimate of a peer's reliability from whole outcome counts (DESIGN §7: every node computes its
 * own). Pure: the provider's view of requesters (reservations.ts) and damping's newcomer price use it;
 * the requester's reputation view (protocol/trust/reputation.ts) applies the same prior to decayed,
 * trust-weighted counts, which are not whole, with `priorWeight` = RELIABILITY_PRIOR_WEIGHT.
 *
 * One prior for everyone: a Beta prior whose mean is the scoring's `unknownReliability` (the value a
 * provider with no outcomes is scored at), worth `RELIABILITY_PRIOR_WEIGHT` outcomes:
 *
 *     reliability = (ok + m × w) / (ok + failed + w)        m = unknownReliability, w = prior weight
 *
 * With the defaults (m = 0.25, w = 4, i.e. Beta(1, 3)) a newcomer is 0.25, one failure 0.2 and one
 * success 0.4: a failure always ranks a provider below a newcomer and a success above it, and a history
 * ranks below a newcomer exactly when its success rate is below m. (A Beta(1, 1) prior beside a 0.25
 * default made one failure, 0.333, look better than no history at all.)
 */
import { defaultScoringParams, type ScoringParams } from './scoring.js'

/** How many outcomes the prior is worth: small, so a few of this node's own outcomes dominate it. */
export const RELIABILITY_PRIOR_WEIGHT = 4

/** What this node saw of one provider: verified deliveries and failures it blamed on the provider. */
export interface Outcomes {
  ok: number
  failed: number
}

function isCount (n: number): boolean {
  return Number.isSafeInteger(n) && n >= 0
}

/** 0..1; exactly `params.unknownReliability` when there are no outcomes. Counts must be whole and ≥ 0. */
export function estimateReliability (outcomes: Outcomes, params: Pick<ScoringParams, 'unknownReliability'> = defaultScoringParams): number {
  const { ok, failed } = outcomes
  if (!isCount(ok) || !isCount(failed)) throw new RangeError(`outcome counts must be whole numbers ≥ 0 (ok ${ok}, failed ${failed})`)
  const mean = params.unknownReliability
  if (ok + failed === 0) return mean
  return (ok + mean * RELIABILITY_PRIOR_WEIGHT) / (ok + failed + RELIABILITY_PRIOR_WEIGHT)
}
