/**
 * The provider agent at its edges (mutation survivors of protocol/market/provider-agent.ts): which
 * awards, payments and cancels it refuses and with which code, what the shell is told (wakes once,
 * offer-updated on every payment, the final status's message), the GPU-seconds in a preemption
 * notice, two delayed bids in their own order, and how long an ended offer waits for a late payment.
 */
import assert from 'node:assert/strict'
import { ENDED_RETENTION_MS, createMarketParams, defaultMarketParams, type ProviderAgentEffect } from '../../../../protocol/index.js'
import { H } from '../../../helpers/market-time.js'
import { NOW, REQUESTER, ME, Harness, cidFromString, delayOf, find, has, makeJob, notes, otherBid } from '../../../helpers/provider-agent-harness.js'

const refusal = (effects: ProviderAgentEffect[]): { reason: string, message: string } | undefined => find(effects, 'refuse-award')

describe('the provider agent at its edges', () => {
  describe('wakes and queries', () => {
    it('a wake is emitted once per new instant, not repeated while it stands', () => {
      const h = new Harness()
      const job = makeJob()
      const delay = delayOf(job)
      const first = h.send({ type: 'job-seen', now: NOW, job })
      assert.deepEqual(first.filter((e) => e.type === 'wake'), [{ type: 'wake', at: NOW + delay }])
      assert.equal(h.tick(NOW + 1).filter((e) => e.type === 'wake').length, 0)
      assert.equal(h.agent.nextWake(), NOW + delay)
    })

    it('a deadline due at an event\'s instant is handled before the event, and not a millisecond early (the walk is skipped only while the last wake is ahead)', () => {
      const h = new Harness()
      const job = makeJob({ n: 1 })
      const d = delayOf(job)
      h.send({ type: 'job-seen', now: NOW, job })
      const early = h.send({ type: 'job-seen', now: NOW + d - 1, job: makeJob({ n: 2, gpus: 64 }) })
      assert.equal(has(early, 'send-bid'), false)
      assert.deepEqual(notes(early), ['not bidding'])
      // the bid policy's code, for metrics (gpumesh_market_bids_declined_total)
      assert.deepEqual(early.filter((e) => e.type === 'passed'), [{ type: 'passed', job: makeJob({ n: 2, gpus: 64 }).cid.toString(), round: 1, reason: 'GPU_COUNT' }])
      const at = h.send({ type: 'job-seen', now: NOW + d, job: makeJob({ n: 3, gpus: 64 }) })
      const order = at.map((e) => e.type === 'note' ? e.message : e.type)
      assert.ok(order.includes('send-bid'), order.join(', '))
      assert.ok(order.indexOf('send-bid') < order.indexOf('not bidding'), order.join(', '))
    })

    it('two delayed bids fire each at its own time, the earlier first, and the wake moves to the later', () => {
      const h = new Harness()
      const soon = makeJob({ n: 1 })
      const later = makeJob({ n: 2, maxPrice: 2_100_000 })
      const [ds, dl] = [delayOf(soon), delayOf(later)]
      assert.ok(ds < dl)
      h.send({ type: 'job-seen', now: NOW, job: later })
      h.send({ type: 'job-seen', now: NOW, job: soon })
      assert.equal(h.agent.nextWake(), NOW + ds)
      const a = h.tick(NOW + ds)
      assert.deepEqual(a.filter((e) => e.type === 'send-bid').map((e) => e.type === 'send-bid' && e.job), [soon.cid.toString()])
      assert.equal(h.wake, NOW + dl)
      assert.equal(h.agent.pendingBids, 1)
      assert.equal(has(h.tick(NOW + dl - 1), 'send-bid'), false)
      assert.deepEqual(h.tick(NOW + dl).filter((e) => e.type === 'send-bid').map((e) => e.type === 'send-bid' && e.job), [later.cid.toString()])
      assert.equal(h.agent.nextWake(), undefined)
    })

    it('three delayed bids: after the first fires the wake is the earlier of the two left, whatever their order of arrival', () => {
      const h = new Harness()
      const jobs = [makeJob({ n: 1, maxPrice: 3_000_000 }), makeJob({ n: 2, maxPrice: 2_100_000 }), makeJob({ n: 3, maxPrice: 2_500_000 })]
      const [d0, d1, d2] = jobs.map((j) => delayOf(j)) as [number, number, number]
      assert.ok(d0 < d2 && d2 < d1)
      for (const j of [jobs[1], jobs[2], jobs[0]]) h.send({ type: 'job-seen', now: NOW, job: j as (typeof jobs)[0] })
      h.tick(NOW + d0)
      assert.equal(h.agent.nextWake(), NOW + d2)
      assert.equal(h.wake, NOW + d2)
    })

    it('the wake is the earliest of a pending bid and a live offer\'s heartbeat', () => {
      const h = new Harness()
      const first = makeJob({ n: 1 })
      h.send({ type: 'job-seen', now: NOW, job: first })
      const [sealed] = h.seal(h.tick(NOW + delayOf(first)))
      assert.ok(sealed !== undefined)
      h.award(first, sealed)
      h.send({ type: 'inputs-fetched', now: h.now, bid: sealed.bid })
      const beat = h.agent.nextWake() as number
      const second = makeJob({ n: 2 })
      assert.ok(h.now + delayOf(second) < beat, 'the pending bid falls before the heartbeat')
      h.send({ type: 'job-seen', now: h.now, job: second })
      assert.equal(h.agent.nextWake(), h.now + delayOf(second))
      assert.equal(h.wake, h.now + delayOf(second))
    })

    it('lists live offers; no allocation before an award', () => {
      const h = new Harness(defaultMarketParams, false)
      const job = makeJob()
      const bid = h.bidOn(job)
      assert.deepEqual(h.agent.offers().map((o) => [o.bid, o.job, o.round, o.requester, o.state.status]), [[bid.bid, job.cid.toString(), 1, REQUESTER, 'offered']])
      assert.deepEqual(h.agent.allocations(), [])
      assert.equal(h.agent.offer(bid.bid)?.award, undefined)
      assert.equal(h.agent.offer(bid.bid)?.allocation, undefined)
      assert.equal('note' in (h.agent.offer(bid.bid) ?? {}), false)
    })

    it('a sealed bid that was not asked for is not tracked', () => {
      const h = new Harness(defaultMarketParams, false)
      const job = makeJob()
      const effects = h.send({ type: 'bid-sealed', now: NOW, job: job.cid.toString(), round: 1, bid: 'bafy-unasked', payload: { expiresAt: NOW + H } as never })
      assert.deepEqual(effects.filter((e) => e.type !== 'note'), [])
      assert.ok(has(effects, 'note', (e) => e.level === 'warn'))
      assert.equal(h.agent.offer('bafy-unasked'), undefined)
    })
  })

  describe('bidding', () => {
    it('does not bid when the node stopped selling during the delay', () => {
      const h = new Harness()
      const job = makeJob()
      h.send({ type: 'job-seen', now: NOW, job })
      h.send({ type: 'ad-changed', now: NOW + 1, ad: undefined })
      const effects = h.tick(NOW + delayOf(job))
      assert.equal(has(effects, 'send-bid'), false)
      assert.equal(h.agent.pendingBids, 0)
    })

    it('a better bid that expires before the close does not silence it (bids are screened at the close)', () => {
      const h = new Harness(createMarketParams({ enoughBetterBids: 1 }))
      const job = makeJob()
      const delay = delayOf(job)
      h.send({ type: 'job-seen', now: NOW, job })
      h.send({ type: 'bid-seen', now: NOW, bid: otherBid(job, 1, 1_000, { expiresAt: NOW + delay + 1 }) })
      assert.ok(has(h.tick(NOW + delay), 'send-bid'))
    })

    it('two rounds of one job pending at once: bids seen after the first round bid still count for the second', () => {
      // no suppression timer: each round draws its own timer, and this test needs round 1 to bid first
      const params = createMarketParams({ enoughBetterBids: 1, bidSpreadShare: 0 })
      const h = new Harness(params)
      const job = makeJob()
      const delay = delayOf(job, undefined, 1, params)
      h.send({ type: 'job-seen', now: NOW, job })
      h.send({ type: 'job-seen', now: NOW + 1, job, round: { round: 2, attempt: 1, excluded: [], opensAt: NOW + 1 } })
      assert.equal(h.agent.pendingBids, 2)
      const first = h.tick(NOW + delay)
      assert.deepEqual(first.filter((e) => e.type === 'send-bid').map((e) => e.type === 'send-bid' && e.round), [1])
      h.send({ type: 'bid-seen', now: NOW + delay, bid: otherBid(job, 1, 1_000, { issuedAt: NOW + delay }) })
      const second = h.tick(NOW + 1 + delay)
      assert.equal(has(second, 'send-bid'), false)
      assert.ok(notes(second).includes('staying silent: enough better bids seen'))
      assert.deepEqual(second.filter((e) => e.type === 'passed'), [{ type: 'passed', job: job.cid.toString(), round: 2, reason: 'DAMPED' }])
    })

    it('does not bid in a round that excludes it', () => {
      const h = new Harness(defaultMarketParams, false)
      const job = makeJob()
      const effects = h.send({ type: 'job-seen', now: NOW, job, round: { round: 2, attempt: 2, excluded: [ME], opensAt: NOW } })
      assert.equal(has(effects, 'send-bid'), false)
      assert.equal(h.agent.pendingBids, 0)
    })

    it('its own bids seen on gossip never silence it', () => {
      const h = new Harness(createMarketParams({ enoughBetterBids: 1 }))
      const job = makeJob()
      h.send({ type: 'job-seen', now: NOW, job })
      for (let i = 0; i < 3; i++) {
        const b = otherBid(job, i, 1_000)
        h.send({ type: 'bid-seen', now: NOW, bid: { ...b, signer: ME } })
      }
      assert.ok(has(h.tick(NOW + delayOf(job)), 'send-bid'))
    })

    it('a cheaper bid by another provider, seen while waiting, does silence it (enough = 1)', () => {
      const h = new Harness(createMarketParams({ enoughBetterBids: 1 }))
      const job = makeJob()
      h.send({ type: 'job-seen', now: NOW, job })
      h.send({ type: 'bid-seen', now: NOW, bid: otherBid(job, 1, 1_000) })
      const effects = h.tick(NOW + delayOf(job))
      assert.equal(has(effects, 'send-bid'), false)
      assert.ok(notes(effects).includes('staying silent: enough better bids seen'))
    })

    it('a bid seen before its job is not counted (damping errs towards bidding)', () => {
      const h = new Harness(createMarketParams({ enoughBetterBids: 1 }))
      const job = makeJob()
      h.send({ type: 'bid-seen', now: NOW, bid: otherBid(job, 1, 1_000) })
      h.send({ type: 'job-seen', now: NOW, job })
      assert.ok(has(h.tick(NOW + delayOf(job)), 'send-bid'))
    })
  })

  describe('awards', () => {
    it('refuses an award for a bid it never made, one handed over by another peer, and a second award on the same bid', () => {
      const h = new Harness(defaultMarketParams, false)
      const job = makeJob()
      const bid = h.bidOn(job)
      const other = makeJob({ n: 5 })
      const unknown = refusal(h.award(other, { cid: otherBid(other, 1, 1).cid, payload: bid.payload }).effects)
      assert.equal(unknown?.reason, 'UNEXPECTED_AWARD')
      assert.equal(unknown?.message, 'no bid of this node waits for this award')
      const relayed = refusal(h.award(job, bid, {}, { from: 'peer-relay' }).effects)
      assert.equal(relayed?.message, 'the award was handed over by a peer other than its signer')
      const forOther = refusal(h.award(job, bid, { job: other.cid }).effects)
      assert.equal(forOther?.message, 'the award is for another job')
      assert.equal(h.agent.offer(bid.bid)?.award, undefined)
      const first = h.award(job, bid)
      assert.ok(has(first.effects, 'award-taken', (e) => e.bid === bid.bid && e.award === first.id))
      assert.equal(refusal(first.effects), undefined)
      const second = refusal(h.award(job, bid, { attempt: 2 }).effects)
      assert.equal(second?.reason, 'UNEXPECTED_AWARD')
      assert.match(second?.message ?? '', /^the bid is no longer waiting for an award/)
      assert.equal(h.agent.offer(bid.bid)?.award?.id, first.id)
    })

    it('refuses an award after its offer declined one (status no longer offered)', () => {
      const h = new Harness(defaultMarketParams, false)
      const job = makeJob()
      const bid = h.bidOn(job)
      // an award above the ask's admissible price is declined by the review
      const a = h.award(job, bid, { price: 2 })
      assert.ok(has(a.effects, 'respond-award', (e) => e.decision === 'decline'))
      assert.equal(h.agent.allocations().length, 0, 'a declined award commits no GPUs')
      const again = refusal(h.award(job, bid, { attempt: 2 }).effects)
      assert.equal(again?.reason, 'UNEXPECTED_AWARD')
    })
  })

  describe('preemption', () => {
    const bronze = makeJob({ n: 1, gpus: 4, tier: 'bronze', maxPrice: 2_500_000, runtimeSec: 3600 })
    const gold = makeJob({ n: 2, gpus: 4, tier: 'gold', maxPrice: 9_000_000, runtimeSec: 600, startDelaySec: 60 })

    it('the notice reports the GPU-seconds run so far: 4 GPUs × whole seconds since the start', () => {
      const h = new Harness(defaultMarketParams, false)
      const b = h.running(bronze)
      h.now = NOW + 10_999
      const g = h.bidOn(gold)
      const notice = find(h.award(gold, g).effects, 'notify-preemption')
      assert.equal(notice?.bid, b.bid)
      assert.equal(notice?.gpuSeconds, 40)
    })

    it('the notice for a job accepted but not yet started reports 0 GPU-seconds', () => {
      const h = new Harness(createMarketParams({}), false)
      const bid = h.bidOn(bronze)
      h.award(bronze, bid)
      h.now = NOW + 5_000
      const g = h.bidOn(gold)
      const notice = find(h.award(gold, g).effects, 'notify-preemption')
      assert.equal(notice?.bid, bid.bid)
      assert.equal(notice?.gpuSeconds, 0)
    })
  })

  describe('early start', () => {
    it('a job started early on GPUs that came free gets a fresh allocation: from now, for its whole max runtime', () => {
      const h = new Harness(defaultMarketParams, false)
      const first = makeJob({ n: 3, gpus: 4, runtimeSec: 600 })
      const second = makeJob({ n: 4, gpus: 4, runtimeSec: 900, startDelaySec: 900 })
      const a = h.running(first)
      const b = h.accepted(second)
      assert.equal(has(b.effects, 'start-job'), false)
      const committed = h.agent.offer(b.bid)?.allocation
      assert.equal(committed?.startedAt, NOW + 600_000)
      h.now = NOW + 60_000
      h.send({ type: 'finished', now: h.now, bid: a.bid, exitCode: 0, gpuSeconds: 240 })
      const owed = h.agent.offer(a.bid)?.state.finished?.owed ?? 0
      const paid = h.payment(first, a.bid, a.award, { cumulative: owed, interval: 1, gpuSeconds: 240 })
      const start = find(paid, 'start-job', (e) => e.bid === b.bid)
      assert.deepEqual(start?.gpus, ['GPU-0', 'GPU-1', 'GPU-2', 'GPU-3'])
      const moved = h.agent.offer(b.bid)?.allocation
      assert.equal(moved?.startedAt, NOW + 60_000)
      assert.equal(moved?.endsAt, NOW + 60_000 + 900_000)
    })

    it('no early start after the node stopped selling: the job waits for its committed start', () => {
      const h = new Harness(defaultMarketParams, false)
      const first = makeJob({ n: 3, gpus: 4, runtimeSec: 600 })
      const second = makeJob({ n: 4, gpus: 4, runtimeSec: 900, startDelaySec: 900 })
      const a = h.running(first)
      const b = h.accepted(second)
      h.send({ type: 'ad-changed', now: h.now, ad: undefined })
      h.now = NOW + 60_000
      h.send({ type: 'finished', now: h.now, bid: a.bid, exitCode: 0, gpuSeconds: 240 })
      const owed = h.agent.offer(a.bid)?.state.finished?.owed ?? 0
      const paid = h.payment(first, a.bid, a.award, { cumulative: owed, interval: 1, gpuSeconds: 240 })
      assert.equal(has(paid, 'start-job'), false)
      assert.equal(h.agent.offer(b.bid)?.allocation?.startedAt, NOW + 600_000)
    })
  })

  describe('exec frames', () => {
    it('a payment accepted without a state change still updates the offer view', () => {
      const h = new Harness(defaultMarketParams, false)
      const job = makeJob()
      const r = h.running(job)
      const effects = h.payment(job, r.bid, r.award, { seq: 1, cumulative: 10 })
      assert.ok(has(effects, 'offer-updated', (e) => e.bid === r.bid))
      // the cumulative never goes down
      h.payment(job, r.bid, r.award, { seq: 2, cumulative: 5 })
      assert.equal(h.agent.offer(r.bid)?.payment.cumulative, 10)
      assert.equal(h.agent.offer(r.bid)?.payment.seq, 2)
    })

    it('a payment or cancel for an offer with no award is dropped silently (no frame effect)', () => {
      const h = new Harness(defaultMarketParams, false)
      const job = makeJob()
      const bid = h.bidOn(job)
      const fake = h.award(makeJob({ n: 6 }), bid, {}, { from: 'peer-x' })
      const pay = h.payment(job, bid.bid, fake.id)
      assert.deepEqual(pay.filter((e) => e.type !== 'note'), [])
      const cancel = h.send({ type: 'cancel', now: h.now, bid: bid.bid, signer: REQUESTER, payload: { v: 1, issuedAt: h.now, expiresAt: h.now + H, job: job.cid, award: cidFromString(fake.id), reason: 'x' } })
      assert.deepEqual(cancel.filter((e) => e.type !== 'note'), [])
      assert.equal(h.agent.offer(bid.bid)?.state.status, 'offered')
    })

    it('a cancel for another award or another job is dropped as WRONG_AWARD and the job keeps running', () => {
      const h = new Harness(defaultMarketParams, false)
      const job = makeJob()
      const r = h.running(job)
      const other = makeJob({ n: 8 })
      const otherAward = h.award(other, { cid: otherBid(other, 1, 1).cid, payload: otherBid(other, 1, 1).payload })
      const cancel = (over: { job?: typeof job.cid, award?: string }): ProviderAgentEffect[] => h.send({
        type: 'cancel', now: h.now, bid: r.bid, signer: REQUESTER,
        payload: { v: 1, issuedAt: h.now, expiresAt: h.now + H, job: over.job ?? job.cid, award: cidFromString(over.award ?? r.award), reason: 'no' }
      })
      const wrongAward = find(cancel({ award: otherAward.id }), 'drop-frame')
      assert.deepEqual([wrongAward?.kind, wrongAward?.reason], ['job-cancel', 'WRONG_AWARD'])
      const wrongJob = find(cancel({ job: other.cid }), 'drop-frame')
      assert.deepEqual([wrongJob?.kind, wrongJob?.reason], ['job-cancel', 'WRONG_AWARD'])
      assert.equal(h.agent.offer(r.bid)?.state.status, 'running')
      const ok = cancel({})
      assert.ok(has(ok, 'frame-accepted', (e) => e.kind === 'job-cancel' && e.bid === r.bid))
    })

    it('a payment for another award is dropped as WRONG_AWARD', () => {
      const h = new Harness(defaultMarketParams, false)
      const job = makeJob()
      const r = h.running(job)
      const other = makeJob({ n: 9 })
      const otherAward = h.award(other, { cid: otherBid(other, 1, 1).cid, payload: otherBid(other, 1, 1).payload })
      const drop = find(h.payment(job, r.bid, otherAward.id, { seq: 1 }), 'drop-frame')
      assert.deepEqual([drop?.kind, drop?.reason], ['payment', 'WRONG_AWARD'])
      assert.equal(h.agent.offer(r.bid)?.payment.seq, 0)
    })
  })

  describe('offer updates', () => {
    it('a repeated payment with the same cumulative (a higher seq) still updates the offer view', () => {
      const h = new Harness(defaultMarketParams, false)
      const job = makeJob()
      const r = h.running(job)
      h.payment(job, r.bid, r.award, { seq: 1, cumulative: 10 })
      const again = h.payment(job, r.bid, r.award, { seq: 2, cumulative: 10 })
      assert.ok(has(again, 'frame-accepted'))
      assert.ok(has(again, 'offer-updated', (e) => e.bid === r.bid))
      assert.deepEqual(h.agent.offer(r.bid)?.payment, { seq: 2, cumulative: 10, gpuSeconds: 1 })
    })

    it('a state change updates the view; an event the lifecycle ignores does not', () => {
      const h = new Harness(defaultMarketParams, false)
      const job = makeJob()
      const a = h.accepted(job)
      assert.ok(has(a.effects, 'offer-updated', (e) => e.bid === a.bid))
      const started = h.send({ type: 'started', now: h.now, bid: a.bid })
      assert.ok(has(started, 'offer-updated', (e) => e.bid === a.bid))
      const twice = h.send({ type: 'inputs-fetched', now: h.now, bid: a.bid })
      assert.equal(has(twice, 'offer-updated'), false)
    })

    it('finished for a bid it does not hold (with a note) is only noted', () => {
      const h = new Harness(defaultMarketParams, false)
      const effects = h.send({ type: 'finished', now: NOW, bid: 'bafy-none', exitCode: 0, gpuSeconds: 0, note: 'x' })
      assert.deepEqual(effects.filter((e) => e.type !== 'note'), [])
    })
  })

  describe('endings', () => {
    it('a preempted job\'s one preempted heartbeat, at the end of the notice, carries the reason', () => {
      const bronze = makeJob({ n: 1, gpus: 4, tier: 'bronze', maxPrice: 2_500_000, runtimeSec: 3600 })
      const gold = makeJob({ n: 2, gpus: 4, tier: 'gold', maxPrice: 9_000_000, runtimeSec: 600, startDelaySec: 60 })
      const h = new Harness(defaultMarketParams, false)
      const b = h.running(bronze)
      const g = h.bidOn(gold)
      h.award(gold, g)
      h.tick(NOW + defaultMarketParams.preemptNoticeMs)
      const beats = h.log.filter((e): e is Extract<ProviderAgentEffect, { type: 'heartbeat' }> => e.type === 'heartbeat' && e.state === 'preempted' && (e as { bid?: string }).bid === b.bid)
      assert.deepEqual(beats.map((e) => [e.message, e.gpuSeconds]), [['preempted by a better-paying job', 4 * Math.floor(defaultMarketParams.preemptNoticeMs / 1000)]])
    })

    it('a job that fails to start carries the executor\'s note as its final message and in the view', () => {
      const h = new Harness(defaultMarketParams, false)
      const job = makeJob()
      const a = h.accepted(job)
      const effects = h.send({ type: 'finished', now: h.now, bid: a.bid, exitCode: -1, gpuSeconds: 0, note: 'image pull failed' })
      assert.equal(find(effects, 'heartbeat', (e) => e.state === 'failed')?.message, 'image pull failed')
      const ended = find(effects, 'offer-ended')
      assert.equal(ended?.status, 'failed')
      assert.equal(ended?.reason, 'the executor could not start the job')
      assert.equal(ended?.awarded, true)
      assert.equal(h.agent.offer(a.bid)?.note, 'image pull failed')
    })

    it('the output size reaches the lifecycle (the final-payment deadline allows for the fetch)', () => {
      const h = new Harness(defaultMarketParams, false)
      const job = makeJob()
      const r = h.running(job)
      h.send({ type: 'finished', now: h.now, bid: r.bid, exitCode: 0, gpuSeconds: 20, outputBytes: 5_000_000_000 })
      assert.equal(h.agent.offer(r.bid)?.state.finished?.outputBytes, 5_000_000_000)
      assert.equal(h.agent.offer(r.bid)?.state.status, 'completed')
      // a completed heartbeat carries no message
      assert.equal(find(h.log, 'heartbeat', (e) => e.state === 'completed')?.message, undefined)
    })

    it('an offer that ends unawarded (its bid expired) is forgotten at once and names no reason it lacks', () => {
      const h = new Harness(defaultMarketParams, false)
      const job = makeJob()
      const bid = h.bidOn(job)
      const effects = h.tick(bid.payload.expiresAt + 1)
      const ended = find(effects, 'offer-ended', (e) => e.bid === bid.bid)
      assert.equal(ended?.awarded, false)
      assert.equal(h.agent.offer(bid.bid), undefined)
      assert.equal(h.agent.ended[ended?.status ?? 'failed'], 1)
    })

    for (const retention of [ENDED_RETENTION_MS, 60_000]) {
      it(`an ended awarded offer waits endedRetentionMs (${retention} ms) for a late payment, then is forgotten`, () => {
        const h = new Harness(createMarketParams({ endedRetentionMs: retention }), false)
        const job = makeJob()
        const r = h.running(job)
        const cancel = h.send({ type: 'cancel', now: h.now, bid: r.bid, signer: REQUESTER, payload: { v: 1, issuedAt: h.now, expiresAt: h.now + H, job: job.cid, award: cidFromString(r.award), reason: 'stop' } })
        assert.ok(has(cancel, 'offer-ended', (e) => e.status === 'cancelled'))
        const endedAt = h.now
        h.tick(endedAt + retention - 1)
        assert.equal(h.agent.offer(r.bid)?.state.status, 'cancelled')
        h.tick(endedAt + retention)
        assert.equal(h.agent.offer(r.bid), undefined)
        assert.deepEqual(h.payment(job, r.bid, r.award, { seq: 1, cumulative: 5 }).filter((e) => e.type !== 'note'), [])
      })
    }

    it('requester-gone after the end forgets the kept offer', () => {
      const h = new Harness(defaultMarketParams, false)
      const job = makeJob()
      const r = h.running(job)
      h.send({ type: 'cancel', now: h.now, bid: r.bid, signer: REQUESTER, payload: { v: 1, issuedAt: h.now, expiresAt: h.now + H, job: job.cid, award: cidFromString(r.award), reason: 'stop' } })
      assert.ok(h.agent.offer(r.bid) !== undefined)
      const gone = h.send({ type: 'requester-gone', now: h.now, bid: r.bid })
      assert.equal(has(gone, 'record-failure'), false, 'a cancelled job is not a non-payment')
      // forgotten at the next event (the shell reads the view while carrying out this one's effects)
      h.tick(h.now)
      assert.equal(h.agent.offer(r.bid), undefined)
    })
  })
})
