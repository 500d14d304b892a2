import assert from 'node:assert/strict'
import fc from 'fast-check'
import {
  MAX_CALENDAR_HORIZON_MS, availableMs, fits, formatDuration, freeIntervals, isAvailable, isKnownTimeZone, localTime, nextFreeStart,
  utcOffsetMs, weekMinutes, windowAt, type Availability, type WeeklyWindow
} from '../../../../protocol/market/calendar.js'

import { D, FALL, H, M, MON, SPRING } from '../../../helpers/market-time.js'

const utc = (...windows: WeeklyWindow[]): Availability => ({ timeZone: 'UTC', windows })
const berlin = (...windows: WeeklyWindow[]): Availability => ({ timeZone: 'Europe/Berlin', windows })
const iso = (t: number | undefined): string | undefined => t === undefined ? undefined : new Date(t).toISOString()

/** Independent reference for UTC calendars: is minute-of-week of t inside a window? */
function freeUtc (windows: readonly WeeklyWindow[], t: number): boolean {
  const minuteOfWeek = Math.floor((((t - MON) % (7 * D)) + 7 * D) % (7 * D) / M)
  const day = Math.floor(minuteOfWeek / 1440) + 1
  const minute = minuteOfWeek % 1440
  return windows.some((w) => w.day === day && w.start <= minute && minute < w.end)
}

const windowArb = fc.record({ day: fc.integer({ min: 1, max: 7 }), start: fc.integer({ min: 0, max: 1439 }) })
  .chain((w) => fc.integer({ min: w.start + 1, max: Math.min(1440, w.start + 600) }).map((end) => ({ ...w, end })))
/** Few windows, clustered on two days so that gaps and touching windows are common. */
const smallWindowArb = fc.record({
  day: fc.constantFrom(1, 2, 7),
  start: fc.integer({ min: 0, max: 47 }).map((h) => h * 30)
}).chain((w) => fc.integer({ min: 1, max: 12 }).map((n) => ({ ...w, end: Math.min(1440, w.start + n * 30) })))

