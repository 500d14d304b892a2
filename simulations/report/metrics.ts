/**
 * The report's metrics (issue 10, "Metrics in every report"), computed from strategies' outcomes alone,
 * so every strategy is measured by the same code:
 *
 * - utilization of offered GPU-hours (sold / offered) and of the whole fleet ((owners' work + sold) /
 *   every GPU × the run: the horizon plus the workload's drain, model.ts runEndMs); over time in buckets (default 1 h), where a job's GPU-hours are laid from
 *   its (last) start on;
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
import { runEndMs, type JobOutcome, type StrategyRun, type Tier, type Workload } from '../model.js'

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

export interface UtilizationPoint {
  /** Bucket start, ms. */
  t: number
  /** (owners' work + sold) / every GPU, over the bucket. */
  fleet: number
  /** sold / offered over the bucket; null where nothing was offered. */
  offered: number | null
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
  offeredGpuHours: number
  soldGpuHours: number
  ownerGpuHours: number
  fleetGpuHours: number
  utilizationOffered: number | null
  utilizationFleet: number | null
  revenue: number
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

/** Fleet utilization per bucket over [0, runEndMs) (the horizon and the drain); jobs on nodes outside the fleet (the cloud) do not count. */
export function utilizationOverTime (workload: Workload, run: StrategyRun, bucketMs = HOUR_MS): UtilizationPoint[] {
  if (!(bucketMs > 0)) throw new RangeError(`bucket must be > 0 ms, got ${bucketMs}`)
  const endMs = runEndMs(workload)
  const buckets = Math.ceil(endMs / bucketMs)
  const owner = new Float64Array(buckets)
  const sold = new Float64Array(buckets)
  const lay = (into: Float64Array, start: number, end: number, gpus: number): void => {
    const from = Math.max(0, start)
    const to = Math.min(end, endMs)
    for (let b = Math.floor(from / bucketMs); b < buckets && b * bucketMs < to; b++) {
      const overlap = Math.min(to, (b + 1) * bucketMs) - Math.max(from, b * bucketMs)
      if (overlap > 0) into[b] = (into[b] as number) + gpus * overlap
    }
  }
  const fleet = new Set(workload.fleet.map((n) => n.id))
  const gpus = sum(workload.fleet, (n) => n.gpus)
  for (const w of workload.ownerWork) lay(owner, w.start, w.end, w.gpus)
  for (const j of run.jobs) {
    if (j.node === undefined || !fleet.has(j.node) || j.startedAt === undefined || j.gpuHours <= 0) continue
    lay(sold, j.startedAt, j.startedAt + (j.gpuHours / j.gpus) * HOUR_MS, j.gpus)
  }
  const points: UtilizationPoint[] = []
  for (let b = 0; b < buckets; b++) {
    const span = Math.min(endMs, (b + 1) * bucketMs) - b * bucketMs
    const capacity = gpus * span
    const o = owner[b] as number
    const s = sold[b] as number
    points.push({ t: b * bucketMs, fleet: capacity > 0 ? (o + s) / capacity : 0, offered: ratio(s, capacity - o) })
  }
  return points
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
  const offered = sum(run.nodes, (n) => n.offeredGpuHours)
  const sold = sum(run.nodes, (n) => n.soldGpuHours)
  const owner = sum(run.nodes, (n) => n.ownerGpuHours)
  const fleetGpuHours = sum(workload.fleet, (n) => n.gpus) * runEndMs(workload) / HOUR_MS
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
    offeredGpuHours: offered,
    soldGpuHours: sold,
    ownerGpuHours: owner,
    fleetGpuHours,
    utilizationOffered: ratio(sold, offered),
    utilizationFleet: ratio(owner + sold, fleetGpuHours),
    revenue,
    revenuePerSoldGpuHour: ratio(revenue, sold),
    revenuePerOfferedGpuHour: ratio(revenue, offered),
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
