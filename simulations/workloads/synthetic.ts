/**
 * Synthetic workloads, deterministic per seed (harness/prng.ts): arrival processes (Poisson, diurnal by hour
 * of day, a flash crowd), heavy-tailed durations (log-normal, Pareto), job shapes drawn from weights, and a
 * resampler that extends a trace to any number of jobs. Parameters and their defaults: workloads/README.md.
 *
 * Each generator takes the Prng it draws from; pass `rng.fork('arrivals')`, `rng.fork('durations')`… so that
 * changing one part of a scenario does not shift the draws of another.
 */
import type { Prng } from '../harness/prng.js'
import type { FleetNode, SimJob, Tier } from '../model.js'
import { DEFAULT_PLACES, type Place, PlaceAssigner } from './regions.js'

const HOUR_MS = 3_600_000

/** How many arrivals to make: a count, or every arrival before `untilMs`. At least one of the two. */
export interface ArrivalLimit {
  count?: number
  untilMs?: number
  /** The process starts here (default 0). */
  startMs?: number
}

/** An exponential draw with the given mean (inverse CDF; 1 − u keeps the log finite). */
export function exponential (rng: Prng, mean: number): number {
  return -Math.log(1 - rng.next()) * mean
}

/** A standard normal draw (Box–Muller). */
export function standardNormal (rng: Prng): number {
  const r = Math.sqrt(-2 * Math.log(1 - rng.next()))
  return r * Math.cos(2 * Math.PI * rng.next())
}

/** Arrival times (ms, ascending, whole) of a Poisson process with `ratePerHour` arrivals per hour. */
export function poissonArrivals (rng: Prng, ratePerHour: number, limit: ArrivalLimit): number[] {
  checkRate(ratePerHour)
  return arrivals(limit, (t) => t + exponential(rng, HOUR_MS / ratePerHour))
}

/**
 * A non-homogeneous Poisson process whose rate depends on the hour of day (UTC): `ratesPerHour[h]` arrivals
 * per hour during hour h (24 values). Drawn by thinning: candidates at the peak rate, each kept with
 * probability rate(t) / peak. `startHour` is the hour of day at t = 0 (default 0).
 */
export function diurnalArrivals (rng: Prng, ratesPerHour: readonly number[], limit: ArrivalLimit & { startHour?: number }): number[] {
  if (ratesPerHour.length !== 24) throw new RangeError(`diurnal: 24 hourly rates needed, got ${ratesPerHour.length}`)
  for (const r of ratesPerHour) if (!(Number.isFinite(r) && r >= 0)) throw new RangeError(`diurnal: rates must be ≥ 0, got ${r}`)
  const peak = Math.max(...ratesPerHour)
  checkRate(peak)
  const offset = (limit.startHour ?? 0) * HOUR_MS
  return arrivals(limit, (t) => {
    for (;;) {
      t += exponential(rng, HOUR_MS / peak)
      const hour = Math.floor(((t + offset) % (24 * HOUR_MS)) / HOUR_MS)
      if (rng.next() * peak < (ratesPerHour[hour] as number)) return t
    }
  })
}

/** A flash crowd: a Poisson burst of `ratePerHour` over [atMs, atMs + durationMs). Merge it with a base process. */
export function flashCrowd (rng: Prng, burst: { atMs: number, durationMs: number, ratePerHour: number }): number[] {
  if (!(burst.durationMs >= 0)) throw new RangeError(`flash crowd: duration must be ≥ 0, got ${burst.durationMs}`)
  return poissonArrivals(rng, burst.ratePerHour, { startMs: burst.atMs, untilMs: burst.atMs + burst.durationMs })
}

/** Several arrival lists as one ascending list. */
export function mergeArrivals (...lists: ReadonlyArray<readonly number[]>): number[] {
  return lists.flat().sort((a, b) => a - b)
}

