/**
 * The retroactive audit after a conviction (protocol/market/result-audit.ts) at its edges: no past
 * results, results the convicted provider did not sign, a co-signer convicted already, a
 * non-deterministic result, the bounds (one at a time, the queue's cap), once per job, a run that
 * agrees or fails.
 */
import assert from 'node:assert/strict'
import {
  InvalidResultAuditParamsError, ResultAudits, createResultAuditParams, defaultResultAuditParams, type AcceptedResult
} from '../../../../protocol/index.js'

const P = 'peer-p'
const Q = 'peer-q'
const H = 'peer-honest'
const WRONG = 'bafy-wrong'
const RIGHT = 'bafy-right'

function result (job: string, signers: string[], deterministic = true, outputs = WRONG): AcceptedResult {
  return { job, deterministic, outputs, signers: signers.map((provider) => ({ provider, receipt: `receipt-${job}-${provider}` })) }
}

const none = (): boolean => false

describe('the retroactive audit after a conviction (protocol/market/result-audit.ts)', () => {
  it('no past results: nothing to do', () => {
    const a = new ResultAudits()
    assert.deepEqual(a.onConvicted(P, []), { start: [], changed: [], prove: [] })
  })

  it('revisits only the results the convicted provider signed', () => {
    const a = new ResultAudits(createResultAuditParams({ concurrent: 4 }))
    const step = a.onConvicted(P, [result('j1', [P, Q]), result('j2', [H, Q]), result('j3', [H, P], true, RIGHT)])
    assert.deepEqual(step.start, ['j1', 'j3'])
    assert.equal(a.recordOf('j2'), undefined)
    assert.deepEqual(step.changed.map((c) => [c.job, c.record.status]), [['j1', 'auditing'], ['j3', 'auditing']])
  })

  it('a re-execution that names another output disproves the result and proves every co-signer wrong but those convicted already', () => {
    const a = new ResultAudits()
    a.onConvicted(P, [result('j1', [P, Q, H])])
    const convicted = (p: string): boolean => p === P || p === H
    const step = a.onReexecuted('j1', RIGHT, convicted)
    assert.deepEqual(step.prove, [{ job: 'j1', subject: Q, receipt: 'receipt-j1-peer-q' }])
    assert.equal(a.recordOf('j1')?.status, 'disproved')
    assert.match(a.recordOf('j1')?.detail ?? '', /result disproved.*1 signer\(s\) proven wrong.*cannot be taken back/)
    assert.equal(a.isRunning('j1'), false)
  })

  it('every co-signer convicted already: disproved, no proof', () => {
    const a = new ResultAudits()
    a.onConvicted(P, [result('j1', [P, Q])])
    const step = a.onReexecuted('j1', RIGHT, () => true)
    assert.deepEqual(step.prove, [])
    assert.equal(a.recordOf('j1')?.status, 'disproved')
  })

  it('a re-execution that agrees confirms the result and accuses nobody', () => {
    const a = new ResultAudits()
    a.onConvicted(P, [result('j1', [P, H], true, RIGHT)])
    const step = a.onReexecuted('j1', RIGHT, none)
    assert.deepEqual(step.prove, [])
    assert.equal(a.recordOf('j1')?.status, 'confirmed')
  })

  it('a non-deterministic result is marked suspect, never re-executed, nobody accused', () => {
    const a = new ResultAudits()
    const step = a.onConvicted(P, [result('j1', [P, Q], false)])
    assert.deepEqual(step.start, [])
    assert.deepEqual(step.prove, [])
    assert.equal(a.recordOf('j1')?.status, 'suspect')
    assert.match(a.recordOf('j1')?.detail ?? '', /suspect: signed by peer-p/)
    // the co-signer's conviction later changes nothing
    assert.deepEqual(a.onConvicted(Q, [result('j1', [P, Q], false)]).changed, [])
  })

  it('one re-execution at a time (concurrent 1): the next starts when one ends, in the order queued', () => {
    const a = new ResultAudits(createResultAuditParams({ concurrent: 1 }))
    const first = a.onConvicted(P, [result('j1', [P]), result('j2', [P]), result('j3', [P])])
    assert.deepEqual(first.start, ['j1'])
    assert.deepEqual([a.recordOf('j2')?.status, a.recordOf('j3')?.status], ['queued', 'queued'])
    // an answer for a job not running is not the audit's
    assert.deepEqual(a.onReexecuted('j2', RIGHT, none), { start: [], changed: [], prove: [] })
    assert.deepEqual(a.onReexecuted('j1', RIGHT, none).start, ['j2'])
    assert.deepEqual(a.onReexecuted('j2', undefined, none, 'no inputs').start, ['j3'])
    assert.equal(a.recordOf('j2')?.status, 'failed')
    assert.match(a.recordOf('j2')?.detail ?? '', /failed: no inputs/)
  })

  it('the queue\'s cap: beyond maxQueued a job is left unaudited, and says so', () => {
    const a = new ResultAudits(createResultAuditParams({ concurrent: 1, maxQueued: 1 }))
    const step = a.onConvicted(P, [result('j1', [P]), result('j2', [P]), result('j3', [P])])
    assert.deepEqual(step.start, ['j1'])
    assert.deepEqual(['j1', 'j2', 'j3'].map((j) => a.recordOf(j)?.status), ['auditing', 'queued', 'unaudited'])
    assert.match(a.recordOf('j3')?.detail ?? '', /queue is full \(1\)/)
    // maxQueued 0: nothing waits, but one may still run
    const b = new ResultAudits(createResultAuditParams({ concurrent: 1, maxQueued: 0 }))
    assert.deepEqual(b.onConvicted(P, [result('j1', [P]), result('j2', [P])]).start, ['j1'])
    assert.deepEqual([b.recordOf('j1')?.status, b.recordOf('j2')?.status], ['auditing', 'unaudited'])
  })

  it('at most once per job: a second conviction of a co-signer does not re-run an audited job', () => {
    const a = new ResultAudits()
    a.onConvicted(P, [result('j1', [P, Q])])
    a.onReexecuted('j1', RIGHT, (p) => p === P)
    assert.deepEqual(a.onConvicted(Q, [result('j1', [P, Q])]), { start: [], changed: [], prove: [] })
    assert.equal(a.recordOf('j1')?.by, P)
  })

  it('the params trio: defaults, and out-of-range values throw a typed error', () => {
    assert.deepEqual(createResultAuditParams(), { ...defaultResultAuditParams })
    for (const bad of [{ concurrent: 0 }, { concurrent: 1.5 }, { maxQueued: -1 }, { concurrent: 65 }]) {
      assert.throws(() => createResultAuditParams(bad), (e: unknown) => e instanceof InvalidResultAuditParamsError && e.code === 'INVALID_AUDIT_PARAMS')
    }
    assert.throws(() => new ResultAudits({ concurrent: 0, maxQueued: 1 }), InvalidResultAuditParamsError)
  })
})
