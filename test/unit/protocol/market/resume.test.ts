/**
 * Resuming an award's exec stream (protocol/README.md §7.7 "Resuming"): the requester's lifecycle
 * read back after a restart (resumeRequesterJob), a stream that dropped while the job ran, and the
 * requester agent that carries both out. The provider's side (requester-gone, requester-back) is in
 * lifecycle-survivors.test.ts and provider-agent.test.ts.
 */
import assert from 'node:assert/strict'
import {
  RESTART_SEQ_GAP, chargeFor, nextRequesterDeadline, reduceProvider, reduceRequester, restartProviderJob, resumeRequesterJob, startProviderJob, startRequesterJob,
  type ProviderJob, type RequesterEffect, type RequesterJob
} from '../../../../protocol/market/lifecycle.js'
import { RequesterAgent } from '../../../../protocol/market/requester-agent.js'
import { createMarketParams } from '../../../../protocol/market/params.js'
import { INIT, LEASE_MS, P1, PRICE, at, hb, payment as paymentP, playP, playR, runningProvider as runningProviderAt, runningRequester, tick } from '../../../helpers/lifecycle-builders.js'
import { Driver, LEASE, NOW, WINDOW, jobPayload, peer } from '../../../helpers/requester-agent-driver.js'
import { Harness, REQUESTER, has, makeJob } from '../../../helpers/provider-agent-harness.js'
import { defaultMarketParams, type ProviderAgentEffect } from '../../../../protocol/index.js'
import { CID } from '../../../../crypto/index.js'

const cidOf = (s: string): CID => CID.parse(s)

const types = (effects: readonly RequesterEffect[]): string[] => effects.filter((e) => e.type !== 'wake').map((e) => e.type)
type StreamFailed = Extract<Parameters<typeof reduceRequester>[1], { type: 'stream-failed' }>
const dropped = (ms: number, resumable = true): StreamFailed =>
  ({ type: 'stream-failed', now: at(ms), provider: P1, fault: 'remote', detail: 'the peer reset the exec stream', resumable })

/** A running job saved at +5 s, read back at +`ms`. */
function restoredAt (ms: number): { before: RequesterJob, state: RequesterJob, effects: RequesterEffect[] } {
  const before = playR(runningRequester(), [tick(5_000)]).state
  const t = resumeRequesterJob(before, at(ms))
  assert.ok(t !== undefined)
  return { before, ...t }
}

