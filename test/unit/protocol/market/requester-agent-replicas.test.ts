import assert from 'node:assert/strict'
import { auditAward, type RequesterAgentEffect } from '../../../../protocol/index.js'
import { Driver, NOW, WINDOW, peer } from '../../../helpers/requester-agent-driver.js'
import { deliverReplica, outputsOf, receiptBy, replicaDriver, verifiedJob } from '../../../helpers/replica-driver.js'

type Of<T extends RequesterAgentEffect['type']> = Extract<RequesterAgentEffect, { type: T }>

/** Submit, take bids from `bidders` (provider i at 1 + i/10 cr), close the round. */
function closedRound (d: Driver, bidders: number[]): Array<Of<'send-award'>> {
  d.submit()
  for (const i of bidders) d.bid(i, 1_000_000 + i * 100_000)
  d.runTo(NOW + WINDOW)
  return d.of('send-award')
}

const finalPayees = (d: Driver): string[] => d.of('pay').filter((p) => p.final).map((p) => p.payee).sort()

describe('the requester agent: replicate k and spotcheck (protocol/market/replica-runs.ts)', () => {
  it('k = 2 that agree: one award per replica at one attempt, each passes auditAward; both paid, the job settled', () => {
    const d = replicaDriver(verifiedJob({ mode: 'replicate', k: 2 }))
    const awards = closedRound(d, [1, 2, 3])
    assert.deepEqual(awards.map((a) => [a.provider, a.attempt]), [[peer(1), 1], [peer(2), 1]])
    for (const a of awards) {
      const bids = a.fields.considered.map((c) => d.agent.heldBid(d.id, c.toString())).filter((b) => b !== undefined)
      assert.equal(bids.length, a.fields.considered.length)
      assert.deepEqual(auditAward({ ...a.fields, issuedAt: NOW + WINDOW }, { job: { cid: d.cid, payload: d.request }, bids }), { ok: true })
    }
    // the second replica's award considers the bids still eligible when it was taken: not the first
    assert.equal(awards[1]?.fields.considered.length, 2)
    deliverReplica(d, 1, 'same')
    assert.equal(d.of('pay').length, 0, 'no payment before every replica delivered')
    // the job shows its least advanced replica: the second has not answered its award yet
    assert.equal(d.state?.state.status, 'awarded')
    deliverReplica(d, 2, 'same')
    assert.deepEqual(finalPayees(d), [peer(1), peer(2)].sort())
    assert.equal(d.of('record-failure').length, 0)
    assert.deepEqual(d.of('finished').map((f) => f.status), ['settled'])
    assert.equal(d.state?.state.status, 'settled')
    assert.match(d.state?.state.reason ?? '', /2 of 2 replicas agree/)
    assert.deepEqual(d.state?.replication?.replicas.map((r) => r.verdict), ['matched', 'matched'])
    assert.equal(d.state?.paid, d.of('pay').reduce((n, p) => n + p.cumulative, 0))
  })

  it('a provider convicted on a fraud proof is never a replica: its bid is screened out as CONVICTED and the next bidders are taken', () => {
    const d = replicaDriver(verifiedJob({ mode: 'replicate', k: 2 }))
    d.send({ type: 'provider-convicted', now: NOW, provider: peer(1), proof: 'bafy-proof' })
    const awards = closedRound(d, [1, 2, 3])
    assert.deepEqual(awards.map((a) => a.provider), [peer(2), peer(3)])
    for (const a of awards) assert.ok(a.fields.considered.every((c) => d.agent.heldBid(d.id, c.toString())?.signer !== peer(1)))
    assert.equal(d.agent.view(d.id)?.bids.find((b) => b.provider === peer(1))?.rejected, 'CONVICTED')
  })

  it('replicas are ranked under the RTT view too: the two nearest of three equal bidders are taken', () => {
    const d = replicaDriver(verifiedJob({ mode: 'replicate', k: 2 }))
    d.submit()
    for (const i of [1, 2, 3]) d.bid(i, 1_000_000)
    for (const [i, ms] of [[1, 400], [2, 30], [3, 10]] as const) d.agent.rtt.measured(peer(i), ms, d.now)
    d.runTo(NOW + WINDOW)
    assert.deepEqual(d.of('send-award').map((a) => a.provider), [peer(3), peer(2)])
  })

  it('k = 2 that disagree, deterministic: a local re-execution decides; the wrong one is reported and a fraud proof asked for', () => {
    const d = replicaDriver(verifiedJob({ mode: 'replicate', k: 2 }, 'wasm'))
    closedRound(d, [1, 2])
    deliverReplica(d, 1, 'right')
    const wrong = deliverReplica(d, 2, 'wrong')
    assert.deepEqual(d.of('reexecute'), [{ type: 'reexecute', job: d.id }])
    assert.equal(d.of('pay').length, 0, 'nobody paid before the re-execution')
    assert.equal(d.state?.replication?.reexecution, 'asked')
    d.send({ type: 'reexecuted', now: d.now, job: d.id, output: outputsOf('right').toString() })
    assert.deepEqual(finalPayees(d), [peer(1)])
    const [failure] = d.of('record-failure')
    assert.equal(failure?.subject, peer(2))
    assert.equal(failure?.reason, 'output-mismatch')
    assert.deepEqual(failure?.evidence, ['award', 'receipt'])
    assert.deepEqual(d.of('publish-fraud-proof'), [{ type: 'publish-fraud-proof', job: d.id, subject: peer(2), receipt: wrong.cid.toString() }])
    assert.deepEqual(d.of('end-award').map((e) => [e.payee, e.ending]), [[peer(2), 'failed']])
    assert.deepEqual(d.of('finished').map((f) => f.status), ['settled'])
    assert.match(d.state?.state.reason ?? '', /confirmed by re-execution/)
  })

  it('k = 3 wasm split 2 : 1: a majority does not decide a deterministic job — the re-execution does, and can side with the one', () => {
    const d = replicaDriver(verifiedJob({ mode: 'replicate', k: 3 }, 'wasm'))
    closedRound(d, [1, 2, 3])
    deliverReplica(d, 1, 'colluded')
    deliverReplica(d, 2, 'colluded')
    deliverReplica(d, 3, 'right')
    assert.deepEqual(d.of('reexecute'), [{ type: 'reexecute', job: d.id }])
    assert.equal(d.of('pay').filter((p) => p.final).length, 0, 'nobody paid on the majority alone')
    d.send({ type: 'reexecuted', now: d.now, job: d.id, output: outputsOf('right').toString() })
    assert.deepEqual(finalPayees(d), [peer(3)])
    assert.deepEqual(d.of('record-failure').map((f) => f.subject).sort(), [peer(1), peer(2)].sort())
    assert.deepEqual(d.of('publish-fraud-proof').map((p) => p.subject).sort(), [peer(1), peer(2)].sort())
  })

  it('k = 3 wasm, all agree: no re-execution, all paid', () => {
    const d = replicaDriver(verifiedJob({ mode: 'replicate', k: 3 }, 'wasm'))
    closedRound(d, [1, 2, 3])
    for (const i of [1, 2, 3]) deliverReplica(d, i, 'same')
    assert.equal(d.of('reexecute').length, 0)
    assert.deepEqual(finalPayees(d), [peer(1), peer(2), peer(3)].sort())
  })

  it('a re-execution that matches neither: both reported, nobody paid, the job failed', () => {
    const d = replicaDriver(verifiedJob({ mode: 'replicate', k: 2 }, 'wasm'))
    closedRound(d, [1, 2])
    deliverReplica(d, 1, 'a')
    deliverReplica(d, 2, 'b')
    d.send({ type: 'reexecuted', now: d.now, job: d.id, output: outputsOf('c').toString() })
    assert.equal(d.of('pay').length, 0)
    assert.deepEqual(d.of('record-failure').map((f) => f.subject).sort(), [peer(1), peer(2)].sort())
    assert.equal(d.of('publish-fraud-proof').length, 2)
    assert.deepEqual(d.of('finished').map((f) => f.status), ['failed'])
  })

  it('k = 3 split 2 : 1 (not deterministic): the two paid, the one reported, no re-execution and no fraud proof', () => {
    const d = replicaDriver(verifiedJob({ mode: 'replicate', k: 3 }))
    const awards = closedRound(d, [1, 2, 3, 4])
    assert.deepEqual(awards.map((a) => a.provider), [peer(1), peer(2), peer(3)])
    deliverReplica(d, 1, 'x')
    deliverReplica(d, 2, 'y')
    deliverReplica(d, 3, 'x')
    assert.deepEqual(finalPayees(d), [peer(1), peer(3)].sort())
    assert.deepEqual(d.of('record-failure').map((f) => [f.subject, f.reason, f.counted]), [[peer(2), 'output-mismatch', false]])
    assert.equal(d.of('reexecute').length, 0)
    assert.equal(d.of('publish-fraud-proof').length, 0)
    assert.deepEqual(d.state?.replication?.groups?.map((g) => g.providers.length), [2, 1])
    assert.deepEqual(d.of('finished').map((f) => f.status), ['settled'])
  })

  it('k = 2 that disagree, not deterministic: one tie-break replica on a further provider decides', () => {
    const d = replicaDriver(verifiedJob({ mode: 'replicate', k: 2 }))
    closedRound(d, [1, 2])
    deliverReplica(d, 1, 'x')
    deliverReplica(d, 2, 'y')
    const [round] = d.of('publish-round')
    assert.equal(round?.reason, 'replica')
    assert.deepEqual([...(round?.excluded ?? [])].sort(), [peer(1), peer(2)].sort())
    assert.equal(round?.attempt, 2)
    // a replica's provider bidding again is not taken
    d.bid(1, 900_000)
    d.bid(3, 1_500_000)
    d.runTo(d.now + WINDOW)
    const tieBreak = d.of('send-award').at(-1)
    assert.deepEqual([tieBreak?.provider, tieBreak?.attempt], [peer(3), 2])
    deliverReplica(d, 3, 'x', 2)
    assert.deepEqual(finalPayees(d), [peer(1), peer(3)].sort())
    assert.deepEqual(d.of('record-failure').map((f) => f.subject), [peer(2)])
    assert.deepEqual(d.state?.replication?.replicas.map((r) => r.role), ['replica', 'replica', 'tie-break'])
    assert.deepEqual(d.of('finished').map((f) => f.status), ['settled'])
  })

  it('a split with no tie-break bid: shown to the buyer as a disagreement, nobody paid or blamed', () => {
    const d = replicaDriver(verifiedJob({ mode: 'replicate', k: 2 }))
    closedRound(d, [1, 2])
    deliverReplica(d, 1, 'x')
    deliverReplica(d, 2, 'y')
    d.runTo(d.now + 3 * WINDOW)
    assert.equal(d.of('pay').length, 0)
    assert.equal(d.of('record-failure').length, 0)
    assert.deepEqual(d.of('end-award').map((e) => e.ending), ['failed', 'failed'])
    const [finished] = d.of('finished')
    assert.equal(finished?.status, 'failed')
    assert.match(finished?.reason ?? '', /^disagreement/)
    assert.deepEqual(d.state?.replication?.groups?.map((g) => g.outputs).sort(), [outputsOf('x').toString(), outputsOf('y').toString()].sort())
    assert.deepEqual(d.state?.replication?.replicas.slice(0, 2).map((r) => r.verdict), ['unpaid', 'unpaid'])
  })

  it('a bid sharing a /16 with a replica taken before it is skipped; the next independent one is taken', () => {
    const d = replicaDriver(verifiedJob({ mode: 'replicate', k: 2 }), {})
    d.submit()
    d.bid(1, 1_000_000, {}, ['/ip4/10.1.0.1/tcp/4001'])
    d.bid(2, 1_100_000, {}, ['/ip4/10.1.255.9/tcp/4001'])
    d.bid(3, 1_200_000, {}, ['/ip4/10.2.0.1/tcp/4001'])
    d.runTo(NOW + WINDOW)
    assert.deepEqual(d.of('send-award').map((a) => a.provider), [peer(1), peer(3)])
  })

  it('fewer than k independent bids: two or more run (the view says so); one re-opens the round once, then the job expires', () => {
    const short = replicaDriver(verifiedJob({ mode: 'replicate', k: 3 }))
    assert.equal(closedRound(short, [1, 2]).length, 2)
    assert.match(short.state?.replication?.shortfall ?? '', /only 2 independent provider\(s\) of 3/)
    const one = replicaDriver(verifiedJob({ mode: 'replicate', k: 2 }))
    assert.equal(closedRound(one, [1]).length, 0)
    assert.deepEqual(one.of('publish-round').map((r) => r.reason), ['no-bids'])
    one.bid(1, 1_000_000)
    one.runTo(NOW + 2 * WINDOW)
    assert.equal(one.of('send-award').length, 0)
    assert.equal(one.state?.state.status, 'expired')
  })

  it('one replica fails: only it is re-auctioned (excluding both providers); the other runs on untouched', () => {
    const d = replicaDriver(verifiedJob({ mode: 'replicate', k: 2 }))
    closedRound(d, [1, 2])
    d.from(1, { type: 'award-response', decision: 'accept' }, 1)
    d.from(2, { type: 'award-response', decision: 'decline', reason: 'busy' }, 1)
    const rounds = d.of('publish-round')
    assert.equal(rounds.length, 1)
    assert.deepEqual([...(rounds[0]?.excluded ?? [])].sort(), [peer(1), peer(2)].sort())
    assert.deepEqual(d.state?.replication?.replicas.map((r) => r.status), ['running', 'bidding'])
    d.bid(3, 1_300_000)
    d.runTo(d.now + WINDOW)
    assert.deepEqual(d.of('send-award').map((a) => [a.provider, a.attempt]), [[peer(1), 1], [peer(2), 1], [peer(3), 2]])
    d.from(1, { type: 'job-status', seq: 1, state: 'running', gpuSeconds: 0 }, 1)
    deliverReplica(d, 3, 'same', 2)
    assert.equal(d.of('pay').length, 0, 'replica 1 still runs')
    d.from(1, { type: 'receipt', exitCode: 0, gpuSeconds: 5, forThisRequester: true, receipt: receiptBy(d, 1, 'same', 1) }, 1)
    d.from(1, { type: 'outputs-verified', files: 1 }, 1)
    assert.deepEqual(finalPayees(d), [peer(1), peer(3)].sort())
    assert.deepEqual(d.of('finished').map((f) => f.status), ['settled'])
  })

  it('a re-auctioned replica skips a bid sharing a network with a running replica, though it is cheaper', () => {
    const d = replicaDriver(verifiedJob({ mode: 'replicate', k: 2 }))
    closedRound(d, [1, 2])
    d.from(2, { type: 'award-response', decision: 'decline', reason: 'busy' }, 1)
    d.bid(4, 500_000, {}, ['/ip4/10.1.77.1/tcp/4001'])
    d.bid(3, 1_300_000)
    d.runTo(d.now + WINDOW)
    assert.deepEqual(d.of('send-award').map((a) => a.provider), [peer(1), peer(2), peer(3)])
  })

  it('cancel cancels every replica', () => {
    const d = replicaDriver(verifiedJob({ mode: 'replicate', k: 2 }))
    closedRound(d, [1, 2, 3])
    d.from(1, { type: 'award-response', decision: 'accept' }, 1)
    d.send({ type: 'cancel', now: d.now, job: d.id })
    assert.deepEqual(d.of('send-cancel').map((c) => c.provider).sort(), [peer(1), peer(2)].sort())
    assert.deepEqual(d.of('finished').map((f) => f.status), ['cancelled'])
    assert.equal(d.state?.state.status, 'cancelled')
  })
})

