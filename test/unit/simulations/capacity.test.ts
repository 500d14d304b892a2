/**
 * simulations/capacity.ts: the per-node GPU timeline every strategy counts capacity with. Checked
 * against a brute-force model (an array of usage per millisecond slot) on random intervals.
 */
import assert from 'node:assert/strict'
import fc from 'fast-check'
import { CapacityError, FleetCapacity, GpuTimeline } from '../../../simulations/capacity.js'

describe('simulations: GPU timeline', () => {
  it('counts the most GPUs in use over an interval, ends exclusive', () => {
    const t = new GpuTimeline('n', 4)
    t.add(10, 20, 2)
    t.add(15, 30, 1)
    assert.equal(t.usedMax(0, 10), 0)
    assert.equal(t.usedMax(0, 11), 2)
    assert.equal(t.usedMax(15, 16), 3)
    assert.equal(t.usedMax(20, 30), 1)
    assert.equal(t.usedMax(30, 40), 0)
    assert.equal(t.usedAt(19), 3)
    assert.equal(t.usedAt(20), 1)
    assert.equal(t.free(12, 18), 1)
    assert.equal(t.usedMax(5, 5), 0, 'an empty interval uses nothing')
  })

  it('refuses what does not fit with a typed error and changes nothing', () => {
    const t = new GpuTimeline('box', 2)
    t.add(0, 100, 2)
    assert.throws(() => t.add(99, 150, 1), (e: unknown) => e instanceof CapacityError && e.code === 'CAPACITY_EXCEEDED' && e.free === 0 && e.node === 'box')
    assert.equal(t.usedAt(120), 0)
    t.add(100, 150, 2) // exactly at the end of the first: fits
    assert.equal(t.usedMax(0, 150), 2)
    assert.throws(() => new GpuTimeline('x', 1.5), RangeError)
    assert.throws(() => t.add(200, 300, -1), RangeError)
  })

  it('finds the earliest start, including exactly when GPUs are released, and none past the latest start', () => {
    const t = new GpuTimeline('n', 2)
    t.add(0, 50, 1)
    t.add(10, 40, 1)
    assert.equal(t.earliestStart(1, 0, 15), 40, 'free at 40 exactly')
    assert.equal(t.earliestStart(2, 0, 10), 50)
    assert.equal(t.earliestStart(2, 0, 10, 49), undefined)
    assert.equal(t.earliestStart(2, 0, 10, 50), 50)
    assert.equal(t.earliestStart(3, 0, 10), undefined, 'more than the node has')
    assert.equal(t.earliestStart(1, 60, 10), 60)
    assert.equal(t.earliestStart(1, 5, 5), 5, 'a 5 ms job fits before the second one starts')
  })

  it('sums GPU-hours in use over a window', () => {
    const t = new GpuTimeline('n', 8)
    t.add(0, 3_600_000, 2)
    t.add(1_800_000, 7_200_000, 4)
    assert.equal(t.usedGpuHours(0, 7_200_000), 2 + 4 * 1.5)
    assert.equal(t.usedGpuHours(3_600_000, 3_600_000), 0)
    assert.equal(t.usedGpuHours(-1e9, 1e12), 8)
  })

  it('agrees with a brute-force model on random intervals', () => {
    const interval = fc.record({ start: fc.integer({ min: 0, max: 60 }), len: fc.integer({ min: 0, max: 30 }), n: fc.integer({ min: 0, max: 3 }) })
    fc.assert(fc.property(fc.integer({ min: 0, max: 4 }), fc.array(interval, { maxLength: 25 }), interval, (gpus, adds, q) => {
      const t = new GpuTimeline('n', gpus)
      const slots = new Array<number>(100).fill(0)
      for (const a of adds) {
        const end = a.start + a.len
        let max = 0
        for (let s = a.start; s < end; s++) max = Math.max(max, slots[s] as number)
        if (a.n > gpus - max && a.len > 0 && a.n > 0) {
          assert.throws(() => t.add(a.start, end, a.n), CapacityError)
          continue
        }
        t.add(a.start, end, a.n)
        if (a.len > 0) for (let s = a.start; s < end; s++) slots[s] = (slots[s] as number) + a.n
      }
      const qEnd = q.start + q.len
      let max = 0
      for (let s = q.start; s < qEnd; s++) max = Math.max(max, slots[s] as number)
      assert.equal(t.usedMax(q.start, qEnd), max)
      let hours = 0
      for (let s = q.start; s < qEnd; s++) hours += slots[s] as number
      assert.ok(Math.abs(t.usedGpuHours(q.start, qEnd) * 3_600_000 - hours) < 1e-6)
      const need = Math.max(1, q.n)
      const dur = Math.max(1, q.len)
      let brute: number | undefined
      for (let s = q.start; s < 100 && brute === undefined; s++) {
        let m = 0
        for (let x = s; x < s + dur; x++) m = Math.max(m, slots[x] ?? 0)
        if (gpus - m >= need) brute = s
      }
      assert.equal(t.earliestStart(need, q.start, dur, 99), need > gpus ? undefined : brute)
    }), { numRuns: 300, seed: 42 })
  })
})

describe('simulations: fleet capacity', () => {
  it('holds one timeline per node and rejects duplicates and unknown nodes', () => {
    const f = new FleetCapacity([{ id: 'a', gpus: 2 }, { id: 'b', gpus: 8 }])
    f.timeline('a').add(0, 10, 2)
    assert.equal(f.timeline('b').free(0, 10), 8)
    assert.equal([...f.nodes()].length, 2)
    assert.throws(() => f.timeline('c'), RangeError)
    assert.throws(() => new FleetCapacity([{ id: 'a', gpus: 1 }, { id: 'a', gpus: 1 }]), RangeError)
  })
})
