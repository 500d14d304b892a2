/**
 * ReplayCache at its edges (issue 9, mutation audit of protocol/replay-cache.ts): the smallest capacity,
 * exactly full, expiry at the exact instant, and which evictions count as exposure.
 */
import assert from 'node:assert/strict'
import { DEFAULT_REPLAY_CACHE_CAPACITY, ReplayCache } from '../../../protocol/index.js'

describe('ReplayCache at its edges', () => {
  it('refuses a capacity that is not a positive integer, accepts 1', () => {
    for (const bad of [0, -1, 1.5, Number.NaN, Number.POSITIVE_INFINITY]) {
      assert.throws(() => new ReplayCache(bad), RangeError, String(bad))
    }
    assert.equal(new ReplayCache(1).capacity, 1)
    assert.equal(new ReplayCache().capacity, DEFAULT_REPLAY_CACHE_CAPACITY)
  })

  it('with capacity 1 holds one key: a second evicts the first, which then is no replay', () => {
    const cache = new ReplayCache(1)
    assert.equal(cache.add('a', 100, 0), true)
    assert.equal(cache.add('a', 100, 0), false)
    assert.equal(cache.add('b', 200, 0), true)
    assert.equal(cache.size, 1)
    assert.equal(cache.has('b', 0), true)
    assert.equal(cache.has('a', 0), false)
    assert.equal(cache.evictedUnexpired, 1)
    assert.equal(cache.add('a', 100, 0), true)
  })

  it('exactly full evicts nothing; one more evicts exactly one, the soonest to expire', () => {
    const cache = new ReplayCache(3)
    cache.add('c', 300, 0)
    cache.add('a', 100, 0)
    cache.add('b', 200, 0)
    assert.equal(cache.size, 3)
    assert.equal(cache.evictedUnexpired, 0)
    for (const key of ['a', 'b', 'c']) assert.equal(cache.has(key, 0), true, key)
    cache.add('d', 50, 0)
    assert.equal(cache.size, 3)
    assert.equal(cache.evictedUnexpired, 1)
    // the newcomer expires soonest of all, so it is the one dropped; the others stay
    assert.deepEqual(['a', 'b', 'c', 'd'].map((k) => cache.has(k, 0)), [true, true, true, false])
    cache.add('e', 150, 0)
    assert.deepEqual(['a', 'b', 'c', 'e'].map((k) => cache.has(k, 0)), [false, true, true, true])
    assert.equal(cache.evictedUnexpired, 2)
  })

  it('an entry is live until one ms before its expiry and gone at exactly its expiry', () => {
    const cache = new ReplayCache(10)
    cache.add('k', 1_000, 0)
    assert.equal(cache.has('k', 999), true)
    assert.equal(cache.add('k', 5_000, 999), false)
    assert.equal(cache.has('k', 1_000), false)
    assert.equal(cache.add('k', 5_000, 1_000), true)
    assert.equal(cache.has('k', 4_999), true)
  })

  it('prune at exactly an expiry drops that entry, one ms earlier keeps it', () => {
    const cache = new ReplayCache(10)
    cache.add('a', 100, 0)
    cache.add('b', 200, 0)
    cache.prune(99)
    assert.equal(cache.size, 2)
    cache.prune(100)
    assert.equal(cache.size, 1)
    cache.prune(200)
    assert.equal(cache.size, 0)
  })

  it('evicting an entry that had already expired is not counted as exposure', () => {
    // a message recorded when it was already past its expiry (a historical add) is the first victim when full
    const cache = new ReplayCache(1)
    cache.add('live', 500, 10)
    cache.add('dead', 5, 10)
    assert.equal(cache.size, 1)
    assert.equal(cache.has('live', 10), true)
    assert.equal(cache.evictedUnexpired, 0)
    // evicting a live one is counted
    cache.add('later', 900, 10)
    assert.equal(cache.evictedUnexpired, 1)
    assert.equal(cache.has('later', 10), true)
  })
})
