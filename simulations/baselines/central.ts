/**
 * The central omniscient matcher (issue 10, "Baselines"): the bound a decentralized market approaches —
 * one planner that sees the whole fleet's free windows at once, sends no messages and never fails.
 *
 * Jobs are served one at a time in submit order; at the same instant gold before silver before bronze
 * (then by id), which is its whole priority rule: it never preempts, and a job placed is never moved.
 * Each job goes to the fitting node (model, VRAM, GPU count, region/residency — fit.ts) whose ask
 * (`floorOf(node)`) is lowest and within the job's cap, provided that node has the job's GPUs free over
 * the job's whole duration at some start in [submit, submit + the tier's max start delay] (and before the
 * horizon); it starts at the earliest such instant. Among nodes with the same ask the earliest start
 * wins, then the node id. A job with no such node is unserved, ending when its delay runs out. The
 * renter pays the node's ask × GPU-hours.
 *
 * Cost per job: the fleet index gives the fitting nodes cheapest first, so the search stops at the first
 * ask that has a feasible node (or above the cap) instead of scanning the fleet.
 */
import type { GpuTimeline } from '../capacity.js'
import type { JobOutcome, StrategyRun, Workload } from '../model.js'
import { FleetIndex, capOf } from './fit.js'
import { accounting, type FleetBaselineOptions } from './options.js'
import { inWorkloadOrder, nodeOutcomes, notRun, ownerCapacity, placed, servingOrder } from './outcome.js'

export const CENTRAL = 'central'

export function central (workload: Workload, options: FleetBaselineOptions): StrategyRun {
  const acc = accounting(workload, options)
  const capacity = ownerCapacity(workload)
  const index = new FleetIndex(workload.fleet, options.floorOf)
  const outcomes = new Map<string, JobOutcome>()
  for (const job of servingOrder(workload.jobs)) {
    const delay = acc.delays[job.tier]
    const latest = Math.min(job.submitAt + delay, acc.horizonMs - 1)
    const cap = capOf(job, options.capOf)
    let best: { id: string, timeline: GpuTimeline, start: number, price: number } | undefined
    if (job.submitAt < acc.horizonMs) {
      for (const node of index.candidates(job)) {
        const price = options.floorOf(node)
        if (price > cap || (best !== undefined && price > best.price)) break
        const timeline = capacity.timeline(node.id)
        const start = timeline.earliestStart(job.gpus, job.submitAt, job.durationMs, best === undefined ? latest : Math.min(latest, best.start - 1))
        if (start === undefined || start > latest) continue
        if (best === undefined || start < best.start) best = { id: node.id, timeline, start, price }
      }
    }
    if (best === undefined) {
      outcomes.set(job.id, notRun(acc, job, Math.min(job.submitAt + delay, acc.horizonMs)))
      continue
    }
    best.timeline.add(best.start, best.start + job.durationMs, job.gpus)
    outcomes.set(job.id, placed(acc, job, best.id, best.start, best.price, job.submitAt))
  }
  return { strategy: CENTRAL, jobs: inWorkloadOrder(workload, outcomes), nodes: nodeOutcomes(workload, [...outcomes.values()]) }
}
