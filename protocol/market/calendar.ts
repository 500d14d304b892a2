/**
 * Weekly availability windows → absolute free time (DESIGN §5, "calendar fit": filling small gaps is the
 * point). Pure: time zones are resolved with `Intl.DateTimeFormat`, which is deterministic given its inputs.
 *
 * Meaning of a calendar: an instant t is free exactly when the owner's wall clock at t (in
 * `availability.timeZone`) shows a weekday and minute inside one of the windows. Consequences on DST days:
 * - spring forward (Europe/Berlin, last Sunday of March, 02:00 → 03:00): local 02:00–02:59 never happens,
 *   so a window `Sun 02:30–04:00` is free from 03:00 local (one absolute hour), and `Sun 02:00–03:00` not at all;
 * - fall back (last Sunday of October, 03:00 → 02:00): local 02:00–02:59 happens twice, so `Sun 02:30–03:00`
 *   is free twice (two absolute half hours) and `Sun 00:00–06:00` lasts seven absolute hours.
 * Windows that touch, on the same day or across midnight and across the week's end, form one free window
 * (`Mon 18:00–24:00` + `Tue 00:00–08:00` is one 14 h window).
 */
import type { CapabilityAd } from '../messages/capability-ad.js'
import { DAY_MS, HOUR_MS, MINUTE_MS, WEEK_MS } from '../limits.js'

export type Availability = CapabilityAd['availability']
export type WeeklyWindow = Availability['windows'][number]

/** A half-open absolute interval [start, end), ms since the epoch. `±Infinity` marks an unbounded side. */
export interface Interval { start: number, end: number }

/** The units of time, from protocol/limits.ts (re-exported: the calendar's callers import them from here). */
export { MINUTE_MS, HOUR_MS, DAY_MS, WEEK_MS }
const WEEK_MINUTES = 7 * 24 * 60
/** 1970-01-05T00:00Z, the first Monday of the epoch: weeks of wall time are counted from here. */
const EPOCH_MONDAY_MS = 4 * DAY_MS

/**
 * The furthest `nextFreeStart` looks ahead, whatever horizon it is given. A weekly calendar repeats; DST
 * days make a year the longest period worth searching (a job may fit only in a fall-back night's extra hour).
 */
export const MAX_CALENDAR_HORIZON_MS = 400 * DAY_MS

/** How far `windowAt` follows a free window before clipping it (a window can span DST weeks). */
export const WINDOW_SEARCH_LIMIT_MS = 8 * WEEK_MS

// ---------------------------------------------------------------------------------------------
// Time zones: UTC offsets and their transitions
// ---------------------------------------------------------------------------------------------

const formatters = new Map<string, Intl.DateTimeFormat>()

function formatter (timeZone: string): Intl.DateTimeFormat {
  let f = formatters.get(timeZone)
  if (f === undefined) {
    f = new Intl.DateTimeFormat('en-US', {
      timeZone,
      hourCycle: 'h23',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric'
    })
    formatters.set(timeZone, f)
  }
  return f
}

/** True when the runtime's tz data knows `timeZone` (an unknown zone makes the calendar functions throw). */
export function isKnownTimeZone (timeZone: string): boolean {
  try {
    formatter(timeZone)
    return true
  } catch {
    return false
  }
}

/** The zone's UTC offset at `t` in ms (wall time − UTC), e.g. +3,600,000 for Berlin in winter. */
export function utcOffsetMs (timeZone: string, t: number): number {
  const second = Math.floor(t / 1000) * 1000
  const fields: Record<string, number> = {}
  for (const part of formatter(timeZone).formatToParts(new Date(second))) {
    if (part.type !== 'literal') fields[part.type] = Number(part.value)
  }
  const wall = Date.UTC(fields.year ?? 1970, (fields.month ?? 1) - 1, fields.day ?? 1, fields.hour ?? 0, fields.minute ?? 0, fields.second ?? 0)
  return wall - second
}

/** Memo of offsets at UTC midnights and of the transitions inside each UTC day, per zone. */
const dayCache = new Map<string, { offset: number, transitions: number[] }>()
const DAY_CACHE_LIMIT = 100_000

/**
 * The zone's offset at the start of UTC day `day` and the instants inside that day where it changes.
 * Assumes a zone never changes its offset and back within one day (no tz rule does); transitions fall on
 * whole seconds and are found by bisection.
 */
