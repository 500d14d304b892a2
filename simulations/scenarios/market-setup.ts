/**
 * The market scenario's building blocks, shared by every scenario on its workload (`market`, `churn`,
 * `partition`, …): the Alibaba 2023 trace's busy window as a workload (`marketWorkload`), the RIPE Atlas
 * delays between the nodes' countries (`measuredNetwork`), the prices (`prepareMarket`), and one run of
 * the gpumesh market on it, with or without faults (`runGpumesh`).
 *
 * The trace is a light load (workloads/README: its pods fill 0.27 % of the fleet's GPU-hours), so the
 * workload takes its busy part — days 112–149, where most pods arrive — with arrivals 150× closer and
 * real durations (owners 6.6 %, renters' demand 18 % of the fleet over 5.9 h). `--jobs M` resamples the
 * renters' jobs to M (their shapes bootstrapped, arriving at the trace's fitted rate); `--nodes N` draws a
 * fleet of N nodes shaped like the trace's.
 */
import { DAY_SEC } from '../../protocol/limits.js'
import { Prng } from '../harness/prng.js'
import { DEFAULT_START } from '../harness/harness.js'
import { peerIdOf } from '../harness/ids.js'
import { regionNetwork, type NetworkModel } from '../harness/network.js'
import type { FleetBaselineOptions } from '../baselines/options.js'
import { drainMsFor, renterCountries, runMarket, type MarketRun, type MarketRunStats } from '../market/run-market.js'
import type { SimJob, StrategyRun, Workload } from '../model.js'
import type { ChurnSchedule } from '../network/churn.js'
import { countryNetwork } from '../network/country-network.js'
import { partitionedNetwork, type RegionPartition } from '../network/partition.js'
import { parseRttTable } from '../network/rtt-table.js'
import { alibabaWorkload } from '../workloads/alibaba.js'
import { parseJobCsv } from '../workloads/generic-csv.js'
import { resampleJobs } from '../workloads/synthetic.js'
import { buildWorkload, type LoadSummary } from '../workloads/workload.js'
import { scenarioPrices, type ScenarioPrices } from './pricing.js'
import type { ScenarioData, ScenarioOptions, ScenarioResult } from './scenario.js'

/** The trace's busy window, trace seconds, and how much closer its arrivals come. */
export const MARKET_WINDOW = Object.freeze({ startS: 112 * DAY_SEC, endS: 149.3 * DAY_SEC })
export const MARKET_TIME_SCALE = 150
export const MARKET_DEFAULTS = Object.freeze({ nodes: 1_213, jobs: 300 })

/** The scenario's workload: the trace's window, its renters' jobs resampled to `jobs` (or a `--trace` CSV's). */
export function marketWorkload (data: ScenarioData, options: ScenarioOptions, defaults: { nodes: number, jobs: number } = MARKET_DEFAULTS): { workload: Workload, summary: LoadSummary } {
  const nodes = options.nodes ?? defaults.nodes
  const built = alibabaWorkload({ nodes: data.alibabaNodes, pods: data.alibabaPods }, {
    seed: options.seed,
    window: MARKET_WINDOW,
    timeScale: MARKET_TIME_SCALE,
    scaleDurations: false,
    ...(nodes !== 1_213 ? { fleetSize: nodes } : {})
  })
  let jobs = built.workload.jobs
  if (data.trace !== undefined) jobs = parseJobCsv(data.trace.text, { source: data.trace.source }).jobs
  const count = options.jobs ?? defaults.jobs
  if (count !== jobs.length) jobs = resampleJobs(new Prng(options.seed).fork('market:jobs'), jobs, count)
  const horizonMs = Math.max(built.workload.horizonMs, ...jobs.map((j) => j.submitAt + 1))
  const name = `${data.trace === undefined ? 'alibaba-2023 openb, days 112–149 at 150× arrivals' : data.trace.source}, ${built.workload.fleet.length} nodes, ${jobs.length} jobs`
  const out = buildWorkload({ name, fleet: built.workload.fleet, ownerWork: built.workload.ownerWork, jobs, horizonMs, dropped: built.summary.dropped, censored: built.summary.censored })
  // the drain: the clock runs on after the last arrival until the work placed has ended, in every strategy
  out.workload.drainMs = drainMsFor(out.workload)
  return out
}

/**
 * The RIPE Atlas delays between the nodes' countries (network/country-network.ts). Providers join the
 * bus with their node's country; a renter (`peer:renter-<region>`) sits in the country of the first node
 * of its region, a global one in the fleet's most common country.
 */
export function measuredNetwork (rttCsv: string, workload: Workload): (prng: Prng) => NetworkModel {
  const table = parseRttTable(rttCsv)
  const byPeer = new Map<string, string>()
  for (const n of workload.fleet) byPeer.set(peerIdOf(n.id), n.country)
  const renterCountry = renterCountries(workload.fleet)
  const countryOf = (peer: string): string => {
    const known = byPeer.get(peer)
    if (known !== undefined) return known
    const key = peer.startsWith('peer:renter-') ? peer.slice('peer:renter-'.length) : undefined
    return renterCountry(key === 'global' ? undefined : key)
  }
  return (prng) => countryNetwork(table, countryOf, prng)
}

