/**
 * A node's identity: one Ed25519 key that is both its libp2p peer id and the signer of every
 * application message (DESIGN §3). Made from a 32-byte seed the caller supplies: crypto/ draws no
 * randomness (node/random.ts `generateIdentity` makes a fresh one; the simulator uses seeded ones).
 */
import { ED25519_PUBLIC_KEY_BYTES, ED25519_SEED_BYTES, checkSeed, type Ed25519 } from './ed25519.js'
import { defaultEd25519 } from './ed25519-default.js'
import { InvalidKeyError } from './errors.js'
import { peerIdFromPublicKey } from './peer-id.js'
import { bytesEqual } from './cbor.js'

/** Anything that can sign on behalf of a peer. */
export interface Signer {
  readonly publicKey: Uint8Array
  readonly peerId: string
  sign (message: Uint8Array): Uint8Array
}

/** protobuf PrivateKey { Type = Ed25519 (1), Data = seed ‖ public key (64 bytes) }, as libp2p stores it. */
const PRIVATE_KEY_PROTOBUF_PREFIX = Uint8Array.from([0x08, 0x01, 0x12, 0x40])
export const PRIVATE_KEY_PROTOBUF_BYTES = PRIVATE_KEY_PROTOBUF_PREFIX.byteLength + ED25519_SEED_BYTES + ED25519_PUBLIC_KEY_BYTES

export class Identity implements Signer {
  readonly publicKey: Uint8Array
  readonly peerId: string
  readonly #seed: Uint8Array

  constructor (seed: Uint8Array, readonly ed25519: Ed25519 = defaultEd25519()) {
    checkSeed(seed)
    this.#seed = Uint8Array.from(seed)
    this.publicKey = ed25519.publicKey(this.#seed)
    this.peerId = peerIdFromPublicKey(this.publicKey)
  }

  /**
   * Read libp2p's protobuf private-key encoding (what `privateKeyToProtobuf` from @libp2p/crypto
   * writes). Throws InvalidKeyError unless it is an Ed25519 key whose public half matches its seed.
   */
  static fromProtobuf (bytes: Uint8Array, ed25519?: Ed25519): Identity {
    if (bytes.byteLength !== PRIVATE_KEY_PROTOBUF_BYTES ||
        !bytesEqual(bytes.subarray(0, PRIVATE_KEY_PROTOBUF_PREFIX.byteLength), PRIVATE_KEY_PROTOBUF_PREFIX)) {
      throw new InvalidKeyError('not a protobuf-encoded Ed25519 private key')
    }
    const seed = bytes.subarray(PRIVATE_KEY_PROTOBUF_PREFIX.byteLength, PRIVATE_KEY_PROTOBUF_PREFIX.byteLength + ED25519_SEED_BYTES)
    const storedPublic = bytes.subarray(PRIVATE_KEY_PROTOBUF_PREFIX.byteLength + ED25519_SEED_BYTES)
    const identity = new Identity(seed, ed25519)
    if (!bytesEqual(identity.publicKey, storedPublic)) {
      throw new InvalidKeyError('private key and its stored public key do not match')
    }
    return identity
  }

  /** libp2p's protobuf private-key encoding; feed it to `privateKeyFromProtobuf` for createLibp2p. */
  toProtobuf (): Uint8Array {
    const out = new Uint8Array(PRIVATE_KEY_PROTOBUF_BYTES)
    out.set(PRIVATE_KEY_PROTOBUF_PREFIX)
    out.set(this.#seed, PRIVATE_KEY_PROTOBUF_PREFIX.byteLength)
    out.set(this.publicKey, PRIVATE_KEY_PROTOBUF_PREFIX.byteLength + ED25519_SEED_BYTES)
    return out
  }

  sign (message: Uint8Array): Uint8Array {
    return this.ed25519.sign(this.#seed, message)
  }
}
