import assert from 'node:assert/strict'
import fc from 'fast-check'
import { cost } from '../../../../protocol/market/pricing.js'
import { billedGpus, chargeFor, exactCharge, intervalsCharge } from '../../../../protocol/market/lifecycle-shared.js'
import { HOUR_MS, MAX_JOB_GPUS } from '../../../../protocol/limits.js'

const MAX = Number.MAX_SAFE_INTEGER

/** ⌈price × gpus × ms / 1 h⌉ written another way (the oracle): 0, or ⌊(n − 1) / 1 h⌋ + 1. */
function oracle (price: number, gpus: number, ms: number): bigint {
  const n = BigInt(price) * BigInt(gpus) * BigInt(ms)
  return n === 0n ? 0n : (n - 1n) / BigInt(HOUR_MS) + 1n
}

describe('one cost formula: pricing\'s cost and the lifecycles\' chargeFor', () => {
  it('agree, and round up to a whole micro, at the edges', () => {
    const cases: Array<[price: number, gpus: number, ms: number, micros: number]> = [
      [2_000_000, 0, HOUR_MS, 0], // 0 GPUs: nothing (the lifecycles bill a CPU job as billedGpus(0) = 1)
      [2_000_000, 1, 0, 0], // 0 ms
      [0, 8, HOUR_MS, 0], // free
      [1, 1, 1, 1], // one micro: the least amount is a whole micro
      [3_600_000, 1, 1, 1], // divides exactly
      [3_600_001, 1, 1, 2], // one past: rounds up
      [2_000_000, 2, 60_000, 66_667], // 66,666.67 → 66,667
      [1_000_000, 3, 1_000, 834], // 833.33 → 834
      [MAX, 1, HOUR_MS, MAX] // exactly 2^53 − 1
    ]
    for (const [price, gpus, ms, micros] of cases) {
      assert.equal(cost(price, gpus, ms), micros, `cost(${price}, ${gpus}, ${ms})`)
      assert.equal(chargeFor(price, gpus, ms), micros, `chargeFor(${price}, ${gpus}, ${ms})`)
      assert.equal(exactCharge(BigInt(price), BigInt(gpus), BigInt(ms)), BigInt(micros))
    }
    assert.equal(billedGpus(0), 1)
  })

  it('past 2^53 − 1, cost refuses and chargeFor clamps (a lifecycle never throws)', () => {
    assert.throws(() => cost(MAX, 1, HOUR_MS + 1), /exceeds 2\^53/)
    assert.equal(chargeFor(MAX, 1, HOUR_MS + 1), MAX)
    assert.throws(() => cost(MAX, MAX_JOB_GPUS, HOUR_MS), RangeError)
    assert.equal(chargeFor(MAX, MAX_JOB_GPUS, HOUR_MS), MAX)
  })

  it('on bad input, cost throws a RangeError and chargeFor counts it as 0 or its whole part', () => {
    for (const [price, gpus, ms] of [[Number.NaN, 1, 1_000], [-5, 1, 1_000], [1_000, -1, 1_000], [1_000, 1, -1], [1.5, 1, 1_000], [1_000, 1, Infinity]]) {
      assert.throws(() => cost(price as number, gpus as number, ms as number), RangeError, `cost(${price}, ${gpus}, ${ms})`)
    }
    assert.equal(chargeFor(Number.NaN, 1, HOUR_MS), 0)
    assert.equal(chargeFor(-5, 1, HOUR_MS), 0)
    assert.equal(chargeFor(1_000, -1, HOUR_MS), 0)
    assert.equal(chargeFor(1_000.9, 1.9, HOUR_MS + 0.5), 1_000) // floored to 1,000 × 1 × 1 h
    assert.equal(chargeFor(1_000, 1, Infinity), 0)
  })

  it('k intervals cost chargeFor of k × the interval, also when the interval is not a whole number of hours', () => {
    for (const [price, gpus, intervalMs, k] of [[2_000_000, 3, 7_000, 5], [1, 1, 1, 3_600_001], [999_999, 0, 60_000, 9], [1_000_000, 64, 300_000, 0]]) {
      assert.equal(intervalsCharge(price as number, gpus as number, intervalMs as number, k as number), chargeFor(price as number, gpus as number, (intervalMs as number) * (k as number)))
    }
  })

  it('agree with each other and with ⌈price × gpus × ms / 1 h⌉ everywhere below 2^53 (property)', () => {
    fc.assert(fc.property(
      fc.integer({ min: 0, max: 10 ** 12 }), fc.integer({ min: 0, max: MAX_JOB_GPUS }), fc.integer({ min: 0, max: 2 ** 40 }),
      (price, gpus, ms) => {
        const expected = oracle(price, gpus, ms)
        if (expected > BigInt(MAX)) {
          assert.throws(() => cost(price, gpus, ms), RangeError)
          assert.equal(chargeFor(price, gpus, ms), MAX)
        } else {
          assert.equal(cost(price, gpus, ms), Number(expected))
          assert.equal(chargeFor(price, gpus, ms), Number(expected))
        }
      }), { numRuns: 500 })
  })
})