/** When the workload's renters submit: the first and the last submission, ms since the run's start. */
export function submissionSpan (workload: Workload): { firstMs: number, lastMs: number } {
  let firstMs = Infinity
  let lastMs = -Infinity
  for (const j of workload.jobs) {
    if (j.submitAt < firstMs) firstMs = j.submitAt
    if (j.submitAt > lastMs) lastMs = j.submitAt
  }
  return workload.jobs.length === 0 ? { firstMs: 0, lastMs: 0 } : { firstMs, lastMs }
}

/** The instant `share` of the way through the workload's submissions (whole ms, inside the horizon). */
export function intoSubmissions (workload: Workload, share: number): number {
  const { firstMs, lastMs } = submissionSpan(workload)
  return Math.min(workload.horizonMs - 1, Math.floor(firstMs + share * (lastMs - firstMs)))
}

/** What every strategy of a market-workload scenario shares. */
export interface MarketSetup {
  workload: Workload
  summary: LoadSummary
  prices: ScenarioPrices
  /** A job's cap for the gpumesh renters (0 when no model fits). */
  capOf: (job: SimJob) => number
  /** The baselines' options (list price, floors, caps). */
  baseline: FleetBaselineOptions
  /** The measured network when the RTT table is given (else the harness's region network). */
  network?: (prng: Prng) => NetworkModel
}

/** The workload, prices and network of a market-workload scenario (progress phase `workload`). */
export function prepareMarket (data: ScenarioData, options: ScenarioOptions, defaults: { nodes: number, jobs: number } = MARKET_DEFAULTS): MarketSetup {
  options.onProgress?.('workload', 0, 1)
  const { workload, summary } = marketWorkload(data, options, defaults)
  options.onProgress?.('workload', 1, 1)
  const prices = scenarioPrices(data.prices, workload.fleet, options.seed)
  return {
    workload,
    summary,
    prices,
    capOf: (job) => prices.capOf(job) ?? 0,
    baseline: { listPrice: prices.listPrice, floorOf: prices.floorOf, capOf: prices.capOf },
    ...(data.rtt !== undefined ? { network: measuredNetwork(data.rtt, workload) } : {})
  }
}

export interface GpumeshRunOptions {
  /** The progress phase (and the strategy name unless `strategy` is given). */
  phase: string
  strategy?: string
  /** Providers crash and restart on this schedule (times since the run's start). */
  churn?: ChurnSchedule
  /** Region partitions, times in ms since the run's start. */
  partitions?: readonly RegionPartition[]
  /**
   * Gossip through the gossipsub mesh model and measure each job's `providers` lookup on the Kademlia
   * model (run-market.ts `mesh`, `discovery`). Default on, as in every scenario; false runs the bus's
   * plain delivery (`gossipHops × latency`) for comparison.
   */
  overlay?: boolean
}

/** One run of the gpumesh market on the setup's workload, with the faults given. */
export function runGpumesh (setup: MarketSetup, options: ScenarioOptions, run: GpumeshRunOptions): MarketRun {
  const base = setup.network ?? ((prng: Prng) => regionNetwork(prng))
  const partitions = (run.partitions ?? []).map((p) => ({ ...p, fromMs: DEFAULT_START + p.fromMs, untilMs: DEFAULT_START + p.untilMs }))
  const network = partitions.length === 0 ? setup.network : (prng: Prng) => partitionedNetwork(base(prng), partitions)
  return runMarket(setup.workload, {
    seed: options.seed,
    start: DEFAULT_START,
    ...(network !== undefined ? { network } : {}),
    floorOf: setup.prices.floorOf,
    capOf: setup.capOf,
    strategy: run.strategy ?? run.phase,
    ...(run.overlay !== false ? { mesh: true, discovery: true } : {}),
    ...(run.churn !== undefined ? { churn: run.churn } : {}),
    ...(options.onProgress !== undefined ? { onProgress: (done: number, total: number) => options.onProgress?.(run.phase, done, total), progressEvery: 50 } : {})
  })
}

/** What a market-workload scenario's result starts with: its name, seed, size, workload, runs, the gpumesh run's traffic and the list prices. */
export function marketResult (scenario: string, setup: MarketSetup, options: ScenarioOptions, runs: StrategyRun[], market: MarketRunStats): Omit<ScenarioResult, 'assumptions'> {
  const { workload } = setup
  return { scenario, seed: options.seed, nodes: workload.fleet.length, jobs: workload.jobs.length, workload, summary: setup.summary, runs, market, listPrice: setup.prices.listPrice }
}

/** The market workload's assumptions, one sentence each, for every scenario on it. */
export const MARKET_ASSUMPTIONS: readonly string[] = Object.freeze([
  'Fleet and pods: Alibaba GPU cluster trace 2023 (openb, Weng et al., USENIX ATC 2023); G1–G3 taken as A100s (simulations/workloads/README.md).',
  'Load: days 112–149 of the trace with arrivals 150× closer and real durations; 30 % of the pods are outside renters, the rest the owners\' own work.',
  'Places: nodes drawn over countries from an assumed GPU fleet distribution (simulations/network/geo.ts); one-way delays drawn from the RIPE Atlas inter-country RTT table (simulations/network/).',
  'Prices: list = the snapshot\'s on-demand median per model; a renter\'s cap = the cheapest fitting list price; an owner\'s floor = 40–70 % of its model\'s list price.',
  'gpumesh runs with a 10-minute lease and hourly billing (simulations/market/run-market.ts SIM_MARKET_PARAMS); every other market parameter is the daemon\'s default.'
])
