/**
 * More of the requester agent (mutation survivors of protocol/market/requester-agent.ts): the job's
 * timeline as the job view shows it (each step, the provider it concerns, the facts it states), what
 * the market parameters change for a job, a close that runs late (bids expired in between), a full
 * round that keeps the best-scoring bids under this node's reputation, and the stream failing before
 * the provider answered.
 */
import assert from 'node:assert/strict'
import { cidOfValue } from '../../../../crypto/index.js'
import { MAX_BIDS_PER_ROUND, RequesterAgent, createMarketParams, jobIdOf, type AuctionBid, type Bid, type RequesterAgentEffect } from '../../../../protocol/index.js'
import { Driver, LEASE, NOW, WINDOW, bidFor, jobPayload, peer } from '../../../helpers/requester-agent-driver.js'

type Note = Extract<RequesterAgentEffect, { type: 'note' }>

const short = (p: string): string => `…${p.slice(-8)}`
const notes = (d: Driver): Note[] => d.of('note')
const noteOf = (d: Driver, kind: string): Note | undefined => notes(d).find((n) => n.kind === kind)

/** A driver whose job was awarded to `winner`, the only bidder. */
function awarded (winner = 1, price = 2_000_000, d = new Driver()): Driver {
  d.submit()
  d.bid(winner, price)
  d.runTo(d.now + WINDOW)
  assert.equal(d.winner(), peer(winner))
  return d
}

/** Accepted and running (the first heartbeat in). */
function running (d: Driver, provider = 1): void {
  d.from(provider, { type: 'award-response', decision: 'accept' })
  d.from(provider, { type: 'job-status', seq: 1, state: 'running', gpuSeconds: 0 })
}

/** An unsigned bid with a plain signer (the agent checks no signature; the shell did). */
function plainBid (d: Driver, signer: string, price: number, over: Partial<Bid> = {}): AuctionBid {
  const payload: Bid = {
    v: 1, issuedAt: d.now, expiresAt: d.now + 120_000, job: d.cid, provider: signer, price, gpus: ['GPU-0'],
    model: 'nvidia-h100-80gb-hbm3', vramMiB: 81_559, region: 'eu-west', startBy: d.now + 60_000, ad: cidOfValue({ ad: signer }).cid, ...over
  }
  return { cid: cidOfValue(payload).cid, signer, payload }
}

