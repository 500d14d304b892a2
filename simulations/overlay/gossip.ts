/**
 * A model of one gossipsub topic (@libp2p/gossipsub 17 as node/libp2p.ts configures it), so the
 * simulator measures what a job, bid or award costs to spread instead of assuming it.
 *
 * The mesh is built once per topic from its subscribers, deterministically (seeded): in a seeded
 * order every member grafts random members until it has D mesh peers, never pushing a peer past Dhi;
 * a member still under Dlo after that grafts any member with room, or splits an edge between two
 * others when none has room. A graft is symmetric, so degrees land in [Dlo, Dhi], in practice in
 * [D, Dhi] (fewer only when the topic has fewer than Dlo + 1 members) — the state a heartbeat leaves
 * (prune above Dhi, graft below Dlo). Each member also gets Dlazy non-mesh members it is
 * connected to: its IHAVE gossip targets and, with floodPublish, extra first-hop recipients. Real
 * gossipsub re-draws gossip targets each heartbeat and ranks peers by score; the model keeps one draw
 * and no scores.
 *
 * A publish is an event-driven flood over the mesh: the first copy a member receives it forwards to
 * every mesh peer but the one it came from (so each mesh edge carries the message at most once each
 * way); later copies are duplicates and go no further. A message of at least `idontwantMinBytes` makes
 * its receiver send IDONTWANT to its mesh, and a peer skips a forward the IDONTWANT reached in time.
 * With `lazy`, members advertise the message in IHAVE to their lazy peers at their next
 * `historyGossip` heartbeats; a lazy peer that still lacks it sends IWANT and gets it one round trip
 * later. Costs: O(mesh edges) per publish, with a heap operation only per copy that improves on a
 * member's earliest so far (plus, with `lazy`, a heartbeat per member and an IHAVE event per lazy peer
 * still lacking the message); besides three closures, the only allocations are the result and its two
 * per-member arrays (none of those with `into`).
 */
import { Prng } from '../harness/prng.js'
import { marketTopic } from '../../protocol/constants.js'
import { UnknownOverlayNodeError } from './errors.js'
import { createGossipParams, ihaveRpcBytes, iwantRpcBytes, publishRpcBytes, type GossipParams } from './gossip-params.js'
import type { DelayFn } from './kademlia.js'
import { TimeHeap } from './time-heap.js'

/**
 * Whether one transmission `from` → `to` is lost: called once per copy of the message sent, and for
 * lazy gossip once per IHAVE to a peer that lacks the message and per IWANT, in virtual-time order.
 */
export type DropFn = (from: number, to: number) => boolean

export interface GossipBuildOptions {
  seed: number | string
  params?: Partial<GossipParams>
  /** The topic's name, for message sizes (default the global market topic). */
  topic?: string
}

export interface PublishOptions {
  /** Virtual time of the publish, ms (default 0); heartbeats run on the model's own phase from t = 0. */
  at?: number
  /** One-way delay between two nodes (node indices, as given to `build`), ms. */
  delay: DelayFn
  /** Per-transmission loss (default: none). */
  drop?: DropFn
  /** The message's data bytes (the signed envelope gpumesh publishes). */
  messageBytes: number
  /** IHAVE/IWANT lazy gossip (default false). */
  lazy?: boolean
  /** Time a member takes to validate a message before it forwards it, ms (default 0). */
  processingMs?: number
  /** Reuse this result's arrays (from an earlier publish on the same mesh) instead of allocating. */
  into?: PublishResult
}

export interface PublishResult {
  /** The topic's members (node indices); the arrays below are indexed like it. */
  members: Int32Array
  /** Per member, ms from the publish to its first copy (the publisher 0); Infinity: never received. */
  firstDeliveryMs: Float64Array
  /** Per member, mesh hops its first copy travelled (the publisher 0); -1: never received. */
  hops: Int32Array
  /** Members other than the publisher that received the message. */
  receivers: number
  /** Copies of the message sent (forwards, first-hop sends and IWANT replies), lost ones included. */
  transmissions: number
  /** Copies that arrived at a member that already had it (or is the publisher). */
  duplicates: number
  /** Transmissions of the message lost on their edge. */
  dropped: number
  ihave: number
  iwant: number
  idontwant: number
  /** All RPC bytes: messages, IHAVE, IWANT, IDONTWANT (gossip-params.ts sizes). */
  bytes: number
  /** Time of the last first delivery, ms. */
  lastDeliveryMs: number
}

