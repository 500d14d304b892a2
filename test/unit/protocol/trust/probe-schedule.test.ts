import assert from 'node:assert/strict'
import {
  InvalidProbeScheduleParamsError, PROBE_INTERVAL_MIN_MS, ProbeSchedule, createProbeScheduleParams, firstProbeAt, reprobeAt
} from '../../../../protocol/trust/probe-schedule.js'

const HOUR = 3_600_000
const T0 = 1_767_225_600_000
/** A rate that never binds, so a test sees the per-provider rule alone. */
const FREE = { perHour: 3600, burst: 100 }

describe('probe schedule (pure): whom to probe when', () => {
  describe('firstProbeAt: a bidder before its first award only when the probe fits in the window', () => {
    it('no bid: at once', () => {
      assert.equal(firstProbeAt(T0), T0)
    })
    it('a probe that ends exactly at the close still goes first; one ms longer waits for the close', () => {
      assert.equal(firstProbeAt(T0, { closesAt: T0 + 1500, probeMs: 1500 }), T0)
      assert.equal(firstProbeAt(T0, { closesAt: T0 + 1500, probeMs: 1501 }), T0 + 1500)
    })
  })

  describe('reprobeAt', () => {
    it('no jitter: exactly one interval later; jitter adds up to its share of the interval', () => {
      const p = { intervalMs: 6 * HOUR, jitter: 0.1 }
      assert.equal(reprobeAt(T0, p, 0), T0 + 6 * HOUR)
      assert.equal(reprobeAt(T0, p, 0.5), T0 + 6 * HOUR + 0.05 * 6 * HOUR)
      assert.ok(reprobeAt(T0, p, 0.999999) < T0 + 6.6 * HOUR)
      assert.equal(reprobeAt(T0, { ...p, jitter: 0 }, 0.9), T0 + 6 * HOUR)
    })
  })

  it('a known provider is due again exactly at the interval, not a millisecond before', () => {
    const s = new ProbeSchedule({ ...FREE, intervalMs: HOUR, jitter: 0 })
    s.heard('P', T0, { model: 'nvidia-h100-80gb-hbm3' })
    assert.deepEqual(s.take(T0), { peer: 'P', model: 'nvidia-h100-80gb-hbm3', reason: 'first' })
    s.done('P', T0 + 700, 'probed', 0)
    assert.equal(s.take(T0 + 700 + HOUR - 1), undefined)
    assert.equal(s.wakeAt(T0 + 700 + HOUR - 1), T0 + 700 + HOUR)
    assert.deepEqual(s.take(T0 + 700 + HOUR), { peer: 'P', model: 'nvidia-h100-80gb-hbm3', reason: 'again' })
  })

  it('hearing of a probed provider again (an ad, a bid) does not bring its next probe forward', () => {
    const s = new ProbeSchedule({ ...FREE, intervalMs: HOUR, jitter: 0 })
    s.heard('P', T0)
    s.take(T0)
    s.done('P', T0, 'probed', 0)
    s.heard('P', T0 + 10)
    s.heard('P', T0 + 20, { model: 'x', bid: { closesAt: T0 + 60_000, probeMs: 1000 } })
    assert.equal(s.take(T0 + 30), undefined)
    assert.equal(s.dueAt('P'), T0 + HOUR)
  })

  it('a bidder whose probe fits before the close goes ahead of providers due earlier', () => {
    const s = new ProbeSchedule(FREE)
    s.heard('A', T0)
    s.heard('B', T0 + 10, { model: 'nvidia-a100', bid: { closesAt: T0 + 5010, probeMs: 5000 } })
    assert.deepEqual(s.take(T0 + 10), { peer: 'B', model: 'nvidia-a100', reason: 'pre-award' })
  })

  it('a bidder whose probe does not fit is probed right after the award, not before', () => {
    const s = new ProbeSchedule(FREE)
    s.heard('B', T0, { bid: { closesAt: T0 + 1000, probeMs: 1001 } })
    assert.equal(s.take(T0 + 999), undefined)
    assert.equal(s.wakeAt(T0), T0 + 1000)
    assert.deepEqual(s.take(T0 + 1000), { peer: 'B', reason: 'first' })
  })

  it('a bid brings forward the first probe of a provider heard of by its ad, never pushes it back', () => {
    const s = new ProbeSchedule({ ...FREE, burst: 1, perHour: 1 })
    s.heard('A', T0)
    s.take(T0)
    s.heard('B', T0 + 1)
    s.heard('B', T0 + 2, { bid: { closesAt: T0 + 10, probeMs: 100 } })
    assert.equal(s.dueAt('B'), T0 + 1)
  })

  it('the global bucket: burst back to back, then one per 3600/perHour s, exactly on the refill', () => {
    const s = new ProbeSchedule({ burst: 2, perHour: 60, intervalMs: HOUR, jitter: 0 })
    for (const p of ['A', 'B', 'C']) s.heard(p, T0)
    for (const p of ['A', 'B']) {
      assert.equal(s.take(T0)?.peer, p)
      s.done(p, T0, 'probed', 0)
    }
    assert.equal(s.take(T0), undefined)
    assert.equal(s.wakeAt(T0), T0 + 60_000)
    assert.equal(s.take(T0 + 59_999), undefined)
    assert.equal(s.take(T0 + 60_000)?.peer, 'C')
  })

  it('at most maxConcurrent probes at once, tokens or not', () => {
    const s = new ProbeSchedule({ ...FREE, maxConcurrent: 1 })
    s.heard('A', T0)
    s.heard('B', T0)
    assert.equal(s.take(T0)?.peer, 'A')
    assert.equal(s.take(T0), undefined)
    assert.equal(s.wakeAt(T0), undefined)
    s.done('A', T0 + 5, 'probed', 0)
    assert.equal(s.take(T0 + 5)?.peer, 'B')
  })

  it('a refused probe is tried again retryMs later, and does not count as probed', () => {
    const s = new ProbeSchedule({ ...FREE, retryMs: 120_000 })
    s.heard('A', T0)
    s.take(T0)
    s.done('A', T0, 'refused', 0)
    assert.equal(s.probedAt('A'), undefined)
    assert.equal(s.take(T0 + 119_999), undefined)
    assert.equal(s.take(T0 + 120_000)?.reason, 'first')
  })

  it('a probe by hand skips the bucket, refuses a provider in flight, and is recorded', () => {
    const s = new ProbeSchedule({ burst: 1, perHour: 1, intervalMs: HOUR, jitter: 0 })
    s.heard('A', T0)
    assert.equal(s.take(T0)?.peer, 'A')
    assert.equal(s.begin('A', T0), false)
    assert.equal(s.begin('B', T0, 'cpu'), true)
    s.done('B', T0 + 3, 'probed', 0)
    assert.equal(s.probedAt('B'), T0 + 3)
    assert.equal(s.dueAt('B'), T0 + 3 + HOUR)
  })

  it('remembers at most maxTracked providers, forgetting the least recently heard', () => {
    const s = new ProbeSchedule({ ...FREE, maxTracked: 2 })
    s.heard('A', T0)
    s.heard('B', T0 + 1)
    s.heard('A', T0 + 2)
    s.heard('C', T0 + 3)
    assert.equal(s.size, 2)
    assert.equal(s.dueAt('B'), undefined)
    assert.notEqual(s.dueAt('A'), undefined)
  })

  it('parameters: the interval may be the provider limit of 60 s, not less; every field is checked', () => {
    assert.equal(createProbeScheduleParams({ intervalMs: PROBE_INTERVAL_MIN_MS }).intervalMs, 60_000)
    assert.throws(() => createProbeScheduleParams({ intervalMs: PROBE_INTERVAL_MIN_MS - 1 }), (e: unknown) => e instanceof InvalidProbeScheduleParamsError && e.field === 'intervalMs')
    for (const bad of [{ jitter: 1.01 }, { jitter: -0.1 }, { perHour: 0.5 }, { burst: 0 }, { burst: 1.5 }, { retryMs: 999 }, { maxConcurrent: 0 }, { maxTracked: 0 }]) {
      assert.throws(() => createProbeScheduleParams(bad), InvalidProbeScheduleParamsError, JSON.stringify(bad))
    }
  })
})
