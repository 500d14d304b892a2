import assert from 'node:assert/strict'
import fc from 'fast-check'
import { bidFit } from '../../../../protocol/market/bid-policy.js'
import { BID_DELAY_FRACTION, ENOUGH_BETTER_BIDS, bidDelayMs, stayingSilent } from '../../../../protocol/market/damping.js'

/** mulberry32: a small seeded PRNG, so a property run can build 1000 providers from one seed. */
function prng (seed: number): () => number {
  let s = seed >>> 0
  return () => {
    s = (s + 0x6D2B79F5) >>> 0
    let t = s
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

interface Provider { score: number, delay: number }

/**
 * One auction: every provider waits its delay, then bids unless it has already seen `enough` bids at least
 * as good as its own. A bid is seen by those whose delay is strictly later (same-ms bids cross unseen).
 */
function simulate (providers: readonly Provider[], enough = ENOUGH_BETTER_BIDS): Provider[] {
  const order = [...providers].sort((a, b) => a.delay - b.delay)
  const sent: Provider[] = []
  for (let i = 0; i < order.length;) {
    const delay = (order[i] as Provider).delay
    const seen = sent.map((p) => p.score)
    const group = order.filter((p) => p.delay === delay)
    for (const p of group) if (!stayingSilent(p.score, seen, enough)) sent.push(p)
    i += group.length
  }
  return sent
}

const MAX_PRICE = 10_000_000

/** Providers whose fit comes from their own ask, as the bid policy computes it. */
function market (n: number, seed: number, bidWindowMs: number): Provider[] {
  const random = prng(seed)
  return Array.from({ length: n }, () => {
    const price = 1_000_000 + Math.floor(random() * (MAX_PRICE - 1_000_000 + 1))
    const fit = bidFit(price, MAX_PRICE, random())
    return { score: price, delay: bidDelayMs(fit, bidWindowMs) }
  })
}

describe('market/damping', () => {
  describe('bidDelayMs', () => {
    it('waits (1 − fit) × 60 % of the bid window', () => {
      assert.equal(BID_DELAY_FRACTION, 0.6)
      assert.equal(bidDelayMs(1, 1000), 0)
      assert.equal(bidDelayMs(0, 1000), 600)
      assert.equal(bidDelayMs(0.5, 1000), 300)
      assert.equal(bidDelayMs(0.25, 5000), 2250)
      assert.equal(bidDelayMs(0.5, 1000, 0.8), 400)
      assert.equal(bidDelayMs(0.3333, 50), 20)
    })

    it('clamps fits outside [0, 1] and NaN', () => {
      assert.equal(bidDelayMs(1.7, 1000), 0)
      assert.equal(bidDelayMs(-3, 1000), 600)
      assert.equal(bidDelayMs(Number.NaN, 1000), 600)
    })

    it('lands every bid inside the window and bids better fits earlier (property)', () => {
      fc.assert(fc.property(fc.double({ min: -1, max: 2, noNaN: true }), fc.double({ min: -1, max: 2, noNaN: true }), fc.integer({ min: 50, max: 600_000 }), (a, b, window) => {
        const da = bidDelayMs(a, window)
        assert.ok(Number.isInteger(da) && da >= 0 && da <= BID_DELAY_FRACTION * window)
        if (a >= b) assert.ok(da <= bidDelayMs(b, window))
      }))
    })
  })

  describe('stayingSilent', () => {
    it('stays silent once `enough` seen bids are at least as good (lower wins)', () => {
      assert.equal(ENOUGH_BETTER_BIDS, 5)
      assert.equal(stayingSilent(10, [1, 2, 3, 4]), false)
      assert.equal(stayingSilent(10, [1, 2, 3, 4, 5]), true)
      assert.equal(stayingSilent(10, [1, 2, 3, 4, 11, 12, 13]), false, 'worse bids do not count')
      assert.equal(stayingSilent(10, [10, 10, 10, 10, 10]), true, 'equal bids count')
      assert.equal(stayingSilent(10, [1, 2], 2), true)
      assert.equal(stayingSilent(10, [], 1), false)
      assert.equal(stayingSilent(10, new Set([1, 2, 3, 4, 9])), true, 'any iterable')
    })
  })

  describe('simulated auctions', () => {
    it('keeps bids per job bounded as providers grow from 10 to 1000, and the best bid is always sent', () => {
      const counts: Record<number, number[]> = { 10: [], 100: [], 1000: [] }
      fc.assert(fc.property(fc.integer({ min: 0, max: 2 ** 31 }), fc.integer({ min: 10_000, max: 600_000 }), (seed, window) => {
        for (const n of [10, 100, 1000]) {
          const providers = market(n, seed, window)
          const sent = simulate(providers)
          counts[n]?.push(sent.length)
          // the excess over `enough` comes from bids landing in the same millisecond (they cannot see each other)
          assert.ok(sent.length <= ENOUGH_BETTER_BIDS + 4, `${sent.length} bids from ${n} providers`)
          assert.ok(sent.length >= Math.min(n, ENOUGH_BETTER_BIDS))
          assert.equal(Math.min(...sent.map((p) => p.score)), Math.min(...providers.map((p) => p.score)), 'the best bid is sent')
        }
      }), { numRuns: 60 })
      const mean = (xs: number[]): number => xs.reduce((a, b) => a + b, 0) / xs.length
      assert.ok(mean(counts[1000] ?? []) - mean(counts[10] ?? []) < 1, 'no growth with N')
    })

    it('sends the best bid even among ties and simultaneous bids (property)', () => {
      fc.assert(fc.property(fc.array(fc.record({ score: fc.integer({ min: 0, max: 5 }), delay: fc.integer({ min: 0, max: 3 }) }), { minLength: 1, maxLength: 60 }), (providers) => {
        const sent = simulate(providers)
        assert.equal(Math.min(...sent.map((p) => p.score)), Math.min(...providers.map((p) => p.score)))
      }))
    })

    it('would not stay bounded if the fit ignored price (why fit follows price)', () => {
      const counts = [10, 1000].map((n) => {
        let total = 0
        for (let seed = 1; seed <= 20; seed++) {
          const random = prng(seed)
          const providers = Array.from({ length: n }, () => ({ score: random(), delay: bidDelayMs(random(), 10_000) }))
          total += simulate(providers).length
        }
        return total / 20
      })
      assert.ok((counts[0] ?? 0) < 9 && (counts[1] ?? 0) > 20, `mean bids ${counts.join(' → ')}`)
    })
  })
})
