import assert from 'node:assert/strict'
import fc from 'fast-check'
import {
  DEFAULT_RTT_MS, InvalidScoringParamsError, TIER_RELIABILITY_WEIGHT, UNKNOWN_RELIABILITY, createScoringParams,
  defaultScoringParams, distanceFactor, effectivePrice, rankBids, reliabilityFactor, scoreFactor, worstScoreFactor,
  type ScoredBidInput
} from '../../../../protocol/market/scoring.js'

const M = 1_000_000

/** Equal to within a millionth of a micro (float rounding of decimal constants). */
function near (actual: number, expected: number): void {
  assert.ok(Math.abs(actual - expected) < 1e-6, `${actual} ≠ ${expected}`)
}

const tier = fc.constantFrom('gold' as const, 'silver' as const, 'bronze' as const)
const scoredBid = fc.record({
  cid: fc.stringMatching(/^bafy[a-z2-7]{6}$/),
  provider: fc.stringMatching(/^12D3Koo[A-Za-z]{4}$/),
  price: fc.integer({ min: 0, max: 2 ** 40 }),
  reliability: fc.option(fc.double({ min: 0, max: 1, noNaN: true }), { nil: undefined }),
  rttMs: fc.option(fc.integer({ min: 0, max: 2_000 }), { nil: undefined })
})

