import assert from 'node:assert/strict'
import fc from 'fast-check'
import * as dagCbor from '@ipld/dag-cbor'
import type { z } from 'zod'
import { Identity, cidOfCborBytes, decodeEnvelope, encodeVarint, sealEnvelope } from '../../../crypto/index.js'
import {
  ALL_KINDS, DEFAULT_CLOCK_SKEW_MS, ENVELOPE_DOMAIN, KINDS, MessageRejectedError, ReplayCache, RejectReason, jobIdOf, openMessage, payloadTypeOf,
  sealMessage, type Kind
} from '../../../protocol/index.js'
import { NOW, SIGNER, anyMessage, payloads } from '../../helpers/arbitraries.js'
import { plain } from '../../helpers/plain.js'

const signer = SIGNER
const ALL_REASONS = new Set<string>(Object.values(RejectReason))

/** Run `open` and require that it throws a MessageRejectedError with a known reason. */
function assertRejected (open: () => unknown): MessageRejectedError {
  try {
    open()
  } catch (err) {
    assert.ok(err instanceof MessageRejectedError, `expected MessageRejectedError, got ${String(err)}`)
    assert.ok(ALL_REASONS.has(err.reason))
    return err
  }
  assert.fail('message was accepted')
}

describe('protocol messages (properties)', () => {
  for (const kind of ALL_KINDS) {
    it(`${kind}: seal → open round-trips the payload, signer and CID`, () => {
      fc.assert(fc.property(payloads[kind] as fc.Arbitrary<never>, (payload) => {
        const sealed = sealMessage(signer, kind, payload)
        const opened = openMessage(sealed.bytes, kind, { now: NOW })
        assert.deepEqual(plain(opened.payload), plain(payload))
        assert.equal(opened.signer, signer.peerId)
        assert.ok(opened.cid.equals(sealed.cid))
        assert.ok(opened.cid.equals(cidOfCborBytes(decodeEnvelope(sealed.bytes).payload)))
      }), { numRuns: 40 })
    })
  }

  it('the job id is the CID of the job request payload', () => {
    fc.assert(fc.property(payloads['job-request'], (job) => {
      const sealed = sealMessage(signer, 'job-request', job)
      assert.ok(jobIdOf(job).equals(sealed.cid))
      assert.ok(cidOfCborBytes(dagCbor.encode(sealed.payload)).equals(sealed.cid))
    }), { numRuns: 30 })
  })

  it('flipping any bit of a sealed envelope is rejected', () => {
    fc.assert(fc.property(anyMessage, fc.nat(), ({ kind, payload }, position) => {
      const bytes = sealMessage(signer, kind, payload).bytes.slice()
      const bit = position % (bytes.byteLength * 8)
      bytes[bit >> 3] = (bytes[bit >> 3] as number) ^ (1 << (bit & 7))
      assertRejected(() => openMessage(bytes, ALL_KINDS, { now: NOW }))
    }), { numRuns: 400 })
  })

  it('random bytes never throw anything but a typed rejection', () => {
    fc.assert(fc.property(fc.uint8Array({ maxLength: 2048 }), fc.constantFrom(...ALL_KINDS), (bytes, kind) => {
      assertRejected(() => openMessage(bytes, kind, { now: NOW }))
    }), { numRuns: 500 })
  })

  it('random payload bytes in a validly signed envelope are a typed rejection', () => {
    fc.assert(fc.property(fc.uint8Array({ maxLength: 256 }), fc.constantFrom(...ALL_KINDS), (payload, kind) => {
      const bytes = sealEnvelope(signer, ENVELOPE_DOMAIN, payloadTypeOf(kind), payload)
      assertRejected(() => openMessage(bytes, kind, { now: NOW }))
    }), { numRuns: 300 })
  })

  it('random CBOR in a validly signed envelope is a typed rejection', () => {
    const cborValue = fc.letrec((tie) => ({
      value: fc.oneof({ depthSize: 'small' },
        fc.jsonValue({ maxDepth: 2 }),
        fc.uint8Array({ maxLength: 16 }),
        fc.dictionary(fc.constantFrom('v', 'issuedAt', 'expiresAt', 'nonce', 'job', 'price', 'gpus', 'x'), tie('value'), { maxKeys: 5 }),
        fc.array(tie('value'), { maxLength: 3 }))
    })).value
    fc.assert(fc.property(cborValue, fc.constantFrom(...ALL_KINDS), (value, kind) => {
      let payload: Uint8Array
      try {
        payload = dagCbor.encode(value)
      } catch {
        return // -0 and friends: not encodable, nothing to send
      }
      const bytes = sealEnvelope(signer, ENVELOPE_DOMAIN, payloadTypeOf(kind), payload)
      assertRejected(() => openMessage(bytes, kind, { now: NOW }))
    }), { numRuns: 500 })
  })

  it('a valid payload with one field removed, added or retyped is a typed rejection', () => {
    const edit = fc.constantFrom('remove', 'add', 'retype')
    fc.assert(fc.property(anyMessage, edit, fc.nat(), ({ kind, payload }, how, pick) => {
      const value = { ...(payload as Record<string, unknown>) }
      const keys = Object.keys(value)
      const key = keys[pick % keys.length] as string
      if (how === 'remove') delete value[key]
      if (how === 'add') value.unexpected = 1
      if (how === 'retype') value[key] = typeof value[key] === 'string' ? 7 : 'seven'
      const bytes = sealEnvelope(signer, ENVELOPE_DOMAIN, payloadTypeOf(kind), dagCbor.encode(value))
      const optional = (KINDS[kind].schema as unknown as z.ZodObject).shape[key]?.safeParse(undefined).success === true
      if (how === 'remove' && optional) {
        openMessage(bytes, kind, { now: NOW }) // dropping an optional field leaves a valid message
        return
      }
      const err = assertRejected(() => openMessage(bytes, kind, { now: NOW }))
      if (how === 'add') assert.equal(err.reason, RejectReason.UNKNOWN_FIELD)
    }), { numRuns: 300 })
  })

  it('a replayed message is rejected while it is fresh', () => {
    fc.assert(fc.property(anyMessage, ({ kind, payload }) => {
      const replay = new ReplayCache()
      const { bytes } = sealMessage(signer, kind, payload)
      openMessage(bytes, kind, { now: NOW, replay })
      // still fresh a moment later (the generators include messages expiring 1 ms after NOW)
      const later = Math.min(NOW + 1, (payload as { expiresAt: number }).expiresAt - 1)
      assert.equal(assertRejected(() => openMessage(bytes, kind, { now: later, replay })).reason, RejectReason.REPLAY)
    }), { numRuns: 100 })
  })

  it('freshness at the exact instants: expired at expiresAt, not 1 ms before; future-dated 1 ms past the skew allowance', () => {
    fc.assert(fc.property(anyMessage, ({ kind, payload }) => {
      const { expiresAt, issuedAt } = payload as { expiresAt: number, issuedAt: number }
      const { bytes } = sealMessage(signer, kind, payload)
      const justBefore = Math.max(expiresAt - 1, issuedAt - DEFAULT_CLOCK_SKEW_MS)
      openMessage(bytes, kind, { now: justBefore })
      assert.equal(assertRejected(() => openMessage(bytes, kind, { now: expiresAt })).reason, RejectReason.EXPIRED)
      assert.equal(assertRejected(() => openMessage(bytes, kind, { now: issuedAt - DEFAULT_CLOCK_SKEW_MS - 1 })).reason, RejectReason.FUTURE_DATED)
      openMessage(bytes, kind, { now: issuedAt - DEFAULT_CLOCK_SKEW_MS })
    }), { numRuns: 150 })
  })

  it('a signature moved under another payload type is rejected', () => {
    fc.assert(fc.property(anyMessage, fc.constantFrom(...ALL_KINDS), ({ kind, payload }, other) => {
      fc.pre(other !== kind)
      const envelope = decodeEnvelope(sealMessage(signer, kind, payload).bytes)
      const moved = reencode({ ...envelope, payloadType: payloadTypeOf(other) })
      assertRejected(() => openMessage(moved, other, { now: NOW }))
      // and opened as what it claims to be, it is still refused where the original kind is expected
      assert.equal(assertRejected(() => openMessage(moved, kind, { now: NOW })).reason, RejectReason.WRONG_PAYLOAD_TYPE)
    }), { numRuns: 100 })
  })
})

function reencode (envelope: { publicKey: Uint8Array, payloadType: Uint8Array, payload: Uint8Array, signature: Uint8Array }): Uint8Array {
  // build the protobuf by hand so the signature is carried over unchanged
  const field = (n: number, value: Uint8Array) => [...encodeVarint((n << 3) | 2), ...encodeVarint(value.byteLength), ...value]
  const key = Uint8Array.from([0x08, 0x01, 0x12, 0x20, ...envelope.publicKey])
  return Uint8Array.from([...field(1, key), ...field(2, envelope.payloadType), ...field(3, envelope.payload), ...field(5, envelope.signature)])
}

export type { Kind }
