/**
 * How the baselines account for what they decided, one rule for all of them:
 *
 * - A job placed at `start` on a node runs [start, start + duration), cut at the run's end (the horizon
 *   plus the workload's drain, model.ts runEndMs; jobs are placed only before the horizon): cut, it ends
 *   `failed` with the GPU-hours run until then (and pays for those), otherwise `completed`.
 *   GPU-hours are whole GPUs × hours (a job's `gpuMilli` share does not discount the GPUs it holds).
 * - The renter pays the node's price × GPU-hours, rounded to whole micros; `listCost` is the same GPU-hours
 *   at the cheapest list price of a model that fits the job (the old way's price for it).
 * - SLA miss: a gold or silver job that did not start within its tier's delay, or did not complete.
 * - A node's offered GPU-hours are its GPUs × the run (horizon + drain) less the owner's own work inside it.
 */
import { FleetCapacity } from '../capacity.js'
import { runEndMs, type JobOutcome, type JobStatus, type NodeOutcome, type SimJob, type Tier, type Workload } from '../model.js'
import { DEFAULT_MAX_START_DELAY_MS, gpuFits, tierRank, type ListPrice } from './fit.js'

const HOUR_MS = 3_600_000

/** A baseline was given options it cannot use. */
export class BaselineOptionError extends Error {
  readonly code = 'BASELINE_OPTION'
  constructor (message: string) {
    super(message)
    this.name = 'BaselineOptionError'
  }
}

/** A workload a baseline cannot run: a job id twice, a duration under 1 ms, or a GPU count that is not a whole number ≥ 1. */
export class BaselineInputError extends Error {
  readonly code = 'BASELINE_INPUT'
  constructor (readonly job: string, message: string) {
    super(`job ${job}: ${message}`)
    this.name = 'BaselineInputError'
  }
}

/** The tiers' start delays, the defaults overridden by `given`; each must be a whole number of ms ≥ 0. */
export function startDelays (given?: Partial<Record<Tier, number>>): Record<Tier, number> {
  const delays = { ...DEFAULT_MAX_START_DELAY_MS, ...given }
  for (const [tier, ms] of Object.entries(delays)) {
    if (!Number.isInteger(ms) || ms < 0) throw new BaselineOptionError(`maxStartDelayMs.${tier} must be a whole number of ms ≥ 0, got ${ms}`)
  }
  return delays
}

/**
 * The cloud's catalogue: GPU models with a list price. The old way rents the cheapest entry that fits
 * a job (model family and VRAM; the cloud has every size in every region, so region is not a filter),
 * ties by model slug; the same entry prices every strategy's `listCost`.
 */
export class ListCatalogue {
  private readonly entries: Array<{ model: string, vramMiB: number, price: number }> = []
  private readonly cache = new Map<string, { model: string, price: number } | undefined>()

  constructor (models: Iterable<{ model: string, vramMiB: number }>, listPrice: ListPrice) {
    const seen = new Set<string>()
    for (const m of models) {
      const key = `${m.model}\u0000${m.vramMiB}`
      if (seen.has(key)) continue
      seen.add(key)
      const price = listPrice(m.model)
      if (price === undefined) continue
      if (!Number.isFinite(price) || price < 0) throw new BaselineOptionError(`list price of ${m.model} must be finite micros ≥ 0, got ${price}`)
      this.entries.push({ model: m.model, vramMiB: m.vramMiB, price })
    }
    this.entries.sort((a, b) => a.price - b.price || (a.model < b.model ? -1 : a.model > b.model ? 1 : a.vramMiB - b.vramMiB))
  }

  /** The cheapest model that fits the job, or undefined when the catalogue has none. */
  cheapest (job: SimJob): { model: string, price: number } | undefined {
    const key = `${job.models.join(',')}\u0000${job.minVramGB}`
    if (this.cache.has(key)) return this.cache.get(key)
    const found = this.entries.find((e) => gpuFits(job, e.model, e.vramMiB))
    const answer = found === undefined ? undefined : { model: found.model, price: found.price }
    this.cache.set(key, answer)
    return answer
  }

  /** The job's GPU-hours at its cheapest fitting list price, whole micros (0 when nothing fits). */
  cost (job: SimJob, gpuHours: number): number {
    const c = this.cheapest(job)
    return c === undefined ? 0 : Math.round(c.price * gpuHours)
  }
}

/** What a baseline needs to write outcomes. */
export interface Accounting {
  /** Jobs arrive and are placed before it. */
  horizonMs: number
  /** Placed work runs on until it (the horizon plus the workload's drain: model.ts runEndMs). */
  endMs: number
  delays: Record<Tier, number>
  catalogue: ListCatalogue
}

