/**
 * The calendar's caches against straightforward references: `utcOffsetMs` (per-day memo) against
 * `intlUtcOffsetMs` (one Intl call), and the free-time functions against the calendar's definition (an
 * instant is free when the owner's wall clock, by the uncached offset, shows a minute inside a window),
 * over random instants that crowd around DST transitions in zones with 1 h, 30 min and odd offsets.
 */
import assert from 'node:assert/strict'
import fc from 'fast-check'
import {
  DAY_CACHE_LIMIT, DAY_MS, WEEK_MS, WINDOW_SEARCH_LIMIT_MS, cachedOffsetDays, freeIntervals, intlUtcOffsetMs, isAvailable,
  isKnownTimeZone, utcOffsetMs, windowAt, type Availability, type Interval, type WeeklyWindow
} from '../../../../protocol/market/calendar.js'
import { H, M } from '../../../helpers/market-time.js'

const ZONES = ['Europe/Berlin', 'America/New_York', 'Australia/Lord_Howe', 'Asia/Kathmandu'] as const

/** Every offset change in [from, to), found day by day with the uncached offset and bisected to the second. */
function transitionsOf (timeZone: string, from: number, to: number): number[] {
  const found: number[] = []
  for (let t = from; t < to; t += DAY_MS) {
    const before = intlUtcOffsetMs(timeZone, t)
    if (intlUtcOffsetMs(timeZone, t + DAY_MS) === before) continue
    let lo = t / 1000
    let hi = (t + DAY_MS) / 1000
    while (hi - lo > 1) {
      const mid = Math.floor((lo + hi) / 2)
      if (intlUtcOffsetMs(timeZone, mid * 1000) === before) lo = mid
      else hi = mid
    }
    found.push(hi * 1000)
  }
  return found
}

const Y2023 = Date.UTC(2023, 0, 1)
const Y2027 = Date.UTC(2027, 0, 1)
const transitions = new Map(ZONES.map((z) => [z, transitionsOf(z, Y2023, Y2027)]))
/** Kathmandu moved from +05:30 to +05:45 at the start of 1986 (its only change since 1920). */
const KATHMANDU_1986 = transitionsOf('Asia/Kathmandu', Date.UTC(1985, 11, 1), Date.UTC(1986, 1, 1))

/** An instant near a transition of `zone` (within ±3 h, to the ms, exact edges included) or anywhere 1970–2100. */
function instantArb (zone: typeof ZONES[number]): fc.Arbitrary<number> {
  const near = [...(transitions.get(zone) ?? []), ...(zone === 'Asia/Kathmandu' ? KATHMANDU_1986 : [])]
  const edge = fc.constantFrom(...near).chain((t) => fc.constantFrom(t - 1000, t - 1, t, t + 1, t + 999, t + 1000))
  const around = fc.constantFrom(...near).chain((t) => fc.integer({ min: -3 * H, max: 3 * H }).map((d) => t + d))
  const anywhere = fc.integer({ min: 0, max: Date.UTC(2100, 0, 1) })
  return fc.oneof(edge, around, anywhere)
}

const zoneAndInstant = fc.constantFrom(...ZONES).chain((zone) => instantArb(zone).map((t) => ({ zone, t })))

/** The definition: t is free when its wall-clock minute (by the uncached offset) is inside a window. */
function freeByDefinition (availability: Availability, t: number): boolean {
  const wall = t + intlUtcOffsetMs(availability.timeZone, t)
  const EPOCH_MONDAY_MS = 4 * DAY_MS
  const minuteOfWeek = Math.floor((((wall - EPOCH_MONDAY_MS) % WEEK_MS) + WEEK_MS) % WEEK_MS / M)
  const day = Math.floor(minuteOfWeek / 1440) + 1
  const minute = minuteOfWeek % 1440
  return availability.windows.some((w) => w.day === day && w.start <= minute && minute < w.end)
}

/** Windows on half-hour and quarter-hour marks, around the small hours when clocks change. */
const windowArb: fc.Arbitrary<WeeklyWindow> = fc.record({
  day: fc.integer({ min: 1, max: 7 }),
  start: fc.oneof(fc.integer({ min: 0, max: 16 }).map((q) => q * 15), fc.integer({ min: 0, max: 1439 }))
}).chain((w) => fc.integer({ min: w.start + 1, max: Math.min(1440, w.start + 600) }).map((end) => ({ ...w, end })))

const availabilityArb = (zone: string): fc.Arbitrary<Availability> =>
  fc.array(windowArb, { minLength: 1, maxLength: 6 }).map((windows) => ({ timeZone: zone, windows }))

/** windowAt as it was before the search started at a day: from a week out, doubling up to the limit. */
function windowAtFromAWeek (availability: Availability, t: number): Interval | undefined {
  if (!isAvailable(availability, t)) return undefined
  for (let reach = WEEK_MS; ; reach = Math.min(2 * reach, WINDOW_SEARCH_LIMIT_MS)) {
    const found = freeIntervals(availability, t - reach, t + reach).find((i) => i.start <= t && t < i.end)
    if (found === undefined) return undefined
    const clipped = found.start === t - reach || found.end === t + reach
    if (!clipped || reach === WINDOW_SEARCH_LIMIT_MS) return found
  }
}

