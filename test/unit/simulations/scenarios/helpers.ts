/** What the scenario tests share: the data files as the CLI reads them (cli/sim-command.ts), the report as it builds it, the books check. */
import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import type { ScenarioData, ScenarioResult } from '../../../../simulations/scenarios/scenario.js'
import type { StrategyRun, Workload } from '../../../../simulations/model.js'
import { buildReport, faultMetrics, horizonAccount, metrics, reportJson, wholeRunAccount, type FaultMetrics } from '../../../../simulations/report/index.js'

const DATA = new URL('../../../../../simulations/data/', import.meta.url)

let data: ScenarioData | undefined

export function scenarioData (): ScenarioData {
  const text = (path: string): string => readFileSync(new URL(path, DATA), 'utf8')
  data ??= {
    alibabaNodes: text('traces/alibaba-gpu-2023/openb_node_list_gpu_node.csv'),
    alibabaPods: text('traces/alibaba-gpu-2023/openb_pod_list_default.csv'),
    prices: text('prices/gpu_prices_snapshot.csv'),
    rtt: text('latency/ripe_atlas_country_rtt_stat.csv')
  }
  return data
}

/** report.json of a scenario's result, and its faults' numbers, as the CLI builds them. */
export function reportOf (r: ScenarioResult): { json: string, faults: FaultMetrics[] } {
  const faults = faultMetrics(r.workload, r.runs, r.faults ?? [])
  const m = metrics(r.workload, r.runs, { listPrice: r.listPrice })
  const report = buildReport(r.workload, m, { run: { scenario: r.scenario, seed: r.seed, nodes: r.nodes, jobs: r.jobs }, faults, ...(r.sections !== undefined ? { sections: r.sections } : {}) })
  return { json: reportJson(report), faults }
}

/** report.json's text for a scenario's result. */
export function reportText (r: ScenarioResult): string {
  return reportOf(r).json
}

/** Every job in exactly one final state; GPU-hours sold within those offered, per node over the run and on the fleet inside the horizon; money paid = money earned (on the fleet). */
export function assertBooks (workload: Workload, run: StrategyRun): void {
  assert.deepEqual(run.jobs.map((j) => j.job).sort(), workload.jobs.map((j) => j.id).sort(), `${run.strategy}: one outcome per job`)
  for (const j of run.jobs) assert.ok(['completed', 'failed', 'unserved'].includes(j.status), `${run.strategy} ${j.job}: ${j.status}`)
  for (const n of run.nodes) assert.ok(n.soldGpuHours <= n.offeredGpuHours + 1e-9, `${run.strategy} ${n.node}: sold ${n.soldGpuHours} of ${n.offeredGpuHours}`)
  const inHorizon = horizonAccount(workload, run)
  const whole = wholeRunAccount(workload, run)
  assert.ok(inHorizon.soldGpuHours <= inHorizon.offeredGpuHours + 1e-9, `${run.strategy}: sold ${inHorizon.soldGpuHours} of ${inHorizon.offeredGpuHours} inside the horizon`)
  assert.ok(inHorizon.soldGpuHours <= whole.soldGpuHours + 1e-9, `${run.strategy}: ${inHorizon.soldGpuHours} sold inside the horizon, ${whole.soldGpuHours} over the run`)
  const paid = run.jobs.reduce((s, j) => s + j.paid, 0)
  const earned = run.nodes.reduce((s, n) => s + n.revenue, 0)
  // the old way's renters pay the cloud, not the owners
  if (run.strategy === 'old-way') assert.equal(earned, 0)
  else assert.equal(paid, earned, `${run.strategy}: paid ${paid}, earned ${earned}`)
}
