/**
 * The continuation of a provider lookup past k (protocol/README.md §7.4c), pure: a Kademlia walk toward
 * the key that asks each peer `GET_PROVIDERS` once, until every one of the k closest peers that answer
 * has been asked. Distances are the libp2p Kademlia ones (XOR of the sha2-256 of the key bytes and of
 * the peer id's multihash bytes, §7.3); the node hashes, this module compares and chooses.
 */

/** A peer the walk knows of, with its XOR distance to the key (32 bytes). */
export interface WalkPeer {
  id: string
  distance: Uint8Array
}

/** XOR of two kad ids of equal length: the Kademlia distance between them. */
export function xorDistance (a: Uint8Array, b: Uint8Array): Uint8Array {
  if (a.length !== b.length) throw new RangeError(`kad ids differ in length: ${a.length} and ${b.length}`)
  const out = new Uint8Array(a.length)
  for (let i = 0; i < a.length; i++) out[i] = (a[i] as number) ^ (b[i] as number)
  return out
}

/** Orders distances, nearest first (big-endian unsigned comparison); ties by peer id so the order is total. */
export function compareWalkPeers (a: WalkPeer, b: WalkPeer): number {
  for (let i = 0; i < a.distance.length; i++) {
    const d = (a.distance[i] as number) - (b.distance[i] as number)
    if (d !== 0) return d
  }
  return a.id < b.id ? -1 : a.id > b.id ? 1 : 0
}

export interface WalkStep {
  /** The k nearest known peers that have not failed, nearest first. */
  closest: string[]
  /** Those of them not asked yet: ask these next. Empty: the walk is over. */
  toAsk: string[]
}

/**
 * One step of the walk: the k nearest known peers, skipping those that failed (a peer that does not
 * answer is replaced by the next nearest, as in Kademlia), and which of them are still to be asked.
 */
export function walkStep (known: readonly WalkPeer[], asked: ReadonlySet<string>, failed: ReadonlySet<string>, k: number): WalkStep {
  const closest = known.filter((p) => !failed.has(p.id)).sort(compareWalkPeers).slice(0, k).map((p) => p.id)
  return { closest, toAsk: closest.filter((id) => !asked.has(id)) }
}
