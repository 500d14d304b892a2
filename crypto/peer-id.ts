/**
 * libp2p peer ids for Ed25519 keys, without pulling libp2p into the pure layers: the id is the
 * identity multihash of the protobuf-encoded public key, written in base58btc ("12D3KooW…").
 */
import { base58btc } from 'multiformats/bases/base58'
import { ED25519_PUBLIC_KEY_BYTES } from './ed25519.js'
import { InvalidKeyError } from './errors.js'

/** protobuf PublicKey { Type = Ed25519 (1), Data = 32 bytes } */
export const ED25519_PUBLIC_KEY_PROTOBUF_PREFIX = Uint8Array.from([0x08, 0x01, 0x12, 0x20])
/** identity multihash (0x00) of 36 bytes */
const IDENTITY_MULTIHASH_PREFIX = Uint8Array.from([0x00, 0x24])

export function publicKeyToProtobuf (publicKey: Uint8Array): Uint8Array {
  if (publicKey.byteLength !== ED25519_PUBLIC_KEY_BYTES) throw new InvalidKeyError('Ed25519 public key must be 32 bytes')
  const out = new Uint8Array(ED25519_PUBLIC_KEY_PROTOBUF_PREFIX.byteLength + ED25519_PUBLIC_KEY_BYTES)
  out.set(ED25519_PUBLIC_KEY_PROTOBUF_PREFIX)
  out.set(publicKey, ED25519_PUBLIC_KEY_PROTOBUF_PREFIX.byteLength)
  return out
}

export function peerIdFromPublicKey (publicKey: Uint8Array): string {
  const proto = publicKeyToProtobuf(publicKey)
  const multihash = new Uint8Array(IDENTITY_MULTIHASH_PREFIX.byteLength + proto.byteLength)
  multihash.set(IDENTITY_MULTIHASH_PREFIX)
  multihash.set(proto, IDENTITY_MULTIHASH_PREFIX.byteLength)
  // libp2p writes peer ids in base58btc without the multibase prefix 'z'
  return base58btc.encode(multihash).slice(1)
}

/** The Ed25519 public key inside a peer id string; throws InvalidKeyError for anything else. */
export function publicKeyFromPeerId (peerId: string): Uint8Array {
  let multihash: Uint8Array
  try {
    multihash = base58btc.decode(`z${peerId}`)
  } catch {
    throw new InvalidKeyError(`not a base58btc peer id: ${peerId.slice(0, 64)}`)
  }
  const expectedLength = IDENTITY_MULTIHASH_PREFIX.byteLength + ED25519_PUBLIC_KEY_PROTOBUF_PREFIX.byteLength + ED25519_PUBLIC_KEY_BYTES
  const prefix = [...IDENTITY_MULTIHASH_PREFIX, ...ED25519_PUBLIC_KEY_PROTOBUF_PREFIX]
  if (multihash.byteLength !== expectedLength || prefix.some((b, i) => multihash[i] !== b)) {
    throw new InvalidKeyError('not an Ed25519 peer id')
  }
  return multihash.slice(prefix.length)
}

export function isPeerId (value: string): boolean {
  try {
    publicKeyFromPeerId(value)
    return true
  } catch {
    return false
  }
}
