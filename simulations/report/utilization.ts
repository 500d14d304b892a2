/**
 * Utilization (issue 10, "Metrics in every report"): how much of what the owners offered was sold, and how
 * busy the whole fleet was, over a window of time.
 *
 * The headline window is the **arrival horizon** [0, horizonMs). The owners' own work comes from the trace
 * and ends with it at the horizon, while the drain after it (model.ts `drainMs`) holds only renters' work
 * still running, so shares over the horizon and the drain mostly measure how long the drain is. Inside the
 * horizon every strategy is measured from the same things, by this code alone:
 *
 * - owners' work: each OwnerWork's GPUs × its interval clipped to the window;
 * - sold: a job's GPU-hours on a fleet node laid from its (last) start on — GPUs × [startedAt, startedAt +
 *   gpuHours / GPUs) — clipped to the window; a job on no fleet node (the old way's cloud), never started or
 *   with no GPU-hours sells nothing;
 * - offered: every fleet GPU × the window, less the owners' work in it.
 *
 * The **whole run** [0, runEndMs) — the horizon and the drain — is kept beside it, from the strategy's own
 * node lines (NodeOutcome), as the report had it before.
 *
 * The series over time covers the whole run in buckets (default 1 h) and splits the bucket the horizon falls
 * in, so the buckets before the horizon add up to the headline account.
 */
import { runEndMs, type JobOutcome, type StrategyRun, type Workload } from '../model.js'

const HOUR_MS = 3_600_000

/** One window's account: GPU-hours and the two shares. */
export interface UtilizationAccount {
  /** The window is [0, untilMs). */
  untilMs: number
  /** Every fleet GPU × the window. */
  fleetGpuHours: number
  /** The owners' own work in the window. */
  ownerGpuHours: number
  /** Fleet less owners' work: what was for sale. */
  offeredGpuHours: number
  /** Renters' work on the fleet in the window. */
  soldGpuHours: number
  /** sold / offered; null where nothing was offered. */
  offered: number | null
  /** (owners' work + sold) / fleet; null for an empty window or fleet. */
  fleet: number | null
}

export interface UtilizationPoint {
  /** Bucket start, ms. */
  t: number
  /** (owners' work + sold) / every GPU, over the bucket. */
  fleet: number
  /** sold / offered over the bucket; null where nothing was offered. */
  offered: number | null
}

function ratio (a: number, b: number): number | null {
  return b > 0 ? a / b : null
}

/** GPU-ms of `gpus` over [start, end) inside [0, until). */
function clipped (start: number, end: number, gpus: number, until: number): number {
  return gpus * Math.max(0, Math.min(end, until) - Math.max(start, 0))
}

/** Where a job's GPU-hours lie on the fleet: `gpus` over [start, end) (from its last start on); undefined when it sold nothing there. */
export function soldSpan (j: JobOutcome, fleet: ReadonlySet<string>): { start: number, end: number, gpus: number } | undefined {
  if (j.node === undefined || !fleet.has(j.node) || j.startedAt === undefined || !(j.gpuHours > 0) || !(j.gpus > 0)) return undefined
  return { start: j.startedAt, end: j.startedAt + (j.gpuHours / j.gpus) * HOUR_MS, gpus: j.gpus }
}

function account (untilMs: number, fleetGpuHours: number, ownerGpuHours: number, offeredGpuHours: number, soldGpuHours: number): UtilizationAccount {
  return { untilMs, fleetGpuHours, ownerGpuHours, offeredGpuHours, soldGpuHours, offered: ratio(soldGpuHours, offeredGpuHours), fleet: ratio(ownerGpuHours + soldGpuHours, fleetGpuHours) }
}

