/**
 * Weekly availability windows → absolute free time (DESIGN §5, "calendar fit": filling small gaps is the
 * point). Pure: time zones are resolved with `Intl.DateTimeFormat`, which is deterministic given its inputs.
 * Speed without a change of answer: offsets are read from a bounded memo of each zone's UTC days (one Intl
 * call per zone and day, then a lookup), and a windows list's merged weekly spans from a weak memo checked
 * against the list (calendar-cache.test.ts compares both with the uncached computation).
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
import { isKnownTimeZone, zoneFormatter } from '../time-zone.js'

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

/** True when the runtime's tz data knows `timeZone` (an unknown zone makes the calendar functions throw). */
export { isKnownTimeZone }

/**
 * The zone's UTC offset at `t` in ms (wall time − UTC) as `Intl` computes it, uncached: the reference the
 * cached `utcOffsetMs` is built from (and tested against). Costs a `formatToParts`, several µs.
 */
export function intlUtcOffsetMs (timeZone: string, t: number): number {
  const second = Math.floor(t / 1000) * 1000
  const fields: Record<string, number> = {}
  for (const part of zoneFormatter(timeZone).formatToParts(new Date(second))) {
    if (part.type !== 'literal') fields[part.type] = Number(part.value)
  }
  const wall = Date.UTC(fields.year ?? 1970, (fields.month ?? 1) - 1, fields.day ?? 1, fields.hour ?? 0, fields.minute ?? 0, fields.second ?? 0)
  return wall - second
}

/** A zone's offsets over one UTC day: at its start, and each change inside it with the offset after it. */
interface DayOffsets {
  offset: number
  /** Instants (whole seconds, ascending) where the offset changes; one may be the next day's start. */
  transitions: number[]
  /** The offset from `transitions[i]` on. */
  after: number[]
}

/**
 * Memo of `dayOffsets`, per zone then per UTC day. Bounded: past DAY_CACHE_LIMIT days in all it starts
 * over (a provider or a simulation touches a few weeks of a few zones, far below it).
 */
const dayCache = new Map<string, Map<number, DayOffsets>>()
let cachedDays = 0
export const DAY_CACHE_LIMIT = 100_000

/**
 * The zone's offset at the start of UTC day `day` and the instants inside that day where it changes.
 * Assumes a zone never changes its offset and back within one day (no tz rule does); transitions fall on
 * whole seconds and are found by bisection.
 */
function dayOffsets (timeZone: string, day: number): DayOffsets {
  let zone = dayCache.get(timeZone)
  const cached = zone?.get(day)
  if (cached !== undefined) return cached
  const start = day * DAY_MS
  const offset = intlUtcOffsetMs(timeZone, start)
  const transitions: number[] = []
  const after: number[] = []
  let from = start
  let fromOffset = offset
  const end = start + DAY_MS
  while (intlUtcOffsetMs(timeZone, end) !== fromOffset) {
    // bisect on whole seconds: offset(lo) = fromOffset, offset(hi) ≠ fromOffset
    let lo = from / 1000
    let hi = end / 1000
    while (hi - lo > 1) {
      const mid = Math.floor((lo + hi) / 2)
      if (intlUtcOffsetMs(timeZone, mid * 1000) === fromOffset) lo = mid
      else hi = mid
    }
    from = hi * 1000
    fromOffset = intlUtcOffsetMs(timeZone, from)
    transitions.push(from)
    after.push(fromOffset)
    if (from >= end) break
  }
  if (cachedDays >= DAY_CACHE_LIMIT) {
    dayCache.clear()
    cachedDays = 0
    zone = undefined
  }
  if (zone === undefined) {
    zone = new Map()
    dayCache.set(timeZone, zone)
  }
  const result = { offset, transitions, after }
  zone.set(day, result)
  cachedDays++
  return result
}

/** How many zone-days the offset memo holds now (for tests of its bound). */
export function cachedOffsetDays (): number {
  return cachedDays
}

/**
 * The zone's UTC offset at `t` in ms (wall time − UTC), e.g. +3,600,000 for Berlin in winter: the same as
 * `intlUtcOffsetMs`, read from the per-day memo (one `Intl` call per zone and day on first use).
 */
export function utcOffsetMs (timeZone: string, t: number): number {
  const day = dayOffsets(timeZone, Math.floor(t / DAY_MS))
  const { transitions } = day
  if (transitions.length === 0) return day.offset
  const second = Math.floor(t / 1000) * 1000
  let offset = day.offset
  for (let i = 0; i < transitions.length && (transitions[i] as number) <= second; i++) offset = day.after[i] as number
  return offset
}

// ---------------------------------------------------------------------------------------------
// Weekly windows
// ---------------------------------------------------------------------------------------------

type Span = readonly [number, number]

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

/** A list's `weekMinutes`, with the (day, start, end) triples it was computed from. */
interface SpanMemo { triples: Int32Array, spans: readonly Span[], always: boolean }

/**
 * Memo of `weekMinutes` per windows array (an ad's list is read on every decision). Weak: an entry lives
 * as long as its array, so memory stays bounded by what the caller holds. A hit is checked against the
 * triples it was computed from, so a list changed in place is computed afresh, never answered stale.
 */
const spanMemo = new WeakMap<readonly WeeklyWindow[], SpanMemo>()

