import assert from 'node:assert/strict'
import fc from 'fast-check'
import { generateKeyPair } from '@libp2p/crypto/keys'
import type { PrivateKey, Record } from '@libp2p/interface'
import { RecordEnvelope } from '@libp2p/peer-record'
import {
  EnvelopeError, Identity, bytesEqual, NobleEd25519, decodeEnvelope, encodeEnvelope, encodeVarint, openEnvelope,
  peerIdFromPublicKey, sealEnvelope, signedBytes, verifyEnvelope, type EnvelopeErrorCode
} from '../../../crypto/index.js'
import { NativeEd25519 } from '../../../node/ed25519-native.js'
import { generateIdentity } from '../../../node/random.js'
import { toHex } from '../../fixtures/rfc8032-vectors.js'

const DOMAIN = 'gpumesh'
/** A multicodec from the private-use range (0x300000–0x3fffff), as varint bytes. */
const PAYLOAD_TYPE = encodeVarint(0x300001)
const OTHER_PAYLOAD_TYPE = encodeVarint(0x300002)

function expectEnvelopeError (code: EnvelopeErrorCode | undefined, run: () => unknown): void {
  assert.throws(run, (err: unknown) => {
    assert.ok(err instanceof EnvelopeError, `expected EnvelopeError, got ${String(err)}`)
    if (code !== undefined) assert.equal(err.code, code, err.message)
    return true
  })
}

/** Protobuf helpers to build envelopes by hand. */
function field (number: number, value: Uint8Array): Uint8Array {
  return Uint8Array.from([...encodeVarint((number << 3) | 2), ...encodeVarint(value.byteLength), ...value])
}

function concat (...parts: Uint8Array[]): Uint8Array {
  return Uint8Array.from(parts.flatMap(part => [...part]))
}

/** A libp2p Record, as RecordEnvelope.seal wants it. */
function record (payload: Uint8Array, codec: Uint8Array = PAYLOAD_TYPE, domain: string = DOMAIN): Record {
  const self: Record = {
    domain,
    codec,
    marshal: () => payload,
    equals: other => other.domain === domain && bytesEqual(other.codec, codec) && bytesEqual(other.marshal(), payload)
  }
  return self
}

const payloadArb = fc.uint8Array({ minLength: 1, maxLength: 200 })
const payloadTypeArb = fc.integer({ min: 1, max: 0x3fffff }).map(encodeVarint)

