/**
 * One Ed25519 signer/verifier interface, two implementations: `@noble/ed25519` here (portable, the
 * default) and native `node:crypto` in node/ed25519-native.ts, which node/ installs as the default. Keys are raw bytes: a 32-byte seed (the RFC 8032
 * private key) and a 32-byte public key; signatures are 64 bytes.
 */

export const ED25519_SEED_BYTES = 32
export const ED25519_PUBLIC_KEY_BYTES = 32
export const ED25519_SIGNATURE_BYTES = 64

export interface Ed25519 {
  /** Human-readable name, used in benchmarks and test titles. */
  readonly name: string
  /** Derive the public key from a 32-byte seed. */
  publicKey (seed: Uint8Array): Uint8Array
  /** Sign `message` with the key whose seed is `seed`. Deterministic (RFC 8032). */
  sign (seed: Uint8Array, message: Uint8Array): Uint8Array
  /** True only for a valid signature; never throws on malformed input (wrong lengths → false). */
  verify (publicKey: Uint8Array, message: Uint8Array, signature: Uint8Array): boolean
}

export function checkSeed (seed: Uint8Array): void {
  if (!(seed instanceof Uint8Array) || seed.byteLength !== ED25519_SEED_BYTES) {
    throw new TypeError(`Ed25519 seed must be ${ED25519_SEED_BYTES} bytes`)
  }
}

export function wellFormed (publicKey: Uint8Array, signature: Uint8Array): boolean {
  return publicKey instanceof Uint8Array && publicKey.byteLength === ED25519_PUBLIC_KEY_BYTES &&
    signature instanceof Uint8Array && signature.byteLength === ED25519_SIGNATURE_BYTES
}
