/**
 * The requester agent's audits (issue 11): after a conviction it revisits its settled results the
 * convicted provider signed (result-audit.ts) — a wasm job is re-executed and, when wrong, disproved with
 * a fraud proof asked for each co-signer not yet convicted; a process job is marked suspect — and the
 * agreement audit re-executes a drawn wasm job whose replicas agree.
 */
import assert from 'node:assert/strict'
import type { RequesterAgentEffect } from '../../../../protocol/index.js'
import { Driver, NOW, WINDOW, peer } from '../../../helpers/requester-agent-driver.js'
import { addressesOf, deliverReplica, outputsOf, receiptBy, replicaDriver, verifiedJob } from '../../../helpers/replica-driver.js'

type Of<T extends RequesterAgentEffect['type']> = Extract<RequesterAgentEffect, { type: T }>

/** A k = 2 job awarded to providers 1 and 2, both delivering `content` (settled on agreement). */
function agreed (d: Driver, content: string): void {
  d.submit()
  d.bid(1, 1_000_000)
  d.bid(2, 1_100_000)
  d.runTo(NOW + WINDOW)
  deliverReplica(d, 1, content)
  deliverReplica(d, 2, content)
}

const audited = (d: Driver): Array<Of<'result-audited'>> => d.of('result-audited')

