import assert from 'node:assert/strict'
import * as dagCbor from '@ipld/dag-cbor'
import { Identity, NobleEd25519, encodeVarint, sealEnvelope } from '../../../crypto/index.js'
import {
  DEFAULT_CLOCK_SKEW_MS, ENVELOPE_DOMAIN, KINDS, MAX_ENVELOPE_BYTES, MessageRejectedError, ReplayCache, RejectReason,
  openMessage, payloadTypeOf, replayKey, sealMessage, validatePayload, type JobRequest, type RejectReason as Reason
} from '../../../protocol/index.js'
import { NOW } from '../../helpers/arbitraries.js'

const requester = new Identity(new Uint8Array(32).fill(2))
const other = new Identity(new Uint8Array(32).fill(3))

function job (overrides: Partial<JobRequest> = {}): JobRequest {
  return {
    v: 1,
    issuedAt: NOW,
    expiresAt: NOW + 3_600_000,
    nonce: new Uint8Array(16).fill(9),
    workload: { executor: 'process', argv: ['python3', 'train.py'], env: { SEED: '1' }, inputs: [], outputs: ['model.bin'], maxRuntimeSec: 3600, network: false },
    resources: { gpus: 1, minVramGB: 40, models: [], cpuCores: 4, memoryMiB: 16_384, diskMiB: 10_240 },
    sla: { tier: 'silver', maxPrice: 2_500_000, maxStartDelaySec: 300 },
    placement: { regions: ['eu'], residency: 'strict' },
    verification: { mode: 'none' },
    auction: { bidWindowMs: 500, paymentRule: 'first-price' },
    ...overrides
  }
}

/** Sign arbitrary payload bytes as a job request, bypassing sealMessage's checks. */
function signRaw (payload: Uint8Array, kind: keyof typeof KINDS = 'job-request'): Uint8Array {
  return sealEnvelope(requester, ENVELOPE_DOMAIN, payloadTypeOf(kind), payload)
}

function rejects (reason: Reason, fn: () => unknown): void {
  assert.throws(fn, (err: unknown) => {
    assert.ok(err instanceof MessageRejectedError, String(err))
    assert.equal(err.reason, reason, err.message)
    return true
  })
}

