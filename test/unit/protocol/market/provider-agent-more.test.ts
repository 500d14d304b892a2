/**
 * More of the provider agent (mutation survivors of protocol/market/provider-agent.ts): two jobs never
 * share a GPU, an accepted job waits for its committed start (asks to be woken then, starts exactly
 * then), a payment after the end is recorded, damping in a re-opened round counts only that round's
 * eligible bids, delayed bids keep their order and the wake stays the earliest, the shell is told of
 * every new offer and never given a wake for nothing, and the preempted-jobs memory forgets expired
 * requests.
 */
import assert from 'node:assert/strict'
import { createMarketParams, defaultMarketParams, jobIdOf, type AgentJob, type JobRequest, type ProviderAgentEffect } from '../../../../protocol/index.js'
import { H } from '../../../helpers/market-time.js'
import { ME, NOW, REQUESTER, Harness, cidFromString, delayOf, find, has, makeAd, makeJob, notes, otherBid, type JobOver } from '../../../helpers/provider-agent-harness.js'

/** makeJob with a different request expiry (the id follows the payload). */
function expiringJob (expiresAt: number, over: JobOver): AgentJob {
  const base = makeJob(over)
  const payload: JobRequest = { ...base.payload, expiresAt }
  return { cid: jobIdOf(payload), signer: base.signer, payload }
}

const starts = (effects: readonly ProviderAgentEffect[], bid: string): Array<Extract<ProviderAgentEffect, { type: 'start-job' }>> =>
  effects.filter((e): e is Extract<ProviderAgentEffect, { type: 'start-job' }> => e.type === 'start-job' && e.bid === bid)

/** The effect types the shell is documented to receive (provider-agent-types.ts). */
const SHELL_EFFECTS = new Set([
  'send-bid', 'refuse-award', 'award-taken', 'frame-accepted', 'drop-frame', 'offer-updated', 'offer-ended', 'wake', 'note',
  'respond-award', 'fetch-inputs', 'start-job', 'heartbeat', 'notify-preemption', 'stop-work', 'send-receipt', 'record-failure'
])

