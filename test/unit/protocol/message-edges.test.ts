/**
 * openMessage / sealMessage at their exact edges (issue 9, mutation audit of protocol/message.ts): a lifetime of
 * zero and of exactly the kind's maximum, expiry at exactly `expiresAt`, issue at exactly the skew allowance,
 * sizes at exactly the kind's, the caller's and the global limit, and what the replay cache records.
 * Real signatures throughout.
 */
import assert from 'node:assert/strict'
import * as dagCbor from '@ipld/dag-cbor'
import { Identity, sealEnvelope } from '../../../crypto/index.js'
import {
  DEFAULT_CLOCK_SKEW_MS, ENVELOPE_DOMAIN, KINDS, MAX_ENVELOPE_BYTES, MessageRejectedError, ReplayCache, RejectReason,
  openMessage, openRoundRequest, payloadTypeOf, replayKey, sealMessage, type Bid, type JobRequest, type OpenedMessage, type RejectReason as Reason
} from '../../../protocol/index.js'
import { NOW } from '../../helpers/arbitraries.js'

const requester = new Identity(new Uint8Array(32).fill(2))
const provider = new Identity(new Uint8Array(32).fill(3))
const HOUR = 3_600_000

function job (overrides: Partial<JobRequest> = {}): JobRequest {
  return {
    v: 1,
    issuedAt: NOW,
    expiresAt: NOW + HOUR,
    nonce: new Uint8Array(16).fill(9),
    workload: { executor: 'process', argv: ['python3', 'train.py'], env: {}, inputs: [], outputs: ['model.bin'], maxRuntimeSec: 3600, network: false },
    resources: { gpus: 1, minVramGB: 40, models: [], cpuCores: 4, memoryMiB: 16_384, diskMiB: 10_240 },
    sla: { tier: 'silver', maxPrice: 2_500_000, maxStartDelaySec: 300 },
    placement: { regions: ['eu'], residency: 'strict' },
    verification: { mode: 'none' },
    auction: { bidWindowMs: 500, paymentRule: 'first-price' },
    ...overrides
  }
}

function bid (overrides: Partial<Bid> = {}): Bid {
  const jobCid = sealMessage(requester, 'job-request', job()).cid
  return {
    v: 1, issuedAt: NOW, expiresAt: NOW + 60_000, job: jobCid, provider: provider.peerId,
    price: 1_000_000, gpus: ['GPU-1'], model: 'nvidia-l4', vramMiB: 23_034, region: 'eu', startBy: NOW, ad: jobCid,
    ...overrides
  }
}

/** Sign a payload value as `kind` without sealMessage's own checks (what a careless or hostile peer sends). */
function signRaw (value: unknown, kind: keyof typeof KINDS = 'job-request', signer = requester): Uint8Array {
  return sealEnvelope(signer, ENVELOPE_DOMAIN, payloadTypeOf(kind), dagCbor.encode(value))
}

function rejects (reason: Reason, fn: () => unknown, path?: string): void {
  assert.throws(fn, (err: unknown) => {
    assert.ok(err instanceof MessageRejectedError, String(err))
    assert.equal(err.reason, reason, err.message)
    if (path !== undefined) assert.equal(err.path, path, err.message)
    return true
  })
}

/** A job request whose sealed envelope is exactly `size` bytes (each argv character adds one byte here). */
function jobOfSize (size: number): JobRequest {
  const filler = (n: number): JobRequest => job({ workload: { ...job().workload, argv: [...Array.from({ length: 16 }, () => 'a'.repeat(4000)), 'b'.repeat(n)] } })
  const base = sealEnvelope(requester, ENVELOPE_DOMAIN, payloadTypeOf('job-request'), dagCbor.encode(filler(1000))).byteLength
  const sized = filler(1000 + size - base)
  assert.equal(signRaw(sized).byteLength, size)
  return sized
}