describe('crypto/envelope', () => {
  // a fixed key keeps the hand-built cases below reproducible
  const identity = new Identity(new Uint8Array(32).fill(0x42))
  const payload = new TextEncoder().encode('{"hello":"gpumesh"}')
  const sealed = sealEnvelope(identity, DOMAIN, PAYLOAD_TYPE, payload)

  describe('seal and open', () => {
    it('round-trips payload, payload type, public key and signer', () => {
      const opened = openEnvelope(sealed, DOMAIN)
      assert.deepEqual(opened.payload, payload)
      assert.deepEqual(opened.payloadType, PAYLOAD_TYPE)
      assert.deepEqual(opened.publicKey, identity.publicKey)
      assert.equal(opened.signer, identity.peerId)
      assert.equal(opened.signature.byteLength, 64)
    })

    it('round-trips any payload and payload type (property)', () => {
      fc.assert(fc.property(fc.uint8Array({ maxLength: 300 }), payloadTypeArb, fc.string({ maxLength: 20 }), (data, type, domain) => {
        const bytes = sealEnvelope(identity, domain, type, data)
        const opened = openEnvelope(bytes, domain)
        assert.deepEqual(opened.payload, data)
        assert.deepEqual(opened.payloadType, type)
        assert.equal(opened.signer, identity.peerId)
        assert.deepEqual(encodeEnvelope(decodeEnvelope(bytes)), bytes)
      }), { numRuns: 200 })
    })

    it('writes the exact RFC 0002 protobuf layout', () => {
      const signature = identity.sign(signedBytes(DOMAIN, PAYLOAD_TYPE, payload))
      const expected = concat(
        field(1, concat(Uint8Array.from([0x08, 0x01, 0x12, 0x20]), identity.publicKey)),
        field(2, PAYLOAD_TYPE),
        field(3, payload),
        field(5, signature)
      )
      assert.equal(toHex(sealed), toHex(expected))
    })

    it('signs varint(len(domain)) ‖ domain ‖ varint(len(type)) ‖ type ‖ varint(len(payload)) ‖ payload', () => {
      assert.equal(toHex(signedBytes('gpumesh', Uint8Array.from([0x81, 0x80, 0x0c]), Uint8Array.from([0xa0]))),
        '07' + Buffer.from('gpumesh').toString('hex') + '03' + '81800c' + '01' + 'a0')
      const long = new Uint8Array(300).fill(0x55)
      assert.equal(toHex(signedBytes('', new Uint8Array(0), long)), '00' + '00' + 'ac02' + '55'.repeat(300))
      // the domain length counts UTF-8 bytes, not characters
      assert.equal(toHex(signedBytes('é', new Uint8Array(0), new Uint8Array(0))), '02c3a90000')
    })

    it('opens with either Ed25519 implementation', () => {
      assert.equal(openEnvelope(sealed, DOMAIN, new NobleEd25519()).signer, identity.peerId)
      assert.equal(openEnvelope(sealed, DOMAIN, new NativeEd25519()).signer, identity.peerId)
      const nobleSigned = sealEnvelope(Identity.fromProtobuf(identity.toProtobuf(), new NobleEd25519()), DOMAIN, PAYLOAD_TYPE, payload)
      assert.deepEqual(nobleSigned, sealed)
    })

    it('verifyEnvelope is true only for the sealing domain', () => {
      const envelope = decodeEnvelope(sealed)
      assert.equal(verifyEnvelope(envelope, DOMAIN), true)
      assert.equal(verifyEnvelope(envelope, 'libp2p-peer-record'), false)
      assert.equal(verifyEnvelope({ ...envelope, payload: Uint8Array.from([...payload, 0]) }, DOMAIN), false)
    })

    it('wrong domain → ENVELOPE_BAD_SIGNATURE', () => {
      for (const domain of ['', 'gpumes', 'gpumesh ', 'GPUMESH', 'libp2p-peer-record']) {
        expectEnvelopeError('ENVELOPE_BAD_SIGNATURE', () => openEnvelope(sealed, domain))
      }
    })

    it('a signature moved under another payload type → ENVELOPE_BAD_SIGNATURE', () => {
      const envelope = decodeEnvelope(sealed)
      const relabelled = encodeEnvelope({ ...envelope, payloadType: OTHER_PAYLOAD_TYPE })
      expectEnvelopeError('ENVELOPE_BAD_SIGNATURE', () => openEnvelope(relabelled, DOMAIN))
    })

    it('a signature moved to another signer → ENVELOPE_BAD_SIGNATURE', () => {
      const envelope = decodeEnvelope(sealed)
      const stolen = encodeEnvelope({ ...envelope, publicKey: generateIdentity().publicKey })
      expectEnvelopeError('ENVELOPE_BAD_SIGNATURE', () => openEnvelope(stolen, DOMAIN))
    })

    it('a signature of the wrong length → ENVELOPE_BAD_SIGNATURE', () => {
      const envelope = decodeEnvelope(sealed)
      for (const signature of [new Uint8Array(0), envelope.signature.subarray(0, 63), Uint8Array.from([...envelope.signature, 0])]) {
        expectEnvelopeError('ENVELOPE_BAD_SIGNATURE', () => openEnvelope(encodeEnvelope({ ...envelope, signature }), DOMAIN))
      }
    })
  })

  describe('interop with @libp2p/peer-record', () => {
    it('RecordEnvelope.openAndCertify opens an envelope sealed here', async () => {
      const envelope = await RecordEnvelope.openAndCertify(sealed, DOMAIN)
      assert.deepEqual(envelope.payload, payload)
      assert.deepEqual(envelope.payloadType, PAYLOAD_TYPE)
      assert.equal(envelope.publicKey.type, 'Ed25519')
      assert.deepEqual(envelope.publicKey.raw, identity.publicKey)
      assert.deepEqual(envelope.signature, decodeEnvelope(sealed).signature)
      assert.deepEqual(envelope.marshal(), sealed)
    })

    it('RecordEnvelope.openAndCertify opens any envelope sealed here (property)', async () => {
      await fc.assert(fc.asyncProperty(payloadArb, payloadTypeArb, async (data, type) => {
        const bytes = sealEnvelope(identity, DOMAIN, type, data)
        const envelope = await RecordEnvelope.openAndCertify(bytes, DOMAIN)
        assert.deepEqual(envelope.payload, data)
        assert.deepEqual(envelope.payloadType, type)
        assert.deepEqual(envelope.publicKey.raw, identity.publicKey)
      }), { numRuns: 50 })
    })

    it('RecordEnvelope.openAndCertify refuses an envelope sealed here under another domain', async () => {
      await assert.rejects(RecordEnvelope.openAndCertify(sealed, 'libp2p-peer-record'))
    })

    describe('an envelope sealed by RecordEnvelope.seal', () => {
      let key: PrivateKey
      let libp2pSealed: Uint8Array

      before(async () => {
        key = await generateKeyPair('Ed25519')
        libp2pSealed = (await RecordEnvelope.seal(record(payload), key)).marshal()
      })

      it('opens with openEnvelope', () => {
        const opened = openEnvelope(libp2pSealed, DOMAIN)
        assert.deepEqual(opened.payload, payload)
        assert.deepEqual(opened.payloadType, PAYLOAD_TYPE)
        assert.deepEqual(opened.publicKey, key.publicKey.raw)
        assert.equal(opened.signer, key.publicKey.toString())
        assert.equal(opened.signer, peerIdFromPublicKey(key.publicKey.raw))
      })

      it('re-encodes to identical bytes after decodeEnvelope', () => {
        assert.equal(toHex(encodeEnvelope(decodeEnvelope(libp2pSealed))), toHex(libp2pSealed))
      })

      it('is byte-identical to the same envelope sealed here (Ed25519 is deterministic)', async () => {
        const { privateKeyToProtobuf } = await import('@libp2p/crypto/keys')
        const same = Identity.fromProtobuf(privateKeyToProtobuf(key))
        assert.equal(toHex(sealEnvelope(same, DOMAIN, PAYLOAD_TYPE, payload)), toHex(libp2pSealed))
      })

      it('wrong domain → ENVELOPE_BAD_SIGNATURE', () => {
        expectEnvelopeError('ENVELOPE_BAD_SIGNATURE', () => openEnvelope(libp2pSealed, 'libp2p-peer-record'))
      })

      it('opens for any non-empty payload and payload type (property)', async () => {
        await fc.assert(fc.asyncProperty(payloadArb, payloadTypeArb, async (data, type) => {
          const bytes = (await RecordEnvelope.seal(record(data, type), key)).marshal()
          const opened = openEnvelope(bytes, DOMAIN)
          assert.deepEqual(opened.payload, data)
          assert.deepEqual(opened.payloadType, type)
          assert.deepEqual(encodeEnvelope(decodeEnvelope(bytes)), bytes)
        }), { numRuns: 50 })
      })

      it('with a secp256k1 key → ENVELOPE_UNSUPPORTED_KEY', async () => {
        const secp = await generateKeyPair('secp256k1')
        const bytes = (await RecordEnvelope.seal(record(payload), secp)).marshal()
        expectEnvelopeError('ENVELOPE_UNSUPPORTED_KEY', () => decodeEnvelope(bytes))
        expectEnvelopeError('ENVELOPE_UNSUPPORTED_KEY', () => openEnvelope(bytes, DOMAIN))
      })
    })
  })

  describe('strict decoding', () => {
    const envelope = decodeEnvelope(sealed)
    const keyField = field(1, concat(Uint8Array.from([0x08, 0x01, 0x12, 0x20]), envelope.publicKey))
    const typeField = field(2, envelope.payloadType)
    const payloadField = field(3, envelope.payload)
    const signatureField = field(5, envelope.signature)

    it('the hand-built envelope is the sealed one (sanity check)', () => {
      assert.deepEqual(concat(keyField, typeField, payloadField, signatureField), sealed)
    })

    it('a trailing byte → ENVELOPE_MALFORMED', () => {
      for (const extra of [0x00, 0x01, 0x0a, 0xff]) {
        expectEnvelopeError('ENVELOPE_MALFORMED', () => decodeEnvelope(concat(sealed, Uint8Array.from([extra]))))
      }
    })

    it('an extra unknown field → ENVELOPE_MALFORMED', () => {
      const unknown = field(4, Uint8Array.from([1, 2, 3]))
      const varintField = Uint8Array.from([0x30, 0x01]) // field 6, wire type 0
      expectEnvelopeError('ENVELOPE_MALFORMED', () => decodeEnvelope(concat(sealed, unknown)))
      expectEnvelopeError('ENVELOPE_MALFORMED', () => decodeEnvelope(concat(sealed, varintField)))
      expectEnvelopeError('ENVELOPE_MALFORMED', () => decodeEnvelope(concat(keyField, typeField, payloadField, unknown, signatureField)))
      expectEnvelopeError('ENVELOPE_MALFORMED', () => decodeEnvelope(concat(unknown, keyField, typeField, payloadField, signatureField)))
      expectEnvelopeError('ENVELOPE_MALFORMED', () => decodeEnvelope(concat(sealed, field(15, new Uint8Array(0)))))
    })

    it('a repeated field → ENVELOPE_MALFORMED', () => {
      expectEnvelopeError('ENVELOPE_MALFORMED', () => decodeEnvelope(concat(keyField, typeField, payloadField, payloadField, signatureField)))
      expectEnvelopeError('ENVELOPE_MALFORMED', () => decodeEnvelope(concat(sealed, signatureField)))
    })

    it('fields out of order → ENVELOPE_MALFORMED', () => {
      const orders = [
        [typeField, keyField, payloadField, signatureField],
        [keyField, payloadField, typeField, signatureField],
        [keyField, typeField, signatureField, payloadField],
        [signatureField, payloadField, typeField, keyField]
      ]
      for (const order of orders) expectEnvelopeError('ENVELOPE_MALFORMED', () => decodeEnvelope(concat(...order)))
    })

    it('a missing field → ENVELOPE_MALFORMED', () => {
      expectEnvelopeError('ENVELOPE_MALFORMED', () => decodeEnvelope(concat(typeField, payloadField, signatureField)))
      expectEnvelopeError('ENVELOPE_MALFORMED', () => decodeEnvelope(concat(keyField, payloadField, signatureField)))
      expectEnvelopeError('ENVELOPE_MALFORMED', () => decodeEnvelope(concat(keyField, typeField, signatureField)))
      expectEnvelopeError('ENVELOPE_MALFORMED', () => decodeEnvelope(concat(keyField, typeField, payloadField)))
    })

    it('a field with another wire type → ENVELOPE_MALFORMED', () => {
      // field 2 as a varint (wire type 0) instead of bytes
      expectEnvelopeError('ENVELOPE_MALFORMED', () => decodeEnvelope(concat(keyField, Uint8Array.from([0x10, 0x01]), payloadField, signatureField)))
    })

    it('a non-minimal varint length → ENVELOPE_MALFORMED', () => {
      const nonMinimal = (number: number, value: Uint8Array): Uint8Array => {
        assert.ok(value.byteLength < 0x80)
        return concat(Uint8Array.from([(number << 3) | 2, value.byteLength | 0x80, 0x00]), value)
      }
      expectEnvelopeError('ENVELOPE_MALFORMED', () => decodeEnvelope(concat(nonMinimal(1, keyField.subarray(2)), typeField, payloadField, signatureField)))
      expectEnvelopeError('ENVELOPE_MALFORMED', () => decodeEnvelope(concat(keyField, nonMinimal(2, envelope.payloadType), payloadField, signatureField)))
      expectEnvelopeError('ENVELOPE_MALFORMED', () => decodeEnvelope(concat(keyField, typeField, nonMinimal(3, envelope.payload), signatureField)))
      expectEnvelopeError('ENVELOPE_MALFORMED', () => decodeEnvelope(concat(keyField, typeField, payloadField, nonMinimal(5, envelope.signature))))
    })

    it('a non-minimal varint tag → ENVELOPE_MALFORMED', () => {
      const bytes = concat(Uint8Array.from([0x8a, 0x00]), keyField.subarray(1), typeField, payloadField, signatureField)
      expectEnvelopeError('ENVELOPE_MALFORMED', () => decodeEnvelope(bytes))
    })

    it('a length past the end → ENVELOPE_MALFORMED', () => {
      const bytes = Uint8Array.from(sealed)
      bytes[sealed.byteLength - 65] = 65 // signature length 64 → 65
      expectEnvelopeError('ENVELOPE_MALFORMED', () => decodeEnvelope(bytes))
      expectEnvelopeError('ENVELOPE_MALFORMED', () => decodeEnvelope(concat(keyField, typeField, Uint8Array.from([0x1a, 0xff, 0xff, 0xff, 0xff, 0x0f]))))
    })

    it('truncated at every length → ENVELOPE_MALFORMED', () => {
      for (let length = 0; length < sealed.byteLength; length++) {
        expectEnvelopeError('ENVELOPE_MALFORMED', () => decodeEnvelope(sealed.subarray(0, length)))
        expectEnvelopeError('ENVELOPE_MALFORMED', () => openEnvelope(Uint8Array.from(sealed.subarray(0, length)), DOMAIN))
      }
    })

    it('a non-Ed25519 public key (secp256k1, Type = 2) → ENVELOPE_UNSUPPORTED_KEY', () => {
      const secp256k1Key = concat(Uint8Array.from([0x08, 0x02, 0x12, 0x21, 0x02]), new Uint8Array(32).fill(7))
      const bytes = concat(field(1, secp256k1Key), typeField, payloadField, signatureField)
      expectEnvelopeError('ENVELOPE_UNSUPPORTED_KEY', () => decodeEnvelope(bytes))
      expectEnvelopeError('ENVELOPE_UNSUPPORTED_KEY', () => openEnvelope(bytes, DOMAIN))
    })

    it('other key types (RSA = 0, Ed25519 = 1 only, secp256k1 = 2, ECDSA = 3) → ENVELOPE_UNSUPPORTED_KEY', () => {
      const raw = envelope.publicKey
      for (const type of [0x00, 0x02, 0x03, 0x04, 0x7f]) {
        const key = concat(Uint8Array.from([0x08, type, 0x12, 0x20]), raw)
        expectEnvelopeError('ENVELOPE_UNSUPPORTED_KEY', () => decodeEnvelope(concat(field(1, key), typeField, payloadField, signatureField)))
      }
    })

    it('an Ed25519 key protobuf that is not exactly Type=1, Data=32 bytes → ENVELOPE_MALFORMED', () => {
      const raw = envelope.publicKey
      assert.notEqual(raw[0], 0x08)
      const keys = [
        new Uint8Array(0),
        raw, // the raw key without the protobuf wrapper
        concat(Uint8Array.from([0x08, 0x01, 0x12, 0x1f]), raw.subarray(0, 31)),
        concat(Uint8Array.from([0x08, 0x01, 0x12, 0x21]), raw, Uint8Array.from([0])),
        concat(Uint8Array.from([0x08, 0x01, 0x12, 0x20]), raw.subarray(0, 31)),
        concat(Uint8Array.from([0x08, 0x01, 0x12, 0x20]), raw, Uint8Array.from([0])),
        concat(Uint8Array.from([0x08, 0x81, 0x00, 0x12, 0x20]), raw), // Type 1 as a non-minimal varint
        concat(Uint8Array.from([0x12, 0x20]), raw, Uint8Array.from([0x08, 0x01])) // fields swapped
      ]
      for (const key of keys) {
        expectEnvelopeError('ENVELOPE_MALFORMED', () => decodeEnvelope(concat(field(1, key), typeField, payloadField, signatureField)))
      }
    })

    it('empty input → ENVELOPE_MALFORMED', () => {
      expectEnvelopeError('ENVELOPE_MALFORMED', () => decodeEnvelope(new Uint8Array(0)))
    })
  })

  describe('properties', () => {
    it('flipping any single bit of a sealed envelope makes openEnvelope throw EnvelopeError', () => {
      fc.assert(fc.property(payloadArb, payloadTypeArb, fc.nat(), (data, type, n) => {
        const bytes = sealEnvelope(identity, DOMAIN, type, data)
        const bit = n % (bytes.byteLength * 8)
        const tampered = Uint8Array.from(bytes)
        tampered[bit >> 3] = (tampered[bit >> 3] as number) ^ (1 << (bit & 7))
        expectEnvelopeError(undefined, () => openEnvelope(tampered, DOMAIN))
      }), { numRuns: 300 })
    })

    it('flipping each bit of one sealed envelope, exhaustively, is caught with the expected code', () => {
      const keyFieldEnd = 2 + 36
      for (let bit = 0; bit < sealed.byteLength * 8; bit++) {
        const byte = bit >> 3
        const tampered = Uint8Array.from(sealed)
        tampered[byte] = (tampered[byte] as number) ^ (1 << (bit & 7))
        assert.throws(() => openEnvelope(tampered, DOMAIN), (err: unknown) => {
          assert.ok(err instanceof EnvelopeError, `bit ${bit}: ${String(err)}`)
          // inside the raw public key, payload type, payload or signature bytes only the signature check can tell
          if (byte >= 6 && byte < keyFieldEnd) assert.equal(err.code, 'ENVELOPE_BAD_SIGNATURE', `bit ${bit}`)
          if (byte >= 2 && byte < 6) assert.notEqual(err.code, 'ENVELOPE_BAD_SIGNATURE', `bit ${bit}`)
          return true
        })
      }
    })

    it('random bytes → decodeEnvelope throws only EnvelopeError', () => {
      fc.assert(fc.property(fc.uint8Array({ maxLength: 300 }), bytes => {
        try {
          decodeEnvelope(bytes)
        } catch (err) {
          assert.ok(err instanceof EnvelopeError, String(err))
        }
      }), { numRuns: 1000 })
    })

    it('random protobuf-shaped bytes → decodeEnvelope and openEnvelope throw only EnvelopeError', () => {
      const fieldArb = fc.record({
        number: fc.constantFrom(1, 2, 3, 4, 5, 6),
        value: fc.oneof(
          fc.uint8Array({ maxLength: 70 }),
          fc.constant(concat(Uint8Array.from([0x08, 0x01, 0x12, 0x20]), identity.publicKey))
        )
      }).map(({ number, value }) => field(number, value))
      fc.assert(fc.property(fc.array(fieldArb, { maxLength: 6 }), fields => {
        const bytes = concat(...fields)
        for (const run of [() => decodeEnvelope(bytes), () => openEnvelope(bytes, DOMAIN)]) {
          try {
            run()
          } catch (err) {
            assert.ok(err instanceof EnvelopeError, String(err))
          }
        }
      }), { numRuns: 1000 })
    })

    it('decodeEnvelope accepts exactly what encodeEnvelope writes (property)', () => {
      fc.assert(fc.property(
        fc.uint8Array({ minLength: 32, maxLength: 32 }), fc.uint8Array({ maxLength: 20 }), fc.uint8Array({ maxLength: 300 }), fc.uint8Array({ maxLength: 80 }),
        (publicKey, payloadType, data, signature) => {
          const bytes = encodeEnvelope({ publicKey, payloadType, payload: data, signature })
          const decoded = decodeEnvelope(bytes)
          assert.deepEqual(decoded, { publicKey, payloadType, payload: data, signature })
          assert.deepEqual(encodeEnvelope(decoded), bytes)
        }
      ), { numRuns: 300 })
    })
  })
})
