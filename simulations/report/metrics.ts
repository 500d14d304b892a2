/**
 * The report's metrics (issue 10, "Metrics in every report"), computed from strategies' outcomes alone,
 * so every strategy is measured by the same code:
 *
 * - utilization of offered GPU-hours (sold / offered) and of the whole fleet ((owners' work + sold) / every
 *   GPU × the window): the headline inside the arrival horizon [0, horizonMs), the whole run (the horizon and
 *   the drain, model.ts runEndMs) beside it as `wholeRun`; over time in buckets (default 1 h). How each is
 *   counted: utilization.ts;
 * - renter cost per GPU-hour run (Σ paid / Σ GPU-hours) and against list price (Σ paid / Σ listCost);
 *   with `listPrice`, also the cost of the whole demand against list price: what ran at what it paid,
 *   and what did not run bought at list price (the renter's fallback), over the demand at list price;
 * - owner revenue per GPU-hour sold and per GPU-hour offered;
 * - wait (startedAt − submittedAt, over the jobs that started) p50/p95/p99 by tier and overall, with
 *   unserved jobs counted apart; time to award (awardedAt − submittedAt); SLA misses, preemptions;
 *   bids (where the strategy has them), messages and bytes per job; completion (completed / jobs).
 *
 * Percentiles are nearest-rank: the p-th percentile of n sorted values is the value at rank
 * ⌈p/100 × n⌉ (1-based; rank 1 at p = 0), always one of the values; none (null) when n = 0.
 */
import { TIERS, type ListPrice } from '../baselines/fit.js'
import { ListCatalogue } from '../baselines/outcome.js'
import type { JobOutcome, StrategyRun, Tier, Workload } from '../model.js'
import { horizonAccount, utilizationOverTime, wholeRunAccount, type UtilizationAccount, type UtilizationPoint } from './utilization.js'

const HOUR_MS = 3_600_000

export interface Percentiles { n: number, p50: number | null, p95: number | null, p99: number | null, max: number | null }

export interface TierMetrics {
  jobs: number
  completed: number
  failed: number
  unserved: number
  slaMisses: number
  gpuHours: number
  paid: number
  costPerGpuHour: number | null
  costVsList: number | null
  /** Wait, ms, over the tier's jobs that started. */
  wait: Percentiles
}

export interface StrategyMetrics {
  strategy: string
  jobs: number
  completed: number
  failed: number
  unserved: number
  completion: number | null
  gpuHours: number
  paid: number
  listCost: number
  costPerGpuHour: number | null
  costVsList: number | null
  /** (paid + list price of the demand not run) / list price of the whole demand; null without listPrice. */
  demandCostVsList: number | null
  /** GPU-hours offered, sold, of the owners' work and of the fleet inside the arrival horizon [0, horizonMs) (the headline). */
  offeredGpuHours: number
  soldGpuHours: number
  ownerGpuHours: number
  fleetGpuHours: number
  /** sold / offered inside the horizon (the headline). */
  utilizationOffered: number | null
  /** (owners' work + sold) / fleet inside the horizon (the headline). */
  utilizationFleet: number | null
  /** The same over the whole run [0, runEndMs): the horizon and the drain, from the strategy's node lines. */
  wholeRun: UtilizationAccount
  /** Owners' revenue over the whole run. */
  revenue: number
  /** Revenue per GPU-hour sold and per GPU-hour offered, both over the whole run (where the revenue was earned). */
  revenuePerSoldGpuHour: number | null
  revenuePerOfferedGpuHour: number | null
  slaMisses: number
  preemptions: number
  wait: Percentiles
  timeToAward: Percentiles
  bidsPerJob: number | null
  messagesPerJob: number | null
  bytesPerJob: number | null
  byTier: Record<Tier, TierMetrics>
  utilizationOverTime: UtilizationPoint[]
}

export interface MetricsOptions {
  /** List prices, for `demandCostVsList`. */
  listPrice?: ListPrice
  /** Bucket of the utilization series, ms (default 1 h). */
  bucketMs?: number
}

/** The nearest-rank p-th percentile (0 ≤ p ≤ 100) of ascending `sorted`; null when empty. */
export function nearestRank (sorted: readonly number[], p: number): number | null {
  if (!(p >= 0 && p <= 100)) throw new RangeError(`percentile must be in [0, 100], got ${p}`)
  if (sorted.length === 0) return null
  const rank = Math.max(1, Math.ceil((p / 100) * sorted.length))
  return sorted[rank - 1] as number
}

export function percentiles (values: readonly number[]): Percentiles {
  const sorted = [...values].sort((a, b) => a - b)
  const max = sorted.length === 0 ? null : sorted[sorted.length - 1] as number
  return { n: sorted.length, p50: nearestRank(sorted, 50), p95: nearestRank(sorted, 95), p99: nearestRank(sorted, 99), max }
}

