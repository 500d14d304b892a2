/**
 * The standing rule (protocol/market/standing.ts): held back on own failures or on exposure, at each
 * edge; the split of a round's bids with its fallback and its re-open; the requester lifecycle's
 * re-opened round excluding the held-back providers; the provider's holds that a bid from a provider
 * with an unfinished award of the same requester does not release (reservations.ts).
 */
import assert from 'node:assert/strict'
import {
  InvalidMarketParamsError, Reservations, createMarketParams, decideBid, defaultStandingParams,
  exposureLimit, reduceRequester, selectByStanding, standingOf, startRequesterJob,
  type AuctionBid, type RequesterJob, type StandingParams, type StandingRecord
} from '../../../../protocol/index.js'
import { INIT, at } from '../../../helpers/lifecycle-builders.js'
import { NOW, REQUESTER, makeAd, makeJob, otherBid } from '../../../helpers/provider-agent-harness.js'

/** The market's standing parameters with `over` (createMarketParams validates them). */
const standingParams = (over: Partial<StandingParams>): StandingParams => createMarketParams({ standing: over }).standing
const rec = (over: Partial<StandingRecord> = {}): StandingRecord => ({ ok: 0, failed: 0, okCount: 0, unfinished: 0, ...over })
/** A bid as the rule reads it: its signer and CID only. */
const bidOf = (signer: string, n = 0): AuctionBid => ({ cid: { toString: () => `bafy-${signer}-${n}` }, signer, payload: {} }) as unknown as AuctionBid

describe('standing: one provider', () => {
  it('holds a provider back once its own decayed failures reach half a failure and its deliveries', () => {
    assert.deepEqual(standingOf(rec()), { kind: 'good' }, 'a stranger is in good standing')
    assert.equal(standingOf(rec({ failed: 0.5 })).kind, 'held-back', 'exactly the minimum weight')
    assert.equal(standingOf(rec({ failed: 0.49 })).kind, 'good', 'below it: a failure more than a half-life ago')
    const even = standingOf(rec({ ok: 1, failed: 1, okCount: 1 }))
    assert.equal(even.kind, 'held-back', 'failed as often as it delivered')
    assert.equal(even.kind === 'held-back' ? even.reason : '', 'failures')
    assert.equal(standingOf(rec({ ok: 1.01, failed: 1, okCount: 2 })).kind, 'good', 'delivered more often than it failed')
    assert.equal(standingOf(rec({ ok: 2, failed: 1, okCount: 2 })).kind, 'good')
    assert.equal(standingOf(rec(), standingParams({ minFailureWeight: 0 })).kind, 'good', 'a minimum of 0 holds no stranger back')
  })

  it('limits unfinished awards to 1 + ⌊deliveries × 0.5⌋', () => {
    assert.deepEqual([0, 1, 2, 3, 4, 5].map((n) => exposureLimit(n)), [1, 1, 2, 2, 3, 3])
    assert.equal(standingOf(rec({ unfinished: 0 })).kind, 'good')
    const one = standingOf(rec({ unfinished: 1 }))
    assert.equal(one.kind === 'held-back' ? one.reason : one.kind, 'exposure', 'a stranger holds one award at a time')
    assert.equal(standingOf(rec({ ok: 3, okCount: 3, unfinished: 1 })).kind, 'good', 'three deliveries earn two')
    assert.equal(standingOf(rec({ ok: 3, okCount: 3, unfinished: 2 })).kind, 'held-back', 'exactly at the limit')
  })

  it('names failures before exposure, and holds nobody back when disabled', () => {
    const both = standingOf(rec({ failed: 1, unfinished: 5 }))
    assert.equal(both.kind === 'held-back' ? both.reason : '', 'failures')
    const off = standingParams({ enabled: false })
    assert.deepEqual(standingOf(rec({ failed: 9, unfinished: 9 }), off), { kind: 'good' })
  })
})