describe('market/calendar', () => {
  describe('time zones', () => {
    it('knows IANA zones and refuses unknown ones', () => {
      assert.ok(isKnownTimeZone('Europe/Berlin'))
      assert.ok(isKnownTimeZone('UTC'))
      assert.ok(!isKnownTimeZone('Mars/Olympus_Mons'))
      assert.throws(() => isAvailable({ timeZone: 'Mars/Olympus_Mons', windows: [{ day: 1, start: 0, end: 60 }] }, MON), RangeError)
    })

    it('reads the offset on either side of a DST change', () => {
      assert.equal(utcOffsetMs('Europe/Berlin', SPRING + H - 1), H)
      assert.equal(utcOffsetMs('Europe/Berlin', SPRING + H), 2 * H)
      assert.equal(utcOffsetMs('Europe/Berlin', FALL + H - 1), 2 * H)
      assert.equal(utcOffsetMs('Europe/Berlin', FALL + H), H)
      assert.equal(utcOffsetMs('America/New_York', MON), -5 * H)
      assert.equal(utcOffsetMs('Asia/Kolkata', MON), 5.5 * H)
    })

    it('gives the local weekday and minute', () => {
      assert.deepEqual(localTime('UTC', MON + 9 * H + 5 * M), { day: 1, minute: 545 })
      assert.deepEqual(localTime('Europe/Berlin', MON - 30 * M), { day: 1, minute: 30 })
      assert.deepEqual(localTime('America/New_York', MON + 2 * H), { day: 7, minute: 1260 })
    })
  })

  describe('weekly windows', () => {
    it('merges overlapping and touching windows into minutes of the week', () => {
      assert.deepEqual(weekMinutes([{ day: 2, start: 0, end: 480 }, { day: 1, start: 1080, end: 1440 }, { day: 1, start: 60, end: 120 }, { day: 1, start: 100, end: 200 }]),
        [[60, 200], [1080, 1920]])
    })

    it('isAvailable is half-open on window bounds', () => {
      const a = utc({ day: 1, start: 540, end: 1020 })
      assert.equal(isAvailable(a, MON + 9 * H - 1), false)
      assert.equal(isAvailable(a, MON + 9 * H), true)
      assert.equal(isAvailable(a, MON + 17 * H - 1), true)
      assert.equal(isAvailable(a, MON + 17 * H), false)
      assert.equal(isAvailable(a, MON + 7 * D + 12 * H), true, 'next Monday')
      assert.equal(isAvailable(a, MON + D + 12 * H), false, 'Tuesday')
      assert.equal(isAvailable(utc(), MON), false, 'no windows = never')
    })

    it('uses the owner\'s time zone', () => {
      const ny = { timeZone: 'America/New_York', windows: [{ day: 1, start: 540, end: 1020 }] }
      assert.deepEqual(freeIntervals(ny, MON, MON + D), [{ start: MON + 14 * H, end: MON + 22 * H }])
    })
  })

  describe('windowAt', () => {
    it('merges Mon 18:00–24:00 and Tue 00:00–08:00 into one 14 h window', () => {
      const a = utc({ day: 1, start: 1080, end: 1440 }, { day: 2, start: 0, end: 480 })
      assert.deepEqual(windowAt(a, MON + 20 * H), { start: MON + 18 * H, end: MON + 32 * H })
      assert.deepEqual(windowAt(a, MON + 31 * H), { start: MON + 18 * H, end: MON + 32 * H })
      assert.equal(windowAt(a, MON + 32 * H), undefined)
    })

    it('merges across the end of the week', () => {
      const a = utc({ day: 7, start: 1320, end: 1440 }, { day: 1, start: 0, end: 120 })
      assert.deepEqual(windowAt(a, MON + 30 * M), { start: MON - 2 * H, end: MON + 2 * H })
    })

    it('merges across midnight in Berlin, including the DST night', () => {
      const a = berlin({ day: 6, start: 1320, end: 1440 }, { day: 7, start: 0, end: 240 })
      // Sat 22:00 CET (21:00Z) → Sun 04:00 CEST (02:00Z): 5 absolute hours instead of 6
      assert.deepEqual(windowAt(a, SPRING), { start: SPRING - 3 * H, end: SPRING + 2 * H })
      // Sat 22:00 CEST (20:00Z) → Sun 04:00 CET (03:00Z): 7 absolute hours
      assert.deepEqual(windowAt(a, FALL), { start: FALL - 4 * H, end: FALL + 3 * H })
    })

    it('is unbounded for an always-free calendar and clipped for a window longer than the search limit', () => {
      const always = utc(...[1, 2, 3, 4, 5, 6, 7].map((day) => ({ day, start: 0, end: 1440 })))
      assert.deepEqual(windowAt(always, MON), { start: -Infinity, end: Infinity })
      // everything except Wednesday 12:00–12:01 is free: the windows are bounded by that minute
      const almost = utc(...[1, 2, 4, 5, 6, 7].map((day) => ({ day, start: 0, end: 1440 })), { day: 3, start: 0, end: 720 }, { day: 3, start: 721, end: 1440 })
      const w = windowAt(almost, MON)
      assert.deepEqual(w, { start: MON - 4 * D - 12 * H + M, end: MON + 2 * D + 12 * H })
    })
  })

  describe('fits and nextFreeStart: filling small gaps', () => {
    // free Mon 09:00–12:00 (3 h gap) and Mon 14:00–15:00 (1 h gap)
    const gaps = utc({ day: 1, start: 540, end: 720 }, { day: 1, start: 840, end: 900 })

    it('a 2 h job fits in the 3 h gap but not in the 1 h gap', () => {
      assert.ok(fits(gaps, MON + 9 * H, 2 * H))
      assert.ok(fits(gaps, MON + 10 * H, 2 * H), 'ends exactly at the gap\'s end')
      assert.ok(!fits(gaps, MON + 10 * H + 1, 2 * H))
      assert.ok(!fits(gaps, MON + 14 * H, 2 * H))
      assert.ok(fits(gaps, MON + 14 * H, H))
      assert.ok(!fits(gaps, MON + 8 * H, 2 * H))
    })

    it('finds the earliest start that fits', () => {
      assert.equal(nextFreeStart(gaps, MON, 2 * H, D), MON + 9 * H)
      assert.equal(nextFreeStart(gaps, MON + 9 * H + 30 * M, 2 * H, D), MON + 9 * H + 30 * M)
      // after 10:00 the 3 h gap is too short; the 1 h gap never fits: next Monday
      assert.equal(nextFreeStart(gaps, MON + 10 * H + 1, 2 * H, 7 * D), MON + 7 * D + 9 * H)
      assert.equal(nextFreeStart(gaps, MON + 13 * H, H, D), MON + 14 * H)
    })

    it('honours the horizon (inclusive) and gives up past it', () => {
      assert.equal(nextFreeStart(gaps, MON, 2 * H, 9 * H), MON + 9 * H)
      assert.equal(nextFreeStart(gaps, MON, 2 * H, 9 * H - 1), undefined)
      assert.equal(nextFreeStart(gaps, MON, 4 * H, 30 * D), undefined)
      assert.equal(nextFreeStart(utc(), MON, M, 30 * D), undefined)
      assert.equal(nextFreeStart(gaps, MON, H, -1), undefined)
    })

    it('caps the horizon at MAX_CALENDAR_HORIZON_MS', () => {
      const yearly = utc({ day: 1, start: 0, end: 60 })
      assert.equal(nextFreeStart(yearly, MON + H, H, Number.MAX_SAFE_INTEGER), MON + 7 * D)
      assert.equal(nextFreeStart(yearly, MON + H, 2 * H, Number.MAX_SAFE_INTEGER), undefined)
      assert.equal(MAX_CALENDAR_HORIZON_MS, 400 * D)
    })
  })

  describe('daylight saving time (Europe/Berlin)', () => {
    it('spring forward: local 02:30 does not exist, so Sun 02:30–04:00 is one absolute hour from 03:00', () => {
      const a = berlin({ day: 7, start: 150, end: 240 })
      assert.deepEqual(freeIntervals(a, SPRING - D, SPRING + D), [{ start: SPRING + H, end: SPRING + 2 * H }])
      assert.equal(isAvailable(a, SPRING + H - 1), false, '01:59:59 CET')
      assert.equal(isAvailable(a, SPRING + H), true, '03:00 CEST')
      // a normal Sunday: 02:30–04:00 CET = 01:30Z–03:00Z
      assert.deepEqual(freeIntervals(a, SPRING - 7 * D, SPRING - 6 * D), [{ start: SPRING - 7 * D + 90 * M, end: SPRING - 7 * D + 3 * H }])
    })

    it('spring forward: a window inside the skipped hour never happens that day', () => {
      const a = berlin({ day: 7, start: 120, end: 180 })
      assert.deepEqual(freeIntervals(a, SPRING - D, SPRING + D), [])
      assert.equal(nextFreeStart(a, SPRING - D, M, 2 * D), undefined)
      assert.equal(nextFreeStart(a, SPRING - D, H, 8 * D), SPRING + 7 * D)
    })

    it('fall back: local 02:30 happens twice, so Sun 02:30–03:00 is free twice', () => {
      const a = berlin({ day: 7, start: 150, end: 180 })
      assert.deepEqual(freeIntervals(a, FALL - D, FALL + D), [
        { start: FALL + 30 * M, end: FALL + H },
        { start: FALL + 90 * M, end: FALL + 2 * H }
      ])
      assert.equal(isAvailable(a, FALL + 45 * M), true, '02:45 CEST')
      assert.equal(isAvailable(a, FALL + 75 * M), false, '02:15 CET')
      assert.equal(isAvailable(a, FALL + 105 * M), true, '02:45 CET')
      assert.ok(!fits(a, FALL + 30 * M, H), 'the two half hours are not one window')
    })

    it('a 6.5 h job fits Sun 00:00–06:00 only on the fall-back night (7 h) and a 5.5 h one not on the spring night (5 h)', () => {
      const a = berlin({ day: 7, start: 0, end: 360 })
      assert.equal(iso(nextFreeStart(a, Date.UTC(2024, 9, 1), 6.5 * H, 60 * D)), '2024-10-26T22:00:00.000Z')
      assert.ok(fits(a, FALL - 2 * H, 6.5 * H))
      assert.ok(!fits(a, FALL - 2 * H, 7 * H + 1))
      assert.deepEqual(windowAt(a, FALL), { start: FALL - 2 * H, end: FALL + 5 * H })
      assert.deepEqual(windowAt(a, SPRING), { start: SPRING - H, end: SPRING + 4 * H })
      assert.equal(iso(nextFreeStart(a, SPRING - 2 * D, 5.5 * H, 14 * D)), '2024-04-06T22:00:00.000Z')
    })

    it('a time every day from 02:30 is found the morning after the skipped hour', () => {
      const daily = berlin(...[1, 2, 3, 4, 5, 6, 7].map((day) => ({ day, start: 150, end: 180 })))
      assert.equal(iso(nextFreeStart(daily, SPRING - 30 * M, 10 * M, 2 * D)), '2024-04-01T00:30:00.000Z')
      assert.equal(iso(nextFreeStart(daily, FALL + 59 * M, 10 * M, 2 * D)), '2024-10-27T01:30:00.000Z')
    })
  })

  describe('properties', () => {
    it('fits ⇔ every minute of the interval is free (brute force, UTC)', () => {
      fc.assert(fc.property(
        fc.array(smallWindowArb, { maxLength: 5 }),
        fc.integer({ min: -2 * 1440, max: 9 * 1440 }), fc.integer({ min: 1, max: 24 * 60 }),
        (windows, startMinute, minutes) => {
          const start = MON + startMinute * M
          const brute = Array.from({ length: minutes }, (_, i) => freeUtc(windows, start + i * M)).every(Boolean)
          assert.equal(fits(utc(...windows), start, minutes * M), brute)
        }), { numRuns: 300 })
    })

    it('nextFreeStart is the earliest minute whose interval is free (brute force, UTC)', () => {
      fc.assert(fc.property(
        fc.array(smallWindowArb, { maxLength: 5 }),
        fc.integer({ min: 0, max: 7 * 1440 }), fc.integer({ min: 1, max: 12 * 60 }), fc.integer({ min: 0, max: 4 * 1440 }),
        (windows, fromMinute, minutes, horizonMinutes) => {
          const from = MON + fromMinute * M
          const free = Array.from({ length: horizonMinutes + minutes }, (_, i) => freeUtc(windows, from + i * M))
          let run = 0
          let expected: number | undefined
          for (let i = free.length - 1; i >= 0; i--) {
            run = free[i] === true ? run + 1 : 0
            if (i <= horizonMinutes && run >= minutes) expected = from + i * M
          }
          assert.equal(nextFreeStart(utc(...windows), from, minutes * M, horizonMinutes * M), expected)
        }), { numRuns: 300 })
    })

    it('freeIntervals agrees with isAvailable minute by minute across DST weeks', () => {
      const zones = fc.constantFrom('Europe/Berlin', 'America/New_York', 'Australia/Sydney', 'Asia/Kolkata')
      const weekStarts = [SPRING - 3 * D, FALL - 3 * D, Date.UTC(2024, 3, 4), Date.UTC(2024, 10, 1), Date.UTC(2024, 9, 4)]
      fc.assert(fc.property(zones, fc.constantFrom(...weekStarts), fc.array(windowArb, { maxLength: 6 }), (timeZone, from, windows) => {
        const a = { timeZone, windows }
        const free = freeIntervals(a, from, from + 7 * D)
        let total = 0
        for (const i of free) total += i.end - i.start
        let minutes = 0
        for (let t = from; t < from + 7 * D; t += M) if (isAvailable(a, t)) minutes++
        assert.equal(total, minutes * M)
        for (const i of free) {
          assert.ok(isAvailable(a, i.start) && isAvailable(a, i.end - 1))
          if (i.start > from) assert.ok(!isAvailable(a, i.start - 1))
          if (i.end < from + 7 * D) assert.ok(!isAvailable(a, i.end))
        }
      }), { numRuns: 25 })
    })

    it('freeIntervals are sorted, disjoint, not touching and inside the range', () => {
      fc.assert(fc.property(fc.array(windowArb, { maxLength: 8 }), fc.integer({ min: 0, max: 60 * D }), fc.integer({ min: 1, max: 20 * D }), (windows, offset, length) => {
        const from = SPRING - 30 * D + offset
        const free = freeIntervals(berlin(...windows), from, from + length)
        let last = -Infinity
        for (const i of free) {
          assert.ok(i.start > last && i.start < i.end && i.start >= from && i.end <= from + length)
          last = i.end
        }
      }), { numRuns: 100 })
    })

    it('windowAt contains t and is bounded by unavailable instants', () => {
      fc.assert(fc.property(fc.array(windowArb, { minLength: 1, maxLength: 8 }), fc.integer({ min: 0, max: 14 * D }), (windows, offset) => {
        const a = berlin(...windows)
        const t = FALL - 7 * D + offset
        const w = windowAt(a, t)
        if (!isAvailable(a, t)) return assert.equal(w, undefined)
        assert.ok(w !== undefined && w.start <= t && t < w.end)
        if (Number.isFinite(w.start)) assert.ok(!isAvailable(a, w.start - 1))
        if (Number.isFinite(w.end)) assert.ok(!isAvailable(a, w.end))
        assert.ok(fits(a, t, Math.min(w.end - t, 30 * D)))
      }), { numRuns: 100 })
    })
  })

  it('formats durations for people', () => {
    assert.equal(formatDuration(45_000), '45 s')
    assert.equal(formatDuration(90 * M), '90 min')
    assert.equal(formatDuration(2 * H), '2 h')
    assert.equal(formatDuration(150 * M), '2 h 30 min')
    assert.equal(formatDuration(3 * D + 4 * H), '3 d 4 h')
    assert.equal(formatDuration(Infinity), 'unbounded')
  })

  it('availableMs: the free time of [from, to), clipped at both ends; none for an empty or reversed span', () => {
    const monNineToTen = utc({ day: 1, start: 9 * 60, end: 10 * 60 })
    assert.equal(availableMs(monNineToTen, MON, MON + 7 * D), H)
    // cut inside the window at both ends: 09:30 → 09:45
    assert.equal(availableMs(monNineToTen, MON + 9 * H + 30 * M, MON + 9 * H + 45 * M), 15 * M)
    // two weeks hold it twice; an empty or reversed span holds nothing
    assert.equal(availableMs(monNineToTen, MON, MON + 14 * D), 2 * H)
    assert.equal(availableMs(monNineToTen, MON + 9 * H, MON + 9 * H), 0)
    assert.equal(availableMs(monNineToTen, MON + 10 * H, MON + 9 * H), 0)
    assert.equal(availableMs(utc(), MON, MON + D), 0)
    // always free: the whole span
    const always = utc(...[1, 2, 3, 4, 5, 6, 7].map((day) => ({ day, start: 0, end: 1440 })))
    assert.equal(availableMs(always, MON + 123, MON + 5 * D + 7), 5 * D - 116)
  })
})