describe('market/calendar caches', () => {
  it('finds the DST transitions the properties crowd around (Berlin, New York, Lord Howe: two a year; Kathmandu 1986)', () => {
    assert.equal(transitions.get('Europe/Berlin')?.length, 8)
    assert.ok(transitions.get('Europe/Berlin')?.includes(Date.UTC(2024, 2, 31, 1)))
    assert.ok(transitions.get('America/New_York')?.includes(Date.UTC(2024, 2, 10, 7)))
    // Lord Howe's 30-minute shift: +10:30 → +11:00 at 02:00 local on 2024-10-06
    const lordHowe = Date.UTC(2024, 9, 5, 15, 30)
    assert.ok(transitions.get('Australia/Lord_Howe')?.includes(lordHowe))
    assert.equal(utcOffsetMs('Australia/Lord_Howe', lordHowe - 1), 10.5 * H)
    assert.equal(utcOffsetMs('Australia/Lord_Howe', lordHowe), 11 * H)
    assert.deepEqual(transitions.get('Asia/Kathmandu'), [])
    assert.deepEqual(KATHMANDU_1986, [Date.UTC(1985, 11, 31, 18, 30)])
    assert.equal(utcOffsetMs('Asia/Kathmandu', Date.UTC(2024, 0, 1)), 5.75 * H)
  })

  it('utcOffsetMs equals the uncached Intl offset at every instant, transitions and their edges included (property)', () => {
    fc.assert(fc.property(zoneAndInstant, ({ zone, t }) => {
      assert.equal(utcOffsetMs(zone, t), intlUtcOffsetMs(zone, t), `${zone} at ${new Date(t).toISOString()} (${t})`)
    }), { numRuns: 3000 })
  })

  it('isAvailable follows the definition by the uncached offset (property)', () => {
    fc.assert(fc.property(fc.constantFrom(...ZONES).chain((zone) => fc.tuple(availabilityArb(zone), instantArb(zone))), ([availability, t]) => {
      assert.equal(isAvailable(availability, t), freeByDefinition(availability, t))
    }), { numRuns: 1500 })
  })

  it('freeIntervals is exactly the free time by the definition: every piece free, its edges where freedom changes (property)', () => {
    const arb = fc.constantFrom(...ZONES).chain((zone) => fc.tuple(
      availabilityArb(zone), instantArb(zone), fc.integer({ min: 1, max: 2 * DAY_MS }), fc.array(fc.double({ min: 0, max: 1, noNaN: true }), { maxLength: 8 })
    ))
    fc.assert(fc.property(arb, ([availability, from, length, samples]) => {
      const to = from + length
      const free = freeIntervals(availability, from, to)
      for (const [k, i] of free.entries()) {
        assert.ok(from <= i.start && i.start < i.end && i.end <= to)
        if (k > 0) assert.ok((free[k - 1] as Interval).end < i.start, 'disjoint and not touching')
        assert.ok(freeByDefinition(availability, i.start) && freeByDefinition(availability, i.end - 1))
        if (i.start > from) assert.ok(!freeByDefinition(availability, i.start - 1), 'starts where freedom starts')
        if (i.end < to) assert.ok(!freeByDefinition(availability, i.end), 'ends where freedom ends')
      }
      for (const s of samples) {
        const t = Math.min(to - 1, from + Math.floor(s * length))
        assert.equal(free.some((i) => i.start <= t && t < i.end), freeByDefinition(availability, t), `at ${new Date(t).toISOString()}`)
      }
    }), { numRuns: 400 })
  })

  it('windowAt gives what the search from a week out gave, windows across DST nights included (property)', () => {
    const arb = fc.constantFrom(...ZONES).chain((zone) => fc.tuple(availabilityArb(zone), instantArb(zone)))
    fc.assert(fc.property(arb, ([availability, t]) => {
      assert.deepEqual(windowAt(availability, t), windowAtFromAWeek(availability, t))
    }), { numRuns: 400 })
  })

  it('answers a windows list changed in place afresh, never from the memo', () => {
    const windows: WeeklyWindow[] = [{ day: 1, start: 0, end: 600 }]
    const availability: Availability = { timeZone: 'UTC', windows }
    const monday = Date.UTC(2024, 0, 1)
    assert.deepEqual(freeIntervals(availability, monday, monday + DAY_MS), [{ start: monday, end: monday + 10 * H }])
    ;(windows[0] as WeeklyWindow).end = 720
    assert.deepEqual(freeIntervals(availability, monday, monday + DAY_MS), [{ start: monday, end: monday + 12 * H }])
    windows.push({ day: 1, start: 720, end: 1440 })
    assert.deepEqual(windowAt(availability, monday + H), { start: monday, end: monday + DAY_MS })
  })

  it('keeps the offset memo within DAY_CACHE_LIMIT zone-days, and right after it starts over', function () {
    // DAY_CACHE_LIMIT + 1 fresh days cost two Intl calls each: seconds on a busy machine
    this.timeout(60_000)
    const start = Date.UTC(1800, 0, 1)
    for (let day = 0; day <= DAY_CACHE_LIMIT; day++) utcOffsetMs('UTC', start + day * DAY_MS)
    assert.ok(cachedOffsetDays() <= DAY_CACHE_LIMIT, `${cachedOffsetDays()} cached`)
    assert.ok(cachedOffsetDays() >= 1)
    const spring = Date.UTC(2024, 2, 31, 1)
    assert.equal(utcOffsetMs('Europe/Berlin', spring - 1), H)
    assert.equal(utcOffsetMs('Europe/Berlin', spring), 2 * H)
  })

  it('stays right for unknown zones asked many times (the unknown-name memo is bounded)', () => {
    for (let i = 0; i < 1500; i++) assert.equal(isKnownTimeZone(`Mars/Crater_${i % 1100}`), false)
    assert.equal(isKnownTimeZone('Mars/Crater_1'), false)
    assert.equal(isKnownTimeZone('Europe/Berlin'), true)
    assert.throws(() => utcOffsetMs('Mars/Crater_1', 0), RangeError)
  })
})
