/**
 * The gossipsub mesh model (gossip.ts) as the harness bus's gossip delay: a NetworkModel that keeps the
 * base model's delays for streams and gives each subscriber of a publish the delay of its first copy
 * over the topic's mesh, and counts every copy on the wire (duplicates, IHAVE/IWANT/IDONTWANT included).
 *
 * - One mesh per topic, over the topic's subscribers (the `subscribers` the caller names, as the run
 *   will subscribe them): gossipsub keeps a mesh per topic, and the regional topics' subscribers are a
 *   subset of the global one's, so one mesh for all would send a regional message through nodes that
 *   never see it.
 * - A message on several topics is one gossipsub publish per topic (node/market/gossip.ts publishes on
 *   each), so its wire copies are the sum over its topics, and a subscriber's delay is its earliest copy
 *   over any of them (the daemon drops the later ones as replays).
 * - The mesh paths use the base model's mean delay per pair (`meanLatencyMs`, no per-message jitter), so
 *   one flood per (publisher, topic, whether IDONTWANT applies) is computed once and reused for every
 *   later message from that publisher on that topic: a bid costs a lookup per subscriber, not a flood.
 *   (Without `meanLatencyMs` the base's `latencyMs` is drawn once per pair and cached the same way.)
 * - A subscriber outside the topic's mesh (one the caller did not name) gets the base model's
 *   `gossipHops × latencyMs` and is counted in `unmodelled`.
 *
 * The bus calls `gossipDelayMs` once per subscriber of a publish, with the same message object: a new
 * object (or publisher) starts a new publish, whose wire counts are added then.
 */
import type { NetworkModel, Place } from '../harness/network.js'
import type { Seed } from '../harness/prng.js'
import { GossipMesh, type PublishResult } from './gossip.js'
import { createGossipParams, ihaveRpcBytes, iwantRpcBytes, publishRpcBytes, type GossipParams } from './gossip-params.js'

export interface MeshGossipOptions {
  /** A topic's subscribers, as the run subscribes them (called once per topic, at its first publish). */
  subscribers: (topic: string) => readonly Place[]
  seed: Seed
  params?: Partial<GossipParams>
  /** IHAVE/IWANT lazy gossip (default true: gossipsub sends IHAVE at every heartbeat). */
  lazy?: boolean
  /** Validation time before a member forwards, ms (default 0). */
  processingMs?: number
}

/** What the mesh carried: every copy on the wire. */
export interface WireCounts {
  /** Publishes (one per message per topic) and messages the bus published (one per message). */
  publishes: number
  messages: number
  /** The bytes of those messages as the bus counts them (one each). */
  appBytes: number
  /** Copies of messages sent (forwards, first-hop sends, IWANT replies), duplicates included. */
  copies: number
  duplicates: number
  ihave: number
  iwant: number
  idontwant: number
  /** All gossip RPC bytes (copies and control messages). */
  bytes: number
  /** Subscribers reached that were outside their topic's mesh (delay from the base model). */
  unmodelled: number
  /** Copies and bytes by message kind. */
  byKind: Record<string, { messages: number, copies: number, bytes: number }>
}

/** A cached flood: each member's first delivery (ms) and the flood's counts, without the message size. */
interface Flood {
  first: Float32Array
  transmissions: number
  duplicates: number
  ihave: number
  iwant: number
  idontwant: number
}

interface Topic { mesh: GossipMesh, topicBytes: number, floods: Map<number, Flood> }

const encoder = new TextEncoder()

export class MeshGossip {
  readonly wire: WireCounts = { publishes: 0, messages: 0, appBytes: 0, copies: 0, duplicates: 0, ihave: 0, iwant: 0, idontwant: 0, bytes: 0, unmodelled: 0, byKind: {} }
  private readonly index = new Map<string, number>()
  private readonly places: Place[] = []
  private readonly topics = new Map<string, Topic>()
  private readonly pairDelay = new Map<number, number>()
  private current: unknown
  private currentFrom = ''
  private currentFloods: Array<{ topic: Topic, flood: Flood }> = []
  private readonly scratch: { into?: PublishResult } = {}
  private readonly idontwantMinBytes: number

  constructor (private readonly base: NetworkModel, private readonly options: MeshGossipOptions) {
    this.idontwantMinBytes = createGossipParams(options.params).idontwantMinBytes
  }