describe('standing: a round\'s bids', () => {
  const records: Record<string, StandingRecord> = {
    good: rec(),
    busy: rec({ unfinished: 1 }),
    bad: rec({ failed: 1 })
  }
  const lookup = (p: string): StandingRecord => records[p] ?? (p.startsWith('bad') ? rec({ failed: 1 }) : rec())

  it('ranks only the bids in good standing when there are any, and reports the rest', () => {
    const s = selectByStanding([bidOf('bad'), bidOf('good'), bidOf('busy')], lookup, true)
    assert.deepEqual(s.bids.map((b) => b.signer), ['good'])
    assert.deepEqual(s.heldBack.map((h) => [h.bid.signer, h.reason]), [['bad', 'failures'], ['busy', 'exposure']])
    assert.equal(s.fallback, false)
    assert.deepEqual(s.reopenExcluding, [])
  })

  it('with none in good standing, falls back to the over-exposed bids, else to every held-back one', () => {
    const exposed = selectByStanding([bidOf('bad'), bidOf('busy')], lookup, true)
    assert.deepEqual(exposed.bids.map((b) => b.signer), ['busy'])
    assert.equal(exposed.fallback, true)
    const failing = selectByStanding([bidOf('bad1'), bidOf('bad2')], lookup, true)
    assert.deepEqual(failing.bids.map((b) => b.signer), ['bad1', 'bad2'])
  })

  it('re-opens once at five held-back signers, over-exposed ones included (not four, not when it may not), sorted', () => {
    const five = ['bad5', 'bad3', 'bad1', 'bad4', 'bad2'].map((s) => bidOf(s))
    const s = selectByStanding([...five, bidOf('bad1', 1)], lookup, true)
    assert.deepEqual(s.reopenExcluding, ['bad1', 'bad2', 'bad3', 'bad4', 'bad5'])
    assert.deepEqual(s.bids, [])
    assert.deepEqual(selectByStanding(five.slice(0, 4), lookup, true).reopenExcluding, [], 'four signers')
    assert.deepEqual(selectByStanding([...five.slice(0, 4), bidOf('bad1', 2)], lookup, true).reopenExcluding, [], 'four signers, five bids')
    const late = selectByStanding(five, lookup, false)
    assert.deepEqual(late.reopenExcluding, [])
    assert.equal(late.bids.length, 5, 'already re-opened: the fallback')
    assert.deepEqual(selectByStanding([...five, bidOf('good')], lookup, true).reopenExcluding, [], 'one in good standing')
    const withBusy = selectByStanding([...five.slice(0, 4), bidOf('busy')], lookup, true)
    assert.deepEqual(withBusy.reopenExcluding, ['bad1', 'bad3', 'bad4', 'bad5', 'busy'], 'an over-exposed signer counts and is excluded too')
  })

  it('looks each signer up once, and passes every bid through when disabled', () => {
    let calls = 0
    selectByStanding([bidOf('x', 1), bidOf('x', 2), bidOf('y')], (p) => { calls++; return lookup(p) }, true)
    assert.equal(calls, 2)
    const off = selectByStanding([bidOf('bad')], lookup, true, standingParams({ enabled: false }))
    assert.deepEqual(off.bids.map((b) => b.signer), ['bad'])
    assert.deepEqual(off.heldBack, [])
  })

  it('validates its parameters with a typed error, also inside the market params', () => {
    const field = (f: string) => (e: unknown): boolean => e instanceof InvalidMarketParamsError && e.field === `standing.${f}`
    assert.throws(() => standingParams({ exposureBase: 0 }), field('exposureBase'))
    assert.throws(() => standingParams({ exposureGraceMs: 1.5 }), field('exposureGraceMs'))
    assert.throws(() => standingParams({ failureRatio: -1 }), field('failureRatio'))
    assert.throws(() => standingParams({ enabled: 'yes' as unknown as boolean }), field('enabled'))
    assert.throws(() => createMarketParams({ standing: { reopenHeldBack: 0 } }), (e: unknown) => e instanceof InvalidMarketParamsError && e.field === 'standing.reopenHeldBack')
    assert.equal(createMarketParams({ standing: { exposureBase: 2 } }).standing.minFailureWeight, defaultStandingParams.minFailureWeight, 'merged field by field')
  })
})

