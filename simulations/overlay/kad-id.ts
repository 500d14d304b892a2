/**
 * The Kademlia key space as @libp2p/kad-dht computes it (utils.js `convertBuffer`/`convertPeerId`):
 * a 256-bit id = sha2-256 of the DHT key's bytes, where the key of a content record is the CID's
 * multihash and the key of a peer is its peer id's multihash; distance is XOR, compared as a
 * big-endian number. Capability keys go through protocol's `capabilityKeyCid`, so a simulated
 * lookup of `market/eu/40` targets exactly the id the daemon's lookup does.
 *
 * Simulated nodes have no key pairs: a node's id is sha2-256 of `gpumesh-sim-node/<seed>/<id>`, a
 * seeded stand-in for the hash of a peer id that is just as uniform over the key space.
 */
import { sha256 } from '../../crypto/index.js'
import { capabilityKeyCid } from '../../protocol/index.js'

export const KAD_ID_BYTES = 32
export const KAD_ID_BITS = KAD_ID_BYTES * 8
/** 32-bit words per id (ids are kept as big-endian Uint32 words for fast comparison). */
export const KAD_ID_WORDS = KAD_ID_BYTES / 4

const encoder = new TextEncoder()

/** The kad id of a capability key (`market/eu/40`): sha2-256 of its CID's multihash bytes. */
export function kadIdOfCapabilityKey (key: string): Uint8Array {
  return sha256(capabilityKeyCid(key).multihash.bytes)
}

/** The kad id of a simulated node: a seeded hash of its id string. */
export function kadIdOfNode (nodeId: string, seed: number | string): Uint8Array {
  return sha256(encoder.encode(`gpumesh-sim-node/${String(seed)}/${nodeId}`))
}

/** a XOR b. */
export function xorDistance (a: Uint8Array, b: Uint8Array): Uint8Array {
  if (a.length !== b.length) throw new RangeError(`xorDistance: ids of ${a.length} and ${b.length} bytes`)
  const out = new Uint8Array(a.length)
  for (let i = 0; i < a.length; i++) out[i] = (a[i] as number) ^ (b[i] as number)
  return out
}

/** -1 when `a` is closer to `target` than `b`, 1 when farther, 0 when they are the same id. */
export function compareDistance (a: Uint8Array, b: Uint8Array, target: Uint8Array): -1 | 0 | 1 {
  for (let i = 0; i < target.length; i++) {
    const da = (a[i] as number) ^ (target[i] as number)
    const db = (b[i] as number) ^ (target[i] as number)
    if (da !== db) return da < db ? -1 : 1
  }
  return 0
}

/**
 * The common prefix length of two ids, 0 … 255 (the classic bucket index: `a` would file `b` in
 * bucket `cpl`), or 256 (KAD_ID_BITS) when the ids are equal.
 */
export function commonPrefixLength (a: Uint8Array, b: Uint8Array): number {
  for (let i = 0; i < a.length; i++) {
    const x = (a[i] as number) ^ (b[i] as number)
    if (x !== 0) return i * 8 + Math.clz32(x) - 24
  }
  return a.length * 8
}

/**
 * The routing-table cell an id falls in: its first `prefixLength` bits as a number (kad-dht's
 * trie files a peer by its own id's leading bits, up to depth `prefixLength`; see kademlia.ts).
 */
export function cellOf (id: Uint8Array, prefixLength: number): number {
  if (prefixLength === 0) return 0
  const head = (((id[0] as number) << 24) | ((id[1] as number) << 16) | ((id[2] as number) << 8) | (id[3] as number)) >>> 0
  return head >>> (32 - prefixLength)
}

/** Writes `id` as KAD_ID_WORDS big-endian words into `words` at `offset`. */
export function writeWords (id: Uint8Array, words: Uint32Array, offset: number): void {
  for (let w = 0; w < KAD_ID_WORDS; w++) {
    const i = w * 4
    words[offset + w] = (((id[i] as number) << 24) | ((id[i + 1] as number) << 16) | ((id[i + 2] as number) << 8) | (id[i + 3] as number)) >>> 0
  }
}