function ratio (a: number, b: number): number | null {
  return b > 0 ? a / b : null
}

function sum<T> (items: readonly T[], f: (t: T) => number): number {
  let s = 0
  for (const x of items) s += f(x)
  return s
}

/** startedAt − submittedAt of the jobs that started. */
export function waits (jobs: readonly JobOutcome[]): number[] {
  const out: number[] = []
  for (const j of jobs) if (j.startedAt !== undefined) out.push(j.startedAt - j.submittedAt)
  return out
}

function tierMetrics (jobs: readonly JobOutcome[]): TierMetrics {
  const gpuHours = sum(jobs, (j) => j.gpuHours)
  const paid = sum(jobs, (j) => j.paid)
  return {
    jobs: jobs.length,
    completed: jobs.filter((j) => j.status === 'completed').length,
    failed: jobs.filter((j) => j.status === 'failed').length,
    unserved: jobs.filter((j) => j.status === 'unserved').length,
    slaMisses: jobs.filter((j) => j.slaMiss).length,
    gpuHours,
    paid,
    costPerGpuHour: ratio(paid, gpuHours),
    costVsList: ratio(paid, sum(jobs, (j) => j.listCost)),
    wait: percentiles(waits(jobs))
  }
}

function demandCostVsList (workload: Workload, jobs: readonly JobOutcome[], listPrice: ListPrice): number | null {
  const catalogue = new ListCatalogue(workload.fleet, listPrice)
  const byId = new Map(workload.jobs.map((j) => [j.id, j]))
  let demand = 0
  let cost = 0
  for (const o of jobs) {
    const job = byId.get(o.job)
    if (job === undefined) continue
    const hours = job.gpus * job.durationMs / HOUR_MS
    demand += catalogue.cost(job, hours)
    cost += o.paid + catalogue.cost(job, Math.max(0, hours - o.gpuHours))
  }
  return ratio(cost, demand)
}

export function strategyMetrics (workload: Workload, run: StrategyRun, options: MetricsOptions = {}): StrategyMetrics {
  const jobs = run.jobs
  const byTier = {} as Record<Tier, TierMetrics>
  for (const tier of TIERS) byTier[tier] = tierMetrics(jobs.filter((j) => j.tier === tier))
  const all = tierMetrics(jobs)
  const inHorizon = horizonAccount(workload, run)
  const wholeRun = wholeRunAccount(workload, run)
  const revenue = sum(run.nodes, (n) => n.revenue)
  const withBids = jobs.filter((j) => j.bids !== undefined)
  const awards: number[] = []
  for (const j of jobs) if (j.awardedAt !== undefined) awards.push(j.awardedAt - j.submittedAt)
  return {
    strategy: run.strategy,
    jobs: jobs.length,
    completed: all.completed,
    failed: all.failed,
    unserved: all.unserved,
    completion: ratio(all.completed, jobs.length),
    gpuHours: all.gpuHours,
    paid: all.paid,
    listCost: sum(jobs, (j) => j.listCost),
    costPerGpuHour: all.costPerGpuHour,
    costVsList: all.costVsList,
    demandCostVsList: options.listPrice === undefined ? null : demandCostVsList(workload, jobs, options.listPrice),
    offeredGpuHours: inHorizon.offeredGpuHours,
    soldGpuHours: inHorizon.soldGpuHours,
    ownerGpuHours: inHorizon.ownerGpuHours,
    fleetGpuHours: inHorizon.fleetGpuHours,
    utilizationOffered: inHorizon.offered,
    utilizationFleet: inHorizon.fleet,
    wholeRun,
    revenue,
    revenuePerSoldGpuHour: ratio(revenue, wholeRun.soldGpuHours),
    revenuePerOfferedGpuHour: ratio(revenue, wholeRun.offeredGpuHours),
    slaMisses: all.slaMisses,
    preemptions: sum(jobs, (j) => j.preemptions),
    wait: all.wait,
    timeToAward: percentiles(awards),
    bidsPerJob: withBids.length === 0 ? null : sum(withBids, (j) => j.bids ?? 0) / withBids.length,
    messagesPerJob: ratio(sum(jobs, (j) => j.messages), jobs.length),
    bytesPerJob: ratio(sum(jobs, (j) => j.bytes), jobs.length),
    byTier,
    utilizationOverTime: utilizationOverTime(workload, run, options.bucketMs)
  }
}

export function metrics (workload: Workload, runs: readonly StrategyRun[], options: MetricsOptions = {}): StrategyMetrics[] {
  return runs.map((r) => strategyMetrics(workload, r, options))
}