describe('resuming an award (protocol/README.md §7.7 "Resuming")', () => {
  describe('the requester, read back after a restart', () => {
    it('a running award is resumed: the stream re-opened, one lease from the restart to be heard', () => {
      const { state, effects } = restoredAt(10_000)
      assert.equal(state.status, 'running')
      assert.equal(state.award?.resumeBy, at(10_000) + LEASE_MS)
      assert.deepEqual(types(effects), ['reconnect'])
      // the billing waits while the stream is down: the lease, here the restart's window, is next
      assert.deepEqual(nextRequesterDeadline(state), { kind: 'lease', at: at(10_000) + LEASE_MS })
    })

    it('heard before the window ends: the award goes on, the window and the reconnect mark are cleared', () => {
      const { state } = restoredAt(10_000)
      const t = reduceRequester(state, hb(10_000 + LEASE_MS - 1, 7))
      assert.equal(t.state.status, 'running')
      assert.equal(t.state.award?.resumeBy, undefined)
      assert.equal(t.state.award?.reconnecting, undefined)
      assert.equal(t.state.award?.lastSeq, 7)
      assert.deepEqual(types(t.effects).filter((e) => e !== 'pay'), [])
    })

    it('not heard by the end of the window: the award is called off and re-auctioned, nobody blamed', () => {
      const { state } = restoredAt(100_000)
      const edge = at(100_000) + LEASE_MS
      // nothing is paid while nobody answers
      const quiet = reduceRequester(state, { type: 'tick', now: edge - 1 })
      assert.equal(quiet.state.status, 'running')
      assert.deepEqual(types(quiet.effects), [])
      const t = reduceRequester(quiet.state, { type: 'tick', now: edge })
      assert.equal(t.state.status, 'bidding')
      assert.deepEqual(types(t.effects), ['cancel', 're-auction'])
      assert.deepEqual(t.effects.find((e) => e.type === 're-auction'), { type: 're-auction', attempt: 2, exclude: [], reason: 'restarted' })
      assert.equal(t.state.failures, 0)
      assert.deepEqual(t.state.excluded, [])
    })

    it('no payment goes out until the provider is heard; then the boundary passed while the node was down is paid at once', () => {
      const { state, effects } = restoredAt(70_000)
      assert.deepEqual(types(effects), ['reconnect'])
      assert.equal(state.award?.paidIntervals, 0)
      const heard = reduceRequester(state, hb(71_000, 9))
      const pay = heard.effects.find((e) => e.type === 'pay')
      assert.deepEqual(pay, { type: 'pay', payee: P1, attempt: 1, cumulative: chargeFor(PRICE, 2, 60_000), interval: 1, gpuSeconds: 120, final: false })
      assert.equal(heard.state.award?.paidIntervals, 1)
    })

    it('an award not answered yet is resumed too: a status on the new stream says it was accepted', () => {
      const awarded = playR(startRequesterJob(INIT, at(0)).state, [
        { type: 'bid-received', now: at(100), bid: 'b1', provider: P1, price: PRICE, effectivePrice: PRICE },
        tick(1000),
        { type: 'bidding-closed', now: at(1000), winner: { bid: 'b1', provider: P1, price: PRICE } }
      ]).state
      assert.equal(awarded.status, 'awarded')
      const resumed = resumeRequesterJob(awarded, at(5_000))
      assert.ok(resumed !== undefined)
      assert.deepEqual(nextRequesterDeadline(resumed.state), { kind: 'no-show', at: at(5_000) + LEASE_MS })
      const t = reduceRequester(resumed.state, { type: 'heartbeat', now: at(6_000), provider: P1, seq: 3, state: 'running', gpuSeconds: 0 })
      assert.equal(t.state.status, 'running')
      assert.equal(t.state.award?.acceptedAt, at(6_000))
      assert.equal(t.state.award?.runStartedAt, at(6_000))
      // without a restart a status before the answer is still ignored
      assert.equal(reduceRequester(awarded, { type: 'heartbeat', now: at(1_100), provider: P1, seq: 1, state: 'running', gpuSeconds: 0 }).state, awarded)
      // and a restarted award nobody answers is called off at the window's end, nobody blamed
      const late = reduceRequester(resumed.state, { type: 'tick', now: at(5_000) + LEASE_MS })
      assert.deepEqual([late.state.status, late.state.failures, types(late.effects)], ['bidding', 0, ['cancel', 're-auction']])
    })

    it('a receipt being checked has its outputs fetched again; an open round is opened anew', () => {
      const verifying = playR(runningRequester(), [{ type: 'receipt-received', now: at(30_000), provider: P1, exitCode: 0, gpuSeconds: 56, outputsValid: true }]).state
      assert.equal(verifying.status, 'verifying')
      assert.deepEqual(types(resumeRequesterJob(verifying, at(40_000))?.effects ?? []), ['fetch-outputs'])
      const bidding = startRequesterJob(INIT, at(0)).state
      const reopened = resumeRequesterJob(bidding, at(500))
      assert.equal(reopened?.state.auction.round, 2)
      assert.deepEqual(reopened?.effects.find((e) => e.type === 're-auction'), { type: 're-auction', attempt: 1, exclude: [], reason: 'restarted' })
      // past the job's expiry there is nothing to open
      assert.equal(resumeRequesterJob(bidding, INIT.expiresAt), undefined)
    })

    it('a step that lasts no time, or a final status, is not resumed', () => {
      const settled: RequesterJob = { ...runningRequester(), status: 'settled' }
      const completed: RequesterJob = { ...runningRequester(), status: 'completed' }
      assert.equal(resumeRequesterJob(settled, at(10_000)), undefined)
      assert.equal(resumeRequesterJob(completed, at(10_000)), undefined)
      assert.equal(resumeRequesterJob(runningRequester(), Number.NaN), undefined)
    })
  })

  describe('a stream that drops while the job runs', () => {
    it('is re-opened, and the lease from the last status decides (no window is added)', () => {
      const running = runningRequester()
      const t = reduceRequester(running, dropped(5_000))
      assert.equal(t.state.status, 'running')
      assert.equal(t.state.award?.reconnecting, true)
      assert.deepEqual(types(t.effects), ['reconnect'])
      assert.deepEqual(nextRequesterDeadline(t.state), { kind: 'lease', at: at(2_000) + LEASE_MS })
      // the lease after the last heartbeat (+2 s) still ends it, blaming the provider
      const lost = reduceRequester(t.state, tick(2_000 + LEASE_MS))
      assert.equal(lost.state.status, 'bidding')
      assert.ok(lost.effects.some((e) => e.type === 'record-failure' && e.reason === 'no-heartbeat'))
      // a status on the re-opened stream clears the mark
      assert.equal(reduceRequester(t.state, hb(6_000, 2)).state.award?.reconnecting, undefined)
    })

    it('a broken stream, or a drop before the award was answered, still fails the attempt at once', () => {
      const broken = reduceRequester(runningRequester(), dropped(5_000, false))
      assert.equal(broken.state.status, 'bidding')
      const awarded = playR(startRequesterJob(INIT, at(0)).state, [
        { type: 'bid-received', now: at(100), bid: 'b1', provider: P1, price: PRICE, effectivePrice: PRICE },
        tick(1000),
        { type: 'bidding-closed', now: at(1000), winner: { bid: 'b1', provider: P1, price: PRICE } }
      ]).state
      assert.equal(reduceRequester(awarded, dropped(1_100)).state.status, 'bidding')
      const local = reduceRequester(runningRequester(), { ...dropped(5_000), fault: 'local' })
      assert.equal(local.state.status, 'failed')
    })
  })

  describe('the requester agent', () => {
    it('resumes a running job read back: a note, the reconnect for its award, its view kept', () => {
      const d = new Driver()
      d.submit()
      d.bid(1, 1_000_000)
      d.runTo(NOW + WINDOW)
      d.send({ type: 'award-response', now: d.now, job: d.id, attempt: 1, provider: peer(1), decision: 'accept' })
      d.send({ type: 'job-status', now: d.now, job: d.id, attempt: 1, provider: peer(1), seq: 1, state: 'running', gpuSeconds: 0 })
      const saved = d.agent.view(d.id)
      assert.equal(saved?.state.status, 'running')
      const agent = new RequesterAgent(peer(1000), createMarketParams({ leaseMs: LEASE }))
      const out = agent.handle({ type: 'job-restored', now: d.now + 1_000, cid: d.cid, request: d.request, state: saved?.state as RequesterJob, ...(saved?.award !== undefined ? { award: saved.award } : {}), bids: saved?.bids ?? [] })
      assert.deepEqual(out.filter((e) => e.type === 'note').map((e) => e.type === 'note' && e.kind), ['restarted'])
      assert.deepEqual(out.filter((e) => e.type === 'reconnect'), [{ type: 'reconnect', job: d.id, attempt: 1, provider: peer(1) }])
      assert.equal(agent.awardInFlight(d.id, 1, peer(1)), true)
      assert.equal(agent.awardInFlight(d.id, 2, peer(1)), false)
      assert.equal(agent.awardInFlight(d.id, 1, peer(2)), false)
      assert.equal(agent.view(d.id)?.award?.cid, saved?.award?.cid)
      assert.equal(agent.view(d.id)?.bids.length, saved?.bids.length)
      // the provider is heard on the new stream: the job goes on
      agent.handle({ type: 'job-status', now: d.now + 2_000, job: d.id, attempt: 1, provider: peer(1), seq: 5, state: 'running', gpuSeconds: 0 })
      assert.equal(agent.view(d.id)?.state.award?.resumeBy, undefined)
    })

    it('a drop notes once; the drops while re-opening are no news', () => {
      const d = new Driver()
      d.submit()
      d.bid(1, 1_000_000)
      d.runTo(NOW + WINDOW)
      d.send({ type: 'award-response', now: d.now, job: d.id, attempt: 1, provider: peer(1), decision: 'accept' })
      const drop = (): string[] => d.send({ type: 'stream-failed', now: d.now, job: d.id, attempt: 1, provider: peer(1), fault: 'remote', detail: 'reset', resumable: true })
        .flatMap((e) => e.type === 'note' ? [e.kind] : e.type === 'reconnect' ? ['reconnect'] : [])
      assert.deepEqual(drop(), ['stream-failed', 'reconnect'])
      assert.deepEqual(drop(), ['reconnect'])
    })

    it('a replicated job read back in flight cannot resume: failed as interrupted', () => {
      const d = new Driver(jobPayload({ verification: { mode: 'replicate', k: 2 } }))
      d.submit()
      const agent = new RequesterAgent(peer(1000))
      const out = agent.handle({ type: 'job-restored', now: NOW, cid: d.cid, request: d.request, state: d.state?.state as RequesterJob })
      assert.equal(agent.view(d.id)?.state.status, 'failed')
      assert.match(agent.view(d.id)?.state.reason ?? '', /interrupted/)
      assert.ok(out.some((e) => e.type === 'finished'))
    })
  })
})

