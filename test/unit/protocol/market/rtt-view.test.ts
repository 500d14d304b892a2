/** protocol/market/rtt-view.ts: smoothing, estimates beside measurements, staleness, bounds, bad input. */
import assert from 'node:assert/strict'
import { InvalidRttViewParamsError, MAX_RTT_MS, RTT_MEASUREMENT_TTL_MS, RTT_SMOOTHING, RttView, createRttViewParams } from '../../../../protocol/market/rtt-view.js'

const T = 1_767_225_600_000

describe('protocol/market rtt-view', () => {
  it('takes the first sample as is and moves by 1/8 of the difference after', () => {
    assert.equal(RTT_SMOOTHING, 1 / 8)
    const v = new RttView()
    v.measured('a', 100, T)
    assert.equal(v.rttMs('a', T), 100)
    v.measured('a', 180, T + 1)
    assert.equal(v.rttMs('a', T + 1), 110)
    v.measured('a', 110, T + 2)
    assert.equal(v.rttMs('a', T + 2), 110)
  })

  it('scores the estimate until a measurement comes, then the measurement; says which', () => {
    const v = new RttView()
    assert.equal(v.rttMs('a', T), undefined)
    v.estimated('a', 40)
    assert.deepEqual(v.lookup('a', T), { ms: 40, source: 'estimated' })
    v.measured('a', 300, T)
    assert.deepEqual(v.lookup('a', T), { ms: 300, source: 'measured' })
    v.estimated('a', 20)
    assert.deepEqual(v.lookup('a', T), { ms: 300, source: 'measured' })
    assert.deepEqual(v.entry('a'), { estimatedMs: 20, measuredMs: 300, measuredAt: T })
  })

  it('a measurement counts for exactly measurementTtlMs, then the estimate is back; a sample after that starts afresh', () => {
    const v = new RttView()
    v.estimated('a', 40)
    v.measured('a', 300, T)
    assert.equal(v.rttMs('a', T + RTT_MEASUREMENT_TTL_MS), 300)
    assert.equal(v.rttMs('a', T + RTT_MEASUREMENT_TTL_MS + 1), 40)
    const bare = new RttView()
    bare.measured('b', 300, T)
    assert.equal(bare.rttMs('b', T + RTT_MEASUREMENT_TTL_MS + 1), undefined)
    v.measured('a', 20, T + RTT_MEASUREMENT_TTL_MS + 1)
    assert.equal(v.rttMs('a', T + RTT_MEASUREMENT_TTL_MS + 1), 20)
    v.measured('a', 100, T + RTT_MEASUREMENT_TTL_MS + 2)
    assert.equal(v.rttMs('a', T + RTT_MEASUREMENT_TTL_MS + 2), 30)
  })

  it('ignores negative, NaN and infinite samples and estimates; clamps a huge sample to MAX_RTT_MS; 0 is a sample', () => {
    const v = new RttView()
    for (const bad of [-1, Number.NaN, Number.POSITIVE_INFINITY]) { v.measured('a', bad, T); v.estimated('a', bad) }
    v.estimated('a', undefined)
    assert.equal(v.entry('a'), undefined)
    v.measured('a', 10 * MAX_RTT_MS, T)
    assert.equal(v.rttMs('a', T), MAX_RTT_MS)
    v.measured('z', 0, T)
    assert.equal(v.rttMs('z', T), 0)
    v.estimated('y', 0)
    assert.equal(v.rttMs('y', T), 0)
  })

  it('keeps at most maxPeers, dropping the one updated longest ago', () => {
    const v = new RttView({ maxPeers: 2 })
    v.measured('a', 1, T)
    v.measured('b', 2, T)
    v.measured('a', 1, T + 1)
    v.estimated('c', 3)
    assert.equal(v.size, 2)
    assert.equal(v.entry('b'), undefined)
    assert.ok(v.entry('a') !== undefined && v.entry('c') !== undefined)
  })

  it('validates its parameters', () => {
    for (const bad of [{ smoothing: 0 }, { smoothing: 1.5 }, { measurementTtlMs: 0 }, { maxPeers: 0 }, { maxPeers: 1.5 }, { smoothing: Number.NaN }]) {
      assert.throws(() => createRttViewParams(bad), InvalidRttViewParamsError, JSON.stringify(bad))
    }
    assert.equal(createRttViewParams({ smoothing: 1, maxPeers: 1 }).smoothing, 1)
  })
})
