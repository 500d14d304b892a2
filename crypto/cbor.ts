/**
 * Canonical DAG-CBOR (DESIGN §3): the one encoding of every payload. `decodeCanonical` accepts only
 * bytes that re-encode to themselves, so a value has exactly one valid byte string.
 */
import * as dagCbor from '@ipld/dag-cbor'
import { decode as cborDecode } from 'cborg'

/**
 * DAG-CBOR's decode options minus `strict`: accept any well-formed encoding here, so that a
 * non-minimal one is told apart (NON_CANONICAL, by the re-encode check) from bytes that are not
 * DAG-CBOR at all (MALFORMED).
 */
const LENIENT_DECODE = { ...dagCbor.decodeOptions, strict: false }

export type CborErrorCode = 'CBOR_MALFORMED' | 'CBOR_NON_CANONICAL'

export class CborError extends Error {
  override readonly name = 'CborError'
  constructor (readonly code: CborErrorCode, message: string) {
    super(message)
  }
}

export function encodeCanonical (value: unknown): Uint8Array {
  return dagCbor.encode(value)
}

function sameBytes (a: Uint8Array, b: Uint8Array): boolean {
  if (a.byteLength !== b.byteLength) return false
  for (let i = 0; i < a.byteLength; i++) if (a[i] !== b[i]) return false
  return true
}

export function decodeCanonical (bytes: Uint8Array): unknown {
  let value: unknown
  try {
    value = cborDecode(bytes, LENIENT_DECODE)
  } catch (err) {
    throw new CborError('CBOR_MALFORMED', `not DAG-CBOR: ${(err as Error).message}`)
  }
  let again: Uint8Array
  try {
    again = dagCbor.encode(value)
  } catch (err) {
    throw new CborError('CBOR_NON_CANONICAL', `decoded value cannot be re-encoded: ${(err as Error).message}`)
  }
  if (!sameBytes(again, bytes)) throw new CborError('CBOR_NON_CANONICAL', 'bytes are not the canonical DAG-CBOR encoding of their value')
  return value
}

export { sameBytes as bytesEqual }