function dayOffsets (timeZone: string, day: number): { offset: number, transitions: number[] } {
  const key = `${timeZone}|${day}`
  const cached = dayCache.get(key)
  if (cached !== undefined) return cached
  const start = day * DAY_MS
  const offset = utcOffsetMs(timeZone, start)
  const transitions: number[] = []
  let from = start
  let fromOffset = offset
  const end = start + DAY_MS
  while (utcOffsetMs(timeZone, end) !== fromOffset) {
    // bisect on whole seconds: offset(lo) = fromOffset, offset(hi) ≠ fromOffset
    let lo = from / 1000
    let hi = end / 1000
    while (hi - lo > 1) {
      const mid = Math.floor((lo + hi) / 2)
      if (utcOffsetMs(timeZone, mid * 1000) === fromOffset) lo = mid
      else hi = mid
    }
    from = hi * 1000
    fromOffset = utcOffsetMs(timeZone, from)
    transitions.push(from)
    if (from >= end) break
  }
  if (dayCache.size >= DAY_CACHE_LIMIT) dayCache.clear()
  const result = { offset, transitions }
  dayCache.set(key, result)
  return result
}

interface OffsetSegment { start: number, end: number, offset: number }

/** [from, to) cut where the zone's offset changes, each piece with its constant offset. */
function offsetSegments (timeZone: string, from: number, to: number): OffsetSegment[] {
  const cuts: number[] = []
  for (let day = Math.floor(from / DAY_MS); day * DAY_MS < to; day++) {
    for (const t of dayOffsets(timeZone, day).transitions) if (t > from && t < to) cuts.push(t)
  }
  const bounds = [from, ...cuts, to]
  const segments: OffsetSegment[] = []
  for (let i = 0; i + 1 < bounds.length; i++) {
    const start = bounds[i] as number
    segments.push({ start, end: bounds[i + 1] as number, offset: utcOffsetMs(timeZone, start) })
  }
  return segments
}

// ---------------------------------------------------------------------------------------------
// Weekly windows
// ---------------------------------------------------------------------------------------------

/** Windows as sorted, merged [start, end) minutes of the week (Monday 00:00 = 0). */
export function weekMinutes (windows: readonly WeeklyWindow[]): Array<[number, number]> {
  const spans = windows
    .map((w): [number, number] => [(w.day - 1) * 1440 + w.start, (w.day - 1) * 1440 + w.end])
    .sort((a, b) => a[0] - b[0] || a[1] - b[1])
  const merged: Array<[number, number]> = []
  for (const span of spans) {
    const last = merged.at(-1)
    if (last !== undefined && span[0] <= last[1]) last[1] = Math.max(last[1], span[1])
    else merged.push([span[0], span[1]])
  }
  return merged
}

/** True when the windows cover the whole week: the GPUs are always for sale. */
function coversWeek (spans: ReadonlyArray<[number, number]>): boolean {
  const first = spans[0]
  return spans.length === 1 && first !== undefined && first[0] === 0 && first[1] === WEEK_MINUTES
}

/** The owner's wall clock at `t`: ISO weekday (1 = Monday) and minute after local midnight. */
export function localTime (timeZone: string, t: number): { day: number, minute: number } {
  const wall = t + utcOffsetMs(timeZone, t)
  const minuteOfWeek = Math.floor(mod(wall - EPOCH_MONDAY_MS, WEEK_MS) / MINUTE_MS)
  return { day: Math.floor(minuteOfWeek / 1440) + 1, minute: minuteOfWeek % 1440 }
}

function mod (a: number, n: number): number {
  return ((a % n) + n) % n
}

/** Sort and merge intervals that overlap or touch. */
function mergeIntervals (intervals: Interval[]): Interval[] {
  intervals.sort((a, b) => a.start - b.start || a.end - b.end)
  const merged: Interval[] = []
  for (const i of intervals) {
    const last = merged.at(-1)
    if (last !== undefined && i.start <= last.end) last.end = Math.max(last.end, i.end)
    else merged.push({ ...i })
  }
  return merged
}

/** The free time within one constant-offset segment. */
function segmentIntervals (spans: ReadonlyArray<[number, number]>, segment: OffsetSegment): Interval[] {
  const out: Interval[] = []
  const { start, end, offset } = segment
  const firstWeek = Math.floor((start + offset - EPOCH_MONDAY_MS) / WEEK_MS) - 1
  const lastWeek = Math.floor((end + offset - EPOCH_MONDAY_MS) / WEEK_MS)
  for (let week = firstWeek; week <= lastWeek; week++) {
    const weekStart = EPOCH_MONDAY_MS + week * WEEK_MS - offset
    for (const [from, to] of spans) {
      const a = Math.max(start, weekStart + from * MINUTE_MS)
      const b = Math.min(end, weekStart + to * MINUTE_MS)
      if (a < b) out.push({ start: a, end: b })
    }
  }
  return out
}