describe('standing: the requester lifecycle re-opens without the held-back providers', () => {
  function closing (): RequesterJob {
    // one provider excluded after failing an earlier attempt
    let s: RequesterJob = { ...startRequesterJob(INIT, at(0)).state, excluded: ['earlier'] }
    for (const [i, p] of ['p1', 'p2'].entries()) s = reduceRequester(s, { type: 'bid-received', now: at(10 + i), bid: `b${i}`, provider: p, price: 1000, effectivePrice: 1000 }).state
    return reduceRequester(s, { type: 'tick', now: at(1000) }).state
  }

  it('re-opens once, the round excluding them after the earlier exclusions, keeping their bids, with no explanation', () => {
    const s = closing()
    assert.equal(s.auction.closing, true)
    const t = reduceRequester(s, { type: 'bidding-closed', now: at(1000), round: s.auction.round, holdBack: ['p1', 'p2', 'earlier'] })
    assert.deepEqual(t.effects, [{ type: 're-auction', attempt: 1, exclude: ['earlier', 'p1', 'p2'], reason: 'held-back' }, { type: 'wake', at: at(2000) }])
    assert.equal(t.state.status, 'bidding')
    assert.equal(t.state.auction.reopened, true)
    assert.equal(t.state.auction.round, s.auction.round + 1)
    assert.deepEqual(t.state.excluded, ['earlier'], 'held back is no failure of the job: only the round excludes them')
    assert.deepEqual(t.state.auction.bids.map((b) => b.provider), ['p1', 'p2'], 'their bids stay for the fallback')
  })

  it('the second time is a round with no winner: explained, and the job expires', () => {
    const s = closing()
    const reopened = reduceRequester(s, { type: 'bidding-closed', now: at(1000), round: s.auction.round, holdBack: ['p1'] }).state
    let r = reduceRequester(reopened, { type: 'bid-received', now: at(1010), bid: 'b9', provider: 'p3', price: 1000, effectivePrice: 1000 }).state
    r = reduceRequester(r, { type: 'tick', now: at(2000) }).state
    const t = reduceRequester(r, { type: 'bidding-closed', now: at(2000), round: r.auction.round, holdBack: ['p3'] })
    assert.equal(t.effects[0]?.type, 'explain')
    assert.equal(t.state.status, 'expired')
  })
})

describe('standing: a provider\'s holds', () => {
  it('a better bid from a provider with a possibly unfinished award of the same requester does not show this bid lost', () => {
    const job = makeJob({ n: 1, runtimeSec: 600 })
    const decision = decideBid(job.payload, { ad: makeAd(), allocations: [] }, NOW)
    assert.equal(decision.kind, 'bid')
    const closesAt = NOW + 5_000
    const holds = new Reservations()
    const hold = (): void => { holds.hold('a', { job: job.cid.toString(), request: job, round: 1, attempt: 1, requester: REQUESTER, hold: { job: job.cid.toString(), gpus: ['GPU-0'], tier: 'silver', price: decision.kind === 'bid' ? decision.price : 0, startedAt: NOW, endsAt: NOW + 600_000 }, closesAt, until: closesAt + 10_000 }) }
    hold()
    const cheaper = otherBid(job, 7, 1)
    holds.awardSeen({ job: 'another-job', bid: 'x', attempt: 1, signer: REQUESTER, winner: cheaper.signer, unfinishedUntil: closesAt + 1 })
    assert.equal(holds.mayHoldUnfinished(REQUESTER, cheaper.signer, closesAt), true)
    assert.deepEqual(holds.bidSeen(cheaper, createMarketParams().scoring), [], 'kept: the requester may pass the cheaper bid over')
    const done = new Reservations()
    done.awardSeen({ job: 'another-job', bid: 'x', attempt: 1, signer: REQUESTER, winner: cheaper.signer, unfinishedUntil: closesAt })
    assert.equal(done.mayHoldUnfinished(REQUESTER, cheaper.signer, closesAt), false, 'finished by the close at the latest')
    assert.equal(done.mayHoldUnfinished('someone-else', cheaper.signer, NOW), false, 'another requester\'s award')
  })
})

describe('standing: what counts as a failure', () => {
  it('a decline (an honest BUSY) holds nobody back; a no-show does', async () => {
    const { Driver, NOW: T, WINDOW, LEASE, peer } = await import('../../../helpers/requester-agent-driver.js')
    const declined = new Driver()
    declined.submit()
    declined.bid(1, 1_000_000)
    declined.runTo(T + WINDOW)
    assert.equal(declined.winner(), peer(1))
    declined.from(1, { type: 'award-response', decision: 'decline', reason: 'BUSY' })
    assert.ok(declined.of('record-failure').some((f) => f.subject === peer(1) && f.reason === 'declined'))
    assert.deepEqual(declined.agent.standingOf(peer(1), declined.now), { kind: 'good' })
    const vanished = new Driver()
    vanished.submit()
    vanished.bid(1, 1_000_000)
    vanished.runTo(T + WINDOW)
    vanished.runTo(vanished.now + LEASE + 1)
    assert.ok(vanished.of('record-failure').some((f) => f.subject === peer(1) && f.reason === 'no-show'))
    assert.deepEqual((vanished.agent.standingOf(peer(1), vanished.now) as { reason?: string }).reason, 'failures')
  })
})
