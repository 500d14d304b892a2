/**
 * The provider agent and requesters that do not pay (issue 11): a job request from a requester below
 * minRequesterTrust gets no bid (a LOW_TRUST note, listed in refusedRequesters), exactly at the
 * threshold it does; own endings feed the view (paid in full: ok, stopped unpaid: failed), which also
 * grows the requester's job-request rate; a payment the requester signed that does not hold against
 * the award bounces into one nonpayment failure report embedding it.
 */
import assert from 'node:assert/strict'
import { defaultMarketParams, RequesterRefusal, type ProviderAgentEffect } from '../../../../protocol/index.js'
import { STRANGER_JOB_RATE } from '../../../../protocol/trust/budget.js'
import { H } from '../../../helpers/market-time.js'
import { NOW, REQUESTER, Harness, find, has, makeAd, makeJob } from '../../../helpers/provider-agent-harness.js'

const bids = (effects: readonly ProviderAgentEffect[]): number => effects.filter((e) => e.type === 'send-bid').length
const failures = (effects: readonly ProviderAgentEffect[]): Array<Extract<ProviderAgentEffect, { type: 'record-failure' }>> =>
  effects.filter((e): e is Extract<ProviderAgentEffect, { type: 'record-failure' }> => e.type === 'record-failure')

/** Run `job` to its end unpaid: the first interval's payment never comes. */
function stopUnpaid (h: Harness, n: number): ProviderAgentEffect[] {
  const job = makeJob({ n })
  h.running(job)
  h.now += 10 * 60_000
  return h.tick(h.now)
}

