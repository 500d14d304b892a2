/**
 * The kind a signed message says it is (its envelope's payload type), for the `kind` label of
 * gpumesh_messages_rejected_total when opening it failed: `unknown` when the bytes are no envelope or
 * name no gpumesh payload type. It reads the envelope only, checks nothing, and never throws.
 */
import { decodeEnvelope } from '../../crypto/index.js'
import { MAX_ENVELOPE_BYTES, kindOfPayloadType } from '../../protocol/index.js'

export function messageKindOf (bytes: Uint8Array): string {
  // an oversized message is not decoded a second time
  if (!(bytes instanceof Uint8Array) || bytes.byteLength > MAX_ENVELOPE_BYTES) return 'unknown'
  try {
    return kindOfPayloadType(decodeEnvelope(bytes).payloadType) ?? 'unknown'
  } catch {
    return 'unknown'
  }
}