/**
 * A duration distribution, ms.
 * - `lognormal`: exp(N(ln median, sigma²)); mean = median · e^(sigma²/2). sigma 1.5 is heavy-tailed (mean ≈ 3 × median).
 * - `pareto`: P(X > x) = (min / x)^alpha for x ≥ min, optionally cut at `max` (a truncated Pareto, renormalised).
 *   alpha ≤ 1 has no finite mean unless cut; alpha 1.5 is a common fit for job runtimes.
 * - `fixed`: always `ms`.
 */
export type DurationModel =
  | { kind: 'lognormal', medianMs: number, sigma: number }
  | { kind: 'pareto', minMs: number, alpha: number, maxMs?: number }
  | { kind: 'fixed', ms: number }

/** The default job length: log-normal, median 30 min, sigma 1.5 (mean ≈ 92 min, p99 ≈ 16 h). */
export const DEFAULT_DURATIONS: DurationModel = { kind: 'lognormal', medianMs: 30 * 60_000, sigma: 1.5 }

export function validateDurations (m: DurationModel): void {
  const bad = (what: string): never => { throw new RangeError(`durations (${m.kind}): ${what}`) }
  if (m.kind === 'lognormal') {
    if (!(m.medianMs > 0)) bad('median must be > 0')
    if (!(m.sigma >= 0 && Number.isFinite(m.sigma))) bad('sigma must be ≥ 0')
  } else if (m.kind === 'pareto') {
    if (!(m.minMs > 0)) bad('min must be > 0')
    if (!(m.alpha > 0 && Number.isFinite(m.alpha))) bad('alpha must be > 0')
    if (m.maxMs !== undefined && !(m.maxMs > m.minMs)) bad('max must be above min')
  } else if (!(m.ms > 0)) bad('ms must be > 0')
}

/** One duration, whole ms, at least 1. */
export function sampleDuration (rng: Prng, m: DurationModel): number {
  let x: number
  if (m.kind === 'lognormal') x = m.medianMs * Math.exp(m.sigma * standardNormal(rng))
  else if (m.kind === 'pareto') {
    const u = rng.next()
    const cut = m.maxMs === undefined ? 0 : (m.minMs / m.maxMs) ** m.alpha
    x = m.minMs * (1 - u * (1 - cut)) ** (-1 / m.alpha)
  } else x = m.ms
  return Math.max(1, Math.round(x))
}

/** The distribution's mean, ms (Infinity for an uncut Pareto with alpha ≤ 1). */
export function durationMean (m: DurationModel): number {
  if (m.kind === 'fixed') return m.ms
  if (m.kind === 'lognormal') return m.medianMs * Math.exp(m.sigma * m.sigma / 2)
  const { minMs: L, alpha: a, maxMs: H } = m
  if (H === undefined) return a > 1 ? a * L / (a - 1) : Number.POSITIVE_INFINITY
  const norm = 1 - (L / H) ** a
  if (a === 1) return L * Math.log(H / L) / norm
  return (a * L ** a / (a - 1)) * (L ** (1 - a) - H ** (1 - a)) / norm
}

/** The log-normal that fits `durations` (ms) by the moments of their logs: median e^mean(ln), sigma sd(ln). */
export function fitLogNormal (durations: readonly number[]): DurationModel {
  if (durations.length < 2) throw new RangeError('fitLogNormal: needs at least 2 durations')
  let sum = 0
  for (const d of durations) {
    if (!(d > 0)) throw new RangeError(`fitLogNormal: durations must be > 0, got ${d}`)
    sum += Math.log(d)
  }
  const mu = sum / durations.length
  let sq = 0
  for (const d of durations) sq += (Math.log(d) - mu) ** 2
  return { kind: 'lognormal', medianMs: Math.exp(mu), sigma: Math.sqrt(sq / (durations.length - 1)) }
}

/** Relative weights of values: `[[1, 0.8], [8, 0.2]]`. */
export type Weighted<T> = ReadonlyArray<readonly [T, number]>

