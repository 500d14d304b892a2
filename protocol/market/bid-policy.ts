/**
 * A provider's bid policy (DESIGN §5), pure: given a job, what the provider knows about itself and `now`,
 * bid (price, GPUs, start, preemptions, fit) or decline with the first failing reason, checked in this order:
 *
 *   EXPIRED → WORKLOAD → REGION → [NO_GPUS → MODEL → VRAM → GPU_COUNT → THERMAL → POWER] → CALENDAR → [BUSY] → PRICE
 *
 * The bracketed checks apply to GPU jobs only. A CPU-only job (`resources.gpus = 0`) is priced per job-hour
 * as if it held one GPU (`price × 1 × hours`), allocates no GPU and is never BUSY.
 *
 * The start is the earliest instant in [now, now + maxStartDelay] at which the job's max runtime fits in free
 * calendar time and enough matching GPUs are free. Only if no such instant exists, a gold or silver job may
 * take GPUs held by bronze allocations: the fewest bronze jobs that suffice at any start within the delay, at
 * the earliest start where that few suffice, and among equal sets the one losing the least revenue. GPUs are held by an allocation over
 * [startedAt, endsAt); a preempted job gives up all its GPUs. Among usable GPUs the lowest indices are chosen,
 * free ones before preempted ones.
 */
import { modelInFamily, regionWithin, vramMeetsGB } from '../constants.js'
import type { CapabilityAd, GpuInfo } from '../messages/capability-ad.js'
import type { JobRequest } from '../messages/job-request.js'
import { MAX_CALENDAR_HORIZON_MS, firstFit, formatDuration, freeIntervals, isKnownTimeZone, nextFreeStart, windowAt, type Interval } from './calendar.js'
import { formatMicros, priceFor } from './pricing.js'
import { DeclineReason, type Allocation, type BidDecision, type ProviderState } from './types.js'

/** Above this many bronze jobs in the way, the preemption set is chosen greedily instead of exactly. */
export const PREEMPT_EXACT_LIMIT = 12

type Decline = Extract<BidDecision, { kind: 'decline' }>

function decline (reason: DeclineReason, detail: string): Decline {
  return { kind: 'decline', reason, detail }
}

function iso (t: number): string {
  return new Date(t).toISOString()
}

// ---------------------------------------------------------------------------------------------
// Job terms, shared with the no-bids explanation
// ---------------------------------------------------------------------------------------------

/** The job's max runtime in ms. */
export function runtimeMs (job: JobRequest): number {
  return job.workload.maxRuntimeSec * 1000
}

/** The job's max start delay in ms. */
export function startDelayMs (job: JobRequest): number {
  return job.sla.maxStartDelaySec * 1000
}

/** True when a provider in `region` may run the job: 'prefer' and an empty list never exclude anyone. */
export function regionAllowed (job: JobRequest, region: string): boolean {
  const { regions, residency } = job.placement
  if (residency !== 'strict' || regions.length === 0) return true
  for (const r of regions) if (regionWithin(region, r)) return true
  return false
}

/** True when the GPU is one of the job's models (or the job names none). */
export function modelAllowed (job: JobRequest, gpu: GpuInfo): boolean {
  return modelOneOf(gpu.model, job.resources.models)
}

/** True when `model` is in one of the `models` families (or none is named). A loop: every provider runs it for every job. */
function modelOneOf (model: string, models: readonly string[]): boolean {
  if (models.length === 0) return true
  for (const m of models) if (modelInFamily(model, m)) return true
  return false
}

/** True when the GPU has the job's per-GPU VRAM (nominal GB, see vramMeetsGB). */
export function vramAllowed (job: JobRequest, gpu: GpuInfo): boolean {
  return vramMeetsGB(gpu.vramMiB, job.resources.minVramGB)
}

