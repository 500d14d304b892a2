/**
 * Why a job got no bids (DESIGN §5): from the providers the requester knows (the ads it fetched, and the
 * peers the DHT named whose ads it could not fetch), how many meet each constraint on its own, the largest
 * VRAM on offer, the cheapest floor and the nearest free window among providers with the right hardware,
 * and a few lines a CLI can print. Providers are named by peer id. Pure; it reads ads, not live state, so
 * it cannot see load, telemetry or bid damping.
 */
import type { CapabilityAd } from '../messages/capability-ad.js'
import type { JobRequest } from '../messages/job-request.js'
import { formatVram } from '../constants.js'
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

/** A provider this node knows, with the signed ad it fetched from it. */
export interface KnownProvider {
  peerId: string
  ad: CapabilityAd
}

/** What the requester knows of the providers a job could run on. */
export interface KnownProviders {
  /** The providers whose ads it fetched (found on the DHT, or itself). */
  providers: readonly KnownProvider[]
  /** Peer ids the DHT named whose ads could not be had (unreachable, not selling, refused). */
  unreachable?: readonly string[]
}

export interface NoBidsExplanation {
  /** Known providers with an ad (the denominator of every count). */
  total: number
  /** Providers the DHT named whose ads could not be had: known, but not counted in `total`. */
  unreachable: number
  /** The largest per-GPU VRAM on offer among the known ads (ties: lowest peer id); absent when no ad has a GPU of known size. */
  largestVram?: { vramMiB: number, provider: string }
  perConstraint: ConstraintCount[]
  /** Providers with the workload, region and enough GPUs that each meet both the model and VRAM terms. */
  hardware: number
  /** Providers meeting every constraint together (they may still be busy, too hot, or pricier at the start). */
  meetingAll: number
  /** The lowest price floor among providers with the hardware (ties: lowest peer id). */
  cheapestFloor?: { price: number, provider: string }
  /** The earliest start (≥ now, within EXPLAIN_HORIZON_MS) at which a provider with the hardware fits the job (ties: lowest peer id). */
  nearestWindow?: { start: number, provider: string }
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

/** Peer ids in plain code-unit order, so ties go to the same provider whatever order the ads came in. */
function byPeerId (providers: readonly KnownProvider[]): KnownProvider[] {
  return [...providers].sort((a, b) => a.peerId < b.peerId ? -1 : a.peerId > b.peerId ? 1 : 0)
}

/** The earliest fitting start among the hardware-matching providers (ties: the lowest peer id). */
function nearest (job: JobRequest, eligible: readonly KnownProvider[], now: number): NoBidsExplanation['nearestWindow'] {
  let best: NoBidsExplanation['nearestWindow']
  for (const { peerId, ad } of eligible) {
    if (!isKnownTimeZone(ad.availability.timeZone)) continue
    const start = nextFreeStart(ad.availability, now, runtimeMs(job), EXPLAIN_HORIZON_MS)
    if (start !== undefined && (best === undefined || start < best.start)) best = { start, provider: peerId }
  }
  return best
}

/** The lowest floor among the hardware-matching providers (ties: the lowest peer id). */
function cheapest (eligible: readonly KnownProvider[]): NoBidsExplanation['cheapestFloor'] {
  let best: NoBidsExplanation['cheapestFloor']
  for (const { peerId, ad } of eligible) {
    if (best === undefined || ad.price.floor < best.price) best = { price: ad.price.floor, provider: peerId }
  }
  return best
}

/** The largest per-GPU VRAM among all known ads (ties: the lowest peer id). */
function largest (providers: readonly KnownProvider[]): NoBidsExplanation['largestVram'] {
  let best: NoBidsExplanation['largestVram']
  for (const { peerId, ad } of providers) {
    for (const gpu of ad.gpus) {
      if (gpu.vramMiB > 0 && (best === undefined || gpu.vramMiB > best.vramMiB)) best = { vramMiB: gpu.vramMiB, provider: peerId }
    }
  }
  return best
}

function summarize (job: JobRequest, e: Omit<NoBidsExplanation, 'summary'>, now: number): string[] {
  const lines: string[] = []
  if (job.expiresAt <= now) lines.push(`The job expired at ${new Date(job.expiresAt).toISOString()}.`)
  if (e.total === 0) {
    lines.push(e.unreachable > 0
      ? `No bids: this node fetched no provider's ad (${e.unreachable} found on the DHT could not be reached, were not selling or refused).`
      : 'No bids: this node knows no provider that could take the job (the DHT named none).')
    return lines
  }
  lines.push(`No bids: ${e.meetingAll} of ${e.total} known providers meet every constraint` +
    (e.meetingAll > 0 ? ' (they may be busy, too hot, or pricier at the start time).' : '.') +
    (e.unreachable > 0 ? ` ${e.unreachable} more found on the DHT could not be reached, were not selling or refused.` : ''))
  for (const c of e.perConstraint) {
    const most = c.constraint === 'VRAM' && c.meeting === 0 && e.largestVram !== undefined
      ? ` (the largest on offer: ${formatVram(e.largestVram.vramMiB)}, provider ${e.largestVram.provider})`
      : ''
    lines.push(`  ${c.label}: ${c.meeting} of ${e.total}${most}`)
  }
  lines.push(`${e.hardware} of ${e.total} have the hardware (workload, region and ${job.resources.gpus} matching GPUs on one machine).`)
  if (e.cheapestFloor !== undefined) {
    lines.push(`Cheapest floor among them: ${formatMicros(e.cheapestFloor.price)} credits/GPU-h (provider ${e.cheapestFloor.provider}); ` +
      `your max price is ${formatMicros(job.sla.maxPrice)}.`)
  }
  const d = formatDuration(runtimeMs(job))
  if (e.nearestWindow !== undefined) {
    lines.push(`Nearest free ${d} window among them: ${new Date(e.nearestWindow.start).toISOString()} (provider ${e.nearestWindow.provider}), ` +
      `in ${formatDuration(e.nearestWindow.start - now)}; your max start delay is ${formatDuration(startDelayMs(job))}.`)
  } else if (e.hardware > 0) {
    lines.push(`None of them has a free ${d} window within ${formatDuration(EXPLAIN_HORIZON_MS)}.`)
  }
  return lines
}

/**
 * Explain, from the providers this node knows, why `job` got no bids. A peer id given twice counts once
 * (its first ad); a peer with an ad is not also counted as unreachable.
 */
export function explainNoBids (job: JobRequest, known: KnownProviders, now: number): NoBidsExplanation {
  const first = new Map<string, KnownProvider>()
  for (const p of known.providers) if (!first.has(p.peerId)) first.set(p.peerId, p)
  const providers = byPeerId([...first.values()])
  const unreachable = new Set((known.unreachable ?? []).filter((peer) => !first.has(peer))).size
  const checks = new Map(providers.map((p) => [p.peerId, checksFor(job, p.ad, now)]))
  const checksOf = (p: KnownProvider): Checks => checks.get(p.peerId) as Checks
  const perConstraint = EXPLAINED_CONSTRAINTS.map((constraint) => ({
    constraint,
    label: labelFor(job, constraint),
    meeting: providers.filter((p) => checksOf(p)[constraint]).length
  }))
  const eligible = providers.filter((p) => hasHardware(job, p.ad, checksOf(p)))
  const meetingAll = eligible.filter((p) => checksOf(p).PRICE && checksOf(p).CALENDAR).length
  const base: Omit<NoBidsExplanation, 'summary'> = { total: providers.length, unreachable, perConstraint, hardware: eligible.length, meetingAll }
  const largestVram = largest(providers)
  const cheapestFloor = cheapest(eligible)
  const nearestWindow = nearest(job, eligible, now)
  if (largestVram !== undefined) base.largestVram = largestVram
  if (cheapestFloor !== undefined) base.cheapestFloor = cheapestFloor
  if (nearestWindow !== undefined) base.nearestWindow = nearestWindow
  return { ...base, summary: summarize(job, base, now) }
}