// ---------------------------------------------------------------------------------------------
// Public API
// ---------------------------------------------------------------------------------------------

/**
 * The free time within [from, to) as sorted, disjoint, non-touching intervals, clipped to [from, to).
 * Throws RangeError for a time zone the runtime does not know.
 */
export function freeIntervals (availability: Availability, from: number, to: number): Interval[] {
  if (!(to > from)) return []
  const spans = weekMinutes(availability.windows)
  if (spans.length === 0) return []
  if (coversWeek(spans)) return [{ start: from, end: to }]
  const pieces = offsetSegments(availability.timeZone, from, to).flatMap((s) => segmentIntervals(spans, s))
  return mergeIntervals(pieces)
}

/** True when `t` lies in free time. */
export function isAvailable (availability: Availability, t: number): boolean {
  const { day, minute } = localTime(availability.timeZone, t)
  return availability.windows.some((w) => w.day === day && w.start <= minute && minute < w.end)
}

/**
 * The whole free window containing `t` ([start, end), windows touching across midnight or days merged),
 * or undefined when `t` is not free. An always-free calendar gives (−∞, +∞); a window longer than
 * WINDOW_SEARCH_LIMIT_MS on either side of `t` is clipped there.
 */
export function windowAt (availability: Availability, t: number): Interval | undefined {
  if (!isAvailable(availability, t)) return undefined
  if (coversWeek(weekMinutes(availability.windows))) return { start: -Infinity, end: Infinity }
  for (let reach = WEEK_MS; ; reach = Math.min(2 * reach, WINDOW_SEARCH_LIMIT_MS)) {
    const found = freeIntervals(availability, t - reach, t + reach).find((i) => i.start <= t && t < i.end)
    if (found === undefined) return undefined
    const clipped = found.start === t - reach || found.end === t + reach
    if (!clipped || reach === WINDOW_SEARCH_LIMIT_MS) return found
  }
}

/** True when the whole interval [start, start + durationMs) is free (a duration below 1 ms counts as 1 ms). */
export function fits (availability: Availability, start: number, durationMs: number): boolean {
  const end = start + Math.max(1, durationMs)
  const free = freeIntervals(availability, start, end)
  return free.length === 1 && free[0]?.start === start && free[0]?.end === end
}

/**
 * The earliest s in [from, latestStart] with [s, s + durationMs) inside one of `free` (sorted, merged
 * intervals such as freeIntervals returns), or undefined.
 */
export function firstFit (free: readonly Interval[], from: number, durationMs: number, latestStart: number): number | undefined {
  const d = Math.max(1, durationMs)
  for (const i of free) {
    const s = Math.max(i.start, from)
    if (s > latestStart) return undefined
    if (s + d <= i.end) return s
  }
  return undefined
}

/**
 * The earliest start s with from ≤ s ≤ from + horizonMs at which [s, s + durationMs) is free, or undefined.
 * The horizon is capped at MAX_CALENDAR_HORIZON_MS.
 */
export function nextFreeStart (availability: Availability, from: number, durationMs: number, horizonMs: number): number | undefined {
  if (horizonMs < 0) return undefined
  const latest = from + Math.min(horizonMs, MAX_CALENDAR_HORIZON_MS)
  const free = freeIntervals(availability, from, latest + Math.max(1, durationMs))
  return firstFit(free, from, durationMs, latest)
}

/** A duration for people: `45 s`, `90 min`, `2 h`, `2 h 30 min`, `3 d 4 h`. */
export function formatDuration (ms: number): string {
  if (ms === Infinity) return 'unbounded'
  if (ms < MINUTE_MS) return `${Math.ceil(ms / 1000)} s`
  const minutes = Math.ceil(ms / MINUTE_MS)
  if (minutes < 120 && minutes % 60 !== 0) return `${minutes} min`
  const days = Math.floor(minutes / 1440)
  const hours = Math.floor((minutes % 1440) / 60)
  const rest = minutes % 60
  const parts = [days > 0 ? `${days} d` : '', hours > 0 ? `${hours} h` : '', rest > 0 && days === 0 ? `${rest} min` : '']
  return parts.filter((p) => p !== '').join(' ')
}
