import assert from 'node:assert/strict'
import { BudgetRefusal } from '../../../../protocol/trust/budget.js'
import { ALWAYS_RELEVANT_KINDS, EVIDENCE_BYTES_PER_SIGNER, EVIDENCE_KINDS, EvidenceQuota, evidenceSubjects, isRelevant } from '../../../../protocol/trust/evidence-budget.js'

const id = (s: string): { toString: () => string } => ({ toString: () => s })
const knows = (jobs: string[], peers: string[]) => ({ job: (j: string) => jobs.includes(j), peer: (p: string) => peers.includes(p) })

describe('evidence relevance (protocol/trust/evidence-budget.ts)', () => {
  it('names the jobs and peers each kind is about', () => {
    assert.deepEqual(evidenceSubjects('receipt', { job: id('job-1'), award: id('award-1'), requester: 'req' }, 'prov'), { jobs: ['job-1'], peers: ['prov', 'req'] })
    assert.deepEqual(evidenceSubjects('failure-report', { job: id('job-1'), subject: 'prov' }, 'req'), { jobs: ['job-1'], peers: ['prov'] })
    assert.deepEqual(evidenceSubjects('attestation', { gpus: [] }, 'prov'), { jobs: [], peers: ['prov'] })
    assert.deepEqual(evidenceSubjects('probe-result', { subject: 'prov' }, 'prober'), { jobs: [], peers: ['prov'] })
    assert.deepEqual(evidenceSubjects('fraud-proof', { job: id('job-1'), subject: 'prov' }, 'anyone'), { jobs: ['job-1'], peers: ['prov'] })
  })

  it('a failure report is relevant for its job or its subject, and not for its signer alone', () => {
    const report = evidenceSubjects('failure-report', { job: id('job-1'), subject: 'prov' }, 'stranger')
    assert.equal(isRelevant(report, knows(['job-1'], [])), true)
    assert.equal(isRelevant(report, knows([], ['prov'])), true)
    assert.equal(isRelevant(report, knows(['job-2'], ['stranger'])), false)
    assert.equal(isRelevant(report, knows([], [])), false)
  })
})

describe('kinds taken whatever they concern', () => {
  it('only fraud proofs: a stranger\'s failure report about a stranger is still not kept', () => {
    assert.deepEqual(EVIDENCE_KINDS.filter((k) => ALWAYS_RELEVANT_KINDS.includes(k)), ['fraud-proof'])
  })
})

describe('evidence quota', () => {
  it('admits a signer up to exactly its quota, refuses one byte more, and another signer still gets in', () => {
    const q = new EvidenceQuota({ perSigner: 100, total: 1_000 })
    assert.equal(q.charge('a', 60), undefined)
    assert.equal(q.charge('a', 40), undefined)
    assert.equal(q.usedBy('a'), 100)
    assert.equal(q.charge('a', 1), BudgetRefusal.SIGNER_QUOTA)
    assert.equal(q.usedBy('a'), 100, 'a refusal charges nothing')
    assert.equal(q.charge('b', 100), undefined)
    assert.equal(q.usedBy(), 200)
  })

  it('refuses everyone once the total is reached exactly, and counts what was loaded', () => {
    const q = new EvidenceQuota({ perSigner: 100, total: 150 })
    q.load('old', 100)
    assert.equal(q.charge('new', 50), undefined)
    assert.equal(q.charge('other', 1), BudgetRefusal.STORE_FULL)
    assert.equal(q.charge('old', 1), BudgetRefusal.SIGNER_QUOTA)
  })

  it('the defaults: 2 MiB per signer (300 reports of 120 KiB from one signer stop at the 17th)', () => {
    const q = new EvidenceQuota()
    assert.equal(q.perSigner, EVIDENCE_BYTES_PER_SIGNER)
    let kept = 0
    for (let i = 0; i < 300; i++) if (q.charge('spammer', 120 * 1024) === undefined) kept++
    assert.equal(kept, 17)
  })

  it('refuses quotas that are not positive integers', () => {
    assert.throws(() => new EvidenceQuota({ perSigner: 0 }), RangeError)
    assert.throws(() => new EvidenceQuota({ total: 1.5 }), RangeError)
  })
})
