/**
 * The provider's second look at a job it bid on (provider-agent.ts): when the award comes, and when the
 * accepted job waits for its GPUs. Both re-run the bid policy (`decideBid`) on the node's ad and load at
 * that moment, because both may have changed since the bid.
 */
import type { CapabilityAd } from '../messages/capability-ad.js'
import type { JobRequest } from '../messages/job-request.js'
import { decideBid } from './bid-policy.js'
import { allocationFor } from './reservations.js'
import type { Allocation, BidDecision } from './types.js'

export type AwardReview =
  | { kind: 'accept', decision: Extract<BidDecision, { kind: 'bid' }>, allocation: Allocation }
  | { kind: 'decline', reason: string }

/**
 * Take the award when the job still fits the calendar and load now and the award pays at least the
 * ask; the allocation it commits (on the GPUs and start the policy chooses now).
 */
export function reviewAward (job: string, request: JobRequest, ad: CapabilityAd | undefined, allocations: Allocation[], ask: number, price: number, now: number, preemptExactLimit?: number): AwardReview {
  if (ad === undefined) return { kind: 'decline', reason: 'this node no longer sells' }
  const decision = decideBid(request, { ad, allocations, ...(preemptExactLimit !== undefined ? { preemptExactLimit } : {}) }, now)
  if (decision.kind === 'decline') return { kind: 'decline', reason: `${decision.reason}: ${decision.detail}` }
  if (price < ask) return { kind: 'decline', reason: `the award pays ${price}, below the ask of ${ask}` }
  return { kind: 'accept', decision, allocation: allocationFor(job, request, decision, price) }
}

/**
 * The allocation an accepted job may start on at `now`: `held` itself once its start has come; one
 * moved to now when GPUs it can use are free sooner (the policy, without `held`, would start it now and
 * preempt nothing); undefined while it must wait.
 */
export function startNow (request: JobRequest, ad: CapabilityAd | undefined, held: Allocation, others: Allocation[], now: number, preemptExactLimit?: number): Allocation | undefined {
  if (held.startedAt <= now) return held
  if (ad === undefined) return undefined
  const early = decideBid(request, { ad, allocations: others, ...(preemptExactLimit !== undefined ? { preemptExactLimit } : {}) }, now)
  if (early.kind !== 'bid' || early.startBy > now || early.preempts.length > 0) return undefined
  return { ...held, gpus: early.gpus, startedAt: now, endsAt: now + request.workload.maxRuntimeSec * 1000 }
}