/** One value drawn by weight. */
export function pickWeighted<T> (rng: Prng, items: Weighted<T>): T {
  let total = 0
  for (const [, w] of items) {
    if (!(w >= 0 && Number.isFinite(w))) throw new RangeError(`weights must be ≥ 0, got ${w}`)
    total += w
  }
  if (!(total > 0)) throw new RangeError('weights: nothing to pick (empty or all zero)')
  let u = rng.next() * total
  for (const [v, w] of items) {
    if (u < w) return v
    u -= w
  }
  return (items[items.length - 1] as readonly [T, number])[0]
}

/** What a synthetic job looks like, beyond its arrival and duration. */
export interface JobShape {
  gpus: Weighted<number>
  tiers: Weighted<Tier>
  /** Accepted model sets ([] = any). Default: any. */
  models?: Weighted<string[]>
  /** Wanted regions (undefined = anywhere). Default: anywhere. */
  regions?: Weighted<string | undefined>
  minVramGB?: Weighted<number>
}

/** Mostly single-GPU work, a tail of 2–8 GPU jobs; tiers split 20 / 50 / 30. */
export const DEFAULT_SHAPE: JobShape = {
  gpus: [[1, 0.8], [2, 0.1], [4, 0.06], [8, 0.04]],
  tiers: [['gold', 0.2], ['silver', 0.5], ['bronze', 0.3]]
}

/** Jobs at the given arrival times, with durations from `durations` and shapes from `shape`. */
export function syntheticJobs (rng: Prng, arrivalsMs: readonly number[], opts: { durations?: DurationModel, shape?: JobShape, idPrefix?: string, source?: string } = {}): SimJob[] {
  const durations = opts.durations ?? DEFAULT_DURATIONS
  validateDurations(durations)
  const shape = opts.shape ?? DEFAULT_SHAPE
  const prefix = opts.idPrefix ?? 'j'
  const width = Math.max(6, String(arrivalsMs.length).length)
  const dRng = rng.fork('durations')
  const sRng = rng.fork('shapes')
  return arrivalsMs.map((submitAt, i) => {
    const region = shape.regions === undefined ? undefined : pickWeighted(sRng, shape.regions)
    return {
      id: `${prefix}${String(i).padStart(width, '0')}`,
      submitAt,
      durationMs: sampleDuration(dRng, durations),
      gpus: pickWeighted(sRng, shape.gpus),
      gpuMilli: 1000,
      models: shape.models === undefined ? [] : [...pickWeighted(sRng, shape.models)],
      minVramGB: shape.minVramGB === undefined ? 0 : pickWeighted(sRng, shape.minVramGB),
      tier: pickWeighted(sRng, shape.tiers),
      ...(region === undefined ? {} : { region }),
      residency: 'prefer',
      source: opts.source ?? 'synthetic'
    }
  })
}

/** Arrivals per hour of a job list: (n − 1) / span, the rate of a Poisson process fitted to its submit times. */
export function fittedRatePerHour (jobs: readonly SimJob[]): number {
  if (jobs.length < 2) throw new RangeError('fittedRatePerHour: needs at least 2 jobs')
  let first = Number.POSITIVE_INFINITY
  let last = Number.NEGATIVE_INFINITY
  for (const j of jobs) {
    first = Math.min(first, j.submitAt)
    last = Math.max(last, j.submitAt)
  }
  if (!(last > first)) throw new RangeError('fittedRatePerHour: every job is submitted at the same instant')
  return (jobs.length - 1) * HOUR_MS / (last - first)
}

/**
 * Extends (or thins) a trace to `count` jobs: each new job copies the shape of an original drawn uniformly
 * with replacement (duration, GPUs, share, models, VRAM, tier, region, residency, cap — a bootstrap), and
 * arrives by a Poisson process at the trace's fitted rate (or `ratePerHour`) from the trace's first submit.
 */
