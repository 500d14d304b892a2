/**
 * Why a job got no bids (DESIGN §5): from the capability ads the requester knows, how many providers meet
 * each constraint on its own, the cheapest floor and the nearest free window among providers with the right
 * hardware, and a few lines a CLI can print. Pure; it reads ads, not live state, so it cannot see load,
 * telemetry or bid damping.
 */
import type { CapabilityAd } from '../messages/capability-ad.js'
import type { JobRequest } from '../messages/job-request.js'
import { DAY_MS, formatDuration, isKnownTimeZone, nextFreeStart } from './calendar.js'
import { matchingGpus, modelAllowed, regionAllowed, runtimeMs, startDelayMs, vramAllowed } from './bid-policy.js'
import { formatMicros } from './pricing.js'
import { DeclineReason } from './types.js'

/** How far ahead the nearest free window is searched. */
export const EXPLAIN_HORIZON_MS = 28 * DAY_MS

/** The constraints counted one by one, in the order they are printed. */
export const EXPLAINED_CONSTRAINTS = [
  DeclineReason.WORKLOAD, DeclineReason.REGION, DeclineReason.MODEL, DeclineReason.VRAM,
  DeclineReason.GPU_COUNT, DeclineReason.PRICE, DeclineReason.CALENDAR
] as const
export type ExplainedConstraint = typeof EXPLAINED_CONSTRAINTS[number]

export interface ConstraintCount {
  constraint: ExplainedConstraint
  /** The constraint in words, with the job's terms: `≥ 80 GB VRAM per GPU`. */
  label: string
  /** Known providers meeting this constraint (on its own). */
  meeting: number
}

export interface NoBidsExplanation {
  /** Known providers (ads given). */
  total: number
  perConstraint: ConstraintCount[]
  /** Providers with the workload, region and enough GPUs that each meet both the model and VRAM terms. */
  hardware: number
  /** Providers meeting every constraint together (they may still be busy, too hot, or pricier at the start). */
  meetingAll: number
  /** The lowest price floor among providers with the hardware; `provider` indexes `ads`. */
  cheapestFloor?: { price: number, provider: number }
  /** The earliest start (≥ now, within EXPLAIN_HORIZON_MS) at which a provider with the hardware fits the job. */
  nearestWindow?: { start: number, provider: number }
  summary: string[]
}

type Checks = Record<ExplainedConstraint, boolean>

/** Each constraint, tested alone. A CPU-only job meets every GPU constraint. */
function checksFor (job: JobRequest, ad: CapabilityAd, now: number): Checks {
  const need = job.resources.gpus
  const d = runtimeMs(job)
  return {
    WORKLOAD: ad.workloads.includes(job.workload.executor),
    REGION: regionAllowed(job, ad.region),
    MODEL: need === 0 || ad.gpus.some((g) => modelAllowed(job, g)),
    VRAM: need === 0 || ad.gpus.some((g) => vramAllowed(job, g)),
    GPU_COUNT: ad.gpus.length >= need,
    PRICE: ad.price.floor <= job.sla.maxPrice,
    CALENDAR: isKnownTimeZone(ad.availability.timeZone) && nextFreeStart(ad.availability, now, d, startDelayMs(job)) !== undefined
  }
}

/** Workload, region, and `gpus` GPUs meeting model and VRAM together. */
function hasHardware (job: JobRequest, ad: CapabilityAd, checks: Checks): boolean {
  return checks.WORKLOAD && checks.REGION && matchingGpus(ad, job).length >= job.resources.gpus
}

function labelFor (job: JobRequest, constraint: ExplainedConstraint): string {
  const { resources, placement, sla } = job
  switch (constraint) {
    case 'WORKLOAD': return `runs ${job.workload.executor}`
    case 'REGION': return placement.residency === 'strict' && placement.regions.length > 0 ? `in ${placement.regions.join(' or ')}` : 'any region'
    case 'MODEL': return resources.models.length > 0 ? `GPU model ${resources.models.join(' or ')}` : 'any GPU model'
    case 'VRAM': return `≥ ${resources.minVramGB} GB VRAM per GPU`
    case 'GPU_COUNT': return `≥ ${resources.gpus} GPUs`
    case 'PRICE': return `floor ≤ ${formatMicros(sla.maxPrice)} credits/GPU-h`
    case 'CALENDAR': return `free for ${formatDuration(runtimeMs(job))} within ${formatDuration(startDelayMs(job))}`
  }
}

