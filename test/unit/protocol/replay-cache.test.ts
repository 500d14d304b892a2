import assert from 'node:assert/strict'
import fc from 'fast-check'
import { ReplayCache } from '../../../protocol/index.js'

describe('ReplayCache', () => {
  it('refuses a key until it expires', () => {
    const cache = new ReplayCache(10)
    assert.equal(cache.add('a', 100, 0), true)
    assert.equal(cache.add('a', 100, 50), false)
    assert.equal(cache.has('a', 99), true)
    assert.equal(cache.has('a', 100), false)
    assert.equal(cache.add('a', 200, 100), true)
  })

  it('prunes expired entries', () => {
    const cache = new ReplayCache(10)
    for (let i = 0; i < 5; i++) cache.add(`k${i}`, 10 * (i + 1), 0)
    cache.prune(30)
    assert.equal(cache.size, 2)
  })

  it('when full, evicts the entry that expires soonest and counts it', () => {
    const cache = new ReplayCache(3)
    cache.add('late', 1000, 0)
    cache.add('soon', 10, 0)
    cache.add('middle', 500, 0)
    cache.add('new', 800, 0)
    assert.equal(cache.size, 3)
    assert.equal(cache.has('soon', 1), false)
    assert.equal(cache.has('late', 1), true)
    assert.equal(cache.evictedUnexpired, 1)
  })

  it('agrees with a naive model under random operations', () => {
    const op = fc.record({ key: fc.integer({ min: 0, max: 20 }), ttl: fc.integer({ min: 1, max: 50 }), dt: fc.integer({ min: 0, max: 10 }) })
    fc.assert(fc.property(fc.array(op, { maxLength: 200 }), (ops) => {
      const cache = new ReplayCache(1000)
      const model = new Map<string, number>()
      let now = 0
      for (const { key, ttl, dt } of ops) {
        now += dt
        const k = String(key)
        const fresh = !((model.get(k) ?? -1) > now)
        assert.equal(cache.add(k, now + ttl, now), fresh)
        if (fresh) model.set(k, now + ttl)
        for (const [mk, exp] of model) if (exp <= now) model.delete(mk)
        assert.equal(cache.size, model.size)
      }
    }))
  })

  it('stays within capacity and keeps its heap bounded', () => {
    const cache = new ReplayCache(100)
    for (let i = 0; i < 10_000; i++) cache.add(`k${i}`, 1_000_000 + (i % 97), 0)
    assert.equal(cache.size, 100)
    assert.ok(cache.evictedUnexpired >= 9_900)
  })
})
