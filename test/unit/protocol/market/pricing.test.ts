import assert from 'node:assert/strict'
import fc from 'fast-check'
import type { PriceSchedule } from '../../../../protocol/messages/capability-ad.js'
import { cost, formatMicros, peakOverlapMs, peakPrice, priceFor } from '../../../../protocol/market/pricing.js'

import { D, FALL, H, M, MON, SPRING } from '../../../helpers/market-time.js'

/** Floor 1 credit, 2 credits Mon–Fri 09:00–17:00. */
const weekdays: PriceSchedule = {
  floor: 1_000_000,
  peak: { price: 2_000_000, windows: [1, 2, 3, 4, 5].map((day) => ({ day, start: 540, end: 1020 })) }
}

describe('market/pricing', () => {
  describe('priceFor', () => {
    it('asks the floor without a peak schedule', () => {
      assert.equal(priceFor({ floor: 1_234_567 }, 'UTC', MON, 5 * H), 1_234_567)
    })

    it('asks the floor off-peak and the peak price inside peak windows', () => {
      assert.equal(priceFor(weekdays, 'UTC', MON, 9 * H), 1_000_000)
      assert.equal(priceFor(weekdays, 'UTC', MON + 9 * H, 8 * H), 2_000_000)
      assert.equal(priceFor(weekdays, 'UTC', MON + 5 * D, 2 * D), 1_000_000, 'weekend')
    })

    it('time-weights an interval across the peak boundary', () => {
      assert.equal(priceFor(weekdays, 'UTC', MON + 8 * H, 2 * H), 1_500_000)
      assert.equal(priceFor(weekdays, 'UTC', MON + 16 * H, 4 * H), 1_250_000)
    })

    it('rounds up to a whole micro', () => {
      // 1 h off-peak + 2 h peak: 5,000,000 / 3 = 1,666,666.67
      assert.equal(priceFor(weekdays, 'UTC', MON + 8 * H, 3 * H), 1_666_667)
      // one ms of peak in a day: just above the floor
      assert.equal(priceFor(weekdays, 'UTC', MON + 9 * H - D + 1, D), 1_000_001)
    })

    it('uses the owner\'s time zone', () => {
      // 09:00–17:00 in Berlin is 08:00–16:00Z in winter
      assert.equal(priceFor(weekdays, 'Europe/Berlin', MON + 8 * H, H), 2_000_000)
      assert.equal(priceFor(weekdays, 'Europe/Berlin', MON + 16 * H, H), 1_000_000)
    })

    it('follows DST: a peak in the skipped hour costs nothing extra, one in the repeated hour counts twice', () => {
      const night: PriceSchedule = { floor: 1_000_000, peak: { price: 4_000_000, windows: [{ day: 7, start: 120, end: 180 }] } }
      assert.equal(priceFor(night, 'Europe/Berlin', SPRING - 2 * H, 6 * H), 1_000_000)
      assert.equal(peakOverlapMs(night, 'Europe/Berlin', FALL - 2 * H, 6 * H), 2 * H)
      assert.equal(priceFor(night, 'Europe/Berlin', FALL - 2 * H, 6 * H), 2_000_000)
      assert.equal(priceFor(night, 'Europe/Berlin', FALL - 7 * D - 2 * H, 6 * H), 1_500_000)
    })

    it('never asks below the floor, even with a peak price below it', () => {
      const odd: PriceSchedule = { floor: 3_000_000, peak: { price: 1_000_000, windows: [{ day: 1, start: 0, end: 1440 }] } }
      assert.equal(peakPrice(odd), 3_000_000)
      assert.equal(priceFor(odd, 'UTC', MON, H), 3_000_000)
    })

    it('asks the price in force at the start for an empty interval', () => {
      assert.equal(priceFor(weekdays, 'UTC', MON + 10 * H, 0), 2_000_000)
      assert.equal(priceFor(weekdays, 'UTC', MON + 17 * H, 0), 1_000_000)
    })

    it('lies between floor and peak and is the least integer covering the exact average (property)', () => {
      const window = fc.record({ day: fc.integer({ min: 1, max: 7 }), start: fc.integer({ min: 0, max: 1439 }) })
        .chain((w) => fc.integer({ min: w.start + 1, max: 1440 }).map((end) => ({ ...w, end })))
      fc.assert(fc.property(
        fc.integer({ min: 0, max: 10 ** 9 }), fc.integer({ min: 0, max: 10 ** 9 }), fc.array(window, { minLength: 1, maxLength: 4 }),
        fc.integer({ min: 0, max: 14 * D }), fc.integer({ min: 1, max: 3 * D }),
        (floor, extra, windows, offset, d) => {
          const schedule: PriceSchedule = { floor, peak: { price: floor + extra, windows } }
          const start = MON + offset
          const price = priceFor(schedule, 'UTC', start, d)
          assert.ok(Number.isSafeInteger(price) && price >= floor && price <= floor + extra)
          // brute force the peak share, minute by minute (windows are whole minutes in UTC)
          const exact = BigInt(floor) * BigInt(d - peakOverlapMs(schedule, 'UTC', start, d)) + BigInt(floor + extra) * BigInt(peakOverlapMs(schedule, 'UTC', start, d))
          assert.ok(BigInt(price) * BigInt(d) >= exact && BigInt(price - 1) * BigInt(d) < exact)
        }), { numRuns: 200 })
    })

    it('peakOverlapMs matches a minute-by-minute count (property, UTC)', () => {
      const window = fc.record({ day: fc.integer({ min: 1, max: 7 }), start: fc.integer({ min: 0, max: 1439 }) })
        .chain((w) => fc.integer({ min: w.start + 1, max: 1440 }).map((end) => ({ ...w, end })))
      fc.assert(fc.property(fc.array(window, { minLength: 1, maxLength: 4 }), fc.integer({ min: 0, max: 7 * 1440 }), fc.integer({ min: 1, max: 3 * 1440 }),
        (windows, startMinute, minutes) => {
          const schedule: PriceSchedule = { floor: 1, peak: { price: 2, windows } }
          let expected = 0
          for (let i = 0; i < minutes; i++) {
            const m = (startMinute + i) % (7 * 1440)
            if (windows.some((w) => w.day === Math.floor(m / 1440) + 1 && w.start <= m % 1440 && m % 1440 < w.end)) expected += M
          }
          assert.equal(peakOverlapMs(schedule, 'UTC', MON + startMinute * M, minutes * M), expected)
        }), { numRuns: 200 })
    })
  })

  describe('cost', () => {
    it('charges price × GPUs × hours, rounded up to a micro', () => {
      assert.equal(cost(1_000_000, 2, 90 * M), 3_000_000)
      assert.equal(cost(2_500_000, 8, 30 * D), 14_400_000_000)
      assert.equal(cost(1, 1, 1), 1)
      assert.equal(cost(3_600_000, 1, 1), 1)
      assert.equal(cost(3_600_001, 1, 1), 2)
      assert.equal(cost(1_000_000, 0, H), 0)
      assert.equal(cost(0, 8, H), 0)
    })

    it('refuses non-integers, negatives and results beyond 2^53', () => {
      assert.throws(() => cost(1.5, 1, H), RangeError)
      assert.throws(() => cost(1, -1, H), RangeError)
      assert.throws(() => cost(Number.MAX_SAFE_INTEGER, 64, 30 * D), RangeError)
    })

    it('is exact for large values where floats would round (property)', () => {
      fc.assert(fc.property(fc.integer({ min: 0, max: 10 ** 10 }), fc.integer({ min: 0, max: 64 }), fc.integer({ min: 0, max: 30 * D }), (price, gpus, ms) => {
        const exact = BigInt(price) * BigInt(gpus) * BigInt(ms)
        const c = BigInt(cost(price, gpus, ms))
        assert.ok(c * BigInt(H) >= exact && (c - 1n) * BigInt(H) < exact || (c === 0n && exact === 0n))
      }))
    })
  })

  it('formats micros as credits', () => {
    assert.equal(formatMicros(1_500_000), '1.50')
    assert.equal(formatMicros(1_234_567), '1.234567')
    assert.equal(formatMicros(0), '0.00')
    assert.equal(formatMicros(20_000_000), '20.00')
  })

  describe('formatMicros edges', () => {
    it('prints zero, one micro and minus one micro', () => {
      assert.equal(formatMicros(0), '0.00')
      assert.equal(formatMicros(-0), '0.00')
      assert.equal(formatMicros(1), '0.000001')
      assert.equal(formatMicros(-1), '-0.000001')
    })

    it('puts the sign once, in front, for negative amounts', () => {
      assert.equal(formatMicros(-1_000_000), '-1.00')
      assert.equal(formatMicros(-1_500_000), '-1.50')
      assert.equal(formatMicros(-1_234_567), '-1.234567')
      assert.equal(formatMicros(-999_999), '-0.999999')
    })

    it('keeps a remainder that does not divide evenly, without trailing zeros past two decimals', () => {
      assert.equal(formatMicros(1_000_001), '1.000001')
      assert.equal(formatMicros(3_330_000), '3.33')
      assert.equal(formatMicros(3_333_300), '3.3333')
      assert.equal(formatMicros(999_999), '0.999999')
    })

    it('is exact up to the largest safe integer, both signs', () => {
      assert.equal(formatMicros(Number.MAX_SAFE_INTEGER), '9007199254.740991')
      assert.equal(formatMicros(-Number.MAX_SAFE_INTEGER), '-9007199254.740991')
    })

    it('refuses what is not a whole, safe number of micros', () => {
      for (const bad of [0.5, -1.5, Number.NaN, Number.POSITIVE_INFINITY, Number.MAX_SAFE_INTEGER + 1]) {
        assert.throws(() => formatMicros(bad), RangeError, String(bad))
      }
    })

    it('reads back as the amount (property)', () => {
      fc.assert(fc.property(fc.maxSafeInteger(), (m) => {
        const text = formatMicros(m)
        assert.match(text, /^-?\d+\.\d{2,6}$/)
        const [whole, fraction] = text.replace('-', '').split('.') as [string, string]
        const back = BigInt(whole) * 1_000_000n + BigInt(fraction.padEnd(6, '0'))
        assert.equal(text.startsWith('-') ? -back : back, BigInt(m))
      }))
    })
  })
})
