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

/**
 * The walk's state past k (§7.4c step 2), for whoever carries its messages: the daemon over kad-dht
 * (node/dht-providers.ts) and the simulator over its Kademlia model (simulations/market/discovery.ts).
 * It holds every peer heard of with its distance to the key (and what the carrier needs to reach it,
 * `info`), which were asked and which failed; `next()` says whom to ask, `outcome()` what the answer
 * may claim (SearchOutcome.closest). Peers asked by the DHT's own lookup (step 1) are entered with
 * `asking`/`failed` before the first `next()`, so the walk never asks them again.
 */
export class ProviderWalk<Info = undefined> {
  private readonly known = new Map<string, WalkPeer & { info: Info }>()
  private readonly asked = new Set<string>()
  private readonly failedPeers = new Set<string>()
  private closest: string[] = []

  constructor (readonly k: number) {}

  /** True when `id` was heard of (so its distance need not be computed again). */
  has (id: string): boolean {
    return this.known.has(id)
  }

  /** Peers heard of. */
  get size (): number {
    return this.known.size
  }

  /** A peer heard of (answered, or named among an answer's closer peers); the first call for an id counts. */
  learn (id: string, distance: Uint8Array, info: Info): void {
    if (!this.known.has(id)) this.known.set(id, { id, distance, info })
  }

  /** What `learn` was given for `id`. */
  info (id: string): Info | undefined {
    return this.known.get(id)?.info
  }

  /** `id` is being asked (by the walk, or was by the DHT's own lookup and answered). */
  asking (id: string): void {
    this.asked.add(id)
  }

  /** `id` was asked and did not answer: the next nearest takes its place. */
  failed (id: string): void {
    this.asked.add(id)
    this.failedPeers.add(id)
  }

  /** The peers to ask now (`asking` each as it is sent, `failed` one that does not answer); empty: the walk is over. */
  next (): string[] {
    const step = walkStep([...this.known.values()], this.asked, this.failedPeers, this.k)
    this.closest = step.closest
    return step.toAsk
  }

  /**
   * The k nearest of every peer heard of, failed ones included (one that did not answer may hold records
   * the others lack), and how many of them answered: the answer is complete only if each did. None
   * found when the walk never stepped or its last step found no peer.
   */
  outcome (): { found: number, answered: number } {
    const nearest = this.closest.length === 0 ? [] : [...this.known.values()].sort(compareWalkPeers).slice(0, this.k).map((p) => p.id)
    const answered = nearest.filter((id) => this.asked.has(id) && !this.failedPeers.has(id)).length
    return { found: nearest.length, answered }
  }
}
