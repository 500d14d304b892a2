/**
 * simulations/overlay/time-heap.ts: pops in time order (ties by item), against a sort; grows past its
 * first capacity; clear() empties it for reuse.
 */
import assert from 'node:assert/strict'
import { TimeHeap } from '../../../../simulations/overlay/time-heap.js'
import { Prng } from '../../../../simulations/harness/prng.js'

describe('simulations/overlay: time heap', () => {
  it('pops in time order, equal times by item, matching a sort; grows from capacity 1', () => {
    const prng = new Prng('heap')
    const heap = new TimeHeap(1)
    const entries: Array<[number, number]> = []
    for (let i = 0; i < 2000; i++) {
      const entry: [number, number] = [prng.int(0, 50), prng.int(0, 10_000)]
      entries.push(entry)
      heap.push(entry[0], entry[1])
    }
    entries.sort((a, b) => a[0] - b[0] || a[1] - b[1])
    assert.equal(heap.size, 2000)
    assert.equal(heap.peekTime(), entries[0]?.[0])
    for (const [time, item] of entries) {
      assert.equal(heap.pop(), item)
      assert.equal(heap.lastTime, time)
    }
    assert.equal(heap.size, 0)
    assert.equal(heap.pop(), -1, 'empty')
    assert.equal(heap.peekTime(), undefined)
  })

  it('interleaved pushes and pops stay ordered; clear() empties it', () => {
    const heap = new TimeHeap(4)
    heap.push(5, 1)
    heap.push(1, 2)
    assert.equal(heap.pop(), 2)
    heap.push(3, 3)
    heap.push(3, 0)
    assert.equal(heap.pop(), 0)
    assert.equal(heap.pop(), 3)
    assert.equal(heap.pop(), 1)
    heap.push(9, 9)
    heap.clear()
    assert.equal(heap.size, 0)
    assert.equal(heap.pop(), -1)
  })
})