describe('a provider read back after its restart (restartProviderJob)', () => {
  const runningP = (): ProviderJob => runningProviderAt()

  it('a running job goes back to accepted, keeps its anchor and payments, waits one lease for the requester, seq jumps', () => {
    const s = runningP()
    const t = restartProviderJob(s, at(20_000))
    assert.ok(t !== undefined)
    assert.deepEqual([t.state.status, t.state.inputsReady, t.state.restarted, t.state.requesterGoneAt, t.state.startedAt, t.state.statusSeq],
      ['accepted', false, true, at(20_000), s.startedAt, s.statusSeq + RESTART_SEQ_GAP])
    assert.deepEqual(t.effects.filter((e) => e.type !== 'wake'), [])
    // not back within the lease: cancelled, nothing claimed (no work was done since)
    const quiet = reduceProvider(t.state, tick(20_000 + LEASE_MS - 1))
    assert.equal(quiet.state.status, 'accepted')
    const lost = reduceProvider(quiet.state, tick(20_000 + LEASE_MS))
    assert.equal(lost.state.status, 'cancelled')
    assert.ok(!lost.effects.some((e) => e.type === 'record-failure'))
  })

  it('the requester back: a fetching-inputs status and the fetch at once; the run keeps the anchor, the receipt dates the new run', () => {
    const s = runningP()
    const restored = restartProviderJob(s, at(20_000))?.state as ProviderJob
    const back = reduceProvider(restored, { type: 'requester-back', now: at(21_000) })
    assert.deepEqual(back.effects.filter((e) => e.type !== 'wake').map((e) => e.type === 'heartbeat' ? `heartbeat ${e.state} ${e.seq}` : e.type),
      [`heartbeat fetching-inputs ${restored.statusSeq + 1}`, 'fetch-inputs'])
    assert.equal(back.state.restarted, undefined)
    const started = playP(back.state, [{ type: 'inputs-fetched', now: at(21_500) }, { type: 'started', now: at(22_000) }]).state
    assert.deepEqual([started.status, started.startedAt, started.runFrom], ['running', s.startedAt, at(22_000)])
    const finished = reduceProvider(started, { type: 'finished', now: at(30_000), exitCode: 0, gpuSeconds: 16 })
    const receipt = finished.effects.find((e) => e.type === 'send-receipt')
    assert.deepEqual(receipt, { type: 'send-receipt', exitCode: 0, gpuSeconds: 16, startedAt: at(22_000), endedAt: at(30_000) })
  })

  it('a completed job waits for its final payment; an offer not yet awarded or already final is not taken up', () => {
    const done = reduceProvider(runningP(), { type: 'finished', now: at(10_000), exitCode: 0, gpuSeconds: 16 }).state
    const t = restartProviderJob(done, at(12_000))
    assert.equal(t?.state.status, 'completed')
    assert.equal(t?.state.requesterGoneAt, at(12_000))
    assert.equal(reduceProvider(t?.state as ProviderJob, paymentP(13_000, 16_000, 1)).state.status, 'settled')
    const offered = startProviderJob({ job: 'bafyreijob', requester: 'req-peer', bid: 'b1', gpus: 2, offerExpiresAt: at(60_000) }, at(0)).state
    assert.equal(restartProviderJob(offered, at(10)), undefined)
    const settled = reduceProvider(t?.state as ProviderJob, paymentP(13_000, 16_000, 1)).state
    assert.equal(restartProviderJob(settled, at(14_000)), undefined)
    assert.equal(restartProviderJob(runningP(), Number.NaN), undefined)
  })
})