const HEARTBEAT = 1
const IHAVE = 2
const FORWARD = 3

export class GossipMesh {
  readonly params: Readonly<GossipParams>
  /** The subscribers (node indices), in the order `build` got them. */
  readonly members: Int32Array
  private readonly localOf: Map<number, number>
  private readonly meshOff: Int32Array
  private readonly meshAdj: Int32Array
  private readonly lazyOff: Int32Array
  private readonly lazyAdj: Int32Array
  private readonly fanoutOrder: Int32Array
  private readonly phase: Float64Array
  private readonly topicBytes: number
  private readonly seedNumber: number
  // scratch, reused by every publish
  private readonly heap = new TimeHeap(1024)
  private evTo = new Int32Array(1024)
  private evFrom = new Int32Array(1024)
  private evArg = new Int32Array(1024)
  private evKind = new Uint8Array(1024)
  private evCount = 0
  private readonly iwantPending: Uint8Array
  private readonly best: Float64Array
  private readonly bestFrom: Int32Array
  private readonly bestHop: Int32Array

  private constructor (subscribers: readonly number[], options: GossipBuildOptions) {
    this.params = Object.freeze(createGossipParams(options.params))
    const m = subscribers.length
    this.members = Int32Array.from(subscribers)
    this.localOf = new Map()
    for (let i = 0; i < m; i++) {
      const node = subscribers[i] as number
      if (!Number.isInteger(node) || node < 0) throw new UnknownOverlayNodeError(node, `subscriber ${String(node)} is not a node index`)
      if (this.localOf.has(node)) throw new UnknownOverlayNodeError(node, `subscriber ${node} appears twice`)
      this.localOf.set(node, i)
    }
    this.topicBytes = new TextEncoder().encode(options.topic ?? marketTopic()).byteLength
    const prng = new Prng(options.seed).fork('gossip-mesh')
    this.seedNumber = prng.seed
    const mesh = buildMesh(m, this.params, prng.fork('graft'))
    this.meshOff = mesh.off
    this.meshAdj = mesh.adj
    const lazy = buildLazy(m, this.params.Dlazy, this.meshOff, this.meshAdj, prng.fork('lazy'))
    this.lazyOff = lazy.off
    this.lazyAdj = lazy.adj
    this.fanoutOrder = shuffled(m, prng.fork('fanout'))
    const phases = prng.fork('heartbeat')
    this.phase = new Float64Array(m)
    for (let i = 0; i < m; i++) this.phase[i] = phases.next() * this.params.heartbeatMs
    this.iwantPending = new Uint8Array(m)
    this.best = new Float64Array(m)
    this.bestFrom = new Int32Array(m)
    this.bestHop = new Int32Array(m)
  }

  /** The mesh of one topic whose subscribers are `subscribers` (distinct node indices). */
  static build (subscribers: readonly number[], options: GossipBuildOptions): GossipMesh {
    return new GossipMesh(subscribers, options)
  }

  get size (): number {
    return this.members.length
  }

  /** Mesh edges (each counted once). */
  get edges (): number {
    return this.meshAdj.length / 2
  }

  /** Node `node`'s mesh peers (node indices, ascending). */
  meshPeers (node: number): number[] {
    const i = this.local(node)
    return Array.from(this.meshAdj.subarray(this.meshOff[i] as number, this.meshOff[i + 1] as number), (j) => this.members[j] as number).sort((a, b) => a - b)
  }

  /** Node `node`'s lazy (IHAVE) peers (node indices, ascending). */
  lazyPeers (node: number): number[] {
    const i = this.local(node)
    return Array.from(this.lazyAdj.subarray(this.lazyOff[i] as number, this.lazyOff[i + 1] as number), (j) => this.members[j] as number).sort((a, b) => a - b)
  }

  /** Node `node`'s place in `members`, or -1 when it does not subscribe. */
  indexOf (node: number): number {
    return this.localOf.get(node) ?? -1
  }

  private local (node: number): number {
    const i = this.localOf.get(node)
    if (i === undefined) throw new UnknownOverlayNodeError(node, `node ${node} does not subscribe to this topic`)
    return i
  }

