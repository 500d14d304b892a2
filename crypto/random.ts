import { randomBytes } from 'node:crypto'

/** Default nonce length for requests: 16 bytes, so collisions never happen in practice. */
export const NONCE_BYTES = 16

/** A fresh random nonce from the OS CSPRNG. protocol/ never draws randomness itself: callers pass this in. */
export function randomNonce (bytes: number = NONCE_BYTES): Uint8Array {
  return new Uint8Array(randomBytes(bytes))
}
