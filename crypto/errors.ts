/**
 * Errors raised by crypto/. One class per condition; `code` is a stable string for logs and tests.
 */

export type KeyFileErrorCode =
  | 'KEY_FILE_MISSING'
  | 'KEY_FILE_CORRUPT'
  | 'KEY_FILE_PERMISSIONS'
  | 'KEY_FILE_EXISTS'

/** The identity key file cannot be used. gpumesh never replaces a bad key file silently. */
export class KeyFileError extends Error {
  override readonly name = 'KeyFileError'
  constructor (readonly code: KeyFileErrorCode, readonly path: string, message: string) {
    super(`${message} (${path})`)
  }
}

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
