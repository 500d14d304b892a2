/** What the scenario tests share: the data files as the CLI reads them (cli/sim-command.ts), report.json's text, the books check. */
import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import type { StrategyRun } from '../../../../simulations/model.js'
import type { ScenarioData, ScenarioResult } from '../../../../simulations/scenarios/index.js'
import { buildReport, faultMetrics, metrics, reportJson } from '../../../../simulations/report/index.js'

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

/** report.json's text for a scenario's result, as the CLI builds it. */
export function reportText (r: ScenarioResult): string {
  const m = metrics(r.workload, r.runs, { listPrice: r.listPrice })
  const faults = faultMetrics(r.workload, r.runs, r.faults ?? [])
  return reportJson(buildReport(r.workload, m, { run: { scenario: r.scenario, seed: r.seed, nodes: r.nodes, jobs: r.jobs }, faults, ...(r.sections !== undefined ? { sections: r.sections } : {}) }))
}

/** Every job once, in one final state; money paid = money earned; nothing sold beyond what was offered. */
export function assertBooks (r: ScenarioResult, run: StrategyRun): void {
  assert.deepEqual(run.jobs.map((j) => j.job).sort(), r.workload.jobs.map((j) => j.id).sort())
  for (const j of run.jobs) assert.ok(['completed', 'failed', 'unserved'].includes(j.status))
  const paid = run.jobs.reduce((s, j) => s + j.paid, 0)
  const earned = run.nodes.reduce((s, n) => s + n.revenue, 0)
  assert.equal(paid, earned)
  for (const n of run.nodes) assert.ok(n.soldGpuHours <= n.offeredGpuHours + 1e-9, `${n.node} sold ${n.soldGpuHours} of ${n.offeredGpuHours}`)
}