/** The ad's GPUs that meet the job's model and VRAM terms, lowest index first. */
export function matchingGpus (ad: CapabilityAd, job: JobRequest): GpuInfo[] {
  return ad.gpus.filter((g) => modelAllowed(job, g) && vramAllowed(job, g)).sort((a, b) => a.index - b.index)
}

/**
 * How well a bid fits, in [0, 1]: fit = (maxPrice − price + tightness) / (maxPrice + 1), where tightness =
 * runtime / (end of the free window − start) ∈ [0, 1]. Price decides (one micro cheaper outweighs any
 * tightness); tightness orders bids at the same price, so a job that fills a gap goes to the gap. Keeping the
 * fit in the order of price is what bounds bids per job under damping (see damping.ts): a blend that lets
 * tightness outweigh price lets bids grow with the number of providers.
 */
export function bidFit (price: number, maxPrice: number, tightness: number): number {
  const t = Math.min(1, Math.max(0, tightness))
  const fit = (maxPrice - Math.min(price, maxPrice) + t) / (maxPrice + 1)
  return Math.min(1, Math.max(0, fit))
}

/** runtime / (end of the free window containing `start` − start); 0 in an unbounded window. */
export function tightness (ad: CapabilityAd, start: number, durationMs: number): number {
  const window = windowAt(ad.availability, start)
  if (window === undefined || window.end === Infinity) return 0
  return Math.min(1, durationMs / Math.max(1, window.end - start))
}

// ---------------------------------------------------------------------------------------------
// The checks, in order
// ---------------------------------------------------------------------------------------------

function checkTerms (job: JobRequest, ad: CapabilityAd, now: number): Decline | undefined {
  if (job.expiresAt <= now) return decline(DeclineReason.EXPIRED, `the job expired at ${iso(job.expiresAt)}`)
  if (!ad.workloads.includes(job.workload.executor)) {
    return decline(DeclineReason.WORKLOAD, `executor "${job.workload.executor}" is not offered (offers ${ad.workloads.join(', ')})`)
  }
  if (!regionAllowed(job, ad.region)) {
    return decline(DeclineReason.REGION, `region ${ad.region} is outside the required regions ${job.placement.regions.join(', ')}`)
  }
  return undefined
}

/**
 * The hardware checks; when they pass, the matching GPUs (lowest index first), built once per decision. One
 * pass over the GPUs counts what the declines need, so an early decline builds no list.
 */
function checkHardware (job: JobRequest, state: ProviderState): Decline | GpuInfo[] {
  const { ad } = state
  const need = job.resources.gpus
  if (ad.gpus.length === 0) return decline(DeclineReason.NO_GPUS, `the job needs ${need} GPU(s); this provider has none`)
  let allowed = 0
  let matching = 0
  let largest = 0
  // an ad's GPUs are mostly one model: the model check runs once per run of equal models
  let model: string | undefined
  let allowedModel = false
  for (const g of ad.gpus) {
    if (g.model !== model) { model = g.model; allowedModel = modelOneOf(model, job.resources.models) }
    if (!allowedModel) continue
    allowed++
    if (g.vramMiB > largest) largest = g.vramMiB
    if (vramAllowed(job, g)) matching++
  }
  if (allowed === 0) return decline(DeclineReason.MODEL, `no GPU is one of ${job.resources.models.join(', ')} (has ${modelsOf(ad.gpus)})`)
  if (matching === 0) return decline(DeclineReason.VRAM, `no allowed GPU has ${job.resources.minVramGB} GB (largest ${largest} MiB)`)
  if (matching < need) return decline(DeclineReason.GPU_COUNT, `the job needs ${need} GPUs; ${matching} match`)
  return checkLimits(state) ?? matchingGpus(ad, job)
}

/**
 * The ad's distinct GPU models, for the MODEL decline's detail: most providers decline most jobs
 * there, so the list is made once per ad's GPU list (which an ad never changes in place).
 */
