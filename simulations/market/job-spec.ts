/**
 * A workload's job as a renter's gpumesh job request (the harness's JobSpec): its GPUs, models, VRAM,
 * tier, region rule and price cap, a maximum runtime a little above how long it really runs (renters
 * overestimate; billing counts the time run), and a start delay by tier.
 */
import { MAX_RUNTIME_SEC, MINUTE_MS } from '../../protocol/limits.js'
import type { JobSpec } from '../harness/payloads.js'
import { DEFAULT_MAX_START_DELAY_MS, type SimJob, type Tier } from '../model.js'

/** How long each tier may wait for its start, s (the job's `maxStartDelaySec`; also its award deadline): model.ts's table. */
export const DEFAULT_START_DELAY_SEC: Readonly<Record<Tier, number>> = Object.freeze({
  gold: DEFAULT_MAX_START_DELAY_MS.gold / 1000,
  silver: DEFAULT_MAX_START_DELAY_MS.silver / 1000,
  bronze: DEFAULT_MAX_START_DELAY_MS.bronze / 1000
})

/** A renter asks for this much more runtime than the job needs (percent), rounded up to whole minutes. */
export const RUNTIME_HEADROOM_PERCENT = 10

export interface JobSpecRules {
  /** The renter's cap when the job names none: micros per GPU-hour (e.g. the list price it would pay the old way). */
  capOf: (job: SimJob) => number
  startDelaySec: Readonly<Record<Tier, number>>
  bidWindowMs: number
}

/** The job's max runtime, s: its duration plus headroom, whole minutes, at most MAX_RUNTIME_SEC. */
export function maxRuntimeSec (durationMs: number): number {
  // integers only: 30 min × 1.1 in floating point is 33.000000000000004 minutes
  const minutes = Math.ceil(durationMs * (100 + RUNTIME_HEADROOM_PERCENT) / (100 * MINUTE_MS))
  return Math.min(MAX_RUNTIME_SEC, Math.max(1, minutes) * 60)
}

export function jobSpecOf (job: SimJob, rules: JobSpecRules): JobSpec {
  const delay = rules.startDelaySec[job.tier]
  const runtime = maxRuntimeSec(job.durationMs)
  return {
    gpus: job.gpus,
    minVramGB: job.minVramGB,
    models: [...job.models],
    tier: job.tier,
    maxPrice: job.maxPrice ?? rules.capOf(job),
    maxStartDelaySec: delay,
    regions: job.region === undefined ? [] : [job.region],
    residency: job.residency,
    maxRuntimeSec: runtime,
    bidWindowMs: rules.bidWindowMs,
    // valid until its start delay runs out: no award after that (the requester's expiry rule)
    lifetimeMs: Math.max(rules.bidWindowMs * 2, delay * 1000),
    outputs: ['result'],
    label: job.id
  }
}