  /**
   * Publishes one message from node `origin` (a member, or any node: a non-member sends to a fanout
   * of D members, D + Dlazy with floodPublish) and floods it; see the file comment.
   */
  publish (origin: number, options: PublishOptions): PublishResult {
    const m = this.members.length
    const p = this.params
    const at = options.at ?? 0
    const delay = options.delay
    const drop = options.drop
    const processing = options.processingMs ?? 0
    const lazy = options.lazy === true
    const idontwant = options.messageBytes >= p.idontwantMinBytes
    const members = this.members
    const meshOff = this.meshOff
    const meshAdj = this.meshAdj
    const reuse = options.into !== undefined && options.into.members === members
    const first = reuse ? (options.into as PublishResult).firstDeliveryMs : new Float64Array(m)
    const hops = reuse ? (options.into as PublishResult).hops : new Int32Array(m)
    const best = this.best
    const bestFrom = this.bestFrom
    const bestHop = this.bestHop
    first.fill(Infinity)
    hops.fill(-1)
    best.fill(Infinity)
    if (lazy) this.iwantPending.fill(0)
    const heap = this.heap
    heap.clear()
    this.evCount = 0
    let transmissions = 0
    let duplicates = 0
    let dropped = 0
    let receivers = 0
    let ihave = 0
    let iwant = 0
    let dontwant = 0
    let lastDelivery = 0

    // A copy reaching `to` at `arrival`: only the earliest copy a member could get is queued (the
    // heap holds improvements, not every copy); every other delivered copy is a duplicate.
    const deliver = (to: number, from: number, arrival: number, hop: number): void => {
      if (first[to] !== Infinity || arrival >= (best[to] as number)) {
        duplicates++
        return
      }
      if (best[to] !== Infinity) duplicates++
      best[to] = arrival
      bestFrom[to] = from
      bestHop[to] = hop
      heap.push(arrival, to)
    }
    const send = (from: number, to: number, t: number, hop: number): void => {
      transmissions++
      const fromNode = from < 0 ? origin : members[from] as number
      const toNode = members[to] as number
      if (drop !== undefined && drop(fromNode, toNode)) {
        dropped++
        return
      }
      deliver(to, from, t + delay(fromNode, toNode), hop)
    }

    const o = this.localOf.get(origin) ?? -1
    /** `to` forwards its first copy (from `from`) to its mesh at `sendAt`. */
    const forward = (to: number, from: number, hop: number, sendAt: number): void => {
      const toNode = members[to] as number
      const hi = meshOff[to + 1] as number
      for (let e = meshOff[to] as number; e < hi; e++) {
        const w = meshAdj[e] as number
        if (w === from) continue
        // w's IDONTWANT, sent when w got its copy, reached us before we forward: skip w (the
        // publisher sends none)
        if (idontwant && w !== o && first[w] !== Infinity && at + (first[w] as number) + delay(members[w] as number, toNode) <= sendAt) continue
        send(to, w, sendAt, hop + 1)
      }
    }
    if (o >= 0) {
      first[o] = 0
      hops[o] = 0
      for (let e = meshOff[o] as number; e < (meshOff[o + 1] as number); e++) send(o, meshAdj[e] as number, at, 1)
      if (p.floodPublish) {
        for (let e = this.lazyOff[o] as number; e < (this.lazyOff[o + 1] as number); e++) send(o, this.lazyAdj[e] as number, at, 1)
      }
      if (lazy) {
        ihave += p.historyGossip * ((this.lazyOff[o + 1] as number) - (this.lazyOff[o] as number))
        this.event(this.nextHeartbeat(o, at), HEARTBEAT, o, -1, p.historyGossip)
      }
    } else if (m > 0) {
      const fanout = Math.min(m, p.floodPublish ? p.D + p.Dlazy : p.D)
      const start = (Math.imul((origin + 1) >>> 0, 0x9e3779b1) ^ this.seedNumber) >>> 0
      for (let j = 0; j < fanout; j++) send(-1, this.fanoutOrder[(start + j) % m] as number, at, 1)
    }

    while (heap.size > 0) {
      const item = heap.pop()
      const t = heap.lastTime
      if (item < m) {
        // a member's earliest copy (or a stale entry an earlier copy replaced)
        const to = item
        if (first[to] !== Infinity || t !== best[to]) continue
        const from = bestFrom[to] as number
        const hop = bestHop[to] as number
        first[to] = t - at
        hops[to] = hop
        receivers++
        lastDelivery = t - at
        if (idontwant) dontwant += (meshOff[to + 1] as number) - (meshOff[to] as number) - (this.inMesh(to, from) ? 1 : 0)
        // validation first: the forwards leave `processing` ms later, by then more IDONTWANTs are in
        if (processing > 0) this.event(t + processing, FORWARD, to, from, hop)
        else forward(to, from, hop, t)
        if (lazy) {
          ihave += p.historyGossip * ((this.lazyOff[to + 1] as number) - (this.lazyOff[to] as number))
          this.event(this.nextHeartbeat(to, t), HEARTBEAT, to, -1, p.historyGossip)
        }
        continue
      }
      const ev = item - m
      const kind = this.evKind[ev] as number
      const to = this.evTo[ev] as number
      if (kind === FORWARD) {
        forward(to, this.evFrom[ev] as number, this.evArg[ev] as number, t)
        continue
      }
      if (kind === HEARTBEAT) {
        // IHAVE to each lazy peer (counted when the member got the message); one that already has
        // it cannot ask, so only the others are followed, and a heartbeat where all have it ends
        // the member's gossip
        const remaining = this.evArg[ev] as number
        const vNode = members[to] as number
        let lacking = false
        for (let e = this.lazyOff[to] as number; e < (this.lazyOff[to + 1] as number); e++) {
          const w = this.lazyAdj[e] as number
          if (first[w] !== Infinity) continue
          lacking = true
          const wNode = members[w] as number
          if (drop !== undefined && drop(vNode, wNode)) continue
          this.event(t + delay(vNode, wNode), IHAVE, w, to, 0)
        }
        if (lacking && remaining > 1) this.event(t + p.heartbeatMs, HEARTBEAT, to, -1, remaining - 1)
        continue
      }
      // IHAVE from `from` reached `to`: ask for the message unless it arrived or is asked for already
      const from = this.evFrom[ev] as number
      if (first[to] !== Infinity || this.iwantPending[to] === 1) continue
      iwant++
      const vNode = members[from] as number
      const wNode = members[to] as number
      if (drop !== undefined && drop(wNode, vNode)) continue
      this.iwantPending[to] = 1
      transmissions++
      if (drop !== undefined && drop(vNode, wNode)) {
        dropped++
        this.iwantPending[to] = 0
        continue
      }
      deliver(to, from, t + delay(wNode, vNode) + delay(vNode, wNode), (hops[from] as number) + 1)
    }

    const bytes = transmissions * publishRpcBytes(options.messageBytes, this.topicBytes) +
      ihave * ihaveRpcBytes(this.topicBytes) + (iwant + dontwant) * iwantRpcBytes()
    const result = reuse ? options.into as PublishResult : {} as PublishResult
    result.members = members
    result.firstDeliveryMs = first
    result.hops = hops
    result.receivers = receivers
    result.transmissions = transmissions
    result.duplicates = duplicates
    result.dropped = dropped
    result.ihave = ihave
    result.iwant = iwant
    result.idontwant = dontwant
    result.bytes = bytes
    result.lastDeliveryMs = lastDelivery
    return result
  }