const modelLists = new WeakMap<readonly GpuInfo[], string>()
function modelsOf (gpus: readonly GpuInfo[]): string {
  let list = modelLists.get(gpus)
  if (list === undefined) modelLists.set(gpus, list = [...new Set(gpus.map((g) => g.model))].join(', '))
  return list
}

function checkLimits (state: ProviderState): Decline | undefined {
  const { limits } = state.ad
  const temp = state.telemetry?.maxGpuTempC
  if (temp !== undefined && limits.maxTempC !== undefined && temp > limits.maxTempC) {
    return decline(DeclineReason.THERMAL, `GPUs at ${temp} °C, above the ${limits.maxTempC} °C limit`)
  }
  const power = state.telemetry?.powerW
  if (power !== undefined && limits.maxPowerW !== undefined && power > limits.maxPowerW) {
    return decline(DeclineReason.POWER, `drawing ${power} W, above the ${limits.maxPowerW} W limit`)
  }
  return undefined
}

function checkCalendar (job: JobRequest, ad: CapabilityAd, now: number): Decline | number {
  const d = runtimeMs(job)
  const delay = startDelayMs(job)
  if (!isKnownTimeZone(ad.availability.timeZone)) {
    return decline(DeclineReason.CALENDAR, `unknown time zone "${ad.availability.timeZone}"`)
  }
  const start = nextFreeStart(ad.availability, now, d, delay)
  if (start === undefined) {
    return decline(DeclineReason.CALENDAR, `no free window of ${formatDuration(d)} starts within ${formatDuration(delay)}`)
  }
  return start
}

// ---------------------------------------------------------------------------------------------
// GPUs: free ones first, preemption of bronze work as the fallback
// ---------------------------------------------------------------------------------------------

interface Placement { start: number, gpus: string[], preempts: string[] }

/** Allocations whose hold [startedAt, endsAt) overlaps [start, start + durationMs). */
function overlapping (allocations: readonly Allocation[], start: number, durationMs: number): Allocation[] {
  return allocations.filter((a) => a.startedAt < start + durationMs && a.endsAt > start)
}

/**
 * Candidate starts: the first calendar fit from now and from each allocation end within the delay. The
 * earliest feasible start is always among them (GPUs only become free when an allocation ends).
 */
function candidateStarts (allocations: readonly Allocation[], free: readonly Interval[], now: number, durationMs: number, latest: number): number[] {
  const froms = [now, ...allocations.map((a) => a.endsAt).filter((e) => e > now && e <= latest)]
  const starts = froms.map((f) => firstFit(free, f, durationMs, latest)).filter((s): s is number => s !== undefined)
  return [...new Set(starts)].sort((a, b) => a - b)
}

/** Free matching GPUs at `start` (lowest index first), or undefined when too few. */
function placeFree (matching: readonly GpuInfo[], allocations: readonly Allocation[], start: number, durationMs: number, need: number): string[] | undefined {
  const busy = new Set(overlapping(allocations, start, durationMs).flatMap((a) => a.gpus))
  const free = matching.filter((g) => !busy.has(g.uuid)).map((g) => g.uuid)
  return free.length >= need ? free.slice(0, need) : undefined
}

/** A GPU that preempting `jobs` (all bronze) would free. */
export interface Unlockable { uuid: string, jobs: Set<string> }

/** Subsets of `items` of size `k`, in lexicographic order of positions. */
function * combinations<T> (items: readonly T[], k: number, from = 0): Generator<T[]> {
  if (k === 0) { yield []; return }
  for (let i = from; i <= items.length - k; i++) {
    for (const rest of combinations(items, k - 1, i + 1)) yield [items[i] as T, ...rest]
  }
}

function unlocks (gpu: Unlockable, chosen: ReadonlySet<string>): boolean {
  for (const j of gpu.jobs) if (!chosen.has(j)) return false
  return true
}