/** The account of [0, untilMs), from the workload's owners' work and the run's jobs (the same for every strategy). */
export function windowAccount (workload: Workload, run: StrategyRun, untilMs: number): UtilizationAccount {
  if (!(untilMs >= 0)) throw new RangeError(`window must end at ≥ 0 ms, got ${untilMs}`)
  const fleet = new Set(workload.fleet.map((n) => n.id))
  let gpus = 0
  for (const n of workload.fleet) gpus += n.gpus
  let owner = 0
  for (const w of workload.ownerWork) if (fleet.has(w.node)) owner += clipped(w.start, w.end, w.gpus, untilMs)
  let sold = 0
  for (const j of run.jobs) {
    const s = soldSpan(j, fleet)
    if (s !== undefined) sold += clipped(s.start, s.end, s.gpus, untilMs)
  }
  const capacity = gpus * untilMs
  return account(untilMs, capacity / HOUR_MS, owner / HOUR_MS, Math.max(0, capacity - owner) / HOUR_MS, sold / HOUR_MS)
}

/** The headline account: inside the arrival horizon [0, horizonMs). */
export function horizonAccount (workload: Workload, run: StrategyRun): UtilizationAccount {
  return windowAccount(workload, run, workload.horizonMs)
}

/** The whole run [0, runEndMs) — the horizon and the drain — as the strategy's node lines account it. */
export function wholeRunAccount (workload: Workload, run: StrategyRun): UtilizationAccount {
  let offered = 0
  let sold = 0
  let owner = 0
  for (const n of run.nodes) {
    offered += n.offeredGpuHours
    sold += n.soldGpuHours
    owner += n.ownerGpuHours
  }
  let gpus = 0
  for (const n of workload.fleet) gpus += n.gpus
  const endMs = runEndMs(workload)
  return account(endMs, gpus * endMs / HOUR_MS, owner, offered, sold)
}

/** The series' bucket starts over [0, endMs): every `bucketMs`, and the horizon where it falls inside a bucket. */
function bucketStarts (endMs: number, horizonMs: number, bucketMs: number): number[] {
  const starts: number[] = []
  for (let t = 0; t < endMs; t += bucketMs) {
    starts.push(t)
    if (horizonMs > t && horizonMs < t + bucketMs && horizonMs < endMs) starts.push(horizonMs)
  }
  return starts
}

/**
 * Fleet utilization per bucket over the whole run [0, runEndMs) (the horizon and the drain), the bucket
 * the horizon falls in split there; jobs on nodes outside the fleet (the cloud) do not count.
 */
export function utilizationOverTime (workload: Workload, run: StrategyRun, bucketMs = HOUR_MS): UtilizationPoint[] {
  if (!(bucketMs > 0)) throw new RangeError(`bucket must be > 0 ms, got ${bucketMs}`)
  const endMs = runEndMs(workload)
  const starts = bucketStarts(endMs, workload.horizonMs, bucketMs)
  const ends = [...starts.slice(1), endMs]
  const owner = new Float64Array(starts.length)
  const sold = new Float64Array(starts.length)
  const lay = (into: Float64Array, start: number, end: number, gpus: number): void => {
    const from = Math.max(0, start)
    const to = Math.min(end, endMs)
    if (!(to > from)) return
    // the first bucket that ends after `from`
    let lo = 0
    let hi = starts.length
    while (lo < hi) {
      const mid = (lo + hi) >> 1
      if ((ends[mid] as number) <= from) lo = mid + 1
      else hi = mid
    }
    for (let b = lo; b < starts.length && (starts[b] as number) < to; b++) {
      const overlap = Math.min(to, ends[b] as number) - Math.max(from, starts[b] as number)
      if (overlap > 0) into[b] = (into[b] as number) + gpus * overlap
    }
  }
  const fleet = new Set(workload.fleet.map((n) => n.id))
  let gpus = 0
  for (const n of workload.fleet) gpus += n.gpus
  for (const w of workload.ownerWork) if (fleet.has(w.node)) lay(owner, w.start, w.end, w.gpus)
  for (const j of run.jobs) {
    const s = soldSpan(j, fleet)
    if (s !== undefined) lay(sold, s.start, s.end, s.gpus)
  }
  return starts.map((t, b) => {
    const capacity = gpus * ((ends[b] as number) - t)
    const o = owner[b] as number
    const s = sold[b] as number
    return { t, fleet: capacity > 0 ? (o + s) / capacity : 0, offered: ratio(s, capacity - o) }
  })
}
