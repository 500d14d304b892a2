/**
 * How the baselines see a fault that takes nodes down (churn, a burst): as an oracle. `withDowntime`
 * gives the central matcher (or any fleet baseline) a workload in which every offline interval of a
 * node holds all of its GPUs — as if the owner's own work filled them — so no job is placed across a
 * node's downtime: a job it places never fails. The owners' own work inside a downtime is left out
 * (the node is down; its GPUs are already held), so the holds never exceed the node's GPUs.
 * `withNodeOutcomes` then accounts the run's nodes on the real workload, so every strategy is measured
 * against the same offered GPU-hours (downtime is lost supply, not owners' work).
 */
import { nodeOutcomes } from '../baselines/outcome.js'
import type { OwnerWork, StrategyRun, Workload } from '../model.js'
import type { ChurnSchedule, Interval } from '../network/churn.js'

/** [start, end) less the sorted, disjoint `cuts`: the pieces left. */
function subtract (start: number, end: number, cuts: readonly Interval[]): Array<[number, number]> {
  const out: Array<[number, number]> = []
  let from = start
  for (const c of cuts) {
    if (c.until <= from) continue
    if (c.from >= end) break
    if (c.from > from) out.push([from, Math.min(c.from, end)])
    from = Math.max(from, c.until)
    if (from >= end) break
  }
  if (from < end) out.push([from, end])
  return out
}

/** `workload` with each node's offline intervals of `schedule` as holds of all its GPUs (named `downtime`). */
export function withDowntime (workload: Workload, schedule: ChurnSchedule): Workload {
  const offline = new Map(schedule.nodes.filter((n) => n.offline.length > 0).map((n) => [n.node, n.offline]))
  const gpus = new Map(workload.fleet.map((n) => [n.id, n.gpus]))
  const work: OwnerWork[] = []
  for (const w of workload.ownerWork) {
    const cuts = offline.get(w.node)
    if (cuts === undefined) { work.push(w); continue }
    for (const [start, end] of subtract(w.start, w.end, cuts)) work.push({ ...w, start, end })
  }
  for (const [node, ivs] of offline) {
    const n = gpus.get(node)
    if (n === undefined || n === 0) continue
    for (const iv of ivs) if (iv.until > iv.from) work.push({ node, start: iv.from, end: iv.until, gpus: n, source: 'downtime' })
  }
  work.sort((a, b) => a.start - b.start || a.end - b.end || (a.node < b.node ? -1 : a.node > b.node ? 1 : 0))
  return { ...workload, ownerWork: work }
}

/** `run` renamed `strategy`, with its nodes accounted on `workload` (the real owners' work). */
export function withNodeOutcomes (run: StrategyRun, workload: Workload, strategy = run.strategy): StrategyRun {
  return { strategy, jobs: run.jobs, nodes: nodeOutcomes(workload, run.jobs) }
}