function unlockedBy (gpus: readonly Unlockable[], chosen: ReadonlySet<string>): Unlockable[] {
  return gpus.filter((g) => unlocks(g, chosen))
}

/** How many of `gpus` preempting `chosen` frees (unlockedBy's length, without the array). */
function unlockedCount (gpus: readonly Unlockable[], chosen: ReadonlySet<string>): number {
  let n = 0
  for (const g of gpus) if (unlocks(g, chosen)) n++
  return n
}

/** Revenue lost by preempting `jobs`: Σ price × GPUs of their live allocations (tie-break: lose the least). */
function lostRevenue (jobs: readonly string[], revenue: ReadonlyMap<string, number>): number {
  return jobs.reduce((sum, j) => sum + (revenue.get(j) ?? 0), 0)
}

/**
 * The fewest bronze jobs whose preemption frees `need` GPUs; ties go to the least revenue lost, then the
 * lowest job ids. Exact up to PREEMPT_EXACT_LIMIT jobs in the way, greedy (then pruned) beyond.
 */
export function choosePreemption (gpus: readonly Unlockable[], need: number, revenue: ReadonlyMap<string, number>, exactLimit = PREEMPT_EXACT_LIMIT): string[] | undefined {
  const jobs = [...new Set(gpus.flatMap((g) => [...g.jobs]))].sort()
  if (unlockedCount(gpus, new Set(jobs)) < need) return undefined
  if (jobs.length > exactLimit) return greedyPreemption(gpus, jobs, need, revenue)
  for (let k = 1; k <= jobs.length; k++) {
    let best: string[] | undefined
    for (const set of combinations(jobs, k)) {
      if (unlockedCount(gpus, new Set(set)) < need) continue
      if (best === undefined || lostRevenue(set, revenue) < lostRevenue(best, revenue)) best = set
    }
    if (best !== undefined) return best
  }
  return undefined
}

function greedyPreemption (gpus: readonly Unlockable[], jobs: readonly string[], need: number, revenue: ReadonlyMap<string, number>): string[] {
  const chosen = new Set<string>()
  const gain = (j: string): number => unlockedCount(gpus, new Set([...chosen, j])) * 1e3 +
    gpus.filter((g) => g.jobs.has(j)).length
  while (unlockedCount(gpus, chosen) < need) {
    const next = jobs.filter((j) => !chosen.has(j))
      .sort((a, b) => gain(b) - gain(a) || (revenue.get(a) ?? 0) - (revenue.get(b) ?? 0) || (a < b ? -1 : 1))[0]
    if (next === undefined) break
    chosen.add(next)
  }
  for (const j of [...chosen].reverse()) {
    const without = new Set([...chosen].filter((x) => x !== j))
    if (unlockedCount(gpus, without) >= need) chosen.delete(j)
  }
  return [...chosen].sort()
}

/** Place the job at `start` by preempting bronze allocations, or undefined. */
function placePreempting (matching: readonly GpuInfo[], allocations: readonly Allocation[], start: number, durationMs: number, need: number, exactLimit: number): Placement | undefined {
  const holders = new Map<string, Allocation[]>()
  for (const a of overlapping(allocations, start, durationMs)) {
    for (const uuid of a.gpus) holders.set(uuid, [...(holders.get(uuid) ?? []), a])
  }
  const free = matching.filter((g) => !holders.has(g.uuid))
  const unlockable = matching
    .filter((g) => holders.has(g.uuid) && (holders.get(g.uuid) ?? []).every((a) => a.tier === 'bronze'))
    .map((g) => ({ uuid: g.uuid, jobs: new Set((holders.get(g.uuid) ?? []).map((a) => a.job)) }))
  const revenue = new Map<string, number>()
  for (const a of allocations) if (a.tier === 'bronze') revenue.set(a.job, (revenue.get(a.job) ?? 0) + a.price * a.gpus.length)
  const preempts = choosePreemption(unlockable, need - free.length, revenue, exactLimit)
  if (preempts === undefined) return undefined
  const freed = new Set(unlockedBy(unlockable, new Set(preempts)).map((g) => g.uuid))
  const usable = [...free.map((g) => g.uuid), ...matching.filter((g) => freed.has(g.uuid)).map((g) => g.uuid)].slice(0, need)
  const chosen = matching.filter((g) => usable.includes(g.uuid)).map((g) => g.uuid)
  return { start, gpus: chosen, preempts }
}