describe('auction scoring (DESIGN §5)', () => {
  describe('constants', () => {
    it('gold weighs reliability most and bronze least', () => {
      assert.deepEqual({ ...TIER_RELIABILITY_WEIGHT }, { gold: 1, silver: 0.5, bronze: 0.15 })
      assert.ok(TIER_RELIABILITY_WEIGHT.gold > TIER_RELIABILITY_WEIGHT.silver && TIER_RELIABILITY_WEIGHT.silver > TIER_RELIABILITY_WEIGHT.bronze)
      assert.equal(UNKNOWN_RELIABILITY, 0.25)
      assert.equal(DEFAULT_RTT_MS, 200)
    })
  })

  describe('effectivePrice', () => {
    it('is the ask for a perfectly reliable provider at zero distance', () => {
      for (const t of ['gold', 'silver', 'bronze'] as const) assert.equal(effectivePrice({ price: 2 * M, reliability: 1, rttMs: 0 }, t), 2 * M)
    })

    it('adds w_tier × (1 − reliability)', () => {
      assert.equal(effectivePrice({ price: M, reliability: 0.5, rttMs: 0 }, 'gold'), 1_500_000)
      assert.equal(effectivePrice({ price: M, reliability: 0.5, rttMs: 0 }, 'silver'), 1_250_000)
      near(effectivePrice({ price: M, reliability: 0, rttMs: 0 }, 'bronze'), 1_150_000)
      assert.equal(effectivePrice({ price: M, reliability: 0, rttMs: 0 }, 'gold'), 2 * M)
    })

    it('adds 2 % per 100 ms of RTT, capped at 10 %', () => {
      near(effectivePrice({ price: M, reliability: 1, rttMs: 100 }, 'gold'), 1_020_000)
      near(effectivePrice({ price: M, reliability: 1, rttMs: 250 }, 'gold'), 1_050_000)
      near(effectivePrice({ price: M, reliability: 1, rttMs: 500 }, 'gold'), 1_100_000)
      near(effectivePrice({ price: M, reliability: 1, rttMs: 5_000 }, 'silver'), 1_100_000)
    })

    it('multiplies both factors', () => {
      near(effectivePrice({ price: 2 * M, reliability: 0.5, rttMs: 500 }, 'gold'), 3_300_000)
      near(effectivePrice({ price: 3 * M, reliability: 0.6, rttMs: 150 }, 'silver'), 3 * M * 1.2 * 1.03)
    })

    it('scores unknowns at the defaults: reliability 0.25, RTT 200 ms', () => {
      near(effectivePrice({ price: M }, 'gold'), 1_820_000)
      near(effectivePrice({ price: M }, 'bronze'), M * 1.1125 * 1.04)
      assert.equal(reliabilityFactor(undefined, 'gold'), 1.75)
      assert.equal(reliabilityFactor(Number.NaN, 'gold'), 1.75)
      near(distanceFactor(undefined), 1.04)
      near(distanceFactor(-5), 1.04)
      near(distanceFactor(Number.POSITIVE_INFINITY), 1.04)
    })

    it('clamps reliability to 0..1', () => {
      assert.equal(reliabilityFactor(1.7, 'gold'), 1)
      assert.equal(reliabilityFactor(-3, 'gold'), 2)
    })

    it('honours custom parameters', () => {
      const params = createScoringParams({ tierWeights: { gold: 2 }, unknownReliability: 0, distancePenaltyPer100Ms: 0 })
      assert.equal(params.tierWeights.silver, 0.5)
      assert.equal(effectivePrice({ price: M }, 'gold', params), 3 * M)
      assert.equal(worstScoreFactor('gold', params), 3 * 1.1)
    })

    it('stays within [price, price × worst factor]', () => {
      fc.assert(fc.property(scoredBid, tier, (bid, t) => {
        const e = effectivePrice(bid, t)
        assert.ok(e >= bid.price)
        assert.ok(e <= bid.price * worstScoreFactor(t))
        assert.equal(e, bid.price * scoreFactor(bid, t))
      }))
    })

    it('is monotone: more reliable or nearer never scores worse', () => {
      fc.assert(fc.property(scoredBid, tier, fc.double({ min: 0, max: 1, noNaN: true }), fc.double({ min: 0, max: 1, noNaN: true }), fc.nat(1_000), fc.nat(1_000),
        (bid, t, r1, r2, d1, d2) => {
          const [lo, hi] = r1 <= r2 ? [r1, r2] : [r2, r1]
          assert.ok(effectivePrice({ ...bid, reliability: hi }, t) <= effectivePrice({ ...bid, reliability: lo }, t))
          const [near, far] = d1 <= d2 ? [d1, d2] : [d2, d1]
          assert.ok(effectivePrice({ ...bid, rttMs: near }, t) <= effectivePrice({ ...bid, rttMs: far }, t))
        }))
    })
  })

  describe('parameters', () => {
    it('defaults validate and are frozen', () => {
      assert.deepEqual(createScoringParams(), { ...defaultScoringParams, tierWeights: { ...TIER_RELIABILITY_WEIGHT } })
      assert.ok(Object.isFrozen(defaultScoringParams))
    })

    it('rejects out-of-range values with a typed error', () => {
      const bad: Array<Parameters<typeof createScoringParams>[0]> = [
        { unknownReliability: 1.5 }, { unknownReliability: -0.1 }, { maxDistancePenalty: -1 }, { defaultRttMs: Number.NaN },
        { distancePenaltyPer100Ms: Number.POSITIVE_INFINITY }, { tierWeights: { gold: -1, silver: 0.5, bronze: 0.1 } }
      ]
      for (const partial of bad) assert.throws(() => createScoringParams(partial), InvalidScoringParamsError, JSON.stringify(partial))
    })
  })

  describe('rankBids', () => {
    const cheapUnreliable: ScoredBidInput = { cid: 'bafyb', provider: 'cheap', price: 1_000_000, reliability: 0.2, rttMs: 0 }
    const dearReliable: ScoredBidInput = { cid: 'bafya', provider: 'dear', price: 1_500_000, reliability: 1, rttMs: 0 }

    it('gold picks the expensive reliable provider, silver and bronze the cheap unreliable one', () => {
      const ranked = (t: 'gold' | 'silver' | 'bronze') => rankBids([cheapUnreliable, dearReliable], t).map((b) => b.provider)
      assert.deepEqual(ranked('gold'), ['dear', 'cheap'])
      assert.deepEqual(ranked('silver'), ['cheap', 'dear'])
      assert.deepEqual(ranked('bronze'), ['cheap', 'dear'])
      const gold = rankBids([cheapUnreliable, dearReliable], 'gold')
      near(gold[0]?.effectivePrice ?? 0, 1_500_000)
      near(gold[1]?.effectivePrice ?? 0, 1_800_000)
      near(rankBids([cheapUnreliable], 'bronze')[0]?.effectivePrice ?? 0, 1_120_000)
    })

    it('distance can decide between equal asks', () => {
      const nearBid = { cid: 'bafyz', provider: 'near', price: M, reliability: 1, rttMs: 20 }
      const farBid = { cid: 'bafya', provider: 'far', price: M, reliability: 1, rttMs: 300 }
      assert.deepEqual(rankBids([farBid, nearBid], 'bronze').map((b) => b.provider), ['near', 'far'])
    })

    it('breaks ties by CID string, ascending, in code-unit order', () => {
      const same = { price: M, reliability: 1, rttMs: 0 }
      const bids = [
        { ...same, cid: 'bafyc', provider: 'c' },
        { ...same, cid: 'bafyB', provider: 'B' },
        { ...same, cid: 'bafya', provider: 'a' }
      ]
      // 'B' (0x42) sorts before 'a' (0x61): not locale order
      assert.deepEqual(rankBids(bids, 'gold').map((b) => b.cid), ['bafyB', 'bafya', 'bafyc'])
    })

    it('does not depend on the order of its input', () => {
      fc.assert(fc.property(fc.uniqueArray(scoredBid, { maxLength: 12, selector: (b) => b.cid }), tier, fc.nat(), (bids, t, seed) => {
        const shuffled = [...bids].sort((a, b) => ((hash(a.cid, seed) - hash(b.cid, seed)) || (a.cid < b.cid ? -1 : 1)))
        assert.deepEqual(rankBids(shuffled, t), rankBids(bids, t))
      }))
    })

    it('sorts by effective price, then CID', () => {
      fc.assert(fc.property(fc.uniqueArray(scoredBid, { maxLength: 12, selector: (b) => b.cid }), tier, (bids, t) => {
        const ranked = rankBids(bids, t)
        assert.equal(ranked.length, bids.length)
        for (let i = 1; i < ranked.length; i++) {
          const [a, b] = [ranked[i - 1], ranked[i]] as [typeof ranked[0], typeof ranked[0]]
          assert.ok(a.effectivePrice < b.effectivePrice || (a.effectivePrice === b.effectivePrice && a.cid < b.cid))
        }
      }))
    })
  })
})

/** A seeded permutation key. */
function hash (s: string, seed: number): number {
  let h = seed >>> 0
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 2654435761) >>> 0
  return h
}
