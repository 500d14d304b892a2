import { createHash } from 'node:crypto'
import * as ed from '@noble/ed25519'
import { checkSeed, wellFormed, type Ed25519 } from './ed25519.js'

// @noble/ed25519 3 leaves SHA-512 to the caller for its synchronous API.
ed.hashes.sha512 = (message: Uint8Array) => new Uint8Array(createHash('sha512').update(message).digest())

/** Pure-JS Ed25519 from `@noble/ed25519`: the portable implementation. Strict RFC 8032 verification. */
export class NobleEd25519 implements Ed25519 {
  readonly name = '@noble/ed25519'

  publicKey (seed: Uint8Array): Uint8Array {
    checkSeed(seed)
    return ed.getPublicKey(seed)
  }

  sign (seed: Uint8Array, message: Uint8Array): Uint8Array {
    checkSeed(seed)
    return ed.sign(message, seed)
  }

  verify (publicKey: Uint8Array, message: Uint8Array, signature: Uint8Array): boolean {
    if (!wellFormed(publicKey, signature)) return false
    try {
      return ed.verify(signature, message, publicKey, { zip215: false })
    } catch {
      return false
    }
  }
}
