/**
 * Why a message was rejected. One error class; the reason is a string code that is stable on the
 * wire of logs, metrics labels and gossip peer-score penalties (DESIGN §3, STYLE "one error class
 * per condition").
 */
export const RejectReason = {
  /** Larger than the limit for its kind (or the global limit) — checked before parsing. */
  TOO_LARGE: 'TOO_LARGE',
  /** Not a well-formed RFC 0002 envelope. */
  MALFORMED_ENVELOPE: 'MALFORMED_ENVELOPE',
  /** Signed with a key type other than Ed25519. */
  UNSUPPORTED_KEY: 'UNSUPPORTED_KEY',
  /** A gpumesh payload type, but not the one expected here. */
  WRONG_PAYLOAD_TYPE: 'WRONG_PAYLOAD_TYPE',
  /** Not a gpumesh payload type at all. */
  UNKNOWN_PAYLOAD_TYPE: 'UNKNOWN_PAYLOAD_TYPE',
  BAD_SIGNATURE: 'BAD_SIGNATURE',
  /** The payload is not DAG-CBOR. */
  MALFORMED_PAYLOAD: 'MALFORMED_PAYLOAD',
  /** Valid DAG-CBOR, but not the canonical bytes of its value. */
  NON_CANONICAL: 'NON_CANONICAL',
  UNSUPPORTED_VERSION: 'UNSUPPORTED_VERSION',
  /** A field the schema does not know (at any depth). */
  UNKNOWN_FIELD: 'UNKNOWN_FIELD',
  /** A missing field, a wrong type or a value out of range. */
  INVALID_FIELD: 'INVALID_FIELD',
  EXPIRED: 'EXPIRED',
  /** issuedAt beyond now + the clock-skew allowance. */
  FUTURE_DATED: 'FUTURE_DATED',
  /** expiresAt before issuedAt, or a lifetime longer than its kind allows. */
  BAD_LIFETIME: 'BAD_LIFETIME',
  /** The payload names a different peer than the one that signed it (a bid's `provider`). */
  SIGNER_MISMATCH: 'SIGNER_MISMATCH',
  /** An embedded envelope does not belong to the message that carries it (an auction round's job request). */
  EMBEDDED_MISMATCH: 'EMBEDDED_MISMATCH',
  /** Seen before (same signer and nonce, or the same signed payload). */
  REPLAY: 'REPLAY',
  /** A fraud proof's receipt signed by another peer than the proof's `subject`. */
  NOT_BY_SUBJECT: 'NOT_BY_SUBJECT',
  /** A fraud proof's receipt whose inputs are not the job's input CIDs, in the job's order. */
  INPUTS_MISMATCH: 'INPUTS_MISMATCH',
  /** A fraud proof for a job whose outputs may differ between honest runs (not `wasm`). */
  NOT_DETERMINISTIC: 'NOT_DETERMINISTIC',
  /** A fraud proof's receipt of a run that did not end on its own (exit code −1 or 128 + a signal). */
  INCOMPLETE_RUN: 'INCOMPLETE_RUN',
  /** A fraud proof whose receipts do not name at least two different outputs. */
  NO_CONFLICT: 'NO_CONFLICT',
  /** A `wrong-output` fraud proof whose re-execution gave the subject's own output: the proof is false. */
  REEXECUTION_AGREES: 'REEXECUTION_AGREES'
} as const

export type RejectReason = typeof RejectReason[keyof typeof RejectReason]

export class MessageRejectedError extends Error {
  override readonly name = 'MessageRejectedError'
  constructor (readonly reason: RejectReason, message: string, readonly path?: string) {
    super(`${reason}: ${message}`)
  }
}

export function reject (reason: RejectReason, message: string, path?: string): never {
  throw new MessageRejectedError(reason, message, path)
}