  /** The base model with this mesh as its gossip delay. */
  network (): NetworkModel {
    return {
      latencyMs: this.base.latencyMs,
      gossipHops: this.base.gossipHops,
      gossipLoss: this.base.gossipLoss,
      ...(this.base.meanLatencyMs !== undefined ? { meanLatencyMs: this.base.meanLatencyMs } : {}),
      // the base model's faults and blob times hold under the mesh too (a partition drops what crosses it)
      ...(this.base.drops !== undefined ? { drops: this.base.drops } : {}),
      ...(this.base.blobMs !== undefined ? { blobMs: this.base.blobMs } : {}),
      gossipDelayMs: (from, to, topics, message) => this.gossipDelayMs(from, to, topics, message)
    }
  }

  /** The mesh of `topic` (built at its first use). */
  meshOf (topic: string): GossipMesh {
    return this.topic(topic).mesh
  }

  /** The node index of `place` in the meshes (assigned at first sight). */
  nodeIndex (place: Place): number {
    let i = this.index.get(place.node)
    if (i === undefined) {
      i = this.places.length
      this.index.set(place.node, i)
      this.places.push(place)
    }
    return i
  }

  gossipDelayMs (from: Place, to: Place, topics: readonly string[], message: { kind: string, bytes: number }): number {
    if (message !== this.current || from.node !== this.currentFrom) this.startPublish(from, topics, message)
    const j = this.nodeIndex(to)
    let best = Infinity
    let member = false
    for (const { topic, flood } of this.currentFloods) {
      const local = topic.mesh.indexOf(j)
      if (local < 0) continue
      member = true
      const d = flood.first[local] as number
      if (d < best) best = d
    }
    if (!member) {
      this.wire.unmodelled++
      return Math.max(1, this.base.gossipHops) * this.base.latencyMs(from, to)
    }
    return best === Infinity ? Infinity : Math.max(1, Math.round(best))
  }

  private startPublish (from: Place, topics: readonly string[], message: { kind: string, bytes: number }): void {
    this.current = message
    this.currentFrom = from.node
    const origin = this.nodeIndex(from)
    const idontwant = message.bytes >= this.idontwantMinBytes
    this.currentFloods = []
    const w = this.wire
    const kind = w.byKind[message.kind] ?? (w.byKind[message.kind] = { messages: 0, copies: 0, bytes: 0 })
    w.messages++
    w.appBytes += message.bytes
    kind.messages++
    for (const name of topics) {
      const topic = this.topic(name)
      const key = origin * 2 + (idontwant ? 1 : 0)
      let flood = topic.floods.get(key)
      if (flood === undefined) {
        flood = this.flood(topic, origin, message.bytes)
        topic.floods.set(key, flood)
      }
      this.currentFloods.push({ topic, flood })
      const bytes = flood.transmissions * publishRpcBytes(message.bytes, topic.topicBytes) +
        flood.ihave * ihaveRpcBytes(topic.topicBytes) + (flood.iwant + flood.idontwant) * iwantRpcBytes()
      w.publishes++
      w.copies += flood.transmissions
      w.duplicates += flood.duplicates
      w.ihave += flood.ihave
      w.iwant += flood.iwant
      w.idontwant += flood.idontwant
      w.bytes += bytes
      kind.copies += flood.transmissions
      kind.bytes += bytes
    }
  }

  private topic (name: string): Topic {
    let t = this.topics.get(name)
    if (t === undefined) {
      const members = this.options.subscribers(name).map((p) => this.nodeIndex(p))
      const mesh = GossipMesh.build([...new Set(members)], { seed: `${String(this.options.seed)}/${name}`, topic: name, ...(this.options.params !== undefined ? { params: this.options.params } : {}) })
      t = { mesh, topicBytes: encoder.encode(name).byteLength, floods: new Map() }
      this.topics.set(name, t)
    }
    return t
  }

  private delay (a: number, b: number): number {
    const mean = this.base.meanLatencyMs
    const pa = this.places[a] as Place
    const pb = this.places[b] as Place
    if (mean !== undefined) return mean(pa, pb)
    const key = a * 0x200000 + b
    let d = this.pairDelay.get(key)
    if (d === undefined) this.pairDelay.set(key, d = this.base.latencyMs(pa, pb))
    return d
  }

  private flood (topic: Topic, origin: number, messageBytes: number): Flood {
    const r = topic.mesh.publish(origin, {
      delay: (a, b) => this.delay(a, b),
      messageBytes,
      lazy: this.options.lazy !== false,
      ...(this.options.processingMs !== undefined ? { processingMs: this.options.processingMs } : {}),
      ...(this.scratch.into !== undefined && this.scratch.into.members === topic.mesh.members ? { into: this.scratch.into } : {})
    })
    this.scratch.into = r
    return { first: Float32Array.from(r.firstDeliveryMs), transmissions: r.transmissions, duplicates: r.duplicates, ihave: r.ihave, iwant: r.iwant, idontwant: r.idontwant }
  }
}
