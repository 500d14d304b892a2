/**
 * The node's entropy: request nonces and new identity keys, from the OS CSPRNG.
 *
 * Randomness stays out of the pure closure (crypto/, protocol/, simulations/) on purpose. Sealing a
 * message needs a nonce, so protocol/ takes the nonce as an argument (the payload carries it) and
 * crypto/ takes a key's seed as an argument (`new Identity(seed)`): the daemon passes these values, the
 * simulator passes ones from its seeded PRNG, and the same inputs always give the same bytes. A
 * hidden default source inside crypto/ would let protocol/ draw randomness unseen by the purity check.
 */
import { randomBytes } from 'node:crypto'
import { ED25519_SEED_BYTES, Identity, type Ed25519 } from '../crypto/index.js'

/** Default nonce length for requests: 16 bytes, so collisions never happen in practice. */
export const NONCE_BYTES = 16

/** A fresh random nonce (or any random bytes) from the OS CSPRNG. */
export function randomNonce (bytes: number = NONCE_BYTES): Uint8Array {
  return new Uint8Array(randomBytes(bytes))
}

/** A new identity with a random seed. */
export function generateIdentity (ed25519?: Ed25519): Identity {
  return new Identity(randomNonce(ED25519_SEED_BYTES), ed25519)
}