function memoOf (windows: readonly WeeklyWindow[]): SpanMemo {
  const memo = spanMemo.get(windows)
  if (memo !== undefined && sameTriples(memo.triples, windows)) return memo
  const triples = new Int32Array(windows.length * 3)
  windows.forEach((w, i) => { triples[3 * i] = w.day; triples[3 * i + 1] = w.start; triples[3 * i + 2] = w.end })
  const spans = weekMinutes(windows)
  const fresh = { triples, spans, always: coversWeek(spans) }
  spanMemo.set(windows, fresh)
  return fresh
}

function sameTriples (triples: Int32Array, windows: readonly WeeklyWindow[]): boolean {
  if (triples.length !== windows.length * 3) return false
  for (let i = 0; i < windows.length; i++) {
    const w = windows[i] as WeeklyWindow
    if (triples[3 * i] !== w.day || triples[3 * i + 1] !== w.start || triples[3 * i + 2] !== w.end) return false
  }
  return true
}

/** True when the windows cover the whole week: the GPUs are always for sale. */
function coversWeek (spans: readonly Span[]): boolean {
  const first = spans[0]
  return spans.length === 1 && first !== undefined && first[0] === 0 && first[1] === WEEK_MINUTES
}

/** Minute of the week (Monday 00:00 = 0) on the owner's wall clock at `t`. */
function minuteOfWeek (timeZone: string, t: number): number {
  const wall = t + utcOffsetMs(timeZone, t)
  return Math.floor(mod(wall - EPOCH_MONDAY_MS, WEEK_MS) / MINUTE_MS)
}

/** The owner's wall clock at `t`: ISO weekday (1 = Monday) and minute after local midnight. */
export function localTime (timeZone: string, t: number): { day: number, minute: number } {
  const m = minuteOfWeek(timeZone, t)
  return { day: Math.floor(m / 1440) + 1, minute: m % 1440 }
}

function mod (a: number, n: number): number {
  return ((a % n) + n) % n
}

/** Merge sorted intervals that overlap or touch, in place (the array is the caller's own, freshly built). */
function mergeSorted (intervals: Interval[]): Interval[] {
  let n = 0
  for (const i of intervals) {
    const last = n > 0 ? intervals[n - 1] as Interval : undefined
    if (last !== undefined && i.start <= last.end) last.end = Math.max(last.end, i.end)
    else intervals[n++] = i
  }
  intervals.length = n
  return intervals
}

/** Append the free time within [start, end), where the zone's offset is `offset` throughout. */
function pushSegment (spans: readonly Span[], start: number, end: number, offset: number, out: Interval[]): void {
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
}

/**
 * The free time within [from, to) of non-empty, not always-free spans: [from, to) walked in pieces of
 * constant offset (cut where the zone's offset changes), each piece's free time appended in order.
 */
function spanIntervals (spans: readonly Span[], timeZone: string, from: number, to: number): Interval[] {
  const out: Interval[] = []
  let start = from
  for (let day = Math.floor(from / DAY_MS); day * DAY_MS < to; day++) {
    for (const t of dayOffsets(timeZone, day).transitions) {
      if (t > start && t < to) {
        pushSegment(spans, start, t, utcOffsetMs(timeZone, start), out)
        start = t
      }
    }
  }
  pushSegment(spans, start, to, utcOffsetMs(timeZone, start), out)
  // pieces come in time order (weeks ascending, spans sorted within a week, segments ascending); a stable
  // sort of a sorted array is one pass, and it keeps the merge right whatever the order
  out.sort((a, b) => a.start - b.start || a.end - b.end)
  return mergeSorted(out)
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
  const memo = memoOf(availability.windows)
  if (memo.spans.length === 0) return []
  if (memo.always) return [{ start: from, end: to }]
  return spanIntervals(memo.spans, availability.timeZone, from, to)
}

/** How much of [from, to) is free time, in ms (the offered time a provider's fill rate divides by). */
export function availableMs (availability: Availability, from: number, to: number): number {
  let ms = 0
  for (const i of freeIntervals(availability, from, to)) ms += i.end - i.start
  return ms
}

/** True when `t` lies in free time. */
export function isAvailable (availability: Availability, t: number): boolean {
  const m = minuteOfWeek(availability.timeZone, t)
  const day = Math.floor(m / 1440) + 1
  const minute = m % 1440
  return availability.windows.some((w) => w.day === day && w.start <= minute && minute < w.end)
}

/** Where `windowAt` starts its search: a day either side, doubling up to WINDOW_SEARCH_LIMIT_MS. */
const WINDOW_SEARCH_START_MS = DAY_MS

/**
 * The whole free window containing `t` ([start, end), windows touching across midnight or days merged),
 * or undefined when `t` is not free. An always-free calendar gives (−∞, +∞); a window longer than
 * WINDOW_SEARCH_LIMIT_MS on either side of `t` is clipped there. The search widens until the window found
 * is not clipped by it, so where it starts changes the cost only, never the answer.
 */
export function windowAt (availability: Availability, t: number): Interval | undefined {
  if (!isAvailable(availability, t)) return undefined
  const memo = memoOf(availability.windows)
  if (memo.always) return { start: -Infinity, end: Infinity }
  for (let reach = WINDOW_SEARCH_START_MS; ; reach = Math.min(2 * reach, WINDOW_SEARCH_LIMIT_MS)) {
    const found = spanIntervals(memo.spans, availability.timeZone, t - reach, t + reach).find((i) => i.start <= t && t < i.end)
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
