/**
 * The requester agent at its edges (mutation survivors of protocol/market/requester-agent.ts): which
 * events it ignores, what a bid screened at the close means, how a round's store forgets replaced
 * bids, which attempt and fields each ledger and failure effect carries, and when reputation moves.
 */
import assert from 'node:assert/strict'
import { RequesterAgent, createMarketParams, jobIdOf } from '../../../../protocol/index.js'
import { Driver, LEASE, NOW, WINDOW, bidFor, jobPayload, peer } from '../../../helpers/requester-agent-driver.js'

/** A driver whose job has been awarded to provider `winner` (the only bidder) at the close. */
function awarded (winner = 1, price = 2_000_000): Driver {
  const d = new Driver()
  d.submit()
  d.bid(winner, price)
  d.runTo(NOW + WINDOW)
  assert.equal(d.winner(), peer(winner))
  return d
}

describe('the requester agent at its edges', () => {
  describe('jobs and queries', () => {
    it('a second submission of the same job is ignored: one publish, one job', () => {
      const d = new Driver()
      d.submit()
      d.submit()
      assert.equal(d.of('publish-job').length, 1)
      assert.deepEqual(d.of('ignored').map((e) => e.reason), ['job already submitted'])
      assert.deepEqual(d.agent.jobIds(), [d.id])
      assert.equal(d.agent.has(d.id), true)
      assert.equal(d.agent.has('nope'), false)
      assert.equal(d.agent.view('nope'), undefined)
    })

    it('events for an unknown job are ignored with a reason, never thrown', () => {
      const d = new Driver()
      for (const e of [
        d.agent.handle({ type: 'cancel', now: NOW, job: 'nope' }),
        d.agent.handle({ type: 'tick', now: NOW, job: 'nope' }),
        d.agent.handle({ type: 'award-response', now: NOW, job: 'nope', attempt: 1, provider: peer(1), decision: 'accept' })
      ]) assert.deepEqual(e, [{ type: 'ignored', job: 'nope', reason: 'unknown job' }])
      // a bid for a job this node does not hold: nothing at all
      assert.deepEqual(d.agent.handle({ type: 'bid-seen', now: NOW, bid: bidFor(d.cid, 1, 1, NOW), model: 'm', region: 'r' }), [])
    })

    it('a tick without a job steps every job: both close at their window', () => {
      const agent = new RequesterAgent(peer(1000), createMarketParams({ leaseMs: LEASE }))
      const a = jobPayload()
      const b = jobPayload({ nonce: new Uint8Array(16).fill(5) })
      for (const r of [a, b]) agent.handle({ type: 'job-submitted', now: NOW, cid: jobIdOf(r), request: r })
      assert.equal(agent.handle({ type: 'tick', now: NOW + WINDOW - 1 }).filter((e) => e.type === 'explain').length, 0)
      const explained = agent.handle({ type: 'tick', now: NOW + WINDOW }).filter((e) => e.type === 'explain').map((e) => e.job).sort()
      assert.deepEqual(explained, [jobIdOf(a).toString(), jobIdOf(b).toString()].sort())
    })

    it('heldBid returns the round\'s held bid by CID, and nothing for a refused one', () => {
      const d = new Driver()
      d.submit()
      const ok = bidFor(d.cid, 1, 2_000_000, NOW)
      const over = bidFor(d.cid, 2, 3_000_001, NOW)
      for (const bid of [ok, over]) d.send({ type: 'bid-seen', now: NOW, bid, model: 'nvidia-h100-80gb-hbm3', region: 'eu-west' })
      assert.equal(d.agent.heldBid(d.id, ok.cid.toString()), ok)
      assert.equal(d.agent.heldBid(d.id, over.cid.toString()), undefined)
      assert.equal(d.agent.heldBid('nope', ok.cid.toString()), undefined)
    })
  })

  describe('bids in a round', () => {
    it('a bid is screened for expiry at the close, not at arrival: expiring 1 ms before the close is refused, at the close plus 1 ms held', () => {
      const d = new Driver()
      d.submit()
      d.bid(1, 2_000_000, { expiresAt: NOW + WINDOW - 1 })
      d.bid(2, 2_000_000, { expiresAt: NOW + WINDOW + 1 })
      assert.deepEqual(d.state?.bids.map((b) => b.provider), [peer(2)])
      assert.ok(d.of('ignored').some((e) => e.reason.includes('refused on arrival')))
    })

    it('the same bid seen twice is held once (one view, one note)', () => {
      const d = new Driver()
      d.submit()
      const bid = bidFor(d.cid, 1, 2_000_000, NOW)
      const first = d.send({ type: 'bid-seen', now: NOW, bid, model: 'm', region: 'r' })
      const again = d.send({ type: 'bid-seen', now: NOW, bid, model: 'm', region: 'r' })
      assert.equal(first.filter((e) => e.type === 'note').length, 1)
      assert.deepEqual(again, [])
      assert.equal(d.state?.bids.length, 1)
    })

    it('a peer\'s better bid replaces its earlier one in the views and the held bids, and the award uses it', () => {
      const d = new Driver()
      d.submit()
      const worse = bidFor(d.cid, 1, 2_500_000, NOW)
      const better = bidFor(d.cid, 1, 2_000_000, NOW, { gpus: ['GPU-1b'] })
      for (const bid of [worse, better]) d.send({ type: 'bid-seen', now: NOW, bid, model: 'm', region: 'r' })
      assert.deepEqual(d.state?.bids.map((b) => [b.cid, b.price]), [[better.cid.toString(), 2_000_000]])
      assert.equal(d.agent.heldBid(d.id, worse.cid.toString()), undefined)
      d.runTo(NOW + WINDOW)
      assert.equal(d.of('send-award')[0]?.fields.bid.toString(), better.cid.toString())
    })

    it('bids are refused once the round closed and while awarded', () => {
      const d = awarded()
      const late = d.bid(2, 1_000_000)
      assert.deepEqual(late, [{ type: 'ignored', job: d.id, reason: 'not taking bids while awarded' }])
      assert.equal(d.state?.bids.length, 1)
    })

    it('after the close each bid view shows its effective price, the cheaper one lower', () => {
      const d = new Driver()
      d.submit()
      d.bid(1, 2_000_000)
      d.bid(2, 1_500_000)
      d.runTo(NOW + WINDOW)
      const views = d.state?.bids ?? []
      assert.equal(views.length, 2)
      for (const v of views) {
        assert.equal(typeof v.effectivePrice, 'number')
        assert.ok((v.effectivePrice as number) >= v.price, 'an unknown provider is not priced below its ask')
        assert.equal(v.rejected, undefined)
      }
      const [cheap, dear] = [...views].sort((x, y) => x.price - y.price)
      assert.ok((cheap?.effectivePrice as number) < (dear?.effectivePrice as number))
      assert.equal(d.of('send-award')[0]?.provider, peer(2))
    })
  })

  describe('the award and the exec stream', () => {
    it('award-sealed for another attempt does not become the job\'s award', () => {
      const d = new Driver()
      d.submit()
      d.bid(1, 2_000_000)
      // run the close without the driver's automatic award-sealed
      const out = d.agent.handle({ type: 'tick', now: NOW + WINDOW, job: d.id })
      const award = out.find((e) => e.type === 'send-award')
      assert.ok(award !== undefined && award.type === 'send-award')
      d.agent.handle({ type: 'award-sealed', now: NOW + WINDOW, job: d.id, attempt: award.attempt + 1, award: 'award-x', paymentRule: 'first-price' })
      assert.equal(d.agent.view(d.id)?.award, undefined)
      d.agent.handle({ type: 'award-sealed', now: NOW + WINDOW, job: d.id, attempt: award.attempt, award: 'award-1', paymentRule: 'first-price' })
      const view = d.agent.view(d.id)?.award
      assert.equal(view?.cid, 'award-1')
      assert.equal(view?.provider, peer(1))
      assert.equal(view?.price, 2_000_000)
      assert.equal(view?.considered, 1)
      assert.equal(view?.awardedAt, NOW + WINDOW)
      assert.equal(view?.bid, award.fields.bid.toString())
    })

    it('a frame from a provider other than the winner is ignored and changes nothing', () => {
      const d = awarded(1)
      const out = d.from(2, { type: 'award-response', decision: 'accept' })
      assert.deepEqual(out, [{ type: 'ignored', job: d.id, reason: 'award-response from an earlier attempt or another provider' }])
      assert.equal(d.state?.state.status, 'awarded')
    })

    it('a decline carries its reason into the failure report; the decliner is excluded from the next round', () => {
      const d = awarded(1)
      d.from(1, { type: 'award-response', decision: 'decline', reason: 'calendar closed' })
      const [failure] = d.of('record-failure')
      assert.equal(failure?.subject, peer(1))
      assert.equal(failure?.reason, 'declined')
      assert.equal(failure?.detail, 'calendar closed')
      assert.equal(failure?.attempt, 1)
      assert.deepEqual(d.of('publish-round').map((r) => [r.round, r.attempt, r.excluded]), [[2, 2, [peer(1)]]])
      // the decliner's bid in the next round is refused, however cheap
      assert.deepEqual(d.bid(1, 1_000_000), [{ type: 'ignored', job: d.id, reason: 'provider excluded after a failed attempt' }])
      d.bid(2, 2_500_000)
      d.runTo(d.now + WINDOW)
      assert.equal(d.winner(), peer(2))
      assert.deepEqual(d.state?.bids.map((b) => b.provider), [peer(2)])
    })

    it('a decline without a reason reports no detail', () => {
      const d = awarded(1)
      d.from(1, { type: 'award-response', decision: 'decline' })
      const [failure] = d.of('record-failure')
      assert.equal(failure?.reason, 'declined')
      assert.equal('detail' in (failure ?? {}), false)
    })

    it('an unreachable winner fails the attempt exactly at the lease, on the unreachable report itself', () => {
      const d = awarded(1)
      const at = d.now
      d.now = at + LEASE - 1
      d.from(1, { type: 'unreachable', detail: 'dial failed' })
      assert.equal(d.of('record-failure').length, 0)
      d.now = at + LEASE
      d.from(1, { type: 'unreachable', detail: 'dial failed' })
      const [failure] = d.of('record-failure')
      assert.equal(failure?.subject, peer(1))
      assert.equal(failure?.reason, 'no-show')
      // a stranger's no-show does not use up the job's attempts
      assert.equal(failure?.counted, false)
      assert.ok(failure?.evidence.length !== undefined && failure.evidence.length > 0)
    })

    it('a failure by a provider with history is counted', () => {
      const d = new Driver()
      d.agent.reputation.record(peer(1), true, NOW)
      d.submit()
      d.bid(1, 2_000_000)
      d.runTo(NOW + WINDOW)
      d.runTo(d.now + LEASE)
      const [failure] = d.of('record-failure')
      assert.equal(failure?.counted, true)
      assert.equal(d.state?.state.failures, 1)
    })

    it('a stream failure after the receipt (verifying) is not a failure of the provider', () => {
      const d = awarded(1)
      d.from(1, { type: 'award-response', decision: 'accept' })
      d.from(1, { type: 'job-status', seq: 1, state: 'running', gpuSeconds: 0 })
      d.from(1, { type: 'receipt', exitCode: 0, gpuSeconds: 5, forThisRequester: true })
      assert.equal(d.state?.state.status, 'verifying')
      const out = d.from(1, { type: 'stream-failed', fault: 'remote', detail: 'reset' })
      assert.deepEqual(out, [])
      assert.equal(d.of('record-failure').length, 0)
    })

    it('outputs-verified, -mismatch or -unsaved before a receipt is ignored, and earns the provider no reputation', () => {
      const d = awarded(1)
      d.from(1, { type: 'award-response', decision: 'accept' })
      const v = d.from(1, { type: 'outputs-verified', files: 1 })
      assert.deepEqual(v, [{ type: 'ignored', job: d.id, reason: 'no outputs awaited while running' }])
      const m = d.from(1, { type: 'outputs-mismatch', detail: 'cid differs' })
      assert.deepEqual(m, [{ type: 'ignored', job: d.id, reason: 'no outputs awaited while running' }])
      const u = d.from(1, { type: 'outputs-unsaved', detail: 'ENOSPC' })
      assert.deepEqual(u, [{ type: 'ignored', job: d.id, reason: 'no outputs awaited while running' }])
      assert.equal(d.agent.reputation.history(peer(1)), undefined)
      assert.equal(d.state?.state.status, 'running')
    })

    it('right outputs this node could not store fail the job here, pay the receipt, and count as the provider\'s success', () => {
      const d = awarded(1)
      d.from(1, { type: 'award-response', decision: 'accept' })
      d.from(1, { type: 'job-status', seq: 1, state: 'running', gpuSeconds: 0 })
      d.runTo(d.now + 10_000)
      d.from(1, { type: 'receipt', exitCode: 0, gpuSeconds: 10, forThisRequester: true })
      d.from(1, { type: 'outputs-unsaved', detail: 'cannot store the outputs in /x: ENOSPC' })
      assert.equal(d.state?.state.status, 'failed')
      assert.equal(d.state?.state.reason, 'outputs-unsaved: cannot store the outputs in /x: ENOSPC')
      const pays = d.of('pay')
      assert.equal(pays.length, 1)
      assert.equal(pays[0]?.final, true)
      assert.ok((pays[0]?.cumulative ?? 0) > 0)
      assert.deepEqual(d.of('record-failure'), [])
      assert.deepEqual(d.of('publish-round'), [])
      assert.deepEqual(d.agent.reputation.history(peer(1)), { ok: 1, failed: 0 })
    })

    it('verified outputs missing a declared file fail the job (the job\'s own fault) yet pay for the time run', () => {
      const d = awarded(1)
      d.from(1, { type: 'award-response', decision: 'accept' })
      d.from(1, { type: 'job-status', seq: 1, state: 'running', gpuSeconds: 0 })
      d.runTo(d.now + 10_000)
      d.from(1, { type: 'receipt', exitCode: 0, gpuSeconds: 10, forThisRequester: true })
      d.from(1, { type: 'outputs-verified', files: 0, missingOutputs: ['out.json', 7 as unknown as string] })
      assert.equal(d.state?.state.status, 'failed')
      assert.match(d.state?.state.reason ?? '', /^missing-output: out\.json/)
      const pays = d.of('pay')
      assert.equal(pays.length, 1)
      assert.equal(pays[0]?.final, true)
      assert.ok((pays[0]?.cumulative ?? 0) > 0)
      assert.deepEqual(d.of('finished').map((f) => f.status), ['failed'])
    })

    it('verified outputs with an empty missing list settle', () => {
      const d = awarded(1)
      d.deliver(1)
      assert.equal(d.state?.state.status, 'settled')
    })

    it('a cancel while running names the current attempt and the provider', () => {
      const d = awarded(1)
      d.from(1, { type: 'award-response', decision: 'accept' })
      d.from(1, { type: 'job-status', seq: 1, state: 'running', gpuSeconds: 0 })
      d.send({ type: 'cancel', now: d.now, job: d.id })
      assert.deepEqual(d.of('send-cancel').map((c) => [c.attempt, c.provider]), [[1, peer(1)]])
    })

    it('a payment-sent for another attempt does not count towards the job', () => {
      const d = awarded(1)
      d.from(1, { type: 'award-response', decision: 'accept' })
      d.from(1, { type: 'job-status', seq: 1, state: 'running', gpuSeconds: 0 })
      const before = d.state?.state
      const out = d.agent.handle({ type: 'payment-sent', now: d.now, job: d.id, attempt: 2, cumulative: 1_000_000 })
      assert.deepEqual(out, [])
      assert.deepEqual(d.state?.state, before)
    })
  })

  describe('ledger endings and counting', () => {
    it('a lost lease after an interval payment ends the award failed at what was committed (the interval payment is not an ending)', () => {
      const d = awarded(1)
      d.from(1, { type: 'award-response', decision: 'accept' })
      let seq = 1
      d.from(1, { type: 'job-status', seq: seq++, state: 'running', gpuSeconds: 0 })
      const start = d.now
      while (d.of('pay').length === 0 && d.now < start + 10 * 60_000) {
        d.runTo(d.now + 10_000)
        d.from(1, { type: 'job-status', seq: seq++, state: 'running', gpuSeconds: Math.floor((d.now - start) / 1000) })
      }
      const [interval] = d.of('pay')
      assert.equal(interval?.final, false)
      assert.ok((interval?.cumulative ?? 0) > 0)
      d.runTo(d.now + 2 * LEASE)
      assert.equal(d.of('record-failure')[0]?.reason, 'no-heartbeat')
      const ends = d.of('end-award')
      assert.deepEqual(ends.map((e) => [e.attempt, e.payee, e.ending, e.cumulative]), [[1, peer(1), 'failed', interval?.cumulative]])
      assert.equal(d.state?.paid, interval?.cumulative)
    })

    it('a stranger\'s no-show after a counted failure is still not counted', () => {
      const d = new Driver()
      d.agent.reputation.record(peer(1), true, NOW)
      d.submit()
      d.bid(1, 2_000_000)
      d.runTo(NOW + WINDOW)
      d.runTo(d.now + LEASE)
      assert.deepEqual(d.of('record-failure').map((f) => [f.subject, f.counted]), [[peer(1), true]])
      d.bid(2, 2_000_000)
      d.runTo(d.now + WINDOW)
      assert.equal(d.winner(), peer(2))
      d.runTo(d.now + LEASE)
      assert.deepEqual(d.of('record-failure').map((f) => [f.subject, f.counted]), [[peer(1), true], [peer(2), false]])
      assert.equal(d.state?.state.failures, 1)
    })

    it('award-sealed before any award decision is ignored', () => {
      const d = new Driver()
      d.submit()
      d.agent.handle({ type: 'award-sealed', now: NOW, job: d.id, attempt: 1, award: 'award-x', paymentRule: 'first-price' })
      assert.equal(d.state?.award, undefined)
    })

    it('a job restored twice keeps the first restore; a final one is kept as it was', () => {
      const d = new Driver()
      d.submit()
      const inflight = d.state?.state
      assert.ok(inflight !== undefined)
      const other = new RequesterAgent(peer(1000), createMarketParams({ leaseMs: LEASE }))
      const first = other.handle({ type: 'job-restored', now: NOW, cid: d.cid, request: d.request, state: { ...inflight, status: 'verified' } })
      assert.deepEqual(first.filter((e) => e.type === 'finished').map((e) => e.type === 'finished' && e.status), ['failed'])
      const again = other.handle({ type: 'job-restored', now: NOW, cid: d.cid, request: d.request, state: { ...inflight, status: 'settled' } })
      assert.deepEqual(again, [])
      assert.equal(other.view(d.id)?.state.status, 'failed')
    })
  })

  describe('finished', () => {
    it('the finished effect carries the final reason; a status change notes it once', () => {
      const d = new Driver()
      d.submit()
      d.runTo(NOW + 2 * WINDOW)
      const [finished] = d.of('finished')
      assert.equal(finished?.status, 'expired')
      assert.equal(typeof finished?.reason, 'string')
      assert.ok((finished?.reason ?? '').length > 0)
      assert.equal(d.of('note').filter((n) => n.kind === 'expired').length, 1)
      // nothing more after the end
      assert.equal(d.agent.handle({ type: 'tick', now: NOW + 10 * WINDOW, job: d.id }).filter((e) => e.type === 'finished').length, 0)
    })
  })
})