/** Of the possible preempting placements, the one preempting the fewest jobs; ties go to the earliest start. */
function bestPreemption (placements: ReadonlyArray<Placement | undefined>): Placement | undefined {
  let best: Placement | undefined
  for (const p of placements) {
    if (p !== undefined && (best === undefined || p.preempts.length < best.preempts.length)) best = p
  }
  return best
}

/** The earliest start with enough free GPUs; else (gold/silver only) the start preempting the fewest bronze jobs. */
function placeGpus (job: JobRequest, state: ProviderState, matching: readonly GpuInfo[], now: number, calendarStart: number): Placement | Decline {
  const need = job.resources.gpus
  const d = runtimeMs(job)
  const relevant = state.allocations.filter((a) => a.endsAt > now)
  if (relevant.length === 0) return { start: calendarStart, gpus: matching.slice(0, need).map((g) => g.uuid), preempts: [] }
  const latest = now + Math.min(startDelayMs(job), MAX_CALENDAR_HORIZON_MS)
  const free = freeIntervals(state.ad.availability, now, latest + Math.max(1, d))
  const starts = candidateStarts(relevant, free, now, d, latest)
  for (const start of starts) {
    const gpus = placeFree(matching, relevant, start, d, need)
    if (gpus !== undefined) return { start, gpus, preempts: [] }
  }
  if (job.sla.tier !== 'bronze') {
    const placement = bestPreemption(starts.map((start) => placePreempting(matching, relevant, start, d, need, state.preemptExactLimit ?? PREEMPT_EXACT_LIMIT)))
    if (placement !== undefined) return placement
  }
  const held = new Set(overlapping(relevant, calendarStart, d).flatMap((a) => a.gpus))
  const freeNow = matching.filter((g) => !held.has(g.uuid)).length
  return decline(DeclineReason.BUSY, `the job needs ${need} GPUs; ${freeNow} of ${matching.length} matching are free at ${iso(calendarStart)} and not enough free up within ${formatDuration(startDelayMs(job))}`)
}

// ---------------------------------------------------------------------------------------------
// The policy
// ---------------------------------------------------------------------------------------------

/** Bid on `job` or decline with the first failing reason (see the module comment for the order). */
export function decideBid (job: JobRequest, state: ProviderState, now: number): BidDecision {
  const { ad } = state
  const gpuJob = job.resources.gpus > 0
  const terms = checkTerms(job, ad, now)
  if (terms !== undefined) return terms
  const matching = gpuJob ? checkHardware(job, state) : []
  if ('kind' in matching) return matching
  const calendarStart = checkCalendar(job, ad, now)
  if (typeof calendarStart !== 'number') return calendarStart
  const placement = gpuJob ? placeGpus(job, state, matching, now, calendarStart) : { start: calendarStart, gpus: [], preempts: [] }
  if ('kind' in placement) return placement
  const d = runtimeMs(job)
  const price = priceFor(ad.price, ad.availability.timeZone, placement.start, d)
  if (price > job.sla.maxPrice) {
    return decline(DeclineReason.PRICE, `asks ${formatMicros(price)} credits per GPU-hour from ${iso(placement.start)}, above the cap of ${formatMicros(job.sla.maxPrice)}`)
  }
  const fit = bidFit(price, job.sla.maxPrice, tightness(ad, placement.start, d))
  return { kind: 'bid', price, gpus: placement.gpus, startBy: placement.start, preempts: placement.preempts, fit }
}
