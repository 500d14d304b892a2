import * as ed from '@noble/ed25519'
import { sha512 } from '@noble/hashes/sha2.js'
import { BoundedCache } from './bounded-cache.js'
import { checkSeed, wellFormed, type Ed25519 } from './ed25519.js'

// @noble/ed25519 3 leaves SHA-512 to the caller for its synchronous API.
ed.hashes.sha512 = sha512

/**
 * True when `publicKey` is the canonical encoding of a curve point that is not of small order.
 * OpenSSL accepts small-order keys, and for them a trivial "signature" (key 01 00…00, signature
 * 01 00…00) verifies for every message: both implementations refuse them. Keys with a small-order
 * component are accepted; both implementations check the same cofactorless equation, so they agree
 * on those too. Cheap (a point decompression), and callers cache the answer per key anyway.
 */
export function isStrictPublicKey (publicKey: Uint8Array): boolean {
  try {
    return !ed.Point.fromBytes(publicKey, false).isSmallOrder()
  } catch {
    return false
  }
}

/** Pure-JS Ed25519 from `@noble/ed25519`: the portable implementation. Strict RFC 8032 verification. */
export class NobleEd25519 implements Ed25519 {
  readonly name = '@noble/ed25519'
  private readonly strictKeys = new BoundedCache<string, boolean>(4096)

  publicKey (seed: Uint8Array): Uint8Array {
    checkSeed(seed)
    return ed.getPublicKey(seed)
  }

  sign (seed: Uint8Array, message: Uint8Array): Uint8Array {
    checkSeed(seed)
    return ed.sign(message, seed)
  }

  /**
   * The cofactorless check OpenSSL makes: [S]B − [k]A must encode to R exactly. @noble/ed25519's own
   * verify is cofactored ([8]…), so it accepted signatures with a small-order component in R or A that
   * the native path refuses; a malicious signer could then split nodes' verdicts on one message.
   */
  verify (publicKey: Uint8Array, message: Uint8Array, signature: Uint8Array): boolean {
    if (!wellFormed(publicKey, signature) || !this.strict(publicKey)) return false
    try {
      const r = signature.subarray(0, 32)
      const s = littleEndian(signature.subarray(32))
      if (s >= GROUP_ORDER) return false
      const A = ed.Point.fromBytes(publicKey, false)
      const k = littleEndian(sha512.create().update(r).update(publicKey).update(message).digest()) % GROUP_ORDER
      const R = ed.Point.BASE.multiply(s, false).subtract(A.multiply(k, false)).toBytes()
      return R.every((byte, i) => byte === r[i])
    } catch {
      return false
    }
  }

  private strict (publicKey: Uint8Array): boolean {
    const id = keyOf(publicKey)
    let ok = this.strictKeys.get(id)
    if (ok === undefined) {
      ok = isStrictPublicKey(publicKey)
      this.strictKeys.set(id, ok)
    }
    return ok
  }
}

/** A cache key for a byte string (no Buffer in the portable code). */
function keyOf (bytes: Uint8Array): string {
  return String.fromCharCode(...bytes)
}

/** The order L of the Ed25519 base point. */
const GROUP_ORDER = (1n << 252n) + 27742317777372353535851937790883648493n

function littleEndian (bytes: Uint8Array): bigint {
  let n = 0n
  for (let i = bytes.byteLength - 1; i >= 0; i--) n = (n << 8n) | BigInt(bytes[i] as number)
  return n
}
