import assert from 'node:assert/strict'
import fc from 'fast-check'
import { RELIABILITY_PRIOR_WEIGHT, estimateReliability } from '../../../../protocol/market/reliability.js'
import { UNKNOWN_RELIABILITY, createScoringParams, defaultScoringParams, rankBids } from '../../../../protocol/market/scoring.js'
import type { Tier } from '../../../../protocol/market/types.js'

const TIERS: Tier[] = ['gold', 'silver', 'bronze']

/** The peers in rank order for one price, RTT and tier: the only difference is the reliability view. */
function order (views: Record<string, number | undefined>, tier: Tier, price: number, rttMs: number): string[] {
  const bids = Object.entries(views).map(([provider, reliability]) => ({ provider, cid: 'same', price, rttMs, reliability }))
  return rankBids(bids, tier).map((b) => b.provider)
}

describe('market/reliability', () => {
  it('starts everyone at the unknown default: no outcomes is exactly UNKNOWN_RELIABILITY', () => {
    assert.equal(estimateReliability({ ok: 0, failed: 0 }), UNKNOWN_RELIABILITY)
    const params = createScoringParams({ unknownReliability: 0.3 })
    assert.equal(estimateReliability({ ok: 0, failed: 0 }, params), 0.3, 'the prior follows the scoring parameter')
  })

  it('one failure is below a newcomer, one success above (Beta prior with the unknown default as mean)', () => {
    const one = { failed: estimateReliability({ ok: 0, failed: 1 }), ok: estimateReliability({ ok: 1, failed: 0 }) }
    assert.ok(one.failed < UNKNOWN_RELIABILITY, `one failure: ${one.failed}`)
    assert.ok(one.ok > UNKNOWN_RELIABILITY, `one success: ${one.ok}`)
    assert.equal(RELIABILITY_PRIOR_WEIGHT, 4)
    assert.equal(one.failed, 0.2)
    assert.equal(one.ok, 0.4)
    assert.equal(estimateReliability({ ok: 1, failed: 3 }), UNKNOWN_RELIABILITY, 'a record at the prior mean stays at it')
  })

  it('ranks a provider with one failure below a newcomer and one with one success above, in every tier', () => {
    for (const tier of TIERS) {
      assert.deepEqual(order({
        failedOnce: estimateReliability({ ok: 0, failed: 1 }),
        newcomer: undefined,
        okOnce: estimateReliability({ ok: 1, failed: 0 })
      }, tier, 1_000_000, 50), ['okOnce', 'newcomer', 'failedOnce'], tier)
    }
  })

  it('a history ranks below a newcomer exactly when its success rate is below the prior mean (property)', () => {
    fc.assert(fc.property(
      fc.oneof(fc.nat(12), fc.nat(1000)), fc.oneof(fc.nat(12), fc.nat(1000)), fc.constantFrom(...TIERS), fc.integer({ min: 1, max: 100_000_000 }), fc.nat(1000),
      (ok, failed, tier, price, rtt) => {
        const r = estimateReliability({ ok, failed })
        assert.ok(r >= 0 && r <= 1)
        const n = ok + failed
        // success rate ok/n vs the mean 1/4, in integers: 4·ok vs n
        const expected = 4 * ok < n ? 'below' : 4 * ok > n ? 'above' : 'equal'
        const ranked = order({ known: r, newcomer: undefined }, tier, price, rtt)
        const scored = rankBids([
          { provider: 'known', cid: 'a', price, rttMs: rtt, reliability: r },
          { provider: 'newcomer', cid: 'a', price, rttMs: rtt }
        ], tier)
        const known = scored.find((b) => b.provider === 'known') as { effectivePrice: number }
        const newcomer = scored.find((b) => b.provider === 'newcomer') as { effectivePrice: number }
        if (expected === 'below') assert.ok(known.effectivePrice > newcomer.effectivePrice && ranked[0] === 'newcomer')
        if (expected === 'above') assert.ok(known.effectivePrice < newcomer.effectivePrice && ranked[0] === 'known')
        if (expected === 'equal') assert.equal(known.effectivePrice, newcomer.effectivePrice)
      }), { numRuns: 500 })
  })

  it('every further failure lowers the estimate and every success raises it (property)', () => {
    fc.assert(fc.property(fc.nat(10_000), fc.nat(10_000), (ok, failed) => {
      const r = estimateReliability({ ok, failed })
      assert.ok(estimateReliability({ ok, failed: failed + 1 }) < r)
      assert.ok(estimateReliability({ ok: ok + 1, failed }) > r)
    }))
  })

  it('refuses counts that are not whole, non-negative numbers', () => {
    for (const bad of [{ ok: -1, failed: 0 }, { ok: 0, failed: 0.5 }, { ok: Number.NaN, failed: 0 }, { ok: 0, failed: Number.POSITIVE_INFINITY }]) {
      assert.throws(() => estimateReliability(bad, defaultScoringParams), RangeError, JSON.stringify(bad))
    }
  })
})
