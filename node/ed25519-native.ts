import { createPrivateKey, createPublicKey, sign, verify, type KeyObject } from 'node:crypto'
import { BoundedCache, checkSeed, isStrictPublicKey, wellFormed, type Ed25519 } from '../crypto/index.js'

// DER prefixes that wrap a raw Ed25519 key into SPKI / PKCS#8 (RFC 8410).
const SPKI_PREFIX = Uint8Array.from([0x30, 0x2a, 0x30, 0x05, 0x06, 0x03, 0x2b, 0x65, 0x70, 0x03, 0x21, 0x00])
const PKCS8_PREFIX = Uint8Array.from([0x30, 0x2e, 0x02, 0x01, 0x00, 0x30, 0x05, 0x06, 0x03, 0x2b, 0x65, 0x70, 0x04, 0x22, 0x04, 0x20])

/** Importing a key into OpenSSL costs about as much as a verification, so keep recent ones. */
const KEY_CACHE_SIZE = 4096

function concat (a: Uint8Array, b: Uint8Array): Buffer {
  return Buffer.concat([a, b])
}

/**
 * Ed25519 on OpenSSL through `node:crypto` (≈10× faster than the pure-JS implementation). It lives in
 * node/ because crypto/ must stay portable; `useNativeCrypto()` (native-crypto.ts) makes it the default.
 */
export class NativeEd25519 implements Ed25519 {
  readonly name = 'node:crypto'
  /** Imported keys; `null` marks a key refused as small-order or non-canonical. */
  private readonly publicKeys = new BoundedCache<string, KeyObject | null>(KEY_CACHE_SIZE)
  private readonly privateKeys = new BoundedCache<string, KeyObject>(64)

  publicKey (seed: Uint8Array): Uint8Array {
    const spki = createPublicKey(this.privateKeyObject(seed)).export({ format: 'der', type: 'spki' })
    return new Uint8Array(spki.subarray(SPKI_PREFIX.byteLength))
  }

  sign (seed: Uint8Array, message: Uint8Array): Uint8Array {
    return new Uint8Array(sign(null, message, this.privateKeyObject(seed)))
  }

  verify (publicKey: Uint8Array, message: Uint8Array, signature: Uint8Array): boolean {
    if (!wellFormed(publicKey, signature)) return false
    const key = this.publicKeyObject(publicKey)
    return key !== null && verify(null, message, key, signature)
  }

  private privateKeyObject (seed: Uint8Array): KeyObject {
    checkSeed(seed)
    const id = Buffer.from(seed).toString('base64')
    let key = this.privateKeys.get(id)
    if (key == null) {
      key = createPrivateKey({ key: concat(PKCS8_PREFIX, seed), format: 'der', type: 'pkcs8' })
      this.privateKeys.set(id, key)
    }
    return key
  }

  private publicKeyObject (publicKey: Uint8Array): KeyObject | null {
    const id = Buffer.from(publicKey).toString('base64')
    let key = this.publicKeys.get(id)
    if (key === undefined) {
      key = null
      if (isStrictPublicKey(publicKey)) {
        try {
          key = createPublicKey({ key: concat(SPKI_PREFIX, publicKey), format: 'der', type: 'spki' })
        } catch {} // not a point OpenSSL accepts
      }
      this.publicKeys.set(id, key)
    }
    return key
  }
}

/** True when this runtime's OpenSSL offers Ed25519. */
export function nativeEd25519Available (): boolean {
  try {
    const probe = new NativeEd25519()
    const seed = new Uint8Array(32)
    return probe.verify(probe.publicKey(seed), seed, probe.sign(seed, seed))
  } catch {
    return false
  }
}
