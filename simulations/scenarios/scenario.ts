/**
 * What a scenario is: a named experiment with a documented default size. It takes the data files'
 * text (the CLI reads them; nothing here does I/O), a seed and a size, builds one workload, runs
 * every strategy it compares on that same workload, and returns the runs for the report. Same data,
 * seed and size → the same result.
 */
import type { StrategyRun, Workload } from '../model.js'
import type { LoadSummary } from '../workloads/workload.js'
import type { MarketRunStats } from '../market/run-market.js'
import type { ListPrice } from '../baselines/fit.js'
import type { FaultSpec } from '../report/faults.js'
import type { ReportSection } from '../report/report.js'
import type { MessagesPoint } from '../report/charts.js'

/** The data a scenario may read, as text (simulations/data/ by default; `--trace` replaces the jobs). */
export interface ScenarioData {
  alibabaNodes: string
  alibabaPods: string
  prices: string
  /** The RIPE Atlas inter-country RTT table (simulations/data/latency/), for the network model. */
  rtt?: string
  /** A generic job CSV (`--trace FILE`), replacing the trace's renter jobs. */
  trace?: { text: string, source: string }
}

export interface ScenarioOptions {
  seed: number
  /** Fleet size (the scenario's default when absent). */
  nodes?: number
  /** Renter jobs (the scenario's default when absent). */
  jobs?: number
  /** Progress: the phase, and how far it is (done of total, in the phase's own unit). */
  onProgress?: (phase: string, done: number, total: number) => void
}

export interface ScenarioResult {
  scenario: string
  seed: number
  /** The size it ran at. */
  nodes: number
  jobs: number
  workload: Workload
  /** What the workload holds and what its loader dropped. */
  summary: LoadSummary
  /** One run per strategy, gpumesh first. */
  runs: StrategyRun[]
  /** The gpumesh run's traffic. */
  market: MarketRunStats
  /** The list price per model slug the run used (the report's yardstick). */
  listPrice: ListPrice
  /** The assumptions the numbers rest on, one sentence each, for the report. */
  assumptions: string[]
  /** The fault runs among `runs`, for the report's faults section (report/faults.ts). */
  faults?: FaultSpec[]
  /**
   * The scenario's own results (report.ts ReportSection: key, title, JSON already rounded, markdown lines),
   * e.g. scale's rows per N, the flash crowd's waits by window, the market run's traffic: report.json's
   * `sections[key]` and report.md's `## title`, after the faults.
   */
  sections?: ReportSection[]
  /** Messages per job against the number of nodes (the messages-per-job chart), when the scenario measured it. */
  messagesVsN?: MessagesPoint[]
}

export interface Scenario {
  name: string
  /** One line for `gpumesh sim --help` and the report. */
  summary: string
  defaults: { nodes: number, jobs: number }
  run: (data: ScenarioData, options: ScenarioOptions) => ScenarioResult
}

/** `--scenario` names no scenario. */
export class UnknownScenarioError extends Error {
  readonly code = 'UNKNOWN_SCENARIO'
  constructor (readonly scenario: string, readonly known: readonly string[]) {
    super(`unknown scenario ${JSON.stringify(scenario)} (known: ${known.join(', ')})`)
    this.name = 'UnknownScenarioError'
  }
}