describe('the provider agent: an offer read back after a restart, and a requester resuming', () => {
  /** A job bid on, awarded and started: the harness, the job, its bid and award. */
  function started (): { h: Harness, job: ReturnType<typeof makeJob>, bid: ReturnType<Harness['bidOn']>, award: ReturnType<Harness['award']> } {
    const h = new Harness(defaultMarketParams, false)
    const job = makeJob()
    const bid = h.bidOn(job)
    const award = h.award(job, bid)
    h.send({ type: 'inputs-fetched', now: h.now, bid: bid.bid })
    h.send({ type: 'started', now: h.now, bid: bid.bid })
    return { h, job, bid, award }
  }

  it('is live again on its GPUs, waits for the requester; the award on a new stream resumes it and the run starts anew', () => {
    const { h, job, bid, award } = started()
    const saved = h.agent.offer(bid.bid)?.state
    assert.equal(saved?.status, 'running')

    const fresh = new Harness(defaultMarketParams, false)
    fresh.now = h.now + 5_000
    const restored = fresh.send({ type: 'offer-restored', now: fresh.now, job, round: 1, bid: bid.bid, gpus: bid.payload.gpus, price: bid.payload.price, award: { id: award.id, price: award.payload.price }, state: saved as ProviderJob })
    assert.ok(has(restored, 'offer-updated'))
    assert.equal(fresh.agent.offer(bid.bid)?.state.status, 'accepted')
    assert.deepEqual(fresh.agent.offer(bid.bid)?.gpus, bid.payload.gpus)
    // told twice: the first stands
    assert.deepEqual(fresh.send({ type: 'offer-restored', now: fresh.now, job, round: 1, bid: bid.bid, gpus: [], price: 1, award: { id: award.id, price: 1 }, state: saved as ProviderJob }).filter((e) => e.type === 'offer-updated'), [])

    // only the requester may resume, on its own connection
    const stranger = fresh.send({ type: 'award', now: fresh.now, award: { id: award.id, signer: REQUESTER, payload: award.payload }, from: 'peer-other' })
    assert.ok(has(stranger, 'refuse-award'))
    const resumed = fresh.send({ type: 'award', now: fresh.now, award: { id: award.id, signer: REQUESTER, payload: award.payload }, from: REQUESTER })
    assert.ok(has(resumed, 'resume-stream', (e) => e.bid === bid.bid && e.award === award.id))
    assert.ok(has(resumed, 'heartbeat', (e) => e.state === 'fetching-inputs'))
    assert.ok(has(resumed, 'fetch-inputs'))
    const start = fresh.send({ type: 'inputs-fetched', now: fresh.now, bid: bid.bid })
    assert.ok(has(start, 'start-job', (e) => e.gpus.join() === bid.payload.gpus.join()))
  })

  it('a requester that resumes a running job (no restart here) gets its status at once; a final job is not resumed', () => {
    const { h, job, bid, award } = started()
    h.send({ type: 'requester-gone', now: h.now, bid: bid.bid })
    const again = (): ProviderAgentEffect[] => h.send({ type: 'award', now: h.now, award: { id: award.id, signer: REQUESTER, payload: award.payload }, from: REQUESTER })
    const back = again()
    assert.ok(has(back, 'resume-stream'))
    assert.ok(has(back, 'heartbeat', (e) => e.state === 'running'))
    assert.ok(!has(back, 'fetch-inputs'))
    assert.equal(h.agent.offer(bid.bid)?.state.requesterGoneAt, undefined)
    // cancelled: final, so the same award is refused
    h.send({ type: 'cancel', now: h.now, bid: bid.bid, signer: REQUESTER, payload: { v: 1, issuedAt: h.now, expiresAt: h.now + 60_000, job: job.cid, award: cidOf(award.id), reason: 'no longer needed' } })
    assert.equal(h.agent.offer(bid.bid)?.state.status, 'cancelled')
    assert.ok(has(again(), 'refuse-award'))
  })
})
