/**
 * `partition` (issue 10, "Adversaries and faults"): the market workload (market-setup.ts) with one
 * continent cut from the rest of the world for a window while the renters submit (PARTITION_CUT): every
 * message between a node in Europe and a node elsewhere sent inside the window is dropped (gossip lost,
 * exec streams reset: network/partition.ts, the harness's drop hook). Jobs running across the cut lose
 * their stream, are reported and re-auctioned; jobs submitted during it see only their own side's bids.
 *
 * Compared on the same workload: gpumesh under the partition (`gpumesh+partition`), gpumesh without it
 * (`gpumesh`), the central matcher (a planner that needs no network, so the partition does
 * not touch it: the bound) and the old way. The faults section gives completion before, during and
 * after the window; the claim is that the market recovers: jobs submitted after the window complete as
 * they do without it.
 */
import { central, oldWay } from '../baselines/index.js'
import { regionArea } from '../network/geo.js'
import type { RegionPartition } from '../network/partition.js'
import type { FaultSpec } from '../report/faults.js'
import { MARKET_ASSUMPTIONS, intoSubmissions, prepareMarket, runGpumesh, submissionSpan, marketResult } from './market-setup.js'
import type { Scenario, ScenarioData, ScenarioOptions, ScenarioResult } from './scenario.js'
import type { Workload } from '../model.js'

export const PARTITION_DEFAULTS = Object.freeze({ nodes: 300, jobs: 200 })

/**
 * The cut: this area against every other, from this share of the way through the renters' submissions,
 * for this long — or, when the submissions span less than it needs, for `maxSpanShare` of their span, so
 * that jobs are still submitted after the window (small `--jobs`).
 */
export const PARTITION_CUT = Object.freeze({ area: 'eu', atShare: 0.4, durationMs: 30 * 60_000, maxSpanShare: 0.3 })

/**
 * After the window the market must recover: the jobs submitted after it complete at least this share of
 * what they complete without the partition (nothing of the cut should linger once messages pass again).
 */
export const PARTITION_MIN_RECOVERY = 0.95

/** The partition of `workload`: PARTITION_CUT.area against every other area its nodes and jobs are in. */
export function partitionOf (workload: Workload): RegionPartition {
  const areas = new Set<string>()
  for (const n of workload.fleet) areas.add(regionArea(n.region))
  for (const j of workload.jobs) if (j.region !== undefined) areas.add(regionArea(j.region))
  areas.delete(PARTITION_CUT.area)
  const fromMs = intoSubmissions(workload, PARTITION_CUT.atShare)
  const { firstMs, lastMs } = submissionSpan(workload)
  const durationMs = Math.max(1, Math.min(PARTITION_CUT.durationMs, Math.floor(PARTITION_CUT.maxSpanShare * (lastMs - firstMs))))
  return { sideA: [PARTITION_CUT.area], sideB: [...areas].sort(), fromMs, untilMs: Math.min(workload.horizonMs, fromMs + durationMs) }
}

const hours = (ms: number): string => (ms / 3_600_000).toFixed(2)

export const partition: Scenario = {
  name: 'partition',
  summary: 'the market workload with Europe cut from the rest of the world for 30 minutes mid-run: gpumesh with and without the cut, and whether it recovers',
  defaults: PARTITION_DEFAULTS,
  run (data: ScenarioData, options: ScenarioOptions): ScenarioResult {
    const setup = prepareMarket(data, options, PARTITION_DEFAULTS)
    const { workload, baseline } = setup
    const cut = partitionOf(workload)
    const partitioned = runGpumesh(setup, options, { phase: 'gpumesh+partition', partitions: [cut] })
    const calm = runGpumesh(setup, options, { phase: 'gpumesh' })
    options.onProgress?.('baselines', 0, 2)
    const runs = [calm.run, partitioned.run, central(workload, baseline), oldWay(workload, baseline)]
    options.onProgress?.('baselines', 2, 2)
    const inside = workload.fleet.filter((n) => regionArea(n.region) === PARTITION_CUT.area).length
    const fault: FaultSpec = {
      name: 'partition',
      fault: `${cut.sideA.join(', ')} (${inside} of ${workload.fleet.length} nodes) cut from ${cut.sideB.join(', ')} over [${hours(cut.fromMs)} h, ${hours(cut.untilMs)} h): every message across the cut sent in the window is dropped (gossip lost, exec streams reset). Central needs no network and is not cut.`,
      strategy: 'gpumesh+partition',
      without: 'gpumesh',
      bound: 'central',
      phases: [
        { name: 'before the cut', fromMs: 0, untilMs: cut.fromMs },
        { name: 'during the cut', fromMs: cut.fromMs, untilMs: cut.untilMs },
        { name: 'after the cut', fromMs: cut.untilMs, untilMs: workload.horizonMs }
      ],
      expect: [{ id: 'partition-recovery', claim: 'the market recovers after the partition', phase: 'after the cut', minCompletion: PARTITION_MIN_RECOVERY, relative: true }]
    }
    return {
      ...marketResult('partition', setup, options, runs, partitioned.stats),
      faults: [fault],
      assumptions: [
        ...MARKET_ASSUMPTIONS,
        `Partition: ${PARTITION_CUT.area} against every other area for ${((cut.untilMs - cut.fromMs) / 60_000).toFixed(1)} min (${PARTITION_CUT.durationMs / 60_000} min, or ${Math.round(PARTITION_CUT.maxSpanShare * 100)} % of the submissions' span when that is shorter) from ${Math.round(PARTITION_CUT.atShare * 100)} % of the way through the renters\' submissions; a message is judged by when it is sent. A stream whose message is dropped ends on both sides at once (a TCP connection to an unreachable peer), so its job is reported and re-auctioned.`,
        'The central matcher is not cut (it needs no network): the bound. The old way rents from one cloud, which the cut does not reach.'
      ]
    }
  }
}
