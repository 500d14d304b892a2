import assert from 'node:assert/strict'
import { Identity, decodeEnvelope, sealEnvelope } from '../../../../crypto/index.js'
import { ENVELOPE_DOMAIN, MessageRejectedError, ReplayCache, RejectReason, encodePayload, openMessage, payloadTypeOf, sealMessage, type GpuInfo } from '../../../../protocol/index.js'
import { AttestationError, attestationId, attestationPayload, verifyAttestation } from '../../../../protocol/trust/attestation.js'
import { probeResultPayload } from '../../../../protocol/trust/probe-result.js'
import { probeClaim } from '../../../../protocol/trust/probe-throughput.js'

const NOW = 1_767_225_600_000
const provider = new Identity(new Uint8Array(32).fill(7))
const other = new Identity(new Uint8Array(32).fill(8))
const GPUS: GpuInfo[] = [
  { index: 0, uuid: 'GPU-5b0e1a3c-7d2f-4e8a-9c61-0f3e2d4b6a78', name: 'NVIDIA H100 80GB HBM3', model: 'nvidia-h100-80gb-hbm3', vramMiB: 81_559, driver: '565.57.01', provenance: 'detected' },
  { index: 1, uuid: 'GPU-declared-0011223344556677-1', name: 'NVIDIA L4', model: 'nvidia-l4', vramMiB: 23_034, provenance: 'declared' }
]
const BENCHMARK = { name: 'freivalds-matmul-cpu', value: 120_000_000, unit: 'mac-per-s', durationMs: 17 }

function attest (signer = provider, gpus = GPUS, extra = {}) {
  return sealMessage(signer, 'attestation', attestationPayload({ provider: signer.peerId, gpus, host: { cpuCores: 32, memoryMiB: 262_144 }, benchmark: BENCHMARK, now: NOW, ...extra }))
}

function adOf (signer: Identity, attestations = [attest().cid], gpus = GPUS) {
  return { signer: signer.peerId, payload: { attestations, gpus } }
}

function rejection (fn: () => unknown): string {
  try { fn() } catch (err) {
    if (err instanceof MessageRejectedError) return err.reason
    if (err instanceof AttestationError) return err.code
    throw err
  }
  assert.fail('accepted')
}

describe('protocol/trust/attestation', () => {
  const sealed = attest()

  it('its id is the CID of its payload, and it verifies against the ad that lists it', () => {
    assert.ok(attestationId(sealed.payload).equals(sealed.cid))
    const verified = verifyAttestation(sealed.bytes, adOf(provider), { now: NOW })
    assert.equal(verified.attestation.signer, provider.peerId)
    assert.equal(verified.confidential, 'absent')
    assert.deepEqual(verified.attestation.payload.gpus.map((g) => g.provenance), ['detected', 'declared'])
  })

  it('a forged signature is BAD_SIGNATURE', () => {
    const forged = sealed.bytes.slice()
    forged.set([forged[forged.length - 1]! ^ 1], forged.length - 1)
    assert.equal(rejection(() => verifyAttestation(forged, adOf(provider), { now: NOW })), RejectReason.BAD_SIGNATURE)
  })

  it('the provider’s payload re-signed by another key is SIGNER_MISMATCH', () => {
    const envelope = decodeEnvelope(sealed.bytes)
    const resigned = sealEnvelope(other, ENVELOPE_DOMAIN, payloadTypeOf('attestation'), envelope.payload)
    assert.equal(rejection(() => verifyAttestation(resigned, adOf(provider), { now: NOW })), RejectReason.SIGNER_MISMATCH)
  })

  it('another provider’s own attestation listed in this ad is WRONG_PROVIDER', () => {
    const theirs = attest(other)
    assert.equal(rejection(() => verifyAttestation(theirs.bytes, adOf(provider, [theirs.cid]), { now: NOW })), 'WRONG_PROVIDER')
  })

  it('an attestation the ad does not list is NOT_IN_AD', () => {
    assert.equal(rejection(() => verifyAttestation(sealed.bytes, adOf(provider, []), { now: NOW })), 'NOT_IN_AD')
    const newer = attest(provider, GPUS, { now: NOW + 1 })
    assert.equal(rejection(() => verifyAttestation(newer.bytes, adOf(provider), { now: NOW + 1 })), 'NOT_IN_AD')
  })

  it('an ad selling a GPU the attestation does not state the same way is GPU_MISMATCH', () => {
    const one = attest(provider, GPUS.slice(0, 1))
    assert.equal(rejection(() => verifyAttestation(one.bytes, adOf(provider, [one.cid]), { now: NOW })), 'GPU_MISMATCH')
    // the ad may sell fewer GPUs than attested
    verifyAttestation(sealed.bytes, adOf(provider, [sealed.cid], GPUS.slice(1)), { now: NOW })
    for (const change of [{ vramMiB: 81_560 }, { name: 'NVIDIA H200' }, { provenance: 'declared' as const }]) {
      const ad = adOf(provider, [sealed.cid], [{ ...GPUS[0]!, ...change }])
      assert.equal(rejection(() => verifyAttestation(sealed.bytes, ad, { now: NOW })), 'GPU_MISMATCH', JSON.stringify(change))
    }
  })

  it('carries confidential-computing evidence without ever trusting it', () => {
    const cc = attest(provider, GPUS, { confidential: { scheme: 'nvidia-cc', evidence: new Uint8Array([1, 2, 3]) } })
    assert.equal(verifyAttestation(cc.bytes, adOf(provider, [cc.cid]), { now: NOW }).confidential, 'unverified')
    assert.throws(() => encodePayload('attestation', { ...cc.payload, confidential: { scheme: 'amd-sev' as 'nvidia-cc', evidence: new Uint8Array([1]) } }))
  })

  it('a replayed attestation or probe result is REPLAY', () => {
    const replay = new ReplayCache()
    verifyAttestation(sealed.bytes, adOf(provider), { now: NOW, replay })
    assert.equal(rejection(() => verifyAttestation(sealed.bytes, adOf(provider), { now: NOW, replay })), RejectReason.REPLAY)

    const result = sealMessage(other, 'probe-result', probeResultPayload({
      subject: provider.peerId, nonce: new Uint8Array(16).fill(3), claim: probeClaim('nvidia-h100-80gb-hbm3'),
      n: 2048, expectedMs: 52, ok: true, rttMs: 1, durationMs: 60_000, device: 'cpu', now: NOW
    }))
    openMessage(result.bytes, 'probe-result', { now: NOW, replay })
    assert.equal(rejection(() => openMessage(result.bytes, 'probe-result', { now: NOW, replay })), RejectReason.REPLAY)
    // the same nonce in a new result from the same prober is a replay too (probe-results are keyed by nonce)
    const again = sealMessage(other, 'probe-result', { ...result.payload, durationMs: 1 })
    assert.equal(rejection(() => openMessage(again.bytes, 'probe-result', { now: NOW, replay })), RejectReason.REPLAY)
  })
})