/** The earliest fitting start among the hardware-matching providers (ties: the lowest index). */
function nearest (job: JobRequest, ads: readonly CapabilityAd[], eligible: readonly number[], now: number): NoBidsExplanation['nearestWindow'] {
  let best: NoBidsExplanation['nearestWindow']
  for (const i of eligible) {
    const ad = ads[i] as CapabilityAd
    if (!isKnownTimeZone(ad.availability.timeZone)) continue
    const start = nextFreeStart(ad.availability, now, runtimeMs(job), EXPLAIN_HORIZON_MS)
    if (start !== undefined && (best === undefined || start < best.start)) best = { start, provider: i }
  }
  return best
}

/** The lowest floor among the hardware-matching providers (ties: the lowest index). */
function cheapest (ads: readonly CapabilityAd[], eligible: readonly number[]): NoBidsExplanation['cheapestFloor'] {
  let best: NoBidsExplanation['cheapestFloor']
  for (const i of eligible) {
    const price = (ads[i] as CapabilityAd).price.floor
    if (best === undefined || price < best.price) best = { price, provider: i }
  }
  return best
}

function summarize (job: JobRequest, e: Omit<NoBidsExplanation, 'summary'>, now: number): string[] {
  const lines: string[] = []
  if (job.expiresAt <= now) lines.push(`The job expired at ${new Date(job.expiresAt).toISOString()}.`)
  lines.push(`No bids: ${e.meetingAll} of ${e.total} known providers meet every constraint` +
    (e.meetingAll > 0 ? ' (they may be busy, too hot, or pricier at the start time).' : '.'))
  for (const c of e.perConstraint) lines.push(`  ${c.label}: ${c.meeting} of ${e.total}`)
  lines.push(`${e.hardware} of ${e.total} have the hardware (workload, region and ${job.resources.gpus} matching GPUs on one machine).`)
  if (e.cheapestFloor !== undefined) {
    lines.push(`Cheapest floor among them: ${formatMicros(e.cheapestFloor.price)} credits/GPU-h (provider #${e.cheapestFloor.provider}); ` +
      `your max price is ${formatMicros(job.sla.maxPrice)}.`)
  }
  const d = formatDuration(runtimeMs(job))
  if (e.nearestWindow !== undefined) {
    lines.push(`Nearest free ${d} window among them: ${new Date(e.nearestWindow.start).toISOString()} (provider #${e.nearestWindow.provider}), ` +
      `in ${formatDuration(e.nearestWindow.start - now)}; your max start delay is ${formatDuration(startDelayMs(job))}.`)
  } else if (e.hardware > 0) {
    lines.push(`None of them has a free ${d} window within ${formatDuration(EXPLAIN_HORIZON_MS)}.`)
  }
  return lines
}

/** Explain, from the known ads, why `job` got no bids. */
export function explainNoBids (job: JobRequest, ads: readonly CapabilityAd[], now: number): NoBidsExplanation {
  const checks = ads.map((ad) => checksFor(job, ad, now))
  const perConstraint = EXPLAINED_CONSTRAINTS.map((constraint) => ({
    constraint,
    label: labelFor(job, constraint),
    meeting: checks.filter((c) => c[constraint]).length
  }))
  const eligible = ads.map((ad, i) => hasHardware(job, ad, checks[i] as Checks) ? i : -1).filter((i) => i >= 0)
  const meetingAll = eligible.filter((i) => {
    const c = checks[i] as Checks
    return c.PRICE && c.CALENDAR
  }).length
  const base: Omit<NoBidsExplanation, 'summary'> = { total: ads.length, perConstraint, hardware: eligible.length, meetingAll }
  const cheapestFloor = cheapest(ads, eligible)
  const nearestWindow = nearest(job, ads, eligible, now)
  if (cheapestFloor !== undefined) base.cheapestFloor = cheapestFloor
  if (nearestWindow !== undefined) base.nearestWindow = nearestWindow
  return { ...base, summary: summarize(job, base, now) }
}
