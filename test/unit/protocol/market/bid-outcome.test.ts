import assert from 'node:assert/strict'
import fc from 'fast-check'
import { InvalidBidOutcomeInputError, LossReason, bidOutcome, type OutcomeBid } from '../../../../protocol/market/bid-outcome.js'
import { rankBids } from '../../../../protocol/market/scoring.js'

const M = 1_000_000
const OURS = 'bafyours'
const THEIRS = 'bafytheirs'
/** Sorts before both: a winner that takes a tie. */
const EARLY = 'bafyaaaa'

function lose (ours: OutcomeBid, winner: OutcomeBid | undefined, tier: 'gold' | 'silver' | 'bronze' = 'gold', latencySensitive = false): ReturnType<typeof bidOutcome> {
  const bid = winner?.cid ?? THEIRS
  return bidOutcome({ ours, winner, tier, placement: { latencySensitive }, award: { bid, winner: 'peer-w', considered: [ours.cid, bid].sort() } })
}

describe('bid outcome (what became of this provider\'s bid)', () => {
  it('the award naming our bid is a win', () => {
    assert.deepEqual(bidOutcome({ ours: { cid: OURS, price: M }, award: { bid: OURS, winner: 'me', considered: [OURS] }, tier: 'gold' }), { outcome: 'won' })
  })

  it('a lower ask wins on price, whatever the views say', () => {
    assert.deepEqual(lose({ cid: OURS, price: M, reliability: 1, rttMs: 0 }, { cid: THEIRS, price: M - 1, reliability: 0, rttMs: 2_000 }), { outcome: 'lost', winner: 'peer-w', reason: LossReason.PRICE })
  })

  it('equal asks, a more reliable winner at the same distance: reliability', () => {
    assert.equal(lose({ cid: OURS, price: M, rttMs: 50 }, { cid: THEIRS, price: M, reliability: 1, rttMs: 50 }).outcome, 'lost')
    assert.equal((lose({ cid: OURS, price: M, rttMs: 50 }, { cid: THEIRS, price: M, reliability: 1, rttMs: 50 }) as { reason: string }).reason, 'reliability')
  })

  it('equal asks and reliability, a nearer winner: distance', () => {
    assert.deepEqual(lose({ cid: OURS, price: M, reliability: 0.9, rttMs: 400 }, { cid: THEIRS, price: M, reliability: 0.9, rttMs: 10 }), { outcome: 'lost', winner: 'peer-w', reason: LossReason.DISTANCE })
  })

  it('our ask lower by more than the distance term can move: reliability, even when the views point at distance', () => {
    // need = 1 / 0.85 ≈ 1.18 > 1.1, the most the distance term can weigh
    const reason = (lose({ cid: OURS, price: 0.85 * M, reliability: 1, rttMs: 500 }, { cid: THEIRS, price: M, reliability: 1, rttMs: 0 }) as { reason: string }).reason
    assert.equal(reason, 'reliability')
  })

  it('our ask lower by less than 10 %: the views decide between the terms', () => {
    assert.equal((lose({ cid: OURS, price: 0.95 * M, reliability: 1, rttMs: 500 }, { cid: THEIRS, price: M, reliability: 1, rttMs: 0 }) as { reason: string }).reason, 'distance')
    assert.equal((lose({ cid: OURS, price: 0.95 * M, reliability: 0.5, rttMs: 100 }, { cid: THEIRS, price: M, reliability: 1, rttMs: 100 }) as { reason: string }).reason, 'reliability')
  })

  it('a latency-sensitive bronze job: a gap beyond the reliability term (×1.15) is distance, even when the views point at reliability', () => {
    const ours = { cid: OURS, price: 0.7 * M, reliability: 0, rttMs: 100 }
    const winner = { cid: THEIRS, price: M, reliability: 1, rttMs: 100 }
    assert.equal((lose(ours, winner, 'bronze', true) as { reason: string }).reason, 'distance')
    // the same gap on an ordinary job is beyond the distance cap too: the views cannot explain it, and reliability is the private term
    assert.equal((lose(ours, winner, 'gold', false) as { reason: string }).reason, 'reliability')
  })

  it('equal asks and views: the CID tie-break decides when the winner sorts first', () => {
    assert.deepEqual(lose({ cid: OURS, price: M }, { cid: EARLY, price: M }), { outcome: 'lost', winner: 'peer-w', reason: LossReason.TIE })
  })

  it('equal asks and views but our CID sorts first: the requester\'s private view decided (reliability), not the tie-break', () => {
    assert.equal((lose({ cid: EARLY, price: M }, { cid: THEIRS, price: M }) as { reason: string }).reason, 'reliability')
  })

  it('two free bids tie too', () => {
    assert.deepEqual(lose({ cid: OURS, price: 0 }, { cid: EARLY, price: 0 }), { outcome: 'lost', winner: 'peer-w', reason: LossReason.TIE })
  })

  it('a dearer winner whose cached inputs brought it below us: cache', () => {
    assert.equal((lose({ cid: OURS, price: M }, { cid: THEIRS, price: 1.1 * M, cacheFactor: 0.8 }) as { reason: string }).reason, 'cache')
    // a cache factor out of range counts as none, as in scoring
    assert.notEqual((lose({ cid: OURS, price: M }, { cid: THEIRS, price: 1.1 * M, cacheFactor: 1.5 }) as { reason: string }).reason, 'cache')
  })

  it('an award that does not name our bid: not considered', () => {
    assert.deepEqual(bidOutcome({ ours: { cid: OURS, price: M }, award: { bid: THEIRS, winner: 'peer-w', considered: [THEIRS] }, tier: 'silver' }), { outcome: 'lost', winner: 'peer-w', reason: LossReason.NOT_CONSIDERED })
  })

  it('a winning bid never seen: lost without a reason', () => {
    assert.deepEqual(lose({ cid: OURS, price: M }, undefined), { outcome: 'lost', winner: 'peer-w' })
  })

  it('refuses inconsistent input with a typed error', () => {
    assert.throws(() => bidOutcome({ ours: { cid: OURS, price: M }, winner: { cid: 'bafyother', price: M }, award: { bid: THEIRS, winner: 'w', considered: [OURS, THEIRS] }, tier: 'gold' }), InvalidBidOutcomeInputError)
    assert.throws(() => bidOutcome({ ours: { cid: OURS, price: Number.NaN }, award: { bid: THEIRS, winner: 'w', considered: [OURS, THEIRS] }, tier: 'gold' }), (err: unknown) => err instanceof InvalidBidOutcomeInputError && err.field === 'ours.price')
    assert.throws(() => bidOutcome({ ours: { cid: '', price: M }, award: { bid: THEIRS, winner: 'w', considered: [THEIRS] }, tier: 'gold' }), InvalidBidOutcomeInputError)
  })

  it('agrees with the ranking it explains: price iff the winner asked less, tie only on equal effective prices', () => {
    const view = fc.record({
      price: fc.integer({ min: 0, max: 10 * M }),
      reliability: fc.option(fc.double({ min: 0, max: 1, noNaN: true }), { nil: undefined }),
      rttMs: fc.option(fc.integer({ min: 0, max: 1_000 }), { nil: undefined }),
      cacheFactor: fc.option(fc.double({ min: 0.5, max: 1, noNaN: true }), { nil: undefined })
    })
    const tier = fc.constantFrom('gold' as const, 'silver' as const, 'bronze' as const)
    fc.assert(fc.property(view, view, tier, (a, b, t) => {
      const bids = [{ ...a, cid: 'bafya', provider: 'pa' }, { ...b, cid: 'bafyb', provider: 'pb' }]
      const [first, second] = rankBids(bids, t)
      if (first === undefined || second === undefined) return
      const award = { bid: first.cid, winner: first.provider, considered: ['bafya', 'bafyb'] }
      assert.deepEqual(bidOutcome({ ours: first, award, winner: second, tier: t }), { outcome: 'won' })
      const out = bidOutcome({ ours: second, award, winner: first, tier: t })
      assert.equal(out.outcome, 'lost')
      const reason = (out as { reason?: string }).reason
      assert.ok(reason !== undefined && reason !== 'not-considered')
      assert.equal(reason === 'price', first.price < second.price, `reason ${reason}, prices ${first.price} < ${second.price}`)
      if (reason === 'tie') assert.equal(first.effectivePrice, second.effectivePrice)
    }), { numRuns: 500 })
  })
})