export function resampleJobs (rng: Prng, jobs: readonly SimJob[], count: number, opts: { ratePerHour?: number, idPrefix?: string } = {}): SimJob[] {
  if (!(Number.isInteger(count) && count >= 0)) throw new RangeError(`resample: count must be a whole number ≥ 0, got ${count}`)
  if (jobs.length === 0) throw new RangeError('resample: no jobs to draw from')
  const rate = opts.ratePerHour ?? fittedRatePerHour(jobs)
  let first = Number.POSITIVE_INFINITY
  for (const j of jobs) first = Math.min(first, j.submitAt)
  const times = poissonArrivals(rng.fork('arrivals'), rate, { count, startMs: first })
  const pick = rng.fork('jobs')
  const prefix = opts.idPrefix ?? 'r'
  const width = Math.max(6, String(count).length)
  return times.map((submitAt, i) => {
    const o = jobs[pick.int(0, jobs.length - 1)] as SimJob
    // Field by field, not a spread: a million copies cost a third of the time this way.
    const j: SimJob = {
      id: `${prefix}${String(i).padStart(width, '0')}`,
      submitAt,
      durationMs: o.durationMs,
      gpus: o.gpus,
      gpuMilli: o.gpuMilli,
      models: o.models.length === 0 ? [] : [...o.models],
      minVramGB: o.minVramGB,
      tier: o.tier,
      residency: o.residency,
      source: `resample:${o.id}`
    }
    if (o.region !== undefined) j.region = o.region
    if (o.maxPrice !== undefined) j.maxPrice = o.maxPrice
    return j
  })
}

/**
 * A fleet of `count` nodes drawn with replacement from `fleet`'s node shapes (model, GPUs, VRAM, CPU,
 * memory), so a scenario can run 10,000 nodes shaped like the trace's 1,213. Ids are `${prefix}0000001`;
 * each node's place is drawn afresh from `places` by its new id (regions.ts).
 */
export function resampleFleet (rng: Prng, fleet: readonly FleetNode[], count: number, opts: { places?: readonly Place[], idPrefix?: string } = {}): FleetNode[] {
  if (!(Number.isInteger(count) && count >= 0)) throw new RangeError(`resampleFleet: count must be a whole number ≥ 0, got ${count}`)
  if (fleet.length === 0) throw new RangeError('resampleFleet: no nodes to draw from')
  const places = new PlaceAssigner(rng.fork('places').seed, opts.places ?? DEFAULT_PLACES)
  const pick = rng.fork('nodes')
  const prefix = opts.idPrefix ?? 'n'
  const width = Math.max(6, String(count).length)
  return Array.from({ length: count }, (_, i) => {
    const o = fleet[pick.int(0, fleet.length - 1)] as FleetNode
    const id = `${prefix}${String(i).padStart(width, '0')}`
    const place = places.placeOf(id)
    return { ...o, id, country: place.country, region: place.region }
  })
}

function checkRate (ratePerHour: number): void {
  if (!(Number.isFinite(ratePerHour) && ratePerHour > 0)) throw new RangeError(`arrival rate must be > 0 per hour, got ${ratePerHour}`)
}

/** Step a process from `startMs` until the count or the end is reached. */
function arrivals (limit: ArrivalLimit, next: (t: number) => number): number[] {
  const { count, untilMs } = limit
  if (count === undefined && untilMs === undefined) throw new RangeError('arrivals: give a count or an end time')
  if (count !== undefined && !(Number.isInteger(count) && count >= 0)) throw new RangeError(`arrivals: count must be a whole number ≥ 0, got ${count}`)
  const out: number[] = []
  let t = limit.startMs ?? 0
  for (;;) {
    if (count !== undefined && out.length >= count) return out
    t = next(t)
    if (untilMs !== undefined && t >= untilMs) return out
    out.push(Math.floor(t))
  }
}
