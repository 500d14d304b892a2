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
 * It is a greedy bound, not an optimum: on one workload a flexible job can take the only node a later
 * strict job could use, and random assignment can be luckier (the property test shows such a case).
 * Summed over workloads it serves more and costs renters less than the auctions without waiting.
 *
 * Cost per job: the fleet index gives the fitting groups (model, VRAM, region), each cheapest first; in
 * each the search skips full nodes by their free-instant bounds (free-hints.ts) and stops at the first
 * ask above the best found or the cap, so it never scans the fleet.
 */
import type { GpuTimeline } from '../capacity.js'
import type { JobOutcome, StrategyRun, Workload } from '../model.js'
import { FleetIndex, capOf } from './fit.js'
import { CandidateScan, FreeHints, probeFor } from './free-hints.js'
import { accounting, type FleetBaselineOptions } from './options.js'
import { inWorkloadOrder, nodeOutcomes, notRun, ownerCapacity, placed, servingOrder } from './outcome.js'

export const CENTRAL = 'central'

export function central (workload: Workload, options: FleetBaselineOptions): StrategyRun {
  const acc = accounting(workload, options)
  const capacity = ownerCapacity(workload)
  const index = new FleetIndex(workload.fleet, options.floorOf)
  const hints = new FreeHints(capacity)
  const scan = new CandidateScan(hints)
  const outcomes = new Map<string, JobOutcome>()
  for (const job of servingOrder(workload.jobs)) {
    const delay = acc.delays[job.tier]
    const latest = Math.min(job.submitAt + delay, acc.horizonMs - 1)
    const cap = capOf(job, options.capOf)
    let best: { id: string, timeline: GpuTimeline, start: number, price: number } | undefined
    if (job.submitAt < acc.horizonMs) {
      const probe = probeFor(job.durationMs)
      for (const group of index.groups(job)) {
        scan.scan(group.nodes, job.gpus, probe, job.submitAt, () => latest, (node, first) => {
          const price = options.floorOf(node)
          if (price > cap || (best !== undefined && price > best.price)) return false
          const timeline = hints.timeline(node)
          const start = timeline.earliestStart(job.gpus, first, job.durationMs, latest)
          if (start === undefined || start > latest) return true
          if (best === undefined || price < best.price || start < best.start || (start === best.start && node.id < best.id)) best = { id: node.id, timeline, start, price }
          return true
        })
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