export function slaMiss (job: SimJob, status: JobStatus, startedAt: number | undefined, delays: Record<Tier, number>): boolean {
  if (job.tier === 'bronze') return false
  return status !== 'completed' || startedAt === undefined || startedAt - job.submitAt > delays[job.tier]
}

/** A job placed on `node` at `start` for `price` micros per GPU-hour, decided at `awardedAt`. */
export function placed (acc: Accounting, job: SimJob, node: string, start: number, price: number, awardedAt: number, attempts = 1): JobOutcome {
  const end = Math.min(start + job.durationMs, acc.endMs)
  const status: JobStatus = start + job.durationMs <= acc.endMs ? 'completed' : 'failed'
  const gpuHours = job.gpus * Math.max(0, end - start) / HOUR_MS
  return {
    job: job.id,
    tier: job.tier,
    gpus: job.gpus,
    status,
    node,
    submittedAt: job.submitAt,
    awardedAt,
    startedAt: start,
    endedAt: end,
    gpuHours,
    paid: Math.round(price * gpuHours),
    listCost: acc.catalogue.cost(job, gpuHours),
    preemptions: 0,
    attempts,
    slaMiss: slaMiss(job, status, start, acc.delays),
    messages: 0,
    bytes: 0
  }
}

/** A job that ran nowhere: unserved (never placed), or failed after `attempts` awards that came to nothing. */
export function notRun (acc: Accounting, job: SimJob, endedAt: number, attempts = 0, node?: string, awardedAt?: number): JobOutcome {
  const status: JobStatus = attempts > 0 ? 'failed' : 'unserved'
  return {
    job: job.id,
    tier: job.tier,
    gpus: job.gpus,
    status,
    ...(node !== undefined ? { node } : {}),
    submittedAt: job.submitAt,
    ...(awardedAt !== undefined ? { awardedAt } : {}),
    endedAt,
    gpuHours: 0,
    paid: 0,
    listCost: 0,
    preemptions: 0,
    attempts,
    slaMiss: slaMiss(job, status, undefined, acc.delays),
    messages: 0,
    bytes: 0
  }
}

/**
 * The fleet's capacity with the owners' own work on it (what renters' jobs must fit around). Throws
 * CapacityError when the workload's owner work over-commits a node: a workload bug, not a result.
 */
export function ownerCapacity (workload: Workload): FleetCapacity {
  const capacity = new FleetCapacity(workload.fleet)
  for (const w of workload.ownerWork) capacity.timeline(w.node).add(w.start, w.end, w.gpus)
  return capacity
}

/** Each node's line: offered and owner GPU-hours inside the horizon, and what the jobs run on it sold. */
export function nodeOutcomes (workload: Workload, jobs: readonly JobOutcome[]): NodeOutcome[] {
  const owner = new Map<string, number>()
  const endMs = runEndMs(workload)
  for (const w of workload.ownerWork) {
    const ms = Math.max(0, Math.min(w.end, endMs) - Math.max(w.start, 0))
    owner.set(w.node, (owner.get(w.node) ?? 0) + w.gpus * ms / HOUR_MS)
  }
  const sold = new Map<string, { hours: number, revenue: number }>()
  for (const j of jobs) {
    if (j.node === undefined || j.gpuHours === 0) continue
    const s = sold.get(j.node) ?? { hours: 0, revenue: 0 }
    s.hours += j.gpuHours
    s.revenue += j.paid
    sold.set(j.node, s)
  }
  return workload.fleet.map((n) => {
    const ownerGpuHours = owner.get(n.id) ?? 0
    const s = sold.get(n.id)
    return {
      node: n.id,
      offeredGpuHours: Math.max(0, n.gpus * endMs / HOUR_MS - ownerGpuHours),
      soldGpuHours: s?.hours ?? 0,
      ownerGpuHours,
      revenue: s?.revenue ?? 0
    }
  })
}

/** The jobs in the order a matcher serves them: submit time, then tier (gold first), then id. */
export function servingOrder (jobs: readonly SimJob[]): SimJob[] {
  return [...jobs].sort((a, b) => a.submitAt - b.submitAt || tierRank(a.tier) - tierRank(b.tier) || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
}

/** The outcomes back in the workload's job order (submit, then id), so every strategy lists jobs alike. */
export function inWorkloadOrder (workload: Workload, outcomes: Map<string, JobOutcome>): JobOutcome[] {
  return workload.jobs.map((j) => outcomes.get(j.id) as JobOutcome)
}
