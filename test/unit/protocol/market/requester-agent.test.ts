import assert from 'node:assert/strict'
import { RequesterAgent, createMarketParams, type RequesterAgentEffect } from '../../../../protocol/index.js'
import { Driver, LEASE, NOW, REQUESTER, WINDOW, identity, jobPayload, peer } from '../../../helpers/requester-agent-driver.js'

describe('the requester agent (protocol/market/requester-agent.ts)', () => {
  it('a whole job: publish, bids screened on arrival, the award at the close, run, receipt → fetch → verified → final payment, settled', () => {
    const d = new Driver()
    d.submit()
    assert.deepEqual(d.of('publish-job'), [{ type: 'publish-job', job: d.id }])
    assert.deepEqual(d.of('wake').map((w) => w.at), [NOW + WINDOW])
    d.bid(1, 2_000_000)
    d.bid(2, 1_500_000)
    // refused on arrival with the award's reasons: another model, too little VRAM, over the cap
    d.bid(3, 1, { model: 'nvidia-a100-80gb' })
    d.bid(4, 1, { vramMiB: 1024 })
    d.bid(5, 3_000_001)
    assert.deepEqual(d.state?.bids.map((b) => b.provider), [peer(1), peer(2)])
    assert.equal(d.of('ignored').filter((e) => e.reason.includes('refused on arrival')).length, 3)
    d.runTo(NOW + WINDOW - 1)
    assert.equal(d.of('send-award').length, 0, 'no award before the close')
    d.runTo(NOW + WINDOW)
    const [award] = d.of('send-award')
    assert.equal(award?.provider, peer(2))
    assert.equal(award?.price, 1_500_000)
    assert.equal(award?.fields.attempt, 1)
    assert.equal(award?.fields.leaseMs, LEASE)
    assert.deepEqual(award?.fields.considered.map(String), [...d.state?.bids.map((b) => b.cid) ?? []].sort())
    assert.equal(d.state?.award?.cid, 'award-1')
    d.from(2, { type: 'award-response', decision: 'accept' })
    d.from(2, { type: 'job-status', seq: 1, state: 'running', gpuSeconds: 0 })
    d.runTo(d.now + 20_000)
    d.from(2, { type: 'job-status', seq: 2, state: 'running', gpuSeconds: 20 })
    d.from(2, { type: 'receipt', exitCode: 0, gpuSeconds: 20, forThisRequester: true })
    assert.deepEqual(d.of('fetch-outputs'), [{ type: 'fetch-outputs', job: d.id, attempt: 1, provider: peer(2) }])
    assert.equal(d.state?.state.status, 'verifying')
    // however long the fetch takes, no lease runs: an honest provider is not blamed (bug 1)
    d.runTo(d.now + 10 * LEASE)
    assert.equal(d.state?.state.status, 'verifying')
    assert.equal(d.of('record-failure').length, 0)
    d.from(2, { type: 'outputs-verified', files: 1 })
    const pays = d.of('pay')
    assert.equal(pays.length, 1)
    // 20 GPU-s at 1.5 cr/GPU-h
    assert.deepEqual(pays[0], { type: 'pay', job: d.id, attempt: 1, payee: peer(2), interval: 1, cumulative: 8334, gpuSeconds: 20, final: true, ending: 'settled' })
    assert.equal(d.state?.state.status, 'settled')
    assert.equal(d.state?.paid, 8334)
    assert.deepEqual(d.of('finished'), [{ type: 'finished', job: d.id, status: 'settled', reason: 'paid in full' }])
    assert.equal(d.of('end-award').length, 0, 'the final payment carries the ending')
    // a verified delivery is a success in the agent's own reputation
    assert.ok((d.agent.reputation.reliability(peer(2)) as number) > 0.25)
  })

  it('an empty round explains and re-opens once, a second expires the job', () => {
    const d = new Driver()
    d.submit()
    d.runTo(NOW + WINDOW)
    assert.deepEqual(d.of('explain'), [{ type: 'explain', job: d.id, round: 1, bids: 0 }])
    assert.deepEqual(d.of('publish-round').map((r) => [r.round, r.attempt, r.reason]), [[2, 1, 'no-bids']])
    d.runTo(NOW + 2 * WINDOW)
    assert.equal(d.state?.state.status, 'expired')
  })

  it('a bid refused when not bidding, and an event from an earlier attempt is ignored', () => {
    const d = new Driver()
    d.submit()
    d.bid(1, 1_000_000)
    d.runTo(NOW + WINDOW)
    d.bid(2, 900_000)
    assert.deepEqual(d.state?.bids.map((b) => b.provider), [peer(1)])
    d.send({ type: 'award-response', now: d.now, job: d.id, attempt: 0, provider: peer(1), decision: 'accept' })
    assert.equal(d.state?.state.status, 'awarded')
  })

  it('re-auction after a decline: the decliner is excluded, the next best wins', () => {
    const d = new Driver()
    d.submit()
    d.bid(1, 1_000_000)
    d.bid(2, 1_200_000)
    d.runTo(NOW + WINDOW)
    d.from(1, { type: 'award-response', decision: 'decline', reason: 'busy' })
    const [failure] = d.of('record-failure')
    assert.equal(failure?.subject, peer(1))
    assert.equal(failure?.reason, 'declined')
    const [round] = d.of('publish-round')
    assert.deepEqual(round?.excluded, [peer(1)])
    d.bid(1, 900_000)
    d.bid(2, 1_200_000)
    assert.deepEqual(d.state?.bids.map((b) => b.provider), [peer(2)], 'the excluded provider\'s bid is not held')
    d.runTo(d.now + WINDOW)
    assert.equal(d.winner(), peer(2))
    assert.equal(d.attempt, 2)
  })

  it('no-show: exactly one lease after the award the attempt fails, not a millisecond before', () => {
    const d = new Driver()
    d.submit()
    d.bid(1, 1_000_000)
    d.runTo(NOW + WINDOW)
    d.runTo(NOW + WINDOW + LEASE - 1)
    assert.equal(d.state?.state.status, 'awarded')
    d.runTo(NOW + WINDOW + LEASE)
    assert.equal(d.state?.state.status, 'bidding')
    assert.equal(d.of('record-failure')[0]?.reason, 'no-show')
  })

  describe('bug 10: throw-away identities that underbid and never answer', () => {
    it('three strangers no-show in turn: the honest provider still gets the job and it completes', () => {
      const d = new Driver()
      d.submit()
      for (let round = 0; round < 3; round++) {
        for (const s of [1, 2, 3]) d.bid(s, 100_000 + s)
        d.bid(9, 2_000_000)
        d.runTo(d.now + WINDOW)
        assert.equal(d.winner(), peer(round + 1), `round ${round + 1} goes to the cheapest stranger left`)
        d.runTo(d.now + LEASE)
      }
      // the strangers' no-shows used up none of the job's attempts
      assert.equal(d.state?.state.failures, 0)
      assert.equal(d.state?.state.status, 'bidding')
      assert.deepEqual(d.of('record-failure').map((f) => [f.subject, f.reason, f.counted]), [1, 2, 3].map((s) => [peer(s), 'no-show', false]))
      for (const s of [1, 2, 3]) d.bid(s, 100_000 + s)
      d.bid(9, 2_000_000)
      d.runTo(d.now + WINDOW)
      assert.equal(d.winner(), peer(9))
      d.deliver(9)
      assert.equal(d.state?.state.status, 'settled')
    })

    it('a provider with history that no-shows does use up an attempt; three such fail the job', () => {
      const d = new Driver()
      for (const p of [1, 2, 3]) d.agent.reputation.record(peer(p), true, NOW)
      d.submit()
      for (let round = 0; round < 3; round++) {
        for (const s of [1, 2, 3]) d.bid(s, 100_000 + s)
        d.runTo(d.now + WINDOW)
        d.runTo(d.now + LEASE)
      }
      assert.equal(d.state?.state.status, 'failed')
      assert.equal(d.state?.state.reason, '3 failed attempts')
      assert.deepEqual(d.of('record-failure').map((f) => f.counted), [true, true, true])
    })

    it('an identity that only ever failed here is still a stranger: its no-shows do not use up attempts', () => {
      const d = new Driver()
      // each failed an earlier job of this node: history, but no delivery
      for (const p of [1, 2, 3]) d.agent.reputation.record(peer(p), false, NOW)
      d.submit()
      for (let round = 0; round < 3; round++) {
        for (const s of [1, 2, 3]) d.bid(s, 100_000 + s)
        d.runTo(d.now + WINDOW)
        d.runTo(d.now + LEASE)
      }
      assert.notEqual(d.state?.state.status, 'failed')
      assert.equal(d.state?.state.failures, 0)
      assert.deepEqual(d.of('record-failure').map((f) => f.counted), [false, false, false])
    })

    it('strangers that keep coming end the job on its own deadline, not on their count', () => {
      const d = new Driver(jobPayload({ expiresAt: NOW + 5 * (WINDOW + LEASE) }))
      d.submit()
      let stranger = 100
      while (d.state?.state.status === 'bidding' || d.state?.state.status === 'awarded') {
        d.bid(stranger++, 100_000)
        d.runTo(d.now + WINDOW + LEASE)
      }
      assert.equal(d.state?.state.status, 'expired')
      assert.equal(d.state?.state.failures, 0)
      assert.ok(stranger - 100 >= 4)
    })

    it('later rounds prefer a provider that delivered over a cheaper stranger', () => {
      const params = createMarketParams({ leaseMs: LEASE })
      const d = new Driver(jobPayload(), params)
      for (let i = 0; i < 3; i++) d.agent.reputation.record(peer(9), true, NOW)
      d.submit()
      d.bid(1, 1_000_000)
      d.bid(9, 1_100_000)
      d.runTo(NOW + WINDOW)
      assert.equal(d.winner(), peer(9))
    })
  })

  describe('bug 7: every award gets a ledger ending on the buyer\'s side', () => {
    it('cancel while awarded (before the run): a cancel to the provider and a cancelled ending at 0', () => {
      const d = new Driver()
      d.submit()
      d.bid(1, 1_000_000)
      d.runTo(NOW + WINDOW)
      d.send({ type: 'cancel', now: d.now, job: d.id })
      assert.deepEqual(d.of('send-cancel').map((c) => [c.attempt, c.provider]), [[1, peer(1)]])
      assert.deepEqual(d.of('end-award'), [{ type: 'end-award', job: d.id, attempt: 1, payee: peer(1), ending: 'cancelled', cumulative: 0 }])
      assert.equal(d.of('pay').length, 0)
      assert.equal(d.state?.state.status, 'cancelled')
    })

    it('cancel while running: a final payment with the cancelled ending, no end-award', () => {
      const d = new Driver()
      d.submit()
      d.bid(1, 3_600_000 / 2)
      d.runTo(NOW + WINDOW)
      d.from(1, { type: 'award-response', decision: 'accept' })
      d.from(1, { type: 'job-status', seq: 1, state: 'running', gpuSeconds: 0 })
      d.runTo(d.now + 10_000)
      d.send({ type: 'cancel', now: d.now, job: d.id })
      const pays = d.of('pay')
      assert.equal(pays.length, 1)
      assert.equal(pays[0]?.final, true)
      assert.equal(pays[0]?.ending, 'cancelled')
      assert.equal(pays[0]?.cumulative, 5000)
      assert.equal(d.of('end-award').length, 0)
    })

    it('cancel in bidding: no award, no ledger effect', () => {
      const d = new Driver()
      d.submit()
      d.send({ type: 'cancel', now: d.now, job: d.id })
      assert.equal(d.state?.state.status, 'cancelled')
      assert.equal(d.of('end-award').length + d.of('pay').length + d.of('send-cancel').length, 0)
    })

    it('cancel after the receipt is refused (the job settles instead)', () => {
      const d = new Driver()
      d.submit()
      d.bid(1, 1_000_000)
      d.runTo(NOW + WINDOW)
      d.from(1, { type: 'award-response', decision: 'accept' })
      d.from(1, { type: 'job-status', seq: 1, state: 'running', gpuSeconds: 0 })
      d.from(1, { type: 'receipt', exitCode: 0, gpuSeconds: 1, forThisRequester: true })
      d.send({ type: 'cancel', now: d.now, job: d.id })
      assert.equal(d.state?.state.status, 'verifying')
    })

    it('preempted before the run started: a preempted ending at 0, then a re-auction', () => {
      const d = new Driver()
      d.submit()
      d.bid(1, 1_000_000)
      d.runTo(NOW + WINDOW)
      d.from(1, { type: 'award-response', decision: 'accept' })
      d.from(1, { type: 'job-status', seq: 1, state: 'preempted', gpuSeconds: 0 })
      assert.deepEqual(d.of('end-award').map((e) => [e.ending, e.cumulative]), [['preempted', 0]])
      assert.equal(d.of('record-failure').length, 0, 'nobody is blamed')
      assert.equal(d.state?.state.status, 'bidding')
    })

    it('preempted while running: a final payment with the preempted ending', () => {
      const d = new Driver()
      d.submit()
      d.bid(1, 1_000_000)
      d.runTo(NOW + WINDOW)
      d.from(1, { type: 'award-response', decision: 'accept' })
      d.from(1, { type: 'job-status', seq: 1, state: 'running', gpuSeconds: 0 })
      d.runTo(d.now + 5_000)
      d.from(1, { type: 'job-status', seq: 2, state: 'preempted', gpuSeconds: 5 })
      assert.deepEqual(d.of('pay').map((p) => [p.final, p.ending]), [[true, 'preempted']])
      assert.equal(d.of('end-award').length, 0)
    })

    it('a failed award (lost lease) ends failed at what was committed', () => {
      const d = new Driver()
      d.submit()
      d.bid(1, 1_000_000)
      d.runTo(NOW + WINDOW)
      d.from(1, { type: 'award-response', decision: 'accept' })
      d.from(1, { type: 'job-status', seq: 1, state: 'running', gpuSeconds: 0 })
      d.runTo(d.now + LEASE)
      assert.deepEqual(d.of('end-award').map((e) => [e.attempt, e.ending, e.cumulative]), [[1, 'failed', 0]])
      assert.equal(d.of('record-failure')[0]?.reason, 'no-heartbeat')
      assert.equal(d.of('record-failure')[0]?.counted, true, 'it answered the award: a counted failure, stranger or not')
    })

    it('mismatched outputs fail the attempt against the provider', () => {
      const d = new Driver()
      d.submit()
      d.bid(1, 1_000_000)
      d.runTo(NOW + WINDOW)
      d.from(1, { type: 'award-response', decision: 'accept' })
      d.from(1, { type: 'job-status', seq: 1, state: 'running', gpuSeconds: 0 })
      d.from(1, { type: 'receipt', exitCode: 0, gpuSeconds: 1, forThisRequester: true })
      d.from(1, { type: 'outputs-mismatch', detail: 'out.json: hash differs' })
      assert.equal(d.of('record-failure')[0]?.reason, 'output-mismatch')
      assert.deepEqual(d.of('end-award').map((e) => e.ending), ['failed'])
      assert.equal(d.state?.state.status, 'bidding')
      // one failure, recorded once (not once for the receipt and again for the report)
      assert.ok((d.agent.reputation.history(peer(1))?.failed) === 1)
    })
  })

  it('stream failure: remote blames the provider and re-auctions; local ends the job, blaming nobody', () => {
    const remote = new Driver()
    remote.submit()
    remote.bid(1, 1_000_000)
    remote.runTo(NOW + WINDOW)
    remote.from(1, { type: 'award-response', decision: 'accept' })
    remote.from(1, { type: 'stream-failed', fault: 'remote', detail: 'reset' })
    assert.equal(remote.of('record-failure')[0]?.subject, peer(1))
    assert.equal(remote.state?.state.status, 'bidding')

    const local = new Driver()
    local.submit()
    local.bid(1, 1_000_000)
    local.runTo(NOW + WINDOW)
    local.from(1, { type: 'award-response', decision: 'accept' })
    local.from(1, { type: 'stream-failed', fault: 'local', detail: 'disk full' })
    assert.equal(local.of('record-failure').length, 0)
    assert.equal(local.state?.state.status, 'failed')
    assert.deepEqual(local.of('send-cancel').map((c) => c.provider), [peer(1)])
    assert.deepEqual(local.of('end-award').map((e) => e.ending), ['cancelled'])
  })

  it('a job restored while bidding opens a new round (its bids were lost); one cut in a step that lasts no time fails as interrupted', () => {
    const d = new Driver()
    d.submit()
    const state = d.state?.state
    assert.ok(state !== undefined)
    const agent = new RequesterAgent(REQUESTER)
    const out = agent.handle({ type: 'job-restored', now: NOW, cid: d.cid, request: d.request, state })
    assert.equal(agent.view(d.id)?.state.status, 'bidding')
    assert.deepEqual(out.filter((e) => e.type === 'publish-round').map((e) => e.type === 'publish-round' && [e.round, e.reason]), [[2, 'restarted']])
    const cut = new RequesterAgent(REQUESTER)
    const failed = cut.handle({ type: 'job-restored', now: NOW, cid: d.cid, request: d.request, state: { ...state, status: 'completed' } })
    assert.equal(cut.view(d.id)?.state.status, 'failed')
    assert.match(cut.view(d.id)?.state.reason ?? '', /interrupted/)
    assert.ok(failed.some((e) => e.type === 'finished'))
  })

  it('the job expires exactly at expiresAt while bidding, not a millisecond before', () => {
    const d = new Driver(jobPayload({ expiresAt: NOW + 300 }))
    d.submit()
    d.runTo(NOW + 299)
    assert.equal(d.state?.state.status, 'bidding')
    d.runTo(NOW + 300)
    assert.equal(d.state?.state.status, 'expired')
  })

  it('is pure: the same events give the same effects', () => {
    const run = (): RequesterAgentEffect[] => {
      const d = new Driver()
      d.submit()
      d.bid(1, 1_000_000)
      d.bid(2, 900_000)
      d.runTo(NOW + WINDOW)
      d.deliver(2)
      return d.effects
    }
    assert.deepEqual(JSON.parse(JSON.stringify(run())), JSON.parse(JSON.stringify(run())))
  })
})
