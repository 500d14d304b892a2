/**
 * crypto/envelope at its edges (issue 9, mutation audit): a key type that is not a minimal one-byte varint is
 * malformed, not merely unsupported (decoding is strict: minimal varints); empty fields and lengths that need
 * multi-byte varints round-trip and verify. Real Ed25519 signatures.
 */
import assert from 'node:assert/strict'
import {
  EnvelopeError, Identity, decodeEnvelope, encodeVarint, openEnvelope, sealEnvelope, signedBytes, type EnvelopeErrorCode
} from '../../../crypto/index.js'

const identity = new Identity(new Uint8Array(32).fill(0x43))
const PAYLOAD_TYPE = encodeVarint(0x300001)

function field (number: number, value: Uint8Array): Uint8Array {
  return Uint8Array.from([...encodeVarint((number << 3) | 2), ...encodeVarint(value.byteLength), ...value])
}

function concat (...parts: Uint8Array[]): Uint8Array {
  return Uint8Array.from(parts.flatMap((part) => [...part]))
}

function code (run: () => unknown): EnvelopeErrorCode | undefined {
  try {
    run()
  } catch (err) {
    assert.ok(err instanceof EnvelopeError, String(err))
    return err.code
  }
  return undefined
}

describe('crypto/envelope at its edges', () => {
  const sealed = sealEnvelope(identity, 'gpumesh', PAYLOAD_TYPE, Uint8Array.from([1, 2, 3]))
  const envelope = decodeEnvelope(sealed)
  const rest = concat(field(2, envelope.payloadType), field(3, envelope.payload), field(5, envelope.signature))
  const withKey = (key: Uint8Array): Uint8Array => concat(field(1, key), rest)

  it('a key type written as a two-byte varint is ENVELOPE_MALFORMED, a one-byte foreign type ENVELOPE_UNSUPPORTED_KEY', () => {
    // 0x80 0x00 is type 0 (RSA) written non-minimally; 0x80 0x01 is type 128
    assert.equal(code(() => decodeEnvelope(withKey(concat(Uint8Array.from([0x08, 0x80, 0x00, 0x12, 0x20]), envelope.publicKey)))), 'ENVELOPE_MALFORMED')
    assert.equal(code(() => decodeEnvelope(withKey(concat(Uint8Array.from([0x08, 0x80, 0x01, 0x12, 0x20]), envelope.publicKey)))), 'ENVELOPE_MALFORMED')
    assert.equal(code(() => decodeEnvelope(withKey(concat(Uint8Array.from([0x08, 0x7f, 0x12, 0x20]), envelope.publicKey)))), 'ENVELOPE_UNSUPPORTED_KEY')
    assert.equal(code(() => decodeEnvelope(withKey(Uint8Array.from([0x08])))), 'ENVELOPE_MALFORMED')
    assert.equal(code(() => decodeEnvelope(withKey(concat(Uint8Array.from([0x08, 0x01, 0x12, 0x20]), envelope.publicKey)))), undefined)
  })

  it('an empty payload and an empty payload type seal, decode and verify', () => {
    const empty = sealEnvelope(identity, 'gpumesh', new Uint8Array(0), new Uint8Array(0))
    const opened = openEnvelope(empty, 'gpumesh')
    assert.equal(opened.payload.byteLength, 0)
    assert.equal(opened.payloadType.byteLength, 0)
    assert.equal(opened.signer, identity.peerId)
  })

  it('lengths of 128 bytes and more (two-byte varints) in the domain, the payload and the signed bytes', () => {
    const domain = 'd'.repeat(200)
    const payload = new Uint8Array(300).fill(7)
    const bytes = sealEnvelope(identity, domain, PAYLOAD_TYPE, payload)
    const opened = openEnvelope(bytes, domain)
    assert.deepEqual([...opened.payload], [...payload])
    const signed = signedBytes(domain, PAYLOAD_TYPE, payload)
    assert.deepEqual([...signed.subarray(0, 2)], [0xc8, 0x01])
    assert.equal(signed.byteLength, 2 + 200 + 1 + PAYLOAD_TYPE.byteLength + 2 + 300)
    assert.equal(code(() => openEnvelope(bytes, 'd'.repeat(199))), 'ENVELOPE_BAD_SIGNATURE')
  })
})