describe('the provider agent and requesters that do not pay', () => {
  it('bids for a stranger under the default threshold', () => {
    const h = new Harness(defaultMarketParams, false)
    assert.equal(bids(h.send({ type: 'job-seen', now: h.now, job: makeJob() })), 1)
    assert.deepEqual(h.agent.refusedRequesters(), [])
  })

  it('records a job stopped unpaid as its own failure, and refuses the requester\'s next job request with a reason', () => {
    const h = new Harness(defaultMarketParams, false)
    const ended = stopUnpaid(h, 1)
    assert.ok(has(ended, 'offer-ended', (e) => e.status === 'stopped-unpaid'))
    assert.deepEqual(h.agent.requesters.own(REQUESTER), { ok: 0, failed: 1 })
    const effects = h.send({ type: 'job-seen', now: h.now, job: makeJob({ n: 2 }) })
    assert.equal(bids(effects), 0)
    const note = find(effects, 'note', (e) => e.message === 'refusing a requester')
    assert.equal(note?.fields.reason, RequesterRefusal.LOW_TRUST)
    assert.equal(note?.fields.requester, REQUESTER)
    h.send({ type: 'job-seen', now: h.now, job: makeJob({ n: 3 }) })
    const [refused] = h.agent.refusedRequesters()
    assert.equal(refused?.requester, REQUESTER)
    assert.equal(refused?.jobs, 2)
    assert.equal(refused?.reason, 'LOW_TRUST')
    assert.ok(refused !== undefined && refused.score < refused.min)
  })

  it('bids for a requester exactly at the threshold, and not just below it', () => {
    const setup = (min: number | undefined): Harness => {
      const h = new Harness(defaultMarketParams, false, makeAd(), min)
      h.agent.requesters.record(REQUESTER, false, h.now)
      return h
    }
    const probe = setup(undefined)
    const at = probe.agent.requesters.decisionScore(REQUESTER, probe.now)
    const exactly = setup(at)
    assert.equal(bids(exactly.send({ type: 'job-seen', now: exactly.now, job: makeJob() })), 1)
    const above = setup(at + 1e-9)
    assert.equal(bids(above.send({ type: 'job-seen', now: above.now, job: makeJob() })), 0)
    // 0 serves everyone
    const zero = setup(0)
    assert.equal(bids(zero.send({ type: 'job-seen', now: zero.now, job: makeJob() })), 1)
  })

  it('records a job paid in full as its own success, which grows the requester\'s job-request rate', () => {
    const h = new Harness(defaultMarketParams, false)
    const job = makeJob()
    const r = h.running(job)
    assert.deepEqual(h.agent.requesters.rate(REQUESTER, h.now), STRANGER_JOB_RATE)
    h.now += 60_000
    h.send({ type: 'finished', now: h.now, bid: r.bid, exitCode: 0, gpuSeconds: 120 })
    const owed = h.agent.offer(r.bid)?.state.finished?.owed ?? 0
    assert.ok(has(h.payment(job, r.bid, r.award, { cumulative: owed, interval: 1, gpuSeconds: 120 }), 'offer-ended', (e) => e.status === 'settled'))
    assert.deepEqual(h.agent.requesters.own(REQUESTER), { ok: 1, failed: 0 })
    const rate = h.agent.requesters.rate(REQUESTER, h.now)
    assert.equal(rate.burst, 128)
    assert.ok(rate.refillMs < STRANGER_JOB_RATE.refillMs)
  })

  it('turns a payment for another payee into one nonpayment report embedding it, counted once with the stop that follows', () => {
    const h = new Harness(defaultMarketParams, false)
    const job = makeJob()
    const r = h.running(job)
    const effects = h.payment(job, r.bid, r.award, { seq: 1, payee: 'peer-other' })
    assert.equal(find(effects, 'drop-frame')?.reason, 'WRONG_PAYEE')
    assert.equal(find(effects, 'drop-frame')?.ref, 'bounced-payment')
    const [report] = failures(effects)
    assert.equal(report?.subject, REQUESTER)
    assert.equal(report?.reason, 'nonpayment')
    assert.deepEqual(report?.evidence, ['award', 'bounced-payment'])
    assert.equal(report?.bid, r.bid)
    assert.deepEqual(h.agent.requesters.own(REQUESTER), { ok: 0, failed: 1 })
    // a second bounce is dropped and kept, not reported again
    const again = h.payment(job, r.bid, r.award, { seq: 2, job: makeJob({ n: 9 }).cid })
    assert.equal(find(again, 'drop-frame')?.reason, 'WRONG_AWARD')
    assert.equal(failures(again).length, 0)
    // the job goes on until the grace runs out; the stop is not counted a second time
    h.now += 10 * 60_000
    assert.ok(has(h.tick(h.now), 'offer-ended', (e) => e.status === 'stopped-unpaid'))
    assert.deepEqual(h.agent.requesters.own(REQUESTER), { ok: 0, failed: 1 })
  })

  it('bounces a payment whose cumulative goes down, but not a stale seq or one signed by someone else', () => {
    const h = new Harness(defaultMarketParams, false)
    const job = makeJob()
    const r = h.running(job)
    assert.ok(has(h.payment(job, r.bid, r.award, { seq: 1, cumulative: 10 }), 'frame-accepted'))
    const stale = h.payment(job, r.bid, r.award, { seq: 1, cumulative: 5 })
    assert.equal(find(stale, 'drop-frame')?.reason, 'STALE_SEQ')
    assert.equal(find(stale, 'drop-frame')?.ref, undefined)
    const forged = h.payment(job, r.bid, r.award, { seq: 2, payee: 'peer-other' }, 'peer-mallory')
    assert.equal(find(forged, 'drop-frame')?.reason, 'NOT_REQUESTER')
    assert.equal(failures([...stale, ...forged]).length, 0)
    // equal is fine (a commitment may repeat its amount), below is not
    assert.ok(has(h.payment(job, r.bid, r.award, { seq: 2, cumulative: 10 }), 'frame-accepted'))
    const down = h.payment(job, r.bid, r.award, { seq: 3, cumulative: 9 })
    assert.equal(find(down, 'drop-frame')?.reason, 'BELOW_EARLIER')
    assert.equal(failures(down).length, 1)
    assert.equal(h.agent.offer(r.bid)?.payment.cumulative, 10)
  })

  it('refuses on others\' reports only as far as it trusts their signers', () => {
    const h = new Harness(defaultMarketParams, false)
    h.agent.requesters.addReport({ signer: 'peer-stranger', subject: REQUESTER, kind: 'failure', reason: 'nonpayment', at: NOW })
    assert.equal(bids(h.send({ type: 'job-seen', now: h.now, job: makeJob({ n: 1 }) })), 1)
    const t = new Harness(defaultMarketParams, false)
    t.agent.requesters.record('peer-trusted', true, NOW - H)
    t.agent.requesters.addReport({ signer: 'peer-trusted', subject: REQUESTER, kind: 'failure', reason: 'nonpayment', at: NOW })
    assert.equal(bids(t.send({ type: 'job-seen', now: t.now, job: makeJob({ n: 1 }) })), 0)
  })
})