describe('protocol message rejections', () => {
  it('accepts a valid job request and names its signer', () => {
    const sealed = sealMessage(requester, 'job-request', job())
    const opened = openMessage(sealed.bytes, 'job-request', { now: NOW })
    assert.equal(opened.signer, requester.peerId)
    assert.equal(opened.kind, 'job-request')
  })

  it('verifies with either Ed25519 implementation', () => {
    const sealed = sealMessage(requester, 'job-request', job())
    openMessage(sealed.bytes, 'job-request', { now: NOW, ed25519: new NobleEd25519() })
  })

  it('TOO_LARGE: over the global limit, before any parsing', () => {
    rejects(RejectReason.TOO_LARGE, () => openMessage(new Uint8Array(MAX_ENVELOPE_BYTES + 1), 'job-request', { now: NOW }))
  })

  it('TOO_LARGE: over the kind limit, on seal and on open', () => {
    const big = job({ workload: { ...job().workload, argv: Array.from({ length: 20 }, () => 'x'.repeat(4000)) } })
    rejects(RejectReason.TOO_LARGE, () => sealMessage(requester, 'job-request', big))
    const bytes = signRaw(dagCbor.encode(big))
    assert.ok(bytes.byteLength > KINDS['job-request'].maxBytes)
    rejects(RejectReason.TOO_LARGE, () => openMessage(bytes, 'job-request', { now: NOW }))
  })

  it('TOO_LARGE: over a caller-given limit', () => {
    const sealed = sealMessage(requester, 'job-request', job())
    rejects(RejectReason.TOO_LARGE, () => openMessage(sealed.bytes, 'job-request', { now: NOW, maxBytes: 100 }))
  })

  it('MALFORMED_ENVELOPE and UNSUPPORTED_KEY', () => {
    rejects(RejectReason.MALFORMED_ENVELOPE, () => openMessage(new Uint8Array([1, 2, 3]), 'bid', { now: NOW }))
    const sealed = sealMessage(requester, 'job-request', job()).bytes
    // public key protobuf Type 1 (Ed25519) → 2 (secp256k1): bytes 2..5 are 08 01 12 20
    const secp = sealed.slice()
    assert.deepEqual([...secp.subarray(2, 6)], [0x08, 0x01, 0x12, 0x20])
    secp[3] = 0x02
    rejects(RejectReason.UNSUPPORTED_KEY, () => openMessage(secp, 'job-request', { now: NOW }))
  })

  it('UNKNOWN_PAYLOAD_TYPE and WRONG_PAYLOAD_TYPE', () => {
    const foreign = sealEnvelope(requester, ENVELOPE_DOMAIN, encodeVarint(0x300000), dagCbor.encode(job()))
    rejects(RejectReason.UNKNOWN_PAYLOAD_TYPE, () => openMessage(foreign, 'job-request', { now: NOW }))
    const sealed = sealMessage(requester, 'job-request', job())
    rejects(RejectReason.WRONG_PAYLOAD_TYPE, () => openMessage(sealed.bytes, ['bid', 'award'], { now: NOW }))
  })

  it('BAD_SIGNATURE: another domain, or a signature from another key', () => {
    const payload = dagCbor.encode(job())
    const otherDomain = sealEnvelope(requester, 'libp2p-peer-record', payloadTypeOf('job-request'), payload)
    rejects(RejectReason.BAD_SIGNATURE, () => openMessage(otherDomain, 'job-request', { now: NOW }))
    const good = signRaw(payload)
    const byOther = sealEnvelope(other, ENVELOPE_DOMAIN, payloadTypeOf('job-request'), payload)
    // graft other's signature (last 64 bytes) onto requester's envelope
    const grafted = good.slice()
    grafted.set(byOther.subarray(byOther.byteLength - 64), grafted.byteLength - 64)
    rejects(RejectReason.BAD_SIGNATURE, () => openMessage(grafted, 'job-request', { now: NOW }))
  })

  it('MALFORMED_PAYLOAD: not CBOR', () => {
    rejects(RejectReason.MALFORMED_PAYLOAD, () => openMessage(signRaw(Uint8Array.from([0xff, 0x00])), 'job-request', { now: NOW }))
  })

  it('NON_CANONICAL: an integer encoded with more bytes than needed', () => {
    const canonical = dagCbor.encode(job())
    // "v": 1 is a1-keyed text "v" (61 76) followed by 01; rewrite the 01 as 18 01
    const at = canonical.findIndex((_, i) => canonical[i] === 0x61 && canonical[i + 1] === 0x76 && canonical[i + 2] === 0x01)
    assert.ok(at >= 0)
    const bloated = Uint8Array.from([...canonical.subarray(0, at + 2), 0x18, 0x01, ...canonical.subarray(at + 3)])
    rejects(RejectReason.NON_CANONICAL, () => openMessage(signRaw(bloated), 'job-request', { now: NOW }))
  })

  it('UNSUPPORTED_VERSION', () => {
    rejects(RejectReason.UNSUPPORTED_VERSION, () => openMessage(signRaw(dagCbor.encode({ ...job(), v: 2 })), 'job-request', { now: NOW }))
  })

  it('UNKNOWN_FIELD at the top level and nested', () => {
    rejects(RejectReason.UNKNOWN_FIELD, () => openMessage(signRaw(dagCbor.encode({ ...job(), extra: true })), 'job-request', { now: NOW }))
    const nested = { ...job(), sla: { ...job().sla, discount: 5 } }
    rejects(RejectReason.UNKNOWN_FIELD, () => openMessage(signRaw(dagCbor.encode(nested)), 'job-request', { now: NOW }))
    rejects(RejectReason.UNKNOWN_FIELD, () => sealMessage(requester, 'job-request', nested as JobRequest))
  })

  it('INVALID_FIELD: wrong types, ranges and paths, with the field named', () => {
    const cases: Array<[string, unknown]> = [
      ['sla.tier', { ...job(), sla: { ...job().sla, tier: 'platinum' } }],
      ['resources.gpus', { ...job(), resources: { ...job().resources, gpus: -1 } }],
      ['auction.bidWindowMs', { ...job(), auction: { ...job().auction, bidWindowMs: 1.5 } }],
      ['workload.outputs.0', { ...job(), workload: { ...job().workload, outputs: ['../../etc/passwd'] } }],
      ['nonce', { ...job(), nonce: new Uint8Array(2) }],
      ['placement.regions.0', { ...job(), placement: { regions: ['EU West'], residency: 'strict' } }]
    ]
    for (const [path, value] of cases) {
      assert.throws(() => validatePayload('job-request', value), (err: unknown) =>
        err instanceof MessageRejectedError && err.reason === RejectReason.INVALID_FIELD && err.path === path, path)
    }
  })

  it('EXPIRED, FUTURE_DATED and the clock-skew allowance', () => {
    const sealed = sealMessage(requester, 'job-request', job())
    rejects(RejectReason.EXPIRED, () => openMessage(sealed.bytes, 'job-request', { now: NOW + 3_600_000 }))
    openMessage(sealed.bytes, 'job-request', { now: NOW - DEFAULT_CLOCK_SKEW_MS })
    rejects(RejectReason.FUTURE_DATED, () => openMessage(sealed.bytes, 'job-request', { now: NOW - DEFAULT_CLOCK_SKEW_MS - 1 }))
    openMessage(sealed.bytes, 'job-request', { now: NOW - 5000, clockSkewMs: 5000 })
    rejects(RejectReason.FUTURE_DATED, () => openMessage(sealed.bytes, 'job-request', { now: NOW - 5001, clockSkewMs: 5000 }))
  })

  it('historical opening skips freshness and replay, not the signature', () => {
    const sealed = sealMessage(requester, 'job-request', job())
    const replay = new ReplayCache()
    openMessage(sealed.bytes, 'job-request', { now: NOW + 10 * 86_400_000, historical: true, replay })
    openMessage(sealed.bytes, 'job-request', { now: NOW + 10 * 86_400_000, historical: true, replay })
    assert.equal(replay.size, 0)
    const tampered = sealed.bytes.slice()
    tampered[tampered.byteLength - 1] = (tampered[tampered.byteLength - 1] as number) ^ 1
    rejects(RejectReason.BAD_SIGNATURE, () => openMessage(tampered, 'job-request', { now: NOW, historical: true }))
  })

  it('BAD_LIFETIME: expiring before issue, or living longer than the kind allows', () => {
    rejects(RejectReason.BAD_LIFETIME, () => sealMessage(requester, 'job-request', job({ expiresAt: NOW - 1 })))
    rejects(RejectReason.BAD_LIFETIME, () => openMessage(signRaw(dagCbor.encode(job({ expiresAt: NOW - 1 }))), 'job-request', { now: NOW }))
    const tooLong = job({ expiresAt: NOW + KINDS['job-request'].maxLifetimeMs + 1 })
    rejects(RejectReason.BAD_LIFETIME, () => openMessage(signRaw(dagCbor.encode(tooLong)), 'job-request', { now: NOW }))
  })

  it('REPLAY: the same nonce from the same signer, even with another payload', () => {
    const replay = new ReplayCache()
    openMessage(sealMessage(requester, 'job-request', job()).bytes, 'job-request', { now: NOW, replay })
    const sameNonce = sealMessage(requester, 'job-request', job({ label: 'different payload' }))
    rejects(RejectReason.REPLAY, () => openMessage(sameNonce.bytes, 'job-request', { now: NOW, replay }))
    // another signer may use the same nonce
    openMessage(sealMessage(other, 'job-request', job()).bytes, 'job-request', { now: NOW, replay })
    // a fresh nonce is fine
    openMessage(sealMessage(requester, 'job-request', job({ nonce: new Uint8Array(16).fill(10) })).bytes, 'job-request', { now: NOW, replay })
  })

  it('REPLAY: a sender that records its own message under replayKey refuses a copy of it coming back', () => {
    // the job request is keyed by nonce, a bid by CID: recording either under its CID alone would miss the job
    const sent = sealMessage(requester, 'job-request', job())
    assert.equal(replayKey(sent, requester.peerId), `job-request/${requester.peerId}/${'09'.repeat(16)}`)
    const replay = new ReplayCache()
    assert.ok(replay.add(replayKey(sent, requester.peerId), sent.payload.expiresAt, NOW))
    rejects(RejectReason.REPLAY, () => openMessage(sent.bytes, 'job-request', { now: NOW, replay }))
    const bid = sealMessage(other, 'bid', {
      v: 1, issuedAt: NOW, expiresAt: NOW + 60_000, job: sent.cid, provider: other.peerId,
      price: 1_000_000, gpus: ['GPU-1'], model: 'nvidia-l4', vramMiB: 23_034, region: 'eu', startBy: NOW, ad: sent.cid
    })
    assert.equal(replayKey(bid, other.peerId), `bid/${other.peerId}/${bid.cid.toString()}`)
    assert.ok(replay.add(replayKey(bid, other.peerId), bid.payload.expiresAt, NOW))
    rejects(RejectReason.REPLAY, () => openMessage(bid.bytes, 'bid', { now: NOW, replay }))
  })

  it('SIGNER_MISMATCH: a bid re-signed by a peer other than its provider', () => {
    const bid = {
      v: 1 as const, issuedAt: NOW, expiresAt: NOW + 60_000, job: sealMessage(requester, 'job-request', job()).cid, provider: other.peerId,
      price: 1_000_000, gpus: ['GPU-1'], model: 'nvidia-l4', vramMiB: 23_034, region: 'eu', startBy: NOW, ad: sealMessage(requester, 'job-request', job()).cid
    }
    openMessage(sealMessage(other, 'bid', bid).bytes, 'bid', { now: NOW })
    rejects(RejectReason.SIGNER_MISMATCH, () => sealMessage(requester, 'bid', bid))
    const forged = sealEnvelope(requester, ENVELOPE_DOMAIN, payloadTypeOf('bid'), dagCbor.encode(bid))
    rejects(RejectReason.SIGNER_MISMATCH, () => openMessage(forged, 'bid', { now: NOW }))
  })

  it('a rejected message does not enter the replay cache', () => {
    const replay = new ReplayCache()
    const sealed = sealMessage(requester, 'job-request', job())
    const tampered = sealed.bytes.slice()
    tampered[tampered.byteLength - 1] = (tampered[tampered.byteLength - 1] as number) ^ 1
    rejects(RejectReason.BAD_SIGNATURE, () => openMessage(tampered, 'job-request', { now: NOW, replay }))
    assert.equal(replay.size, 0)
    openMessage(sealed.bytes, 'job-request', { now: NOW, replay })
  })
})
