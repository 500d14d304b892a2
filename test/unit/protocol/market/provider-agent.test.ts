/**
 * The provider agent driven with plain values on virtual time: no signatures, no libp2p, no timers.
 * Each test feeds events and reads the effects.
 */
import assert from 'node:assert/strict'
import type { CID } from '../../../../crypto/index.js'
import {
  SeenBids, bidWindowClosesAt, createMarketParams, defaultMarketParams,
  type AgentJob, type Bid, type ProviderAgentEffect
} from '../../../../protocol/index.js'
import { H, M } from '../../../helpers/market-time.js'
import { Harness, ME, NOW, REQUESTER, cid, cidFromString, delayOf, find, has, makeAd, makeJob, notes, otherBid } from '../../../helpers/provider-agent-harness.js'

describe('market/provider-agent', () => {
  describe('bidding', () => {
    it('bids after the damping delay, not before, valid until the close plus the bid grace', () => {
      const h = new Harness()
      const job = makeJob()
      const delay = delayOf(job)
      assert.ok(delay > 0)
      const first = h.send({ type: 'job-seen', now: NOW, job })
      assert.equal(find(first, 'send-bid'), undefined)
      assert.equal(h.wake, NOW + delay)
      assert.equal(h.agent.pendingBids, 1)
      assert.equal(find(h.tick(NOW + delay - 1), 'send-bid'), undefined)
      const bid = find(h.tick(NOW + delay), 'send-bid')
      assert.ok(bid !== undefined)
      const closesAt = bidWindowClosesAt(NOW, 5_000, NOW)
      assert.equal(bid.closesAt, closesAt)
      assert.equal(bid.expiresAt, closesAt + defaultMarketParams.bidGraceMs)
      assert.equal(bid.round, 1)
      assert.equal(h.agent.pendingBids, 0)
      const [sealed] = h.seal([bid])
      assert.equal(h.agent.offer(sealed?.bid ?? '')?.state.status, 'offered')
    })

    it('bids at once with a delay of 0 (no damping delay share, no suppression timer), in the same call', () => {
      const h = new Harness(createMarketParams({ bidDelayFraction: 0, bidSpreadShare: 0 }))
      assert.ok(has(h.send({ type: 'job-seen', now: NOW, job: makeJob() }), 'send-bid'))
    })

    it('takes the bid grace from the params', () => {
      const h = new Harness(createMarketParams({ bidGraceMs: 45_000 }), false)
      const bid = find(h.send({ type: 'job-seen', now: NOW, job: makeJob() }), 'send-bid')
      assert.equal(bid?.expiresAt, NOW + 5_000 + 45_000)
    })

    it('stays silent once enough bids at least as good were seen, and bids with one fewer', () => {
      for (const [count, silent] of [[5, true], [4, false]] as const) {
        const h = new Harness()
        const job = makeJob()
        h.send({ type: 'job-seen', now: NOW, job })
        for (let i = 0; i < count; i++) h.send({ type: 'bid-seen', now: NOW + 1, bid: otherBid(job, i, 2_000_000) })
        const at = h.tick(NOW + delayOf(job))
        assert.equal(has(at, 'send-bid'), !silent, `${count} better bids`)
        if (silent) assert.ok(notes(at).includes('staying silent: enough better bids seen'))
      }
    })

    it('takes "enough better bids" from the params', () => {
      const h = new Harness(createMarketParams({ enoughBetterBids: 2 }))
      const job = makeJob()
      h.send({ type: 'job-seen', now: NOW, job })
      for (let i = 0; i < 2; i++) h.send({ type: 'bid-seen', now: NOW + 1, bid: otherBid(job, i, 2_000_000) })
      assert.equal(has(h.tick(NOW + delayOf(job)), 'send-bid'), false)
    })

    it('does not count bids seen for other jobs, worse bids, or its own', () => {
      const h = new Harness()
      const job = makeJob()
      const other = makeJob({ n: 9 })
      h.send({ type: 'job-seen', now: NOW, job })
      for (let i = 0; i < 5; i++) h.send({ type: 'bid-seen', now: NOW + 1, bid: otherBid(other, i, 1) })
      for (let i = 5; i < 10; i++) h.send({ type: 'bid-seen', now: NOW + 1, bid: otherBid(job, i, 2_999_999) })
      for (let i = 0; i < 5; i++) h.send({ type: 'bid-seen', now: NOW + 1, bid: { ...otherBid(job, 20 + i, 1), signer: ME } })
      assert.ok(has(h.tick(NOW + delayOf(job)), 'send-bid'))
    })

    it('does not bid when excluded from the round', () => {
      const h = new Harness(defaultMarketParams, false)
      const effects = h.send({ type: 'job-seen', now: NOW, job: makeJob(), round: { round: 2, attempt: 2, excluded: [ME], opensAt: NOW } })
      assert.equal(has(effects, 'send-bid'), false)
      assert.ok(notes(effects).includes('excluded from the round'))
      assert.deepEqual(effects.filter((e) => e.type === 'passed').map((e) => e.type === 'passed' && e.reason), ['EXCLUDED'])
    })

    it('bids once per round: not again while pending, nor after its bid is out; again in the next round', () => {
      const h = new Harness()
      const job = makeJob()
      h.send({ type: 'job-seen', now: NOW, job })
      h.send({ type: 'job-seen', now: NOW + 1, job })
      assert.equal(h.agent.pendingBids, 1)
      h.seal(h.tick(NOW + delayOf(job)))
      assert.equal(has(h.send({ type: 'job-seen', now: h.now, job }), 'send-bid'), false)
      assert.equal(h.agent.pendingBids, 0)
      h.send({ type: 'job-seen', now: h.now, job, round: { round: 2, attempt: 2, excluded: [], opensAt: h.now } })
      assert.equal(h.agent.pendingBids, 1)
    })

    it('ignores its own job requests and bids nothing while it does not sell', () => {
      const h = new Harness(defaultMarketParams, false)
      assert.equal(has(h.send({ type: 'job-seen', now: NOW, job: { ...makeJob(), signer: ME } }), 'send-bid'), false)
      h.send({ type: 'ad-changed', now: NOW, ad: undefined })
      assert.equal(has(h.send({ type: 'job-seen', now: NOW, job: makeJob() }), 'send-bid'), false)
    })

    it('does not bid once the window has closed: exactly at the close, not one ms before', () => {
      const job = makeJob({ issuedAt: NOW - 30_000 - 5_000 })
      const late = new Harness(defaultMarketParams, false)
      const effects = late.send({ type: 'job-seen', now: NOW, job })
      assert.equal(has(effects, 'send-bid'), false)
      assert.ok(notes(effects).includes('the bid window has closed'))
      const justIn = new Harness(defaultMarketParams, false)
      assert.ok(has(justIn.send({ type: 'job-seen', now: NOW, job: makeJob({ issuedAt: NOW - 30_000 - 5_000 + 1 }) }), 'send-bid'))
    })

    it('does not bid when the window closed during the delay (exactly at the close, too)', () => {
      // no suppression timer: it differs from job to job (tieBreakUniform), and this test moves the job's issuedAt
      const params = createMarketParams({ bidSpreadShare: 0 })
      const probe = makeJob()
      const delay = delayOf(probe, undefined, 1, params)
      for (const [left, bids] of [[delay, false], [delay + 1, true], [delay - 1, false]] as const) {
        // delivered late: the window closes `left` ms after it arrives (opensAt + skew + window)
        const job = makeJob({ issuedAt: NOW - 30_000 - 5_000 + left })
        assert.equal(delayOf(job, undefined, 1, params), delay)
        const h = new Harness(params)
        h.send({ type: 'job-seen', now: NOW, job })
        const at = h.tick(NOW + delay)
        assert.equal(has(at, 'send-bid'), bids, `window closing ${left} ms after receipt`)
        if (!bids) assert.ok(notes(at).includes('the bid window closed during the delay'))
      }
    })

    it('gives up on a bid with no award at its expiry (lost)', () => {
      const h = new Harness(defaultMarketParams, false)
      const bid = h.bidOn(makeJob())
      assert.equal(h.wake, bid.payload.expiresAt)
      assert.equal(has(h.tick(bid.payload.expiresAt - 1), 'offer-ended'), false)
      assert.ok(has(h.tick(bid.payload.expiresAt), 'offer-ended', (e) => e.status === 'lost' && !e.awarded))
      assert.equal(h.agent.offer(bid.bid), undefined)
      assert.equal(h.agent.ended.lost, 1)
    })
  })

  describe('awards', () => {
    const refused = (effects: ProviderAgentEffect[]): string | undefined => find(effects, 'refuse-award')?.message

    it('takes a matching award: award-taken, accept, the accepted status, fetch inputs, the fetching-inputs status', () => {
      const h = new Harness(defaultMarketParams, false)
      const job = makeJob()
      const bid = h.bidOn(job)
      const { effects, id } = h.award(job, bid)
      const types = effects.filter((e) => e.type !== 'note' && e.type !== 'offer-updated' && e.type !== 'wake').map((e) => e.type)
      assert.deepEqual(types, ['award-taken', 'respond-award', 'heartbeat', 'fetch-inputs', 'heartbeat'])
      assert.deepEqual(effects.flatMap((e) => e.type === 'heartbeat' ? [[e.seq, e.state]] : []), [[1, 'accepted'], [2, 'fetching-inputs']])
      assert.equal(find(effects, 'award-taken')?.award, id)
      assert.deepEqual(h.agent.offer(bid.bid)?.award, { id, price: bid.payload.price })
      assert.equal(h.agent.allocations().length, 1)
    })

    it('refuses an award signed by another than the requester, handed over by another peer, naming another winner or job', () => {
      const cases: Array<[string, (h: Harness, job: AgentJob, bid: { cid: CID, payload: Bid }) => ProviderAgentEffect[]]> = [
        ['the award is not signed by the job\'s requester', (h, job, bid) => h.award(job, bid, {}, { signer: 'peer-mallory' }).effects],
        ['the award was handed over by a peer other than its signer', (h, job, bid) => h.award(job, bid, {}, { from: 'peer-mallory' }).effects],
        ['the award names another winner', (h, job, bid) => h.award(job, bid, { winner: 'peer-other' }).effects],
        ['the award is for another job', (h, job, bid) => h.award(job, bid, { job: makeJob({ n: 5 }).cid }).effects]
      ]
      for (const [message, act] of cases) {
        const h = new Harness(defaultMarketParams, false)
        const job = makeJob()
        const bid = h.bidOn(job)
        const effects = act(h, job, bid)
        assert.equal(refused(effects), message)
        assert.equal(find(effects, 'refuse-award')?.reason, 'UNEXPECTED_AWARD')
        assert.equal(has(effects, 'respond-award'), false)
        assert.equal(h.agent.offer(bid.bid)?.state.status, 'offered')
      }
    })

    it('refuses a second award for its bid, and one for no bid of its own', () => {
      const h = new Harness(defaultMarketParams, false)
      const job = makeJob()
      const bid = h.bidOn(job)
      h.award(job, bid)
      assert.equal(refused(h.award(job, bid, { attempt: 2 }).effects), 'the bid is no longer waiting for an award (accepted)')
      const stranger = { cid: cid({ nobid: 1 }), payload: bid.payload }
      assert.equal(refused(h.award(job, stranger).effects), 'no bid of this node waits for this award')
    })

    it('declines an award that pays below the ask; one at exactly the ask is taken', () => {
      const low = new Harness(defaultMarketParams, false)
      const job = makeJob()
      const bid = low.bidOn(job)
      const effects = low.award(job, bid, { price: bid.payload.price - 1 }).effects
      const response = find(effects, 'respond-award')
      assert.equal(response?.decision, 'decline')
      assert.equal(response?.reason, `the award pays ${bid.payload.price - 1}, below the ask of ${bid.payload.price}`)
      assert.ok(has(effects, 'offer-ended', (e) => e.status === 'declined'))
      assert.equal(low.agent.allocations().length, 0)
      const exact = new Harness(defaultMarketParams, false)
      const b2 = exact.bidOn(job)
      assert.equal(find(exact.award(job, b2, { price: b2.payload.price }).effects, 'respond-award')?.decision, 'accept')
    })

    it('declines an award when the calendar no longer fits', () => {
      const h = new Harness(defaultMarketParams, false)
      const job = makeJob()
      const bid = h.bidOn(job)
      // the ad now offers the machine only on Sundays (NOW is a Monday)
      h.send({ type: 'ad-changed', now: NOW, ad: makeAd({ seq: 2, availability: { timeZone: 'UTC', windows: [{ day: 7, start: 0, end: 1440 }] } }) })
      const response = find(h.award(job, bid).effects, 'respond-award')
      assert.equal(response?.decision, 'decline')
      assert.match(response?.reason ?? '', /^CALENDAR: /)
    })

    it('declines an award once the node no longer sells', () => {
      const h = new Harness(defaultMarketParams, false)
      const job = makeJob()
      const bid = h.bidOn(job)
      h.send({ type: 'ad-changed', now: NOW, ad: undefined })
      assert.equal(find(h.award(job, bid).effects, 'respond-award')?.reason, 'this node no longer sells')
    })
  })

  describe('preemption and start', () => {
    const bronze = makeJob({ n: 1, gpus: 4, tier: 'bronze', maxPrice: 2_500_000, runtimeSec: 3600 })
    const gold = makeJob({ n: 2, gpus: 4, tier: 'gold', maxPrice: 9_000_000, runtimeSec: 600, startDelaySec: 60 })

    it('preempts a running bronze job with the notice, starts the gold job when it has given its GPUs up, and does not bid on its next round', () => {
      const h = new Harness(defaultMarketParams, false)
      const b = h.running(bronze)
      const g = h.bidOn(gold)
      const awarded = h.award(gold, g).effects
      const notice = find(awarded, 'notify-preemption')
      assert.equal(notice?.bid, b.bid)
      assert.equal(notice?.noticeMs, defaultMarketParams.preemptNoticeMs)
      assert.equal(notice?.message, `preempted: ${defaultMarketParams.preemptNoticeMs} ms notice`)
      assert.equal(notice?.at, NOW)
      assert.equal(find(awarded, 'respond-award')?.decision, 'accept')
      assert.ok(h.agent.hasPreempted(bronze.cid.toString()))
      // inputs are in, but the bronze job still holds the GPUs: no start while the preemption is pending
      assert.equal(has(h.send({ type: 'inputs-fetched', now: h.now, bid: g.bid }), 'start-job'), false)
      assert.equal(has(h.tick(NOW + defaultMarketParams.preemptNoticeMs - 1), 'start-job'), false)
      const end = h.tick(NOW + defaultMarketParams.preemptNoticeMs)
      assert.ok(has(end, 'stop-work', (e) => e.bid === b.bid && e.reason === 'preempted'))
      assert.ok(has(end, 'offer-ended', (e) => e.bid === b.bid && e.status === 'preempted'))
      const start = find(end, 'start-job', (e) => e.bid === g.bid)
      assert.deepEqual(start?.gpus, ['GPU-0', 'GPU-1', 'GPU-2', 'GPU-3'])
      // the preempted job's next round: no bid
      const again = h.send({ type: 'job-seen', now: h.now, job: bronze, round: { round: 2, attempt: 2, excluded: [], opensAt: h.now } })
      assert.equal(has(again, 'send-bid'), false)
      assert.ok(notes(again).includes('not bidding on a job this node preempted'))
    })

    it('with a notice of 0 stops the bronze job at once', () => {
      const h = new Harness(createMarketParams({ preemptNoticeMs: 0 }), false)
      const b = h.running(bronze)
      const g = h.bidOn(gold)
      const awarded = h.award(gold, g).effects
      assert.equal(find(awarded, 'notify-preemption')?.noticeMs, 0)
      const all = [...awarded, ...h.tick(h.now)]
      assert.ok(has(all, 'offer-ended', (e) => e.bid === b.bid && e.status === 'preempted'))
      assert.ok(has(h.send({ type: 'inputs-fetched', now: h.now, bid: g.bid }), 'start-job'))
    })

    it('starts an accepted job whose start has come even after the node stopped selling (it is committed)', () => {
      const h = new Harness(defaultMarketParams, false)
      const job = makeJob()
      const bid = h.bidOn(job)
      h.award(job, bid)
      h.send({ type: 'ad-changed', now: h.now, ad: undefined })
      assert.ok(has(h.send({ type: 'inputs-fetched', now: h.now, bid: bid.bid }), 'start-job'))
    })

    it('starts a job early when the GPUs it waits for come free', () => {
      const h = new Harness(defaultMarketParams, false)
      const first = makeJob({ n: 3, gpus: 4, runtimeSec: 600 })
      const second = makeJob({ n: 4, gpus: 4, runtimeSec: 600, startDelaySec: 900 })
      const a = h.running(first)
      const b = h.accepted(second)
      // committed to start when the first job's allocation ends at the latest
      assert.equal(has(b.effects, 'start-job'), false)
      assert.equal(has(h.tick(NOW + 10_000), 'start-job'), false)
      // the first job finishes early and is paid: its GPUs come free
      h.now = NOW + 60_000
      h.send({ type: 'finished', now: h.now, bid: a.bid, exitCode: 0, gpuSeconds: 240 })
      const owed = h.agent.offer(a.bid)?.state.finished?.owed ?? 0
      const paid = h.payment(first, a.bid, a.award, { cumulative: owed, interval: 1, gpuSeconds: 240 })
      assert.ok(has(paid, 'offer-ended', (e) => e.bid === a.bid && e.status === 'settled'))
      assert.ok(has(paid, 'start-job', (e) => e.bid === b.bid))
      assert.equal(h.agent.offer(b.bid)?.allocation?.startedAt, NOW + 60_000)
    })
  })

  describe('exec frames', () => {
    it('drops payments with a stale seq, for another payee, another award, or not from the requester; keeps a valid one', () => {
      const h = new Harness(defaultMarketParams, false)
      const job = makeJob()
      const r = h.running(job)
      const ok = h.payment(job, r.bid, r.award, { seq: 1, cumulative: 10 })
      assert.ok(has(ok, 'frame-accepted', (e) => e.kind === 'payment' && e.ref === 'last-payment'))
      assert.deepEqual(h.agent.offer(r.bid)?.payment, { seq: 1, cumulative: 10, gpuSeconds: 1 })
      const drop = (effects: ProviderAgentEffect[]): string | undefined => find(effects, 'drop-frame')?.reason
      assert.equal(drop(h.payment(job, r.bid, r.award, { seq: 1, cumulative: 20 })), 'STALE_SEQ')
      assert.equal(drop(h.payment(job, r.bid, r.award, { seq: 0, cumulative: 20 })), 'STALE_SEQ')
      assert.equal(drop(h.payment(job, r.bid, r.award, { seq: 2, payee: 'peer-other' })), 'WRONG_PAYEE')
      assert.equal(drop(h.payment(job, r.bid, r.award, { seq: 2, job: makeJob({ n: 7 }).cid })), 'WRONG_AWARD')
      assert.equal(drop(h.payment(job, r.bid, r.award, { seq: 2 }, 'peer-mallory')), 'NOT_REQUESTER')
      assert.deepEqual(h.agent.offer(r.bid)?.payment, { seq: 1, cumulative: 10, gpuSeconds: 1 })
      assert.ok(has(h.payment(job, r.bid, r.award, { seq: 2, cumulative: 20 }), 'frame-accepted'))
    })

    it('stops a running job on the requester\'s cancel, with the reason in its final status', () => {
      const h = new Harness(defaultMarketParams, false)
      const job = makeJob()
      const r = h.running(job)
      const cancel = (signer: string): ProviderAgentEffect[] => h.send({
        type: 'cancel', now: h.now, bid: r.bid, signer, payload: { v: 1, issuedAt: h.now, expiresAt: h.now + H, job: job.cid, award: cidFromString(r.award), reason: 'changed my mind' }
      })
      assert.equal(find(cancel('peer-mallory'), 'drop-frame')?.reason, 'NOT_REQUESTER')
      const effects = cancel(REQUESTER)
      assert.ok(has(effects, 'stop-work', (e) => e.reason === 'cancelled'))
      assert.equal(find(effects, 'heartbeat', (e) => e.state === 'cancelled')?.message, 'cancelled by the requester: changed my mind')
      assert.ok(has(effects, 'offer-ended', (e) => e.status === 'cancelled' && e.awarded))
      // after the end a payment for the time run still counts; a cancel does not
      assert.equal(cancel(REQUESTER).filter((e) => e.type !== 'note').length, 0)
      assert.ok(has(h.payment(job, r.bid, r.award, { seq: 1, cumulative: 5 }), 'frame-accepted'))
    })

    it('waits one lease for a requester gone mid-run, then records the work unpaid and forgets the offer', () => {
      const h = new Harness(defaultMarketParams, false)
      const job = makeJob()
      const r = h.running(job)
      const gone = h.send({ type: 'requester-gone', now: h.now, bid: r.bid })
      assert.ok(!has(gone, 'stop-work'))
      assert.equal(h.agent.offer(r.bid)?.state.status, 'running')
      assert.ok(!has(h.tick(h.now + defaultMarketParams.leaseMs - 1), 'stop-work'))
      const effects = h.tick(h.now + 1)
      assert.ok(has(effects, 'stop-work', (e) => e.reason === 'requester-gone'))
      assert.ok(has(effects, 'record-failure', (e) => e.reason === 'nonpayment' && e.subject === REQUESTER))
      assert.ok(has(effects, 'offer-ended', (e) => e.status === 'stopped-unpaid'))
      // still readable while the shell carries out this event's effects (its ledger entry), gone at the next
      assert.equal(h.agent.offer(r.bid)?.state.status, 'stopped-unpaid')
      h.tick(h.now)
      assert.equal(h.agent.offer(r.bid), undefined)
    })
  })

  describe('ticks', () => {
    it('sends heartbeats every lease / heartbeatsPerLease while accepted', () => {
      const h = new Harness(defaultMarketParams, false)
      const job = makeJob()
      const a = h.accepted(job)
      const every = Math.floor(30_000 / defaultMarketParams.heartbeatsPerLease)
      assert.equal(h.wake, NOW + every)
      assert.equal(has(h.tick(NOW + every - 1), 'heartbeat'), false)
      assert.ok(has(h.tick(NOW + every), 'heartbeat', (e) => e.bid === a.bid))
    })

    it('takes heartbeats per lease from the params', () => {
      const h = new Harness(createMarketParams({ heartbeatsPerLease: 5 }), false)
      const a = h.accepted(makeJob())
      assert.equal(h.wake, NOW + 6_000)
      assert.ok(has(h.tick(NOW + 6_000), 'heartbeat', (e) => e.bid === a.bid))
    })

    it('a tick with nothing due does nothing', () => {
      const h = new Harness(defaultMarketParams, false)
      assert.deepEqual(h.tick(NOW + 1), [])
    })
  })

  describe('SeenBids', () => {
    it('keeps at most maxPerJob providers per job and maxJobs jobs (the oldest go), and forgets expired bids', () => {
      const seen = new SeenBids({ maxJobs: 2, maxPerJob: 2 })
      const [a, b, c] = [makeJob({ n: 11 }), makeJob({ n: 12 }), makeJob({ n: 13 })] as [AgentJob, AgentJob, AgentJob]
      for (let i = 0; i < 3; i++) seen.add(otherBid(a, i, 1), NOW)
      assert.deepEqual(seen.bids(a.cid.toString(), undefined, NOW).map((x) => x.signer), ['peer-0', 'peer-1'])
      // a provider already held may replace its bid with a newer one
      seen.add(otherBid(a, 1, 2, { issuedAt: NOW + 1 }), NOW)
      assert.equal(seen.bids(a.cid.toString(), undefined, NOW).find((x) => x.signer === 'peer-1')?.payload.price, 2)
      seen.add(otherBid(b, 0, 1), NOW)
      seen.add(otherBid(c, 0, 1), NOW)
      assert.equal(seen.size, 2)
      assert.deepEqual(seen.bids(a.cid.toString(), undefined, NOW), [])
      assert.equal(seen.bids(b.cid.toString(), undefined, NOW + M - 1).length, 1)
      assert.deepEqual(seen.bids(b.cid.toString(), undefined, NOW + M), [])
      // a re-opened round counts only the bids issued since it opened
      assert.deepEqual(seen.bids(c.cid.toString(), NOW + 1, NOW), [])
    })
  })
})
