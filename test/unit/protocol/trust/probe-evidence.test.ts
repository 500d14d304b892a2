import assert from 'node:assert/strict'
import { probeEvidence, probeReading } from '../../../../protocol/trust/probe-evidence.js'
import { evidenceFromMessage } from '../../../../protocol/trust/reputation-evidence.js'
import { openMessage, sealMessage } from '../../../../protocol/index.js'
import { probeResultPayload } from '../../../../protocol/trust/probe-result.js'
import { probeClaim } from '../../../../protocol/trust/probe-throughput.js'
import { Identity } from '../../../../crypto/index.js'

const NOW = 1_767_225_600_000
const base = { subject: 'P', issuedAt: NOW }

describe('probe results as reputation evidence', () => {
  it('pass is ok; flagged is a failure even with a right answer; exactly 2× is not flagged', () => {
    assert.equal(probeReading({ kind: 'freivalds-matmul', ok: true, durationMs: 100, expectedMs: 50 }), 'pass')
    assert.equal(probeReading({ kind: 'freivalds-matmul', ok: true, durationMs: 101, expectedMs: 50 }), 'flagged')
    assert.equal(probeEvidence('me', { ...base, kind: 'freivalds-matmul', ok: true, durationMs: 100, expectedMs: 50 }).ok, true)
    assert.deepEqual(probeEvidence('me', { ...base, kind: 'freivalds-matmul', ok: true, durationMs: 101, expectedMs: 50 }),
      { signer: 'me', subject: 'P', kind: 'probe', ok: false, at: NOW })
  })

  it('a wrong answer is a failure; a ping with no answer is unreachable, a failure; an answered ping is ok', () => {
    assert.equal(probeReading({ kind: 'freivalds-matmul', ok: false, durationMs: 10, expectedMs: 50 }), 'failed')
    assert.equal(probeEvidence('me', { ...base, kind: 'freivalds-matmul', ok: false, durationMs: 10, expectedMs: 50 }).ok, false)
    assert.equal(probeReading({ kind: 'ping', ok: false, durationMs: 10_000 }), 'unreachable')
    assert.equal(probeEvidence('me', { ...base, kind: 'ping', ok: false, durationMs: 10_000 }).ok, false)
    assert.equal(probeReading({ kind: 'ping', ok: true, durationMs: 3 }), 'pass')
    assert.equal(probeEvidence('me', { ...base, kind: 'ping', ok: true, durationMs: 3 }).ok, true)
  })

  it('a gossiped probe-result that reads flagged counts as a failure of its subject', () => {
    const prober = new Identity(new Uint8Array(32).fill(8))
    const provider = new Identity(new Uint8Array(32).fill(7)).peerId
    const payload = probeResultPayload({
      subject: provider, nonce: new Uint8Array(16).fill(3), claim: probeClaim('nvidia-h100-80gb-hbm3'), n: 2048, expectedMs: 51,
      ok: true, rttMs: 1, durationMs: 500, device: 'cpu', now: NOW - 1000
    })
    const m = sealMessage(prober, 'probe-result', payload)
    const e = evidenceFromMessage(openMessage(m.bytes, 'probe-result', { now: NOW }))
    assert.deepEqual(e, { signer: prober.peerId, subject: provider, kind: 'probe', ok: false, at: NOW - 1000 })
  })
})
