/**
 * Signed envelopes, libp2p RFC 0002 (DESIGN §3). Wire form is the protobuf
 *
 *   message Envelope { bytes public_key = 1; bytes payload_type = 2; bytes payload = 3; bytes signature = 5; }
 *
 * and the signature covers varint(len(domain)) ‖ domain ‖ varint(len(type)) ‖ type ‖ varint(len(payload)) ‖ payload.
 * `public_key` is the protobuf PublicKey of an Ed25519 key. Envelopes made here open with
 * `RecordEnvelope.openAndCertify` from @libp2p/peer-record.
 *
 * Decoding is strict: the four fields exactly once, in field order, minimal varints, no unknown fields
 * and no trailing bytes. So each envelope has one byte string, and flipping any bit is detected.
 */
import type { Ed25519 } from './ed25519.js'
import { ED25519_PUBLIC_KEY_BYTES } from './ed25519.js'
import { defaultEd25519 } from './ed25519-default.js'
import { EnvelopeError } from './errors.js'
import type { Signer } from './identity.js'
import { ED25519_PUBLIC_KEY_PROTOBUF_PREFIX, peerIdFromPublicKey, publicKeyToProtobuf } from './peer-id.js'
import { decodeVarint, encodeVarint } from './varint.js'
import { bytesEqual } from './cbor.js'

export interface Envelope {
  /** Raw 32-byte Ed25519 public key of the signer. */
  readonly publicKey: Uint8Array
  /** The payload type: a multicodec, as varint bytes. */
  readonly payloadType: Uint8Array
  readonly payload: Uint8Array
  readonly signature: Uint8Array
}

const FIELD_PUBLIC_KEY = 1
const FIELD_PAYLOAD_TYPE = 2
const FIELD_PAYLOAD = 3
const FIELD_SIGNATURE = 5
const WIRE_TYPE_LENGTH_DELIMITED = 2
const FIELD_ORDER = [FIELD_PUBLIC_KEY, FIELD_PAYLOAD_TYPE, FIELD_PAYLOAD, FIELD_SIGNATURE] as const

function concat (parts: Uint8Array[]): Uint8Array {
  let length = 0
  for (const part of parts) length += part.byteLength
  const out = new Uint8Array(length)
  let offset = 0
  for (const part of parts) {
    out.set(part, offset)
    offset += part.byteLength
  }
  return out
}

/** The bytes an envelope signature covers (RFC 0002). */
export function signedBytes (domain: string, payloadType: Uint8Array, payload: Uint8Array): Uint8Array {
  const domainBytes = new TextEncoder().encode(domain)
  return concat([
    encodeVarint(domainBytes.byteLength), domainBytes,
    encodeVarint(payloadType.byteLength), payloadType,
    encodeVarint(payload.byteLength), payload
  ])
}

export function encodeEnvelope (envelope: Envelope): Uint8Array {
  const values = [publicKeyToProtobuf(envelope.publicKey), envelope.payloadType, envelope.payload, envelope.signature]
  const parts: Uint8Array[] = []
  FIELD_ORDER.forEach((field, i) => {
    const value = values[i] as Uint8Array
    parts.push(encodeVarint((field << 3) | WIRE_TYPE_LENGTH_DELIMITED), encodeVarint(value.byteLength), value)
  })
  return concat(parts)
}

/** Parse envelope bytes without checking the signature. Throws EnvelopeError(ENVELOPE_MALFORMED…). */
export function decodeEnvelope (bytes: Uint8Array): Envelope {
  const values: Uint8Array[] = []
  let offset = 0
  for (const field of FIELD_ORDER) {
    const tag = decodeVarint(bytes, offset)
    if (tag === undefined || tag[0] !== ((field << 3) | WIRE_TYPE_LENGTH_DELIMITED)) {
      throw new EnvelopeError('ENVELOPE_MALFORMED', `expected envelope field ${field} at byte ${offset}`)
    }
    offset += tag[1]
    const length = decodeVarint(bytes, offset)
    if (length === undefined || offset + length[1] + length[0] > bytes.byteLength) {
      throw new EnvelopeError('ENVELOPE_MALFORMED', `bad length for envelope field ${field}`)
    }
    offset += length[1]
    values.push(bytes.subarray(offset, offset + length[0]))
    offset += length[0]
  }
  if (offset !== bytes.byteLength) throw new EnvelopeError('ENVELOPE_MALFORMED', 'trailing bytes after envelope')
  const [keyProto, payloadType, payload, signature] = values as [Uint8Array, Uint8Array, Uint8Array, Uint8Array]
  const prefix = ED25519_PUBLIC_KEY_PROTOBUF_PREFIX
  // PublicKey protobuf: 08 <KeyType> 12 <length> <key bytes>; KeyType 1 is Ed25519
  if (keyProto[0] === 0x08 && keyProto[1] !== undefined && keyProto[1] !== 0x01 && keyProto[1] < 0x80) {
    throw new EnvelopeError('ENVELOPE_UNSUPPORTED_KEY', `envelope public key has type ${keyProto[1]}, only Ed25519 (1) is supported`)
  }
  if (keyProto.byteLength !== prefix.byteLength + ED25519_PUBLIC_KEY_BYTES || !bytesEqual(keyProto.subarray(0, prefix.byteLength), prefix)) {
    throw new EnvelopeError('ENVELOPE_MALFORMED', 'envelope public key is not a 32-byte Ed25519 key protobuf')
  }
  return { publicKey: keyProto.subarray(prefix.byteLength), payloadType, payload, signature }
}

/** Sign `payload` under `domain` and `payloadType`; returns the envelope's wire bytes. */
export function sealEnvelope (signer: Signer, domain: string, payloadType: Uint8Array, payload: Uint8Array): Uint8Array {
  const signature = signer.sign(signedBytes(domain, payloadType, payload))
  return encodeEnvelope({ publicKey: signer.publicKey, payloadType, payload, signature })
}

export function verifyEnvelope (envelope: Envelope, domain: string, ed25519: Ed25519 = defaultEd25519()): boolean {
  return ed25519.verify(envelope.publicKey, signedBytes(domain, envelope.payloadType, envelope.payload), envelope.signature)
}

export interface OpenedEnvelope extends Envelope {
  /** The signer's peer id, derived from the envelope's public key. */
  readonly signer: string
}

/** Decode and verify. Throws EnvelopeError unless the signature is valid for `domain`. */
export function openEnvelope (bytes: Uint8Array, domain: string, ed25519?: Ed25519): OpenedEnvelope {
  const envelope = decodeEnvelope(bytes)
  if (!verifyEnvelope(envelope, domain, ed25519)) throw new EnvelopeError('ENVELOPE_BAD_SIGNATURE', 'envelope signature does not verify')
  return { ...envelope, signer: peerIdFromPublicKey(envelope.publicKey) }
}