describe('the requester agent, more', () => {
  describe('the job\'s timeline', () => {
    it('a settled job: each step once, in order, naming the provider, the prices and what was paid', () => {
      const d = new Driver()
      d.submit()
      assert.deepEqual(d.state?.bids, [], 'a new job shows no bids')
      d.bid(1, 2_000_000)
      d.bid(2, 2_500_000)
      d.runTo(NOW + WINDOW)
      d.deliver(1)
      const p1 = peer(1)
      assert.deepEqual(notes(d).map((n) => [n.kind, n.peer]), [
        ['submitted', undefined], ['bid', p1], ['bid', peer(2)], ['awarded', undefined], ['award', p1], ['accepted', p1],
        ['running', undefined], ['completed', p1], ['receipt', p1], ['verifying', undefined], ['outputs', p1],
        ['completed', undefined], ['verified', undefined], ['paid', p1], ['settled', undefined]
      ])
      // a line about no provider carries no peer at all (the view serialises what it holds)
      for (const n of notes(d)) if (n.peer === undefined) assert.equal('peer' in n, false, n.kind)
      // a status change before the end says just the status; the final one says why
      for (const kind of ['awarded', 'running', 'verifying', 'verified']) assert.equal(noteOf(d, kind)?.text, kind)
      assert.equal(noteOf(d, 'settled')?.text, 'settled: paid in full')
      const text = (kind: string): string => noteOf(d, kind)?.text ?? ''
      assert.equal(text('submitted'), 'silver job for 1 GPU(s), cap 3.00 cr/GPU-h, bid window 500 ms')
      assert.equal(text('bid'), 'bid 2.00 cr/GPU-h (nvidia-h100-80gb-hbm3, eu-west)')
      assert.ok(text('award').startsWith(`awarded to ${short(p1)} at 2.00 cr/GPU-h: lowest effective price `), text('award'))
      assert.equal(text('accepted'), `${short(p1)} accepted`)
      assert.equal(notes(d).find((n) => n.kind === 'completed' && n.peer === p1)?.text, 'provider reports completed')
      assert.equal(text('receipt'), 'receipt: exit 0, 10 GPU-s; fetching the outputs')
      assert.equal(text('outputs'), '1 output(s) verified')
      const [pay] = d.of('pay')
      assert.equal(text('paid'), `paid 0.005556 cr in all to ${short(p1)} (10 GPU-s)`)
      assert.deepEqual(pay, { type: 'pay', job: d.id, attempt: 1, payee: p1, interval: 1, cumulative: 5556, gpuSeconds: 10, final: true, ending: 'settled' })
      assert.deepEqual(d.of('finished'), [{ type: 'finished', job: d.id, status: 'settled', reason: 'paid in full' }])
    })

    it('the award view says why the winner won: its effective price against the next one, or that it was the only bid', () => {
      const two = new Driver()
      two.submit()
      two.bid(1, 2_000_000)
      two.bid(2, 2_500_000)
      two.runTo(NOW + WINDOW)
      const [ranked1, ranked2] = two.of('send-award')[0]?.ranking ?? []
      assert.ok(ranked1 !== undefined && ranked2 !== undefined)
      const cr = (micros: number): string => `${(Math.round(micros) / 1e6).toString()}`
      assert.match(two.state?.award?.why ?? '', new RegExp(`^lowest effective price ${cr(ranked1.effectivePrice).replace('.', '\\.')}\\d* cr vs ${cr(ranked2.effectivePrice).replace('.', '\\.')}\\d* cr next of 2$`))
      const one = awarded(1)
      assert.match(one.state?.award?.why ?? '', /^lowest effective price \d+\.\d+ cr \(the only bid\)$/)
    })

    it('running and accepted heartbeats add no line; a provider\'s other report does, with its message when it gives one', () => {
      const d = awarded(1)
      running(d)
      d.from(1, { type: 'job-status', seq: 2, state: 'accepted', gpuSeconds: 0 })
      d.from(1, { type: 'job-status', seq: 3, state: 'running', gpuSeconds: 0 })
      assert.equal(notes(d).filter((n) => n.text.startsWith('provider reports')).length, 0)
      d.from(1, { type: 'job-status', seq: 4, state: 'failed', gpuSeconds: 0, message: 'CUDA out of memory' })
      assert.equal(notes(d).find((n) => n.kind === 'failed' && n.peer === peer(1))?.text, 'provider reports failed: CUDA out of memory')
      const bare = awarded(1)
      running(bare)
      bare.from(1, { type: 'job-status', seq: 2, state: 'failed', gpuSeconds: 0 })
      assert.equal(notes(bare).find((n) => n.kind === 'failed' && n.peer === peer(1))?.text, 'provider reports failed')
    })

    it('a decline names the provider and its reason, or says none was given', () => {
      const d = awarded(1)
      d.from(1, { type: 'award-response', decision: 'decline', reason: 'calendar closed' })
      assert.equal(noteOf(d, 'declined')?.text, `${short(peer(1))} declined: calendar closed`)
      assert.equal(noteOf(d, 'declined')?.peer, peer(1))
      const failure = noteOf(d, 'failure')
      assert.equal(failure?.text, 'declined: calendar closed')
      assert.equal(failure?.peer, peer(1))
      assert.equal(noteOf(d, 're-auction')?.text, 'round 2 (declined, excluding 1)')
      const bare = awarded(1)
      bare.from(1, { type: 'award-response', decision: 'decline' })
      assert.equal(noteOf(bare, 'declined')?.text, `${short(peer(1))} declined: no reason given`)
      // the failure line of a decline without a reason is just the reason code
      assert.equal(noteOf(bare, 'failure')?.text, 'declined')
    })

    it('a re-auction after an empty round excludes nobody, and clears the round\'s bids from the view', () => {
      const d = new Driver()
      d.submit()
      d.runTo(NOW + WINDOW)
      assert.equal(noteOf(d, 'no-bids')?.text, 'no bids in the window')
      assert.equal(noteOf(d, 're-auction')?.text, 'round 2 (no-bids)')
      assert.deepEqual(d.state?.bids, [])
      // a declined round's bids are gone from the next round's view
      const e = awarded(1)
      e.from(1, { type: 'award-response', decision: 'decline' })
      assert.deepEqual(e.state?.bids, [])
      e.bid(2, 2_500_000)
      const next = e.agent.view(e.id)?.bids ?? []
      assert.deepEqual(next.map((b) => b.provider), [peer(2)])
    })

    it('a receipt for another requester is rejected and blamed on the provider', () => {
      const d = awarded(1)
      running(d)
      d.from(1, { type: 'receipt', exitCode: 0, gpuSeconds: 5, forThisRequester: false })
      assert.equal(noteOf(d, 'receipt')?.text, 'receipt rejected: the receipt names another requester')
      assert.equal(d.of('fetch-outputs').length, 0, 'no outputs are fetched on a receipt for someone else')
      assert.deepEqual(d.of('record-failure').map((f) => f.subject), [peer(1)])
    })

    it('verified outputs that miss declared files name the missing ones (only strings), and the failure says so', () => {
      const d = awarded(1)
      running(d)
      d.runTo(d.now + 10_000)
      d.from(1, { type: 'receipt', exitCode: 0, gpuSeconds: 10, forThisRequester: true })
      d.from(1, { type: 'outputs-verified', files: 0, missingOutputs: ['out.json', 7 as unknown as string, 'model.bin'] })
      assert.equal(noteOf(d, 'outputs')?.text, '0 output(s) verified; not written by the job: out.json, model.bin')
      assert.match(d.state?.state.reason ?? '', /^missing-output: out\.json/)
      assert.equal((d.state?.state.reason ?? '').includes('7'), false)
      // the job's own fault: the provider delivered, and is credited for it
      assert.deepEqual(d.agent.reputation.history(peer(1)), { ok: 1, failed: 0 })
      assert.equal(d.of('record-failure').length, 0)
    })

    it('mismatched outputs and an unreachable provider say what went wrong', () => {
      const d = awarded(1)
      running(d)
      d.from(1, { type: 'receipt', exitCode: 0, gpuSeconds: 5, forThisRequester: true })
      d.from(1, { type: 'outputs-mismatch', detail: 'out.json: CID differs' })
      assert.equal(noteOf(d, 'outputs')?.text, 'outputs rejected: out.json: CID differs')
      assert.equal(noteOf(d, 'failure')?.text, 'output-mismatch: out.json: CID differs')
      const u = awarded(1)
      u.from(1, { type: 'unreachable', detail: 'dial failed' })
      assert.equal(noteOf(u, 'unreachable')?.text, `cannot reach ${short(peer(1))}: dial failed`)
      assert.equal(noteOf(u, 'unreachable')?.peer, peer(1))
    })

    it('a stream failure says whose fault it was', () => {
      const remote = awarded(1)
      running(remote)
      remote.from(1, { type: 'stream-failed', fault: 'remote', detail: 'reset' })
      assert.equal(noteOf(remote, 'stream-failed')?.text, 'exec stream failed (the provider): reset')
      const local = awarded(1)
      running(local)
      local.from(1, { type: 'stream-failed', fault: 'local', detail: 'disk full' })
      assert.equal(noteOf(local, 'stream-failed')?.text, 'exec stream failed (this node): disk full')
    })

    it('only the final payment adds a "paid" line; an interval payment carries no ending', () => {
      const d = awarded(1, 2_000_000, new Driver(jobPayload(), createMarketParams({ leaseMs: LEASE, billingIntervalSec: 60 })))
      running(d)
      const start = d.now
      let seq = 2
      while (d.now < start + 90_000) {
        d.runTo(d.now + 10_000)
        d.from(1, { type: 'job-status', seq: seq++, state: 'running', gpuSeconds: Math.floor((d.now - start) / 1000) })
      }
      const [interval] = d.of('pay')
      assert.ok(interval !== undefined)
      assert.deepEqual(interval, { type: 'pay', job: d.id, attempt: 1, payee: peer(1), interval: 1, cumulative: interval.cumulative, gpuSeconds: interval.gpuSeconds, final: false })
      assert.ok(interval.cumulative > 0)
      assert.equal(noteOf(d, 'paid'), undefined)
      d.from(1, { type: 'job-status', seq: seq++, state: 'completed', gpuSeconds: 90 })
      d.from(1, { type: 'receipt', exitCode: 0, gpuSeconds: 90, forThisRequester: true })
      d.from(1, { type: 'outputs-verified', files: 1 })
      assert.equal(notes(d).filter((n) => n.kind === 'paid').length, 1)
      assert.equal(d.of('pay').at(-1)?.final, true)
    })
  })

  describe('market parameters reach each job', () => {
    it('lease, billing interval and failed attempts come from the agent\'s params', () => {
      const params = createMarketParams({ leaseMs: 10_000, billingIntervalSec: 120, maxFailedAttempts: 1 })
      const d = new Driver(jobPayload(), params)
      d.agent.reputation.record(peer(1), true, NOW)
      awarded(1, 2_000_000, d)
      const [award] = d.of('send-award')
      assert.equal(award?.fields.leaseMs, 10_000)
      assert.equal(award?.fields.billingIntervalSec, 120)
      // a no-show exactly one (10 s) lease after the award; one counted failure ends the job
      const at = d.now
      d.runTo(at + 10_000 - 1)
      assert.equal(d.of('record-failure').length, 0)
      d.runTo(at + 10_000)
      assert.deepEqual(d.of('record-failure').map((f) => [f.reason, f.counted]), [['no-show', true]])
      assert.equal(d.state?.state.status, 'failed')
    })

    it('a request the lifecycle cannot run (a 10 ms bid window) is refused with the reason, never thrown: not published, not held', () => {
      const agent = new RequesterAgent(peer(1000))
      const request = jobPayload({ auction: { bidWindowMs: 10, paymentRule: 'first-price' } })
      const cid = cidOfValue(request).cid
      const out = agent.handle({ type: 'job-submitted', now: NOW, cid, request })
      assert.equal(out.length, 1)
      const [ignored] = out
      assert.ok(ignored?.type === 'ignored')
      assert.match(ignored.reason, /^the job cannot start: .*bidWindowMs/)
      assert.equal(ignored.job, cid.toString())
      assert.equal(agent.has(cid.toString()), false)
    })

    it('a job restored in a final state stays as it was: no effects, nothing failed', () => {
      const d = awarded(1)
      d.deliver(1)
      const settled = d.state?.state
      assert.equal(settled?.status, 'settled')
      const agent = new RequesterAgent(peer(1000), createMarketParams({ leaseMs: LEASE }))
      const out = agent.handle({ type: 'job-restored', now: d.now, cid: d.cid, request: d.request, state: settled as NonNullable<typeof settled> })
      assert.deepEqual(out, [])
      assert.equal(agent.view(d.id)?.state.status, 'settled')
      // cut between steps that last no time: failed as interrupted, with a 'failed' line
      const inflight = new Driver()
      inflight.submit()
      const fresh = new RequesterAgent(peer(1000))
      const cut = { ...(inflight.state?.state as NonNullable<typeof settled>), status: 'completed' as const }
      const failed = fresh.handle({ type: 'job-restored', now: NOW, cid: inflight.cid, request: inflight.request, state: cut })
      assert.deepEqual(failed.filter((e) => e.type === 'note').map((e) => e.type === 'note' && e.kind), ['failed'])
    })
  })

  describe('the close', () => {
    it('a close that runs late: a bid that expired meanwhile shows as rejected, the other wins with its effective price', () => {
      const d = new Driver()
      d.submit()
      d.bid(1, 1_500_000, { expiresAt: NOW + WINDOW + 1 })
      d.bid(2, 2_000_000)
      // the tick comes 5 ms after the close (a busy node)
      d.send({ type: 'tick', now: NOW + WINDOW + 5, job: d.id })
      assert.equal(d.winner(), peer(2))
      const views = new Map(d.state?.bids.map((b) => [b.provider, b]))
      assert.equal(views.get(peer(1))?.rejected, 'EXPIRED')
      assert.equal(views.get(peer(1))?.effectivePrice, undefined)
      assert.equal(views.get(peer(2))?.rejected, undefined)
      assert.equal(views.get(peer(2))?.effectivePrice, Math.round(d.of('send-award')[0]?.ranking[0]?.effectivePrice ?? -1))
    })

    it('a late close where every held bid expired: no award, the rejection shown, the round explained and re-opened', () => {
      const d = new Driver()
      d.submit()
      d.bid(1, 1_500_000, { expiresAt: NOW + WINDOW + 1 })
      d.send({ type: 'tick', now: NOW + WINDOW + 5, job: d.id })
      assert.equal(d.of('send-award').length, 0)
      assert.deepEqual(d.of('explain').map((e) => [e.round, e.bids]), [[1, 1]])
      assert.equal(noteOf(d, 'no-bids')?.text, 'none of 1 bid(s) acceptable')
      assert.equal(d.state?.state.status, 'bidding')
      assert.equal(d.state?.state.auction.round, 2)
      assert.deepEqual(d.of('publish-round').map((r) => [r.round, r.reason, r.excluded]), [[2, 'no-bids', []]])
    })

    it('a full round keeps the best-scoring bids under this node\'s reputation: a proven provider displaces a cheaper stranger', () => {
      const d = new Driver()
      d.submit()
      const proven = 'peer-proven'
      for (let i = 0; i < 5; i++) d.agent.reputation.record(proven, true, NOW)
      for (let i = 0; i < MAX_BIDS_PER_ROUND; i++) d.send({ type: 'bid-seen', now: NOW, bid: plainBid(d, `peer-s${i}`, 2_000_000), model: 'm', region: 'r' })
      assert.equal(d.state?.bids.length, MAX_BIDS_PER_ROUND)
      // 10% dearer, but delivered five times here: it ranks before every stranger, so it takes a slot
      const out = d.send({ type: 'bid-seen', now: NOW, bid: plainBid(d, proven, 2_200_000), model: 'm', region: 'r' })
      assert.equal(out.some((e) => e.type === 'ignored'), false, JSON.stringify(out))
      assert.equal(d.state?.bids.length, MAX_BIDS_PER_ROUND)
      assert.ok(d.state?.bids.some((b) => b.provider === proven))
      d.runTo(NOW + WINDOW)
      assert.equal(d.winner(), proven)
    })
  })

  describe('quiet when nothing happens', () => {
    it('a tick with nothing due, for every job or for one, gives no effect at all', () => {
      const d = new Driver()
      d.submit()
      assert.deepEqual(d.agent.handle({ type: 'tick', now: NOW + 1 }), [])
      assert.deepEqual(d.agent.handle({ type: 'tick', now: NOW + 2, job: d.id }), [])
    })

    it('an unreachable winner before the lease: one line, nothing else; the no-show then says what it was', () => {
      const d = awarded(1)
      const out = d.from(1, { type: 'unreachable', detail: 'dial failed' })
      assert.deepEqual(out.map((e) => e.type), ['note'])
      d.runTo(d.now + LEASE)
      assert.equal(noteOf(d, 'failure')?.text, 'no-show: no answer to the award within one lease')
    })
  })

  describe('the exec stream', () => {
    it('a stream the provider breaks before answering the award fails the attempt at once, not a lease later', () => {
      const d = awarded(1)
      const at = d.now
      d.from(1, { type: 'stream-failed', fault: 'remote', detail: 'reset' })
      assert.equal(d.now, at)
      assert.deepEqual(d.of('record-failure').map((f) => [f.subject, f.attempt]), [[peer(1), 1]])
      assert.equal(noteOf(d, 'stream-failed')?.text, 'exec stream failed (the provider): reset')
      assert.equal(d.state?.state.status, 'bidding')
      assert.deepEqual(d.of('end-award').map((e) => [e.attempt, e.ending, e.cumulative]), [[1, 'failed', 0]])
    })

    it('a cancel before the run names the award\'s provider and attempt, and the ledger ends at 0', () => {
      const d = awarded(1)
      d.send({ type: 'cancel', now: d.now, job: d.id })
      assert.deepEqual(d.of('send-cancel').map((c) => [c.attempt, c.provider, c.reason]), [[1, peer(1), 'cancelled by the requester']])
      assert.deepEqual(d.of('end-award').map((e) => [e.attempt, e.payee, e.ending, e.cumulative]), [[1, peer(1), 'cancelled', 0]])
    })
  })

  it('a bid for a job this node does not hold is no bid of this node\'s job', () => {
    const d = new Driver()
    d.submit()
    const other = jobPayload({ nonce: new Uint8Array(16).fill(7) })
    d.send({ type: 'bid-seen', now: NOW, bid: bidFor(jobIdOf(other), 1, 1_000_000, NOW), model: 'm', region: 'r' })
    assert.deepEqual(d.state?.bids, [])
  })
})
