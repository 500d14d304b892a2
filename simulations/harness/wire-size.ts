/**
 * How many bytes a message would take on the wire, without encoding it: the DAG-CBOR size of its
 * payload (computed the way the encoder lays it out) plus a signed envelope's fixed overhead. The
 * harness seals nothing, so this is what its recorder counts as bytes; it tracks the daemon's real
 * sizes closely (CIDs, peer ids and strings dominate), not to the byte.
 */
import { CID } from '../../crypto/index.js'

/**
 * A libp2p signed envelope around a payload: the protobuf-framed Ed25519 public key (36 + 2), the
 * payload type (a 3-byte multicodec + 2), the signature (64 + 2) and the payload's own framing (3).
 */
export const ENVELOPE_OVERHEAD_BYTES = 38 + 5 + 66 + 3

/** Bytes of a CBOR head (major type + argument) for argument `n`. */
function head (n: number): number {
  return n < 24 ? 1 : n < 0x100 ? 2 : n < 0x10000 ? 3 : n < 0x100000000 ? 5 : 9
}

/** UTF-16 code units → UTF-8 bytes (surrogate pairs as 4). */
function utf8 (s: string): number {
  let n = 0
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i)
    n += c < 0x80 ? 1 : c < 0x800 ? 2 : (c >= 0xd800 && c <= 0xdbff) ? (i++, 4) : 3
  }
  return n
}

/** DAG-CBOR size of `value` (undefined map entries are left out, as the daemon strips them). */
export function cborSize (value: unknown): number {
  if (value === null || value === undefined || typeof value === 'boolean') return 1
  if (typeof value === 'number') return Number.isInteger(value) ? head(Math.abs(value)) : 9
  if (typeof value === 'string') return head(utf8(value)) + utf8(value)
  if (value instanceof Uint8Array) return head(value.byteLength) + value.byteLength
  const cid = CID.asCID(value)
  // tag 42 (2 bytes) + a byte string holding 0x00 + the CID's bytes
  if (cid != null) return 2 + head(cid.bytes.byteLength + 1) + cid.bytes.byteLength + 1
  if (Array.isArray(value)) {
    let n = head(value.length)
    for (const item of value) n += cborSize(item)
    return n
  }
  if (typeof value === 'object') {
    let n = 0
    let keys = 0
    const record = value as Record<string, unknown>
    // own keys in Object.entries' order, without its [key, value] pairs (every message is sized)
    for (const k in record) {
      if (!Object.prototype.hasOwnProperty.call(record, k)) continue
      const v = record[k]
      if (v === undefined) continue
      keys++
      n += head(utf8(k)) + utf8(k) + cborSize(v)
    }
    return head(keys) + n
  }
  return 1
}

/** Bytes of a signed message whose payload is `payload`. */
export function signedSize (payload: unknown): number {
  return ENVELOPE_OVERHEAD_BYTES + cborSize(payload)
}
