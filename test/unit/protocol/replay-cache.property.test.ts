/**
 * ReplayCache against a plain model: a map of key → expiry, pruned at `now` (an entry expiring at `now` is
 * gone), evicting the entry that expires soonest while over capacity. Random adds, lookups and prunes
 * with time moving forward (sometimes not at all, sometimes exactly onto an expiry); every answer, the
 * size and the count of unexpired evictions must agree. Expiries are distinct, so "the soonest" is one
 * entry and the model needs no tie rule.
 */
import assert from 'node:assert/strict'
import fc from 'fast-check'
import { ReplayCache } from '../../../protocol/index.js'

class ModelCache {
  readonly entries = new Map<string, number>()
  evictedUnexpired = 0
  constructor (readonly capacity: number) {}

  has (key: string, now: number): boolean {
    const e = this.entries.get(key)
    return e !== undefined && e > now
  }

  prune (now: number): void {
    for (const [key, e] of this.entries) if (e <= now) this.entries.delete(key)
  }

  add (key: string, expiresAt: number, now: number): boolean {
    this.prune(now)
    if (this.has(key, now)) return false
    this.entries.set(key, expiresAt)
    while (this.entries.size > this.capacity) {
      let victim: [string, number] | undefined
      for (const entry of this.entries) if (victim === undefined || entry[1] < victim[1]) victim = entry
      const [key, e] = victim as [string, number]
      this.entries.delete(key)
      if (e > now) this.evictedUnexpired++
    }
    return true
  }
}

type Op = { op: 'add', key: number, life: number, dt: number } | { op: 'has', key: number, dt: number } | { op: 'prune', dt: number } | { op: 'to-expiry', pick: number }

const op: fc.Arbitrary<Op> = fc.oneof(
  { weight: 6, arbitrary: fc.record({ op: fc.constant('add' as const), key: fc.nat(12), life: fc.integer({ min: 0, max: 60 }), dt: fc.nat(8) }) },
  { weight: 3, arbitrary: fc.record({ op: fc.constant('has' as const), key: fc.nat(12), dt: fc.nat(3) }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('prune' as const), dt: fc.nat(20) }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('to-expiry' as const), pick: fc.nat() }) }
)

describe('ReplayCache (model property)', () => {
  it('answers, sizes and eviction counts agree with a plain model, expiries at the exact instant included', () => {
    fc.assert(fc.property(fc.integer({ min: 1, max: 6 }), fc.array(op, { maxLength: 120 }), (capacity, ops) => {
      const cache = new ReplayCache(capacity)
      const model = new ModelCache(capacity)
      let now = 0
      ops.forEach((o, i) => {
        if (o.op === 'to-expiry') {
          // jump exactly onto a held entry's expiry (when one lies ahead)
          const ahead = [...model.entries.values()].filter((e) => e > now).sort((a, b) => a - b)
          if (ahead.length > 0) now = ahead[o.pick % ahead.length] as number
          assert.equal(cache.has('k-none', now), false)
          return
        }
        now += o.dt * 1000
        if (o.op === 'add') {
          // distinct expiries: the op's index (< 1000) breaks every tie; life 0 is already expired when added
          // (only the entry just added can expire at `now`: the add prunes the others first)
          const expiresAt = o.life === 0 ? now : now + o.life * 1000 + i
          assert.equal(cache.add(`k${o.key}`, expiresAt, now), model.add(`k${o.key}`, expiresAt, now), `add k${o.key} at ${now}`)
        } else if (o.op === 'has') {
          assert.equal(cache.has(`k${o.key}`, now), model.has(`k${o.key}`, now), `has k${o.key} at ${now}`)
        } else {
          cache.prune(now)
          model.prune(now)
          assert.equal(cache.size, model.entries.size, `size after prune at ${now}`)
        }
        assert.ok(cache.size <= capacity)
        assert.equal(cache.evictedUnexpired, model.evictedUnexpired)
        for (let k = 0; k <= 12; k++) assert.equal(cache.has(`k${k}`, now), model.has(`k${k}`, now), `k${k} at ${now}`)
      })
    }), { numRuns: 300 })
  })
})