  private inMesh (member: number, peer: number): boolean {
    if (peer < 0) return false
    for (let e = this.meshOff[member] as number; e < (this.meshOff[member + 1] as number); e++) if (this.meshAdj[e] === peer) return true
    return false
  }

  private nextHeartbeat (member: number, t: number): number {
    const hb = this.params.heartbeatMs
    const phase = this.phase[member] as number
    if (t <= phase) return phase
    return phase + Math.ceil((t - phase) / hb) * hb
  }

  /** Queues a heartbeat, an IHAVE or a delayed forward (heap items ≥ members.length; below are members' copies). */
  private event (time: number, kind: number, to: number, from: number, arg: number): void {
    if (this.evCount === this.evTo.length) this.growEvents()
    const i = this.evCount++
    this.evKind[i] = kind
    this.evTo[i] = to
    this.evFrom[i] = from
    this.evArg[i] = arg
    this.heap.push(time, this.members.length + i)
  }

  private growEvents (): void {
    const size = this.evTo.length * 2
    const grow = <T extends Int32Array | Uint8Array>(a: T, make: (n: number) => T): T => {
      const b = make(size)
      b.set(a)
      return b
    }
    this.evTo = grow(this.evTo, (n) => new Int32Array(n))
    this.evFrom = grow(this.evFrom, (n) => new Int32Array(n))
    this.evArg = grow(this.evArg, (n) => new Int32Array(n))
    this.evKind = grow(this.evKind, (n) => new Uint8Array(n))
  }
}

function shuffled (n: number, prng: Prng): Int32Array {
  const order = new Int32Array(n)
  for (let i = 0; i < n; i++) order[i] = i
  for (let i = n - 1; i > 0; i--) {
    const j = prng.int(0, i)
    const x = order[i] as number
    order[i] = order[j] as number
    order[j] = x
  }
  return order
}