describe('the requester agent: audits after a conviction and on agreement', () => {
  it('two colluders agreed on a wasm job: convicting one re-executes the job; wrong, it is disproved and the other proven wrong', () => {
    const d = replicaDriver(verifiedJob({ mode: 'replicate', k: 2 }, 'wasm'))
    agreed(d, 'colluded')
    assert.equal(d.state?.state.status, 'settled')
    assert.equal(d.of('reexecute').length, 0, 'agreement: no re-execution without the audit')
    d.send({ type: 'provider-convicted', now: d.now, provider: peer(1), proof: 'bafy-proof' })
    assert.deepEqual(d.of('reexecute'), [{ type: 'reexecute', job: d.id, audit: true }])
    assert.equal(d.agent.view(d.id)?.audit?.status, 'auditing')
    d.send({ type: 'reexecuted', now: d.now, job: d.id, output: outputsOf('right').toString() })
    const second = d.state?.replication?.replicas.find((r) => r.provider === peer(2))
    assert.ok(second !== undefined)
    assert.deepEqual(d.of('publish-fraud-proof').map((p) => p.subject), [peer(2)], 'the convicted one needs no proof')
    assert.equal(d.agent.view(d.id)?.audit?.status, 'disproved')
    assert.deepEqual(audited(d).map((a) => a.status), ['auditing', 'disproved'])
    // the job stays settled (the payments are final); no payment or failure report comes of the audit
    assert.equal(d.state?.state.status, 'settled')
    assert.equal(d.of('record-failure').length, 0)
    // the co-signer's own conviction (from the proof) audits nothing again
    const before = d.effects.length
    d.send({ type: 'provider-convicted', now: d.now, provider: peer(2), proof: 'bafy-proof-2' })
    assert.equal(d.effects.slice(before).filter((e) => e.type === 'reexecute').length, 0)
  })

  it('the audit agrees: the result is confirmed and nobody else is accused', () => {
    const d = replicaDriver(verifiedJob({ mode: 'replicate', k: 2 }, 'wasm'))
    agreed(d, 'right')
    d.send({ type: 'provider-convicted', now: d.now, provider: peer(2), proof: 'bafy-proof' })
    d.send({ type: 'reexecuted', now: d.now, job: d.id, output: outputsOf('right').toString() })
    assert.equal(d.agent.view(d.id)?.audit?.status, 'confirmed')
    assert.equal(d.of('publish-fraud-proof').length, 0)
  })

  it('a process job signed by a convicted provider is marked suspect: no re-execution, no proof', () => {
    const d = replicaDriver(verifiedJob({ mode: 'replicate', k: 2 }))
    agreed(d, 'colluded')
    d.send({ type: 'provider-convicted', now: d.now, provider: peer(1), proof: 'bafy-proof' })
    assert.equal(d.of('reexecute').length, 0)
    assert.equal(d.of('publish-fraud-proof').length, 0)
    assert.equal(d.agent.view(d.id)?.audit?.status, 'suspect')
  })

  it('a conviction of a provider that signed none of the results, or a job not settled yet: nothing audited', () => {
    const d = replicaDriver(verifiedJob({ mode: 'replicate', k: 2 }, 'wasm'))
    d.submit()
    d.bid(1, 1_000_000)
    d.bid(2, 1_100_000)
    d.runTo(NOW + WINDOW)
    deliverReplica(d, 1, 'x')
    d.send({ type: 'provider-convicted', now: d.now, provider: peer(1), proof: 'bafy-proof' })
    assert.equal(d.agent.view(d.id)?.audit, undefined, 'still running: not an accepted result')
    deliverReplica(d, 2, 'x')
    d.send({ type: 'provider-convicted', now: d.now, provider: peer(7), proof: 'bafy-proof-7' })
    assert.equal(d.agent.view(d.id)?.audit, undefined)
    assert.equal(audited(d).length, 0)
  })

  it('a single-run wasm job: audited once settled, not while its outputs are still being checked', () => {
    const settled = replicaDriver(verifiedJob({ mode: 'none' }, 'wasm'))
    settled.submit()
    settled.bid(1, 1_000_000)
    settled.runTo(NOW + WINDOW)
    deliverReplica(settled, 1, 'colluded')
    assert.equal(settled.state?.state.status, 'settled')
    settled.send({ type: 'provider-convicted', now: settled.now, provider: peer(1), proof: 'bafy-proof' })
    assert.deepEqual(settled.of('reexecute'), [{ type: 'reexecute', job: settled.id, audit: true }])

    const checking = replicaDriver(verifiedJob({ mode: 'none' }, 'wasm'))
    checking.submit()
    checking.bid(1, 1_000_000)
    checking.runTo(NOW + WINDOW)
    checking.from(1, { type: 'award-response', decision: 'accept' })
    checking.from(1, { type: 'job-status', seq: 1, state: 'running', gpuSeconds: 0 })
    checking.runTo(checking.now + 10_000)
    checking.from(1, { type: 'receipt', exitCode: 0, gpuSeconds: 10, forThisRequester: true, receipt: receiptBy(checking, 1, 'colluded', 1) })
    assert.equal(checking.state?.state.status, 'verifying')
    checking.send({ type: 'provider-convicted', now: checking.now, provider: peer(1), proof: 'bafy-proof' })
    assert.equal(checking.of('reexecute').length, 0)
    assert.equal(checking.agent.view(checking.id)?.audit, undefined)
  })

  it('the agreement audit (1000 ‰) re-executes agreeing wasm replicas; a wrong agreement pays nobody and proves both wrong', () => {
    const d = replicaDriver(verifiedJob({ mode: 'replicate', k: 2 }, 'wasm'), { addresses: addressesOf(), auditUnproven: false, spotcheckSeed: new Uint8Array(32).fill(7), agreementAuditPerMille: 1000 })
    agreed(d, 'colluded')
    assert.deepEqual(d.of('reexecute'), [{ type: 'reexecute', job: d.id }])
    assert.equal(d.of('pay').filter((p) => p.final).length, 0)
    d.send({ type: 'reexecuted', now: d.now, job: d.id, output: outputsOf('right').toString() })
    assert.deepEqual(d.of('publish-fraud-proof').map((p) => p.subject).sort(), [peer(1), peer(2)].sort())
    assert.equal(d.of('pay').filter((p) => p.final).length, 0)
    assert.deepEqual(d.of('finished').map((f) => f.status), ['failed'])
  })

  it('the agreement audit confirms a right agreement (both paid), and its failed run leaves the agreement to decide', () => {
    for (const answer of ['right', 'failed'] as const) {
      const d = replicaDriver(verifiedJob({ mode: 'replicate', k: 2 }, 'wasm'), { addresses: addressesOf(), auditUnproven: false, spotcheckSeed: new Uint8Array(32).fill(7), agreementAuditPerMille: 1000 })
      agreed(d, 'right')
      if (answer === 'right') d.send({ type: 'reexecuted', now: d.now, job: d.id, output: outputsOf('right').toString() })
      else d.send({ type: 'reexecute-failed', now: d.now, job: d.id, detail: 'no inputs' })
      assert.deepEqual(d.of('pay').filter((p) => p.final).map((p) => p.payee).sort(), [peer(1), peer(2)].sort(), answer)
      assert.deepEqual(d.of('finished').map((f) => f.status), ['settled'], answer)
    }
  })

  it('no agreement audit at 0 ‰, without a seed, or for a process job', () => {
    const cases = [
      verifiedJob({ mode: 'replicate', k: 2 }, 'wasm'),
      verifiedJob({ mode: 'replicate', k: 2 }, 'wasm'),
      verifiedJob({ mode: 'replicate', k: 2 })
    ]
    const trusts = [
      { addresses: addressesOf(), auditUnproven: false, spotcheckSeed: new Uint8Array(32).fill(7), agreementAuditPerMille: 0 },
      { addresses: addressesOf(), auditUnproven: false, agreementAuditPerMille: 1000 },
      { addresses: addressesOf(), auditUnproven: false, spotcheckSeed: new Uint8Array(32).fill(7), agreementAuditPerMille: 1000 }
    ]
    cases.forEach((job, i) => {
      const d = replicaDriver(job, trusts[i])
      agreed(d, 'same')
      assert.equal(d.of('reexecute').length, 0, `case ${i}`)
      assert.equal(d.of('finished')[0]?.status, 'settled', `case ${i}`)
    })
    assert.throws(() => replicaDriver(verifiedJob({ mode: 'replicate', k: 2 }, 'wasm'), { agreementAuditPerMille: 1001 }), /agreementAuditPerMille/)
  })
})