describe('protocol messages at their edges (message.ts)', () => {
  describe('lifetime', () => {
    it('a lifetime of 0 is refused on seal and on open, naming expiresAt; 1 ms is fine', () => {
      const zero = job({ expiresAt: NOW })
      rejects(RejectReason.BAD_LIFETIME, () => sealMessage(requester, 'job-request', zero), 'expiresAt')
      rejects(RejectReason.BAD_LIFETIME, () => openMessage(signRaw(zero), 'job-request', { now: NOW - 1 }), 'expiresAt')
      rejects(RejectReason.BAD_LIFETIME, () => openMessage(signRaw(zero), 'job-request', { now: NOW - 1, historical: true }), 'expiresAt')
      const oneMs = job({ expiresAt: NOW + 1 })
      assert.equal(sealMessage(requester, 'job-request', oneMs).payload.expiresAt, NOW + 1)
      assert.equal(openMessage(signRaw(oneMs), 'job-request', { now: NOW }).payload.expiresAt, NOW + 1)
    })

    it('exactly the kind\'s maximum lifetime is accepted, one ms more refused, on seal and on open', () => {
      for (const kind of ['job-request', 'bid'] as const) {
        const max = KINDS[kind].maxLifetimeMs
        const at = kind === 'bid' ? bid({ expiresAt: NOW + max }) : job({ expiresAt: NOW + max })
        const past = kind === 'bid' ? bid({ expiresAt: NOW + max + 1 }) : job({ expiresAt: NOW + max + 1 })
        const signer = kind === 'bid' ? provider : requester
        sealMessage(signer, kind, at as never)
        openMessage(signRaw(at, kind, signer), kind, { now: NOW })
        rejects(RejectReason.BAD_LIFETIME, () => sealMessage(signer, kind, past as never), 'expiresAt')
        rejects(RejectReason.BAD_LIFETIME, () => openMessage(signRaw(past, kind, signer), kind, { now: NOW }), 'expiresAt')
        rejects(RejectReason.BAD_LIFETIME, () => openMessage(signRaw(past, kind, signer), kind, { now: NOW, historical: true }), 'expiresAt')
      }
    })
  })

  describe('freshness', () => {
    const sealed = sealMessage(requester, 'job-request', job())

    it('is fresh until one ms before expiresAt and expired at exactly expiresAt, naming expiresAt', () => {
      assert.equal(openMessage(sealed.bytes, 'job-request', { now: NOW + HOUR - 1 }).signer, requester.peerId)
      rejects(RejectReason.EXPIRED, () => openMessage(sealed.bytes, 'job-request', { now: NOW + HOUR }), 'expiresAt')
      rejects(RejectReason.EXPIRED, () => openMessage(sealed.bytes, 'job-request', { now: NOW + HOUR + 1 }), 'expiresAt')
      // historical opening does not look at the clock
      openMessage(sealed.bytes, 'job-request', { now: NOW + HOUR, historical: true })
    })

    it('accepts an issue exactly the skew allowance ahead, refuses one ms more, naming issuedAt', () => {
      openMessage(sealed.bytes, 'job-request', { now: NOW - DEFAULT_CLOCK_SKEW_MS })
      rejects(RejectReason.FUTURE_DATED, () => openMessage(sealed.bytes, 'job-request', { now: NOW - DEFAULT_CLOCK_SKEW_MS - 1 }), 'issuedAt')
      openMessage(sealed.bytes, 'job-request', { now: NOW - DEFAULT_CLOCK_SKEW_MS - 1, historical: true })
    })

    it('a skew allowance of 0 accepts an issue at now and refuses one ms ahead', () => {
      openMessage(sealed.bytes, 'job-request', { now: NOW, clockSkewMs: 0 })
      rejects(RejectReason.FUTURE_DATED, () => openMessage(sealed.bytes, 'job-request', { now: NOW - 1, clockSkewMs: 0 }), 'issuedAt')
      // a wider allowance than the default is honoured too
      openMessage(sealed.bytes, 'job-request', { now: NOW - 120_000, clockSkewMs: 120_000 })
      rejects(RejectReason.FUTURE_DATED, () => openMessage(sealed.bytes, 'job-request', { now: NOW - 120_001, clockSkewMs: 120_000 }))
    })

    it('checks freshness before the signature: an expired forgery is EXPIRED, a fresh one BAD_SIGNATURE', () => {
      const forged = sealed.bytes.slice()
      forged[forged.byteLength - 1] = (forged[forged.byteLength - 1] as number) ^ 1
      rejects(RejectReason.EXPIRED, () => openMessage(forged, 'job-request', { now: NOW + HOUR }))
      rejects(RejectReason.BAD_SIGNATURE, () => openMessage(forged, 'job-request', { now: NOW + HOUR - 1 }))
    })
  })

  describe('size limits', () => {
    const limit = KINDS['job-request'].maxBytes

    it('a job request of exactly its kind\'s limit opens and seals; one byte more is TOO_LARGE on both', () => {
      const at = jobOfSize(limit)
      assert.equal(openMessage(signRaw(at), 'job-request', { now: NOW }).bytes.byteLength, limit)
      assert.equal(sealMessage(requester, 'job-request', at).bytes.byteLength, limit)
      const past = jobOfSize(limit + 1)
      rejects(RejectReason.TOO_LARGE, () => openMessage(signRaw(past), 'job-request', { now: NOW }))
      rejects(RejectReason.TOO_LARGE, () => sealMessage(requester, 'job-request', past))
    })

    it('a caller limit of exactly the message size opens it, one byte less refuses it', () => {
      const sealed = sealMessage(requester, 'job-request', job())
      const size = sealed.bytes.byteLength
      openMessage(sealed.bytes, 'job-request', { now: NOW, maxBytes: size })
      rejects(RejectReason.TOO_LARGE, () => openMessage(sealed.bytes, 'job-request', { now: NOW, maxBytes: size - 1 }))
    })

    it('a caller limit above the kind\'s or the global limit raises neither', () => {
      const past = signRaw(jobOfSize(limit + 1))
      rejects(RejectReason.TOO_LARGE, () => openMessage(past, 'job-request', { now: NOW, maxBytes: 10 * MAX_ENVELOPE_BYTES }))
      const huge = new Uint8Array(MAX_ENVELOPE_BYTES + 1)
      rejects(RejectReason.TOO_LARGE, () => openMessage(huge, 'job-request', { now: NOW, maxBytes: 10 * MAX_ENVELOPE_BYTES }))
    })

    it('the global limit: exactly MAX_ENVELOPE_BYTES is parsed (and found malformed), one byte more is TOO_LARGE unparsed', () => {
      rejects(RejectReason.MALFORMED_ENVELOPE, () => openMessage(new Uint8Array(MAX_ENVELOPE_BYTES), ['job-request', 'failure-report'], { now: NOW }))
      rejects(RejectReason.TOO_LARGE, () => openMessage(new Uint8Array(MAX_ENVELOPE_BYTES + 1), ['job-request', 'failure-report'], { now: NOW }))
    })

    it('input that is not bytes is MALFORMED_ENVELOPE, not a crash', () => {
      const sealed = sealMessage(requester, 'job-request', job())
      rejects(RejectReason.MALFORMED_ENVELOPE, () => openMessage([...sealed.bytes] as unknown as Uint8Array, 'job-request', { now: NOW }))
      rejects(RejectReason.MALFORMED_ENVELOPE, () => openMessage('bytes' as unknown as Uint8Array, 'job-request', { now: NOW }))
    })
  })

  describe('expected kinds', () => {
    it('a single kind or a list: a kind in the list opens, one outside it is WRONG_PAYLOAD_TYPE', () => {
      const sealed = sealMessage(requester, 'job-request', job())
      assert.equal(openMessage(sealed.bytes, ['bid', 'job-request'], { now: NOW }).kind, 'job-request')
      assert.equal(openMessage(sealed.bytes, 'job-request', { now: NOW }).kind, 'job-request')
      rejects(RejectReason.WRONG_PAYLOAD_TYPE, () => openMessage(sealed.bytes, 'bid', { now: NOW }))
      rejects(RejectReason.WRONG_PAYLOAD_TYPE, () => openMessage(sealed.bytes, [], { now: NOW }))
    })
  })

  describe('signer field', () => {
    it('seal refuses a bid naming another provider, naming the field; open names it too', () => {
      rejects(RejectReason.SIGNER_MISMATCH, () => sealMessage(requester, 'bid', bid()), 'provider')
      rejects(RejectReason.SIGNER_MISMATCH, () => openMessage(signRaw(bid(), 'bid', requester), 'bid', { now: NOW }), 'provider')
      // kinds without a signer field are signed by anyone
      assert.equal(openMessage(sealMessage(provider, 'job-request', job()).bytes, 'job-request', { now: NOW }).signer, provider.peerId)
    })
  })

  describe('replay recording', () => {
    it('records an accepted message until its own expiresAt under its replayKey, and only when accepted', () => {
      const replay = new ReplayCache()
      const sealed = sealMessage(provider, 'bid', bid())
      const opened = openMessage(sealed.bytes, 'bid', { now: NOW + 5_000, replay })
      const key = replayKey(opened, provider.peerId)
      assert.equal(key, `bid/${provider.peerId}/${sealed.cid.toString()}`)
      assert.equal(replay.has(key, NOW + 60_000 - 1), true)
      assert.equal(replay.has(key, NOW + 60_000), false)
      rejects(RejectReason.REPLAY, () => openMessage(sealed.bytes, 'bid', { now: NOW + 59_999, replay }))
      // a message refused for a reason other than replay is not recorded
      const late = sealMessage(provider, 'bid', bid({ price: 999_999 }))
      rejects(RejectReason.EXPIRED, () => openMessage(late.bytes, 'bid', { now: NOW + 60_000, replay }))
      assert.equal(replay.has(replayKey(late, provider.peerId), NOW), false)
    })

    it('the replay cache is pruned at the receiver\'s now: an entry expired then is gone', () => {
      const replay = new ReplayCache()
      openMessage(sealMessage(provider, 'bid', bid({ expiresAt: NOW + 1_000 })).bytes, 'bid', { now: NOW, replay })
      assert.equal(replay.size, 1)
      openMessage(sealMessage(provider, 'bid', bid({ price: 2 })).bytes, 'bid', { now: NOW + 1_000, replay })
      assert.equal(replay.size, 1)
    })

    it('keys nonce kinds by the lower-case hex nonce, so the same nonce from one signer is one key', () => {
      const nonce = Uint8Array.from([0xab, 0xcd, 0xef, 0x01, 0x23, 0x45, 0x67, 0x89])
      const sealed = sealMessage(requester, 'job-request', job({ nonce }))
      assert.equal(replayKey(sealed, requester.peerId), `job-request/${requester.peerId}/abcdef0123456789`)
      assert.notEqual(replayKey(sealed, provider.peerId), replayKey(sealed, requester.peerId))
    })
  })

  describe('openRoundRequest', () => {
    function roundFor (request: Uint8Array, now: number): OpenedMessage<'auction-round'> {
      const jobCid = openMessage(request, 'job-request', { now: NOW }).cid
      const sealed = sealMessage(requester, 'auction-round', {
        v: 1, issuedAt: NOW, expiresAt: NOW + HOUR, job: jobCid, round: 2, attempt: 1, excluded: [], request
      })
      return openMessage(sealed.bytes, 'auction-round', { now })
    }

    it('opens the embedded job until one ms before its expiresAt, and refuses it at exactly expiresAt', () => {
      const request = sealMessage(requester, 'job-request', job({ expiresAt: NOW + 10_000 })).bytes
      const round = roundFor(request, NOW)
      assert.equal(openRoundRequest(round, NOW + 9_999).payload.expiresAt, NOW + 10_000)
      rejects(RejectReason.EXPIRED, () => openRoundRequest(round, NOW + 10_000), 'request')
    })

    it('checks the embedded job\'s signature even though it is opened historically', () => {
      const request = sealMessage(requester, 'job-request', job()).bytes
      const round = roundFor(request, NOW)
      const tampered = request.slice()
      tampered[tampered.byteLength - 1] = (tampered[tampered.byteLength - 1] as number) ^ 1
      rejects(RejectReason.BAD_SIGNATURE, () => openRoundRequest({ ...round, payload: { ...round.payload, request: tampered } }, NOW))
    })
  })
})
