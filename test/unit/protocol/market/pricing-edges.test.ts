/**
 * pricing at its edges (issue 9, mutation audit): a schedule without a peak asks its floor for every
 * duration, an empty or negative one included, and has no peak overlap.
 */
import assert from 'node:assert/strict'
import { peakOverlapMs, priceFor } from '../../../../protocol/market/pricing.js'
import { H, MON } from '../../../helpers/market-time.js'

describe('market/pricing at its edges', () => {
  it('without a peak: the floor for an empty, a negative and a long interval, and no peak overlap', () => {
    const flat = { floor: 1_234_567 }
    for (const duration of [0, -1, -5 * H, 1, 7 * 24 * H]) {
      assert.equal(priceFor(flat, 'UTC', MON + 10 * H, duration), 1_234_567, String(duration))
      assert.equal(priceFor(flat, 'Europe/Berlin', MON + 10 * H, duration), 1_234_567, String(duration))
    }
    assert.equal(peakOverlapMs(flat, 'UTC', MON, 24 * H), 0)
    assert.equal(peakOverlapMs(flat, 'UTC', MON, 0), 0)
  })

  it('a peak price at the floor asks the floor inside and outside the peak, for an empty interval too', () => {
    const even = { floor: 2_000_000, peak: { price: 2_000_000, windows: [{ day: 1, start: 540, end: 1020 }] } }
    for (const start of [MON, MON + 10 * H]) {
      for (const duration of [0, H, 10 * H]) assert.equal(priceFor(even, 'UTC', start, duration), 2_000_000, `${start} ${duration}`)
    }
  })
})