describe('the provider agent, more', () => {
  describe('GPUs and starts', () => {
    it('two outstanding bids hold different GPUs (reservations.ts), and each award runs on its own bid\'s GPUs', () => {
      const h = new Harness(defaultMarketParams, false)
      const a = makeJob({ n: 1, gpus: 2 })
      const b = makeJob({ n: 2, gpus: 2 })
      const bidA = h.bidOn(a)
      const bidB = h.bidOn(b)
      assert.deepEqual([bidA.payload.gpus, bidB.payload.gpus], [['GPU-0', 'GPU-1'], ['GPU-2', 'GPU-3']])
      h.award(b, bidB)
      const startB = starts(h.send({ type: 'inputs-fetched', now: h.now, bid: bidB.bid }), bidB.bid)
      assert.deepEqual(startB.map((s) => s.gpus), [['GPU-2', 'GPU-3']])
      h.award(a, bidA)
      const startA = starts(h.send({ type: 'inputs-fetched', now: h.now, bid: bidA.bid }), bidA.bid)
      assert.deepEqual(startA.map((s) => s.gpus), [['GPU-0', 'GPU-1']])
      assert.deepEqual(h.agent.offer(bidA.bid)?.gpus, ['GPU-0', 'GPU-1'])
      assert.deepEqual(h.agent.allocations().map((al) => al.gpus).sort(), [['GPU-0', 'GPU-1'], ['GPU-2', 'GPU-3']])
    })

    it('an accepted job whose calendar opens later asks to be woken at its start and starts exactly then, not 1 ms before', () => {
      const opens = NOW + 10 * 60_000
      const ad = makeAd({ availability: { timeZone: 'UTC', windows: [{ day: 1, start: 10 * 60 + 10, end: 1440 }] } })
      const h = new Harness(defaultMarketParams, false, ad)
      const job = makeJob({ startDelaySec: 900 })
      const a = h.accepted(job)
      assert.equal(h.agent.offer(a.bid)?.allocation?.startedAt, opens)
      assert.equal(starts(a.effects, a.bid).length, 0, 'the calendar is closed now: no early start')
      // woken for its heartbeats, never "at once" (a wake at now would spin the shell's timer)
      assert.ok((h.agent.nextWake() as number) > h.now)
      for (let t = h.agent.nextWake() as number; t < opens; t = h.agent.nextWake() as number) {
        assert.equal(starts(h.tick(t), a.bid).length, 0, `no start at ${t - NOW}`)
        assert.ok((h.agent.nextWake() as number) > t)
      }
      assert.equal(starts(h.tick(opens - 1), a.bid).length, 0)
      assert.deepEqual(starts(h.tick(opens), a.bid).map((s) => s.gpus), [['GPU-0', 'GPU-1']])
    })
  })

  describe('payments after the end', () => {
    it('the requester\'s payment for the time run, after a cancel ended the offer, is recorded in the offer\'s state', () => {
      const h = new Harness(defaultMarketParams, false)
      const job = makeJob()
      const r = h.running(job)
      h.now = NOW + 30_000
      const cancel = h.send({ type: 'cancel', now: h.now, bid: r.bid, signer: REQUESTER, payload: { v: 1, issuedAt: h.now, expiresAt: h.now + H, job: job.cid, award: cidFromString(r.award), reason: 'stop' } })
      assert.ok(has(cancel, 'offer-ended', (e) => e.bid === r.bid && e.status === 'cancelled'))
      h.now += 1_000
      const late = h.payment(job, r.bid, r.award, { seq: 1, interval: 1, cumulative: 33_334, gpuSeconds: 60 })
      assert.ok(has(late, 'frame-accepted', (e) => e.bid === r.bid))
      assert.ok(has(late, 'offer-updated', (e) => e.bid === r.bid), 'the shell must store the late payment')
      const state = h.agent.offer(r.bid)?.state
      assert.equal(state?.status, 'cancelled')
      assert.equal(state?.paid.cumulative, 33_334)
    })
  })

  describe('damping', () => {
    it('in a re-opened round only that round\'s bids count: an earlier round\'s cheaper bid does not silence it', () => {
      const h = new Harness(createMarketParams({ enoughBetterBids: 1 }))
      const job = makeJob()
      const opensAt = NOW + 10_000
      h.now = opensAt
      h.send({ type: 'job-seen', now: opensAt, job, round: { round: 2, attempt: 2, excluded: [], opensAt } })
      // issued in round 1, still valid, much cheaper
      h.send({ type: 'bid-seen', now: opensAt, bid: otherBid(job, 1, 1_000, { issuedAt: opensAt - 1, expiresAt: opensAt + H }) })
      const effects = h.tick(opensAt + delayOf(job))
      assert.ok(has(effects, 'send-bid', (e) => e.round === 2), notes(effects).join('; '))
      // the same bid issued in this round does silence it
      const h2 = new Harness(createMarketParams({ enoughBetterBids: 1 }))
      h2.now = opensAt
      h2.send({ type: 'job-seen', now: opensAt, job, round: { round: 2, attempt: 2, excluded: [], opensAt } })
      h2.send({ type: 'bid-seen', now: opensAt, bid: otherBid(job, 1, 1_000, { issuedAt: opensAt, expiresAt: opensAt + H }) })
      assert.equal(has(h2.tick(opensAt + delayOf(job)), 'send-bid'), false)
    })

    it('a next-round bid that overtook the round\'s job request in gossip is not counted once this node\'s first bid is out', () => {
      const h = new Harness(createMarketParams({ enoughBetterBids: 1 }))
      const job = makeJob()
      h.send({ type: 'job-seen', now: NOW, job })
      assert.equal(h.seal(h.tick(NOW + delayOf(job))).length, 1)
      // round 2 opens; another provider's bid for it arrives before this node sees the round
      const opensAt = NOW + 20_000
      h.now = opensAt
      h.send({ type: 'bid-seen', now: opensAt, bid: otherBid(job, 1, 1_000, { issuedAt: opensAt, expiresAt: opensAt + H }) })
      h.send({ type: 'job-seen', now: opensAt, job, round: { round: 2, attempt: 2, excluded: [], opensAt } })
      const effects = h.tick(opensAt + delayOf(job))
      assert.ok(has(effects, 'send-bid', (e) => e.round === 2), notes(effects).join('; '))
    })

    it('in a re-opened round an excluded provider\'s bid does not silence it', () => {
      const h = new Harness(createMarketParams({ enoughBetterBids: 1 }))
      const job = makeJob()
      const opensAt = NOW + 10_000
      h.now = opensAt
      h.send({ type: 'job-seen', now: opensAt, job, round: { round: 2, attempt: 2, excluded: ['peer-1'], opensAt } })
      h.send({ type: 'bid-seen', now: opensAt, bid: otherBid(job, 1, 1_000, { issuedAt: opensAt, expiresAt: opensAt + H }) })
      assert.ok(has(h.tick(opensAt + delayOf(job)), 'send-bid'))
    })
  })

  describe('delayed bids and wakes', () => {
    const jobs = [makeJob({ n: 1, maxPrice: 3_000_000 }), makeJob({ n: 2, maxPrice: 2_100_000 }), makeJob({ n: 3, maxPrice: 2_500_000 })] as const
    const [d0, d1, d2] = jobs.map((j) => delayOf(j)) as [number, number, number]

    it('after the first of three fires, the wake is the earliest left even when it arrived first', () => {
      assert.ok(d0 < d2 && d2 < d1)
      const h = new Harness()
      for (const j of [jobs[2], jobs[1], jobs[0]]) h.send({ type: 'job-seen', now: NOW, job: j })
      h.tick(NOW + d0)
      assert.equal(h.agent.nextWake(), NOW + d2)
      assert.equal(h.wake, NOW + d2)
    })

    it('bids that fall due in one late tick go out in the order they fell due, not the order they came in', () => {
      const h = new Harness()
      for (const j of [jobs[1], jobs[2], jobs[0]]) h.send({ type: 'job-seen', now: NOW, job: j })
      const sent = h.tick(NOW + d1).flatMap((e) => e.type === 'send-bid' ? [e.job] : [])
      assert.deepEqual(sent, [jobs[0], jobs[2], jobs[1]].map((j) => j.cid.toString()))
    })

    it('once nothing is left to do, no wake is asked for (not even an empty one)', () => {
      const h = new Harness()
      const job = makeJob()
      h.send({ type: 'job-seen', now: NOW, job })
      const fired = h.tick(NOW + delayOf(job))
      assert.ok(has(fired, 'send-bid'))
      assert.equal(h.agent.nextWake(), undefined)
      assert.deepEqual(fired.filter((e) => e.type === 'wake'), [])
    })
  })

  describe('what the shell is told', () => {
    it('a sealed bid is a new offer for the shell to store, at once', () => {
      const h = new Harness(defaultMarketParams, false)
      const job = makeJob()
      const effects = h.send({ type: 'job-seen', now: NOW, job })
      const send = find(effects, 'send-bid')
      assert.ok(send !== undefined)
      const [sealed] = h.seal(effects)
      assert.ok(sealed !== undefined)
      const after = h.log.slice(h.log.lastIndexOf(send) + 1)
      assert.deepEqual(after.filter((e) => e.type === 'offer-updated'), [{ type: 'offer-updated', bid: sealed.bid, job: job.cid.toString() }])
    })

    it('a whole job, preemption included, gives the shell only its documented effects; every wake is a bare instant', () => {
      const bronze = makeJob({ n: 1, gpus: 4, tier: 'bronze', maxPrice: 2_500_000, runtimeSec: 3600 })
      const gold = makeJob({ n: 2, gpus: 4, tier: 'gold', maxPrice: 9_000_000, runtimeSec: 600, startDelaySec: 60 })
      const h = new Harness(defaultMarketParams, false)
      const b = h.running(bronze)
      h.payment(bronze, b.bid, b.award, { seq: 1, cumulative: 1 })
      const g = h.bidOn(gold)
      h.award(gold, g)
      h.send({ type: 'inputs-fetched', now: h.now, bid: g.bid })
      h.tick(NOW + defaultMarketParams.preemptNoticeMs)
      h.send({ type: 'started', now: h.now, bid: g.bid })
      h.now += 60_000
      h.send({ type: 'finished', now: h.now, bid: g.bid, exitCode: 0, gpuSeconds: 240 })
      for (let t = h.agent.nextWake(); t !== undefined && t < NOW + H; t = h.agent.nextWake()) h.tick(t)
      for (const e of h.log) {
        assert.ok(SHELL_EFFECTS.has(e.type), `undocumented effect ${e.type}`)
        if (e.type === 'wake') assert.deepEqual(Object.keys(e).sort(), ['at', 'type'])
      }
      assert.ok(h.log.some((e) => e.type === 'wake'))
    })
  })

  describe('the preempted-jobs memory', () => {
    it('forgets a preempted job once its request expired (exactly then), keeps the others', () => {
      const h = new Harness(defaultMarketParams, false)
      const soon = expiringJob(NOW + H, { n: 1, gpus: 2, tier: 'bronze', maxPrice: 2_500_000, runtimeSec: 3600 })
      const later = expiringJob(NOW + 5 * H, { n: 2, gpus: 2, tier: 'bronze', maxPrice: 2_500_000, runtimeSec: 3600 })
      h.running(soon)
      h.running(later)
      const gold = makeJob({ n: 3, gpus: 4, tier: 'gold', maxPrice: 9_000_000, runtimeSec: 600, startDelaySec: 60 })
      h.award(gold, h.bidOn(gold))
      assert.ok(h.agent.hasPreempted(soon.cid.toString()) && h.agent.hasPreempted(later.cid.toString()))
      // an hour on, exactly at `soon`'s expiry: another bronze job is preempted by another gold one
      h.now = NOW + H
      const bronze2 = makeJob({ n: 4, issuedAt: h.now, gpus: 4, tier: 'bronze', maxPrice: 2_500_000, runtimeSec: 3600 })
      h.running(bronze2)
      const gold2 = makeJob({ n: 5, issuedAt: h.now, gpus: 4, tier: 'gold', maxPrice: 9_000_000, runtimeSec: 600, startDelaySec: 60 })
      const awarded = h.award(gold2, h.bidOn(gold2)).effects
      assert.ok(has(awarded, 'notify-preemption'))
      assert.equal(h.agent.hasPreempted(soon.cid.toString()), false)
      assert.equal(h.agent.hasPreempted(later.cid.toString()), true)
      assert.equal(h.agent.hasPreempted(bronze2.cid.toString()), true)
      assert.equal(h.agent.hasPreempted(ME), false)
    })
  })

  describe('the lifecycle\'s answers', () => {
    it('an event the lifecycle ignores (inputs fetched twice) never starts a running job a second time', () => {
      const h = new Harness(defaultMarketParams, false)
      const job = makeJob()
      const r = h.running(job)
      assert.equal(starts(h.log, r.bid).length, 1)
      const again = h.send({ type: 'inputs-fetched', now: h.now, bid: r.bid })
      assert.equal(starts(again, r.bid).length, 0)
      assert.ok(notes(again).includes('provider event ignored'))
      assert.equal(h.agent.offer(r.bid)?.state.status, 'running')
    })

    it('during a 30 s preemption notice the job\'s heartbeats say preempted and carry no message; only the final one says why', () => {
      const bronze = makeJob({ n: 1, gpus: 4, tier: 'bronze', maxPrice: 2_500_000, runtimeSec: 3600 })
      const gold = makeJob({ n: 2, gpus: 4, tier: 'gold', maxPrice: 9_000_000, runtimeSec: 600, startDelaySec: 60 })
      const h = new Harness(createMarketParams({ preemptNoticeMs: 30_000 }), false)
      const b = h.running(bronze)
      h.payment(bronze, b.bid, b.award, { seq: 1, cumulative: 1 })
      h.award(gold, h.bidOn(gold))
      for (let t = h.agent.nextWake(); t !== undefined && t <= NOW + 30_000; t = h.agent.nextWake()) h.tick(t)
      const beats = h.log.filter((e): e is Extract<ProviderAgentEffect, { type: 'heartbeat' }> => e.type === 'heartbeat' && e.bid === b.bid)
      const notice = h.log.findIndex((e) => e.type === 'notify-preemption' && (e as { bid?: string }).bid === b.bid)
      assert.ok(notice >= 0, 'the notice went out')
      const during = beats.filter((e) => h.log.indexOf(e) > notice).slice(0, -1)
      assert.ok(during.length >= 2, `heartbeats during the notice: ${during.length}`)
      for (const e of during) {
        assert.equal(e.state, 'preempted', `heartbeat ${e.seq} during the notice`)
        assert.equal('message' in e, false, `${e.state} heartbeat ${e.seq} carries a message`)
      }
      assert.deepEqual(beats.filter((e) => 'message' in e).map((e) => [e.state, e.message]), [['preempted', 'preempted by a better-paying job']])
    })

    it('a payment with a newer seq but a lower cumulative bounces, kept as evidence; its seq is spent (no replay of it later)', () => {
      const h = new Harness(defaultMarketParams, false)
      const job = makeJob()
      const r = h.running(job)
      h.payment(job, r.bid, r.award, { seq: 1, cumulative: 10 })
      const lower = h.payment(job, r.bid, r.award, { seq: 2, cumulative: 5 })
      assert.ok(has(lower, 'drop-frame', (e) => e.reason === 'BELOW_EARLIER' && e.ref === 'bounced-payment'))
      assert.ok(has(lower, 'offer-updated', (e) => e.bid === r.bid))
      assert.deepEqual(h.agent.offer(r.bid)?.payment, { seq: 2, cumulative: 10, gpuSeconds: 1 })
      assert.equal(find(h.payment(job, r.bid, r.award, { seq: 2, cumulative: 20 }), 'drop-frame')?.reason, 'STALE_SEQ')
    })

    it('an offer with no award shows no allocation at all (not an empty one)', () => {
      const h = new Harness(defaultMarketParams, false)
      const bid = h.bidOn(makeJob())
      const view = h.agent.offer(bid.bid)
      assert.ok(view !== undefined)
      assert.equal('allocation' in view, false)
      assert.equal('award' in view, false)
    })
  })

  describe('the operator\'s log', () => {
    it('says why the node does not bid, and why it declines an award, with the job and the reason code', () => {
      const h = new Harness(defaultMarketParams, false)
      const big = makeJob({ n: 1, gpus: 8 })
      const declined = find(h.send({ type: 'job-seen', now: NOW, job: big }), 'note', (n) => n.message === 'not bidding')
      assert.equal(declined?.fields.job, big.cid.toString())
      assert.equal(declined?.fields.round, 1)
      assert.equal(typeof declined?.fields.reason, 'string')
      assert.ok(String(declined?.fields.detail).length > 0)
      const job = makeJob({ n: 2 })
      const bid = h.bidOn(job)
      const low = find(h.award(job, bid, { price: 2 }).effects, 'note', (n) => n.message === 'declining an award')
      assert.equal(low?.fields.job, job.cid.toString())
      assert.match(String(low?.fields.reason), /below the ask/)
    })

    it('logs at info each bid, award, preemption and ending with the ids and amounts', () => {
      const bronze = makeJob({ n: 1, gpus: 4, tier: 'bronze', maxPrice: 2_500_000, runtimeSec: 3600 })
      const gold = makeJob({ n: 2, gpus: 4, tier: 'gold', maxPrice: 9_000_000, runtimeSec: 600, startDelaySec: 60 })
      const h = new Harness(defaultMarketParams, false)
      const b = h.running(bronze)
      const g = h.bidOn(gold)
      const award = h.award(gold, g, { attempt: 2 })
      h.tick(NOW + defaultMarketParams.preemptNoticeMs)
      const info = h.log.flatMap((e) => e.type === 'note' && e.level === 'info' ? [e] : [])
      const bids = info.filter((n) => n.message === 'bid')
      assert.deepEqual(bids.map((n) => [n.fields.job, n.fields.round, n.fields.bid, n.fields.price, n.fields.gpus, n.fields.preempts]), [
        [bronze.cid.toString(), 1, b.bid, 2_000_000, ['GPU-0', 'GPU-1', 'GPU-2', 'GPU-3'], []],
        [gold.cid.toString(), 1, g.bid, g.payload.price, g.payload.gpus, [bronze.cid.toString()]]
      ])
      const received = info.filter((n) => n.message === 'award received' && n.fields.job === gold.cid.toString())
      assert.deepEqual(received.map((n) => [n.fields.award, n.fields.price, n.fields.attempt]), [[award.id, g.payload.price, 2]])
      assert.deepEqual(info.filter((n) => n.message === 'preempting a bronze job').map((n) => [n.fields.job, n.fields.for]), [[bronze.cid.toString(), gold.cid.toString()]])
      assert.deepEqual(info.filter((n) => n.message === 'job ended').map((n) => [n.fields.job, n.fields.status, n.fields.reason]), [[bronze.cid.toString(), 'preempted', 'preempted by a better-paying job']])
      // an unawarded offer that ends (lost) is no "job ended" at info
      const lost = new Harness(defaultMarketParams, false)
      const sealed = lost.bidOn(makeJob({ n: 3 }))
      lost.tick(sealed.payload.expiresAt + 1)
      assert.equal(lost.log.some((e) => e.type === 'note' && e.message === 'job ended'), false)
    })
  })
})
