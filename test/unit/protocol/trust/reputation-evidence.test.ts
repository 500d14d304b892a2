import assert from 'node:assert/strict'
import { Identity, cidOfValue } from '../../../../crypto/index.js'
import { openMessage, sealMessage } from '../../../../protocol/index.js'
import { evidenceFromMessage } from '../../../../protocol/trust/reputation-evidence.js'
import { ReputationStore } from '../../../../protocol/trust/reputation.js'

const NOW = 1_767_225_600_000
const reporter = new Identity(new Uint8Array(32).fill(3))
const provider = new Identity(new Uint8Array(32).fill(4)).peerId
const job = cidOfValue({ job: 1 }).cid
const header = { v: 1 as const, issuedAt: NOW - 5000, expiresAt: NOW + 3_600_000 }

describe('evidence from signed messages (protocol/trust/reputation-evidence.ts)', () => {
  it('a payment is its signer\'s settlement with the payee, at its issue time', () => {
    const m = sealMessage(reporter, 'payment', { ...header, job, award: job, payee: provider, seq: 1, interval: 1, cumulative: 10, gpuSeconds: 60 })
    assert.deepEqual(evidenceFromMessage(openMessage(m.bytes, ['payment', 'failure-report', 'probe-result'], { now: NOW })),
      { signer: reporter.peerId, subject: provider, kind: 'settlement', at: NOW - 5000 })
  })

  it('a failure report is its signer\'s failure of the subject, at the time it was observed, with its reason', () => {
    const m = sealMessage(reporter, 'failure-report', { ...header, job, subject: provider, reason: 'crashed', observedAt: NOW - 9000, evidence: [] })
    assert.deepEqual(evidenceFromMessage(openMessage(m.bytes, 'failure-report', { now: NOW })),
      { signer: reporter.peerId, subject: provider, kind: 'failure', reason: 'crashed', at: NOW - 9000 })
  })

  it('a probe result counts as it came out, and a store takes every mapped record', () => {
    const store = new ReputationStore(reporter.peerId)
    for (const ok of [true, false]) {
      const m = sealMessage(reporter, 'probe-result', { ...header, subject: provider, nonce: new Uint8Array(8).fill(ok ? 1 : 2), kind: 'ping', ok, durationMs: 3 })
      const e = evidenceFromMessage(openMessage(m.bytes, 'probe-result', { now: NOW }))
      assert.deepEqual(e, { signer: reporter.peerId, subject: provider, kind: 'probe', ok, at: NOW - 5000 })
      assert.equal(store.add(e), 'own')
    }
    assert.deepEqual(store.own(provider), { ok: 1, failed: 1 })
  })
})