/** The symmetric mesh as CSR (offsets, member-local neighbours); see the file comment. */
function buildMesh (m: number, p: GossipParams, prng: Prng): { off: Int32Array, adj: Int32Array } {
  const cap = p.Dhi
  const adj = new Int32Array(m * cap)
  const deg = new Int32Array(m)
  const linked = (a: number, b: number): boolean => {
    for (let e = a * cap; e < a * cap + (deg[a] as number); e++) if (adj[e] === b) return true
    return false
  }
  const link = (a: number, b: number): void => {
    adj[a * cap + (deg[a] as number)] = b
    deg[a] = (deg[a] as number) + 1
    adj[b * cap + (deg[b] as number)] = a
    deg[b] = (deg[b] as number) + 1
  }
  const order = shuffled(m, prng)
  const want = Math.min(p.D, m - 1)
  for (const u of order) {
    for (let tries = 0; (deg[u] as number) < want && tries < 8 * p.Dhi; tries++) {
      const v = prng.int(0, m - 1)
      if (v === u || (deg[v] as number) >= cap || linked(u, v)) continue
      link(u, v)
    }
  }
  const unlink = (a: number, b: number): void => {
    for (const [x, y] of [[a, b], [b, a]] as const) {
      const row = x * cap
      const last = row + (deg[x] as number) - 1
      for (let e = row; e <= last; e++) {
        if (adj[e] !== y) continue
        adj[e] = adj[last] as number
        deg[x] = (deg[x] as number) - 1
        break
      }
    }
  }
  // repair: anyone still under Dlo grafts the first members with room, scanning from a seeded start;
  // when every other member is full, it splits an edge v–x into u–v and u–x (v and x keep their degree)
  const floor = Math.min(p.Dlo, m - 1)
  for (const u of order) {
    if ((deg[u] as number) >= floor) continue
    const start = prng.int(0, m - 1)
    for (let s = 0; s < m && (deg[u] as number) < floor; s++) {
      const v = (start + s) % m
      if (v === u || (deg[v] as number) >= cap || linked(u, v)) continue
      link(u, v)
    }
    for (let s = 0; s < m && (deg[u] as number) < floor && (deg[u] as number) + 2 <= cap; s++) {
      const v = (start + s) % m
      if (v === u || linked(u, v)) continue
      for (let e = v * cap; e < v * cap + (deg[v] as number); e++) {
        const x = adj[e] as number
        if (x === u || linked(u, x)) continue
        unlink(v, x)
        link(u, v)
        link(u, x)
        break
      }
    }
  }
  const off = new Int32Array(m + 1)
  for (let i = 0; i < m; i++) off[i + 1] = (off[i] as number) + (deg[i] as number)
  const out = new Int32Array(off[m] as number)
  for (let i = 0; i < m; i++) {
    const row = adj.subarray(i * cap, i * cap + (deg[i] as number)).slice().sort()
    out.set(row, off[i] as number)
  }
  return { off, adj: out }
}

/** Per member, up to `dlazy` distinct non-mesh members (its IHAVE targets), as CSR. */
function buildLazy (m: number, dlazy: number, meshOff: Int32Array, meshAdj: Int32Array, prng: Prng): { off: Int32Array, adj: Int32Array } {
  const off = new Int32Array(m + 1)
  const rows: number[][] = []
  for (let u = 0; u < m; u++) {
    const meshDeg = (meshOff[u + 1] as number) - (meshOff[u] as number)
    const want = Math.min(dlazy, m - 1 - meshDeg)
    const row: number[] = []
    const taken = (v: number): boolean => {
      if (v === u || row.includes(v)) return true
      for (let e = meshOff[u] as number; e < (meshOff[u + 1] as number); e++) if (meshAdj[e] === v) return true
      return false
    }
    for (let tries = 0; row.length < want && tries < 8 * (dlazy + 1); tries++) {
      const v = prng.int(0, m - 1)
      if (!taken(v)) row.push(v)
    }
    for (let v = 0; row.length < want && v < m; v++) if (!taken(v)) row.push(v)
    row.sort((a, b) => a - b)
    rows.push(row)
    off[u + 1] = (off[u] as number) + row.length
  }
  const adj = new Int32Array(off[m] as number)
  for (let u = 0; u < m; u++) adj.set(rows[u] as number[], off[u] as number)
  return { off, adj }
}
