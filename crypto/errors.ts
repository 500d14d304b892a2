/**
 * Errors raised by crypto/. One class per condition; `code` is a stable string for logs and tests.
 */

export type EnvelopeErrorCode =
  | 'ENVELOPE_MALFORMED'
  | 'ENVELOPE_UNSUPPORTED_KEY'
  | 'ENVELOPE_BAD_SIGNATURE'

/** A signed envelope could not be decoded or did not verify. */
export class EnvelopeError extends Error {
  override readonly name = 'EnvelopeError'
  constructor (readonly code: EnvelopeErrorCode, message: string) {
    super(message)
  }
}

/** A value handed to a crypto function has the wrong shape (wrong key length, bad peer id…). */
export class InvalidKeyError extends Error {
  override readonly name = 'InvalidKeyError'
}