describe('the requester agent: the proof audit (replica-runs.ts unprovenAgreement)', () => {
  const wasm = (): ReturnType<typeof verifiedJob> => verifiedJob({ mode: 'replicate', k: 2 }, 'wasm')

  it('on by default: strangers that agree are re-executed; matching the run proves both', () => {
    const d = replicaDriver(wasm(), { addresses: addressesOf() })
    agreed(d, 'right')
    assert.deepEqual(d.of('reexecute'), [{ type: 'reexecute', job: d.id }])
    assert.equal(d.of('pay').filter((p) => p.final).length, 0, 'nobody paid before the run')
    d.send({ type: 'reexecuted', now: d.now, job: d.id, output: outputsOf('right').toString() })
    assert.deepEqual(d.of('pay').filter((p) => p.final).map((p) => p.payee).sort(), [peer(1), peer(2)].sort())
    assert.deepEqual([d.agent.proven(peer(1)), d.agent.proven(peer(2)), d.agent.proven(peer(3))], [true, true, false])
  })

  it('an agreement with a proven provider is paid without a run and proves the stranger; a wrong run proves nobody', () => {
    const d = replicaDriver(wasm(), { addresses: addressesOf() })
    d.agent.prove(peer(1))
    agreed(d, 'right')
    assert.equal(d.of('reexecute').length, 0)
    assert.equal(d.of('finished')[0]?.status, 'settled')
    assert.equal(d.agent.proven(peer(2)), true, 'it matched a proven provider')
    const wrong = replicaDriver(wasm(), { addresses: addressesOf() })
    agreed(wrong, 'colluded')
    wrong.send({ type: 'reexecuted', now: wrong.now, job: wrong.id, output: outputsOf('right').toString() })
    assert.deepEqual([wrong.agent.proven(peer(1)), wrong.agent.proven(peer(2))], [false, false])
    assert.deepEqual(wrong.of('publish-fraud-proof').map((p) => p.subject).sort(), [peer(1), peer(2)].sort())
  })

  it('a failed own run leaves the agreement to decide and proves nobody; a process job is never audited so; a conviction unproves', () => {
    const d = replicaDriver(wasm(), { addresses: addressesOf() })
    agreed(d, 'right')
    d.send({ type: 'reexecute-failed', now: d.now, job: d.id, detail: 'no inputs' })
    assert.equal(d.of('finished')[0]?.status, 'settled')
    assert.equal(d.agent.proven(peer(1)), false)
    const p = replicaDriver(verifiedJob({ mode: 'replicate', k: 2 }), { addresses: addressesOf() })
    agreed(p, 'same')
    assert.equal(p.of('reexecute').length, 0)
    const c = replicaDriver(wasm(), { addresses: addressesOf() })
    c.agent.prove(peer(3))
    c.send({ type: 'provider-convicted', now: c.now, provider: peer(3), proof: 'bafy-proof' })
    assert.equal(c.agent.proven(peer(3)), false)
  })
})

describe('the requester agent: the proof audit and this node\'s re-execution limit', () => {
  it('skips the audit, with a note, when the replicas ran longer than this node re-executes; audits when they did not', () => {
    const wasm = verifiedJob({ mode: 'replicate', k: 2 }, 'wasm')
    // the replicas' receipts report runs of about a bid window (from NOW to their delivery)
    const short = replicaDriver(wasm, { addresses: addressesOf(), reexecuteLimitMs: 1 })
    agreed(short, 'colluded')
    assert.equal(short.of('reexecute').length, 0)
    assert.equal(short.of('finished')[0]?.status, 'settled', 'the agreement decides')
    assert.ok(short.of('note').some((n) => /no proof audit: the replicas ran/.test(n.text)))
    const enough = replicaDriver(wasm, { addresses: addressesOf(), reexecuteLimitMs: 3_600_000 })
    agreed(enough, 'colluded')
    assert.equal(enough.of('reexecute').length, 1, 'within the limit: audited')
  })
})
