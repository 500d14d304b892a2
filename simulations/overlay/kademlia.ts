/**
 * A model of the daemon's Kademlia DHT (@libp2p/kad-dht 16 as node/libp2p.ts configures it), so the
 * simulator measures what a discovery costs instead of assuming it: routing tables, iterative
 * FIND_NODE / GET_PROVIDERS lookups with α queries in flight on each of the disjoint paths, provider
 * records (ADD_PROVIDER to the k closest), and per lookup the hops, messages, bytes and virtual time.
 *
 * Routing table (kad-dht routing-table/k-bucket.js): a trie over the peers' own kad ids that splits a
 * full bucket (k peers) until depth `prefixLength` (6), so a table holds at most k peers in each of
 * the 2^prefixLength cells of the key space (cell = the id's first 6 bits) — not the classic
 * buckets by distance to oneself. The model builds each table as the join leaves it once the
 * self-query and the bucket refreshes have run: every cell holds min(k, peers in that cell) peers,
 * chosen uniformly (seeded by node and cell) where the cell has more. The tables are implicit: a
 * node's entries in a cell are drawn when asked, the same each time, so the model holds O(N) memory.
 * Simplification: kad-dht keeps the longest-lived of a full bucket's candidates (it pings the oldest
 * before it evicts); the model keeps a random k, and the tables never change, so peers that go
 * offline stay in them (their queries time out).
 *
 * Lookups (kad-dht query/manager.js, query/query-path.js): the k closest peers in the caller's table,
 * split round-robin over `disjointPaths` paths; each path queries its closest unqueried peer, up to
 * α at a time; a response's closer peers are queued when they are closer to the key than the peer
 * that named them and could still enter that path's k closest; a path ends when nothing is queued or
 * running. The result is the k closest peers that answered (peer-routing getClosestPeers).
 * GET_PROVIDERS stops once k providers are known (content-routing findProviders).
 *
 * Time: a query to peer p sent at t answers at t + rtt (rtt = delay(o, p) + delay(p, o)), plus
 * `dialRoundTrips` × rtt when p is not in the caller's table (no connection yet); an unreachable
 * peer (`isUp(p, t)` false) or one slower than `rpcTimeoutMs` fails at t + rpcTimeoutMs.
 */
import { Prng } from '../harness/prng.js'
import { DuplicateOverlayNodeError, UnknownOverlayNodeError } from './errors.js'
import { CID_MULTIHASH_BYTES, PEER_ID_MULTIHASH_BYTES, createKademliaParams, dhtMessageBytes, type KademliaParams } from './kad-params.js'
import { KAD_ID_WORDS, kadIdOfCapabilityKey, kadIdOfNode, writeWords } from './kad-id.js'

/** One-way delay of one message from node `from` to node `to` (indices into the model's ids), ms. */
export type DelayFn = (from: number, to: number) => number
/** Whether node `node` answers at virtual time `t` (churn). */
export type IsUpFn = (node: number, t: number) => boolean

export interface LookupOptions {
  /** Virtual time the lookup starts at, ms (default 0). */
  at?: number
  delay: DelayFn
  /** Default: every node is up. */
  isUp?: IsUpFn
}

export interface LookupResult {
  /** The k closest peers that answered, closest first (node indices). */
  closest: number[]
  /** The longest chain of queries (each peer named by the one before) that reached a peer in `closest`. */
  hops: number
  /** The longest chain of queries the lookup made at all. */
  rounds: number
  /** Queries sent. */
  queried: number
  /** Queries that failed (peer offline or slower than the RPC timeout). */
  failed: number
  /** DHT messages on the wire: requests and responses (and ADD_PROVIDERs for a provide). */
  messages: number
  /** Their bytes (kad-params.ts `dhtMessageBytes`). */
  bytes: number
  /** Virtual time from start to end, ms. */
  timeMs: number
}

export interface ProvideResult extends LookupResult {
  /** The nodes that now hold the record (the k closest that were up when it arrived; the caller too). */
  holders: number[]
}

export interface FindProvidersResult extends LookupResult {
  /** Providers the lookup yielded, in the order found (node indices): at most k, as kad-dht's `findProviders`. */
  providers: number[]
  /** Time from start to the first provider, ms (undefined: none found). */
  firstProviderMs: number | undefined
  /**
   * What a caller that takes each answer whole sees (node/dht-providers.ts step 1, protocol/README.md §7.4c):
   * every provider in the answers (the local records first; `providers` is its first k), the peers that
   * answered and that failed, and the closer peers the answers named (node indices, in the order met).
   */
  answers: { providers: number[], answered: number[], failed: number[], named: number[] }
}

/** One GET_PROVIDERS to one peer (the walk past k, protocol/provider-walk.ts). */
export interface ProvidersQueryResult {
  /** False: the peer was down or slower than the RPC timeout. */
  ok: boolean
  /** When the answer (or the timeout) came, virtual ms. */
  doneAt: number
  /** The providers the peer holds records of (empty when not ok). */
  providers: readonly number[]
  /** The peer's k closest table entries to the key (empty when not ok). */
  closer: number[]
  messages: number
  bytes: number
}

export interface KademliaBuildOptions {
  /** Seeds the node ids and the table choices. */
  seed: number | string
  params?: Partial<KademliaParams>
}

type Kind = 'FIND_NODE' | 'GET_PROVIDERS'

const ALWAYS_UP: IsUpFn = () => true

export class KademliaModel {
  readonly params: Readonly<KademliaParams>
  readonly ids: readonly string[]
  /** Node kad ids, KAD_ID_WORDS big-endian words each. */
  private readonly words: Uint32Array
  private readonly cells: number
  /** The nodes grouped by cell (cellOff[c] … cellOff[c + 1]), ascending within a cell. */
  private readonly cellMembers: Int32Array
  private readonly cellOff: Int32Array
  private readonly cellOfNode: Int32Array
  /** Each node's place in cellMembers. */
  private readonly cellPos: Int32Array
  private readonly tableSeed: number
  /** capability key → holder → providers. */
  private readonly records = new Map<string, Map<number, number[]>>()
  private readonly seed: number | string
  // scratch, reused by every lookup
  private readonly seenGen: Int32Array
  private readonly tableGen: Int32Array
  private readonly depth: Int32Array
  private readonly closerBuf: Int32Array
  private readonly cellBuf: Int32Array
  private readonly target = new Uint32Array(KAD_ID_WORDS)
  private gen = 0

  private constructor (ids: readonly string[], options: KademliaBuildOptions) {
    this.params = Object.freeze(createKademliaParams(options.params))
    this.seed = options.seed
    this.ids = ids
    const n = ids.length
    const seen = new Set<string>()
    this.words = new Uint32Array(n * KAD_ID_WORDS)
    for (let i = 0; i < n; i++) {
      const id = ids[i] as string
      if (seen.has(id)) throw new DuplicateOverlayNodeError(id)
      seen.add(id)
      writeWords(kadIdOfNode(id, options.seed), this.words, i * KAD_ID_WORDS)
    }
    this.cells = 1 << this.params.prefixLength
    const built = this.groupCells()
    this.cellMembers = built.members
    this.cellOff = built.off
    this.cellOfNode = built.cellOfNode
    this.cellPos = built.pos
    this.tableSeed = new Prng(options.seed).fork('kademlia-tables').uint32()
    this.cellBuf = new Int32Array(this.params.k)
    this.seenGen = new Int32Array(n)
    this.tableGen = new Int32Array(n)
    this.depth = new Int32Array(n)
    this.closerBuf = new Int32Array(this.params.k + 1)
  }

  /** A model over `ids` (stable node ids; their order gives the node indices every other call uses). */
  static build (ids: readonly string[], options: KademliaBuildOptions): KademliaModel {
    return new KademliaModel(ids, options)
  }

  get size (): number {
    return this.ids.length
  }

  /** Node `node`'s kad id (32 bytes). */
  kadId (node: number): Uint8Array {
    this.checkNode(node)
    const out = new Uint8Array(KAD_ID_WORDS * 4)
    for (let w = 0; w < KAD_ID_WORDS; w++) {
      const v = this.words[node * KAD_ID_WORDS + w] as number
      out[w * 4] = v >>> 24
      out[w * 4 + 1] = (v >>> 16) & 0xff
      out[w * 4 + 2] = (v >>> 8) & 0xff
      out[w * 4 + 3] = v & 0xff
    }
    return out
  }

  /** The peers in node `node`'s routing table, cell by cell. */
  tableOf (node: number): Int32Array {
    this.checkNode(node)
    const out: number[] = []
    for (let c = 0; c < this.cells; c++) {
      const n = this.tableCell(node, c)
      for (let i = 0; i < n; i++) out.push(this.cellBuf[i] as number)
    }
    return Int32Array.from(out)
  }

  /** FIND_NODE for a kad id (32 bytes): the k closest peers to it. */
  findNode (origin: number, targetId: Uint8Array, options: LookupOptions): LookupResult {
    this.checkNode(origin)
    writeWords(targetId, this.target, 0)
    const run = this.lookup(origin, 'FIND_NODE', PEER_ID_MULTIHASH_BYTES, undefined, options)
    return run.result
  }

  /** ADD_PROVIDER: a lookup of the capability key's k closest, then the record sent to each of them. */
  provide (origin: number, key: string, options: LookupOptions): ProvideResult {
    this.checkNode(origin)
    writeWords(kadIdOfCapabilityKey(key), this.target, 0)
    const run = this.lookup(origin, 'FIND_NODE', CID_MULTIHASH_BYTES, undefined, options)
    const result = run.result
    const isUp = options.isUp ?? ALWAYS_UP
    const sent = (options.at ?? 0) + result.timeMs
    const addBytes = dhtMessageBytes(this.params, CID_MULTIHASH_BYTES, 1)
    const holders: number[] = [origin]
    this.store(key, origin, origin)
    for (const peer of result.closest) {
      result.messages++
      result.bytes += addBytes
      if (isUp(peer, sent + options.delay(origin, peer))) {
        this.store(key, peer, origin)
        holders.push(peer)
      }
    }
    return { ...result, holders }
  }

  /** GET_PROVIDERS for a capability key: the providers its k closest peers hold (at most k). */
  findProviders (origin: number, key: string, options: LookupOptions): FindProvidersResult {
    this.checkNode(origin)
    const local = this.records.get(key)?.get(origin) ?? []
    if (local.length >= this.params.k) {
      const yielded = local.slice(0, this.params.k)
      return { closest: [], hops: 0, rounds: 0, queried: 0, failed: 0, messages: 0, bytes: 0, timeMs: 0, providers: yielded, firstProviderMs: 0, answers: { providers: [...yielded], answered: [], failed: [], named: [] } }
    }
    writeWords(kadIdOfCapabilityKey(key), this.target, 0)
    const run = this.lookup(origin, 'GET_PROVIDERS', CID_MULTIHASH_BYTES, key, options, local)
    return { ...run.result, providers: run.providers.slice(0, this.params.k), firstProviderMs: run.firstProviderMs, answers: { providers: run.providers, answered: run.answered, failed: run.failedPeers, named: run.named } }
  }

  /**
   * One GET_PROVIDERS from `origin` to `peer` for `key`, sent at `options.at`: timed as a lookup's query
   * (a round trip, plus the dial's round trips when `peer` is not in `origin`'s table; down or slower
   * than the RPC timeout → failed at the timeout), answered with every record the peer holds and its k
   * closest table entries to the key. The walk past k (simulations/market/discovery.ts) sends these.
   */
  queryProviders (origin: number, peer: number, key: string, options: LookupOptions): ProvidersQueryResult {
    this.checkNode(origin)
    this.checkNode(peer)
    const p = this.params
    const at = options.at ?? 0
    const isUp = options.isUp ?? ALWAYS_UP
    const rtt = options.delay(origin, peer) + options.delay(peer, origin)
    const took = rtt * (1 + (this.inTable(origin, peer) ? 0 : p.dialRoundTrips))
    const requestBytes = dhtMessageBytes(p, CID_MULTIHASH_BYTES, 0)
    if (!isUp(peer, at) || took > p.rpcTimeoutMs) return { ok: false, doneAt: at + p.rpcTimeoutMs, providers: [], closer: [], messages: 1, bytes: requestBytes }
    writeWords(kadIdOfCapabilityKey(key), this.target, 0)
    const held = this.records.get(key)?.get(peer) ?? []
    const n = this.closestInTable(peer, p.k, -1)
    const closer = Array.from(this.closerBuf.subarray(0, n))
    return { ok: true, doneAt: at + took, providers: held, closer, messages: 2, bytes: requestBytes + dhtMessageBytes(p, CID_MULTIHASH_BYTES, n + held.length) }
  }

  /** Whether `peer` is in `node`'s routing table (a connection: no dial before a query). */
  inTable (node: number, peer: number): boolean {
    this.checkNode(node)
    this.checkNode(peer)
    if (node === peer) return false
    const n = this.tableCell(node, this.cellOfNode[peer] as number)
    for (let i = 0; i < n; i++) if (this.cellBuf[i] === peer) return true
    return false
  }

  /** The providers node `node` holds records of for `key`. */
  providersAt (node: number, key: string): readonly number[] {
    return this.records.get(key)?.get(node) ?? []
  }

  private store (key: string, holder: number, provider: number): void {
    let byHolder = this.records.get(key)
    if (byHolder === undefined) {
      byHolder = new Map()
      this.records.set(key, byHolder)
    }
    const list = byHolder.get(holder)
    if (list === undefined) byHolder.set(holder, [provider])
    else if (!list.includes(provider)) list.push(provider)
  }

  private checkNode (node: number): void {
    if (!Number.isInteger(node) || node < 0 || node >= this.ids.length) {
      throw new UnknownOverlayNodeError(node, `node ${node} is not in the model (0 … ${this.ids.length - 1})`)
    }
  }

  /** -1 / 0 / 1: node a closer to / as close as / farther from the current target than node b. */
  private cmp (a: number, b: number): number {
    const ids = this.words
    const t = this.target
    const oa = a * KAD_ID_WORDS
    const ob = b * KAD_ID_WORDS
    for (let w = 0; w < KAD_ID_WORDS; w++) {
      const da = ((ids[oa + w] as number) ^ (t[w] as number)) >>> 0
      const db = ((ids[ob + w] as number) ^ (t[w] as number)) >>> 0
      if (da !== db) return da < db ? -1 : 1
    }
    return 0
  }

  /**
   * Node `node`'s `count` closest table entries to the current target, `exclude` left out, into
   * closerBuf; returns how many. Cells are visited in XOR order of their prefix, so every entry of an
   * earlier cell is closer than any of a later one and only the last cell needs sorting.
   */
  private closestInTable (node: number, count: number, exclude: number): number {
    const buf = this.closerBuf
    const cells = this.cells
    const targetCell = this.params.prefixLength === 0 ? 0 : (this.target[0] as number) >>> (32 - this.params.prefixLength)
    let n = 0
    for (let j = 0; j < cells && n < count; j++) {
      const c = targetCell ^ j
      const entries = this.tableCell(node, c)
      if (entries === 0) continue
      const segment = n
      for (let i = 0; i < entries; i++) {
        const peer = this.cellBuf[i] as number
        if (peer === exclude) continue
        // insertion sort of this cell's entries (at most k), keeping only what fits
        let at = n
        while (at > segment && this.cmp(peer, buf[at - 1] as number) < 0) at--
        if (at >= count) continue
        const end = Math.min(n, count - 1)
        for (let m = end; m > at; m--) buf[m] = buf[m - 1] as number
        buf[at] = peer
        if (n < count) n++
      }
    }
    return n
  }

  /** The nodes grouped by the cell of their id (a counting sort). */
  private groupCells (): { members: Int32Array, off: Int32Array, cellOfNode: Int32Array, pos: Int32Array } {
    const n = this.ids.length
    const cells = this.cells
    const shift = 32 - this.params.prefixLength
    const cellOfNode = new Int32Array(n)
    const off = new Int32Array(cells + 1)
    for (let i = 0; i < n; i++) {
      const c = this.params.prefixLength === 0 ? 0 : (this.words[i * KAD_ID_WORDS] as number) >>> shift
      cellOfNode[i] = c
      off[c + 1] = (off[c + 1] as number) + 1
    }
    for (let c = 0; c < cells; c++) off[c + 1] = (off[c] as number) + (off[c + 1] as number)
    const fill = off.slice(0, cells)
    const members = new Int32Array(n)
    const pos = new Int32Array(n)
    for (let i = 0; i < n; i++) {
      const c = cellOfNode[i] as number
      const at = fill[c] as number
      fill[c] = at + 1
      members[at] = i
      pos[i] = at
    }
    return { members, off, cellOfNode, pos }
  }

  /**
   * Node `node`'s table entries in cell `c`, into cellBuf; returns how many. The tables are implicit:
   * a cell with more than k other nodes is sampled (Floyd's algorithm) from a hash of (seed, node,
   * cell), so a node's table is the same every time it is asked, in any order, and the model keeps
   * O(N) memory instead of N × 1,280 entries.
   */
  private tableCell (node: number, c: number): number {
    const k = this.params.k
    const from = this.cellOff[c] as number
    const size = (this.cellOff[c + 1] as number) - from
    const self = this.cellOfNode[node] === c ? (this.cellPos[node] as number) - from : -1
    const others = self >= 0 ? size - 1 : size
    const buf = this.cellBuf
    // index i of the others → the member (skipping oneself)
    const member = (i: number): number => this.cellMembers[from + (self >= 0 && i >= self ? i + 1 : i)] as number
    if (others <= k) {
      for (let i = 0; i < others; i++) buf[i] = member(i)
      return others
    }
    let state = mix32(this.tableSeed ^ Math.imul(node + 1, 0x9e3779b1) ^ Math.imul(c + 1, 0x85ebca6b))
    let n = 0
    for (let j = others - k; j < others; j++) {
      state = mix32(state + 0x6d2b79f5)
      let pick = Math.floor((state / 4294967296) * (j + 1))
      for (let m = 0; m < n; m++) {
        if (buf[m] === pick) {
          pick = j
          break
        }
      }
      buf[n++] = pick
    }
    for (let i = 0; i < n; i++) buf[i] = member(buf[i] as number)
    return n
  }

  private lookup (origin: number, kind: Kind, keyBytes: number, key: string | undefined, options: LookupOptions, local: readonly number[] = []): {
    result: LookupResult
    providers: number[]
    firstProviderMs: number | undefined
    answered: number[]
    failedPeers: number[]
    named: number[]
  } {
    const p = this.params
    const k = p.k
    const isUp = options.isUp ?? ALWAYS_UP
    const delay = options.delay
    const start = options.at ?? 0
    const gen = ++this.gen
    const seen = this.seenGen
    const depth = this.depth
    const inTable = this.tableGen
    for (let c = 0; c < this.cells; c++) {
      const entries = this.tableCell(origin, c)
      for (let i = 0; i < entries; i++) inTable[this.cellBuf[i] as number] = gen
    }
    seen[origin] = gen

    const requestBytes = dhtMessageBytes(p, keyBytes, 0)
    const providers: number[] = [...local]
    const providerSet = new Set<number>(local)
    let firstProviderMs: number | undefined = local.length > 0 ? 0 : undefined
    const holders = key !== undefined ? this.records.get(key) : undefined

    const result: LookupResult = { closest: [], hops: 0, rounds: 0, queried: 0, failed: 0, messages: 0, bytes: 0, timeMs: 0 }
    // GET_PROVIDERS: what a caller taking each answer whole sees (FindProvidersResult.answers)
    const answered: number[] = []
    const failedPeers: number[] = []
    const named: number[] = []
    const namedSet = new Set<number>()
    const startCount = this.closestInTable(origin, k, origin)
    const starting = Array.from(this.closerBuf.subarray(0, startCount))
    if (starting.length === 0) return { result, providers, firstProviderMs, answered, failedPeers, named }
    // kad-dht shuffles the starting peers before it deals them out to the paths
    const prng = new Prng(`${String(this.seed)}/lookup/${origin}/${this.target[0] as number}/${this.target[1] as number}`)
    for (let i = starting.length - 1; i > 0; i--) {
      const j = prng.int(0, i)
      const x = starting[i] as number
      starting[i] = starting[j] as number
      starting[j] = x
    }
    const paths = Math.min(p.disjointPaths, starting.length)
    const pending: number[][] = Array.from({ length: paths }, () => [])
    const closest: number[][] = Array.from({ length: paths }, () => [])
    const running = new Int32Array(paths)
    const final: number[] = []

    const canAdd = (list: number[], peer: number): boolean => list.length < k || this.cmp(peer, list[list.length - 1] as number) < 0
    const insertSorted = (list: number[], peer: number, bound: number): void => {
      let at = list.length
      while (at > 0 && this.cmp(peer, list[at - 1] as number) < 0) at--
      if (at >= bound) return
      list.splice(at, 0, peer)
      if (list.length > bound) list.pop()
    }
    for (let i = 0; i < starting.length; i++) {
      const peer = starting[i] as number
      seen[peer] = gen
      depth[peer] = 1
      insertSorted(pending[i % paths] as number[], peer, Number.MAX_SAFE_INTEGER)
    }

    // in-flight queries: an event heap would pay off beyond a few dozen; α × paths stay small
    const evTime: number[] = []
    const evPeer: number[] = []
    const evPath: number[] = []
    const evOk: boolean[] = []
    let stopped = false
    let end = start

    const pump = (path: number, now: number): void => {
      const queue = pending[path] as number[]
      while ((running[path] as number) < p.alpha && queue.length > 0) {
        const peer = queue.shift() as number
        if (!canAdd(closest[path] as number[], peer)) continue
        running[path] = (running[path] as number) + 1
        result.queried++
        result.messages++
        result.bytes += requestBytes
        if ((depth[peer] as number) > result.rounds) result.rounds = depth[peer] as number
        const rtt = delay(origin, peer) + delay(peer, origin)
        const took = rtt * (1 + (inTable[peer] === gen ? 0 : p.dialRoundTrips))
        const ok = isUp(peer, now) && took <= p.rpcTimeoutMs
        evTime.push(now + (ok ? took : p.rpcTimeoutMs))
        evPeer.push(peer)
        evPath.push(path)
        evOk.push(ok)
      }
    }
    for (let path = 0; path < paths; path++) pump(path, start)

    while (!stopped && evTime.length > 0) {
      // the earliest completion (ties: the lower peer index, so the order never depends on insertion)
      let best = 0
      for (let i = 1; i < evTime.length; i++) {
        const ti = evTime[i] as number
        const tb = evTime[best] as number
        if (ti < tb || (ti === tb && (evPeer[i] as number) < (evPeer[best] as number))) best = i
      }
      const now = evTime[best] as number
      const peer = evPeer[best] as number
      const path = evPath[best] as number
      const ok = evOk[best] as boolean
      const last = evTime.length - 1
      evTime[best] = evTime[last] as number
      evPeer[best] = evPeer[last] as number
      evPath[best] = evPath[last] as number
      evOk[best] = evOk[last] as boolean
      evTime.pop()
      evPeer.pop()
      evPath.pop()
      evOk.pop()
      end = now
      running[path] = (running[path] as number) - 1
      if (!ok) {
        result.failed++
        if (kind === 'GET_PROVIDERS') failedPeers.push(peer)
        pump(path, now)
        continue
      }
      const held = holders?.get(peer) ?? []
      const closerCount = this.closestInTable(peer, k, kind === 'FIND_NODE' ? origin : -1)
      result.messages++
      result.bytes += dhtMessageBytes(p, keyBytes, closerCount + (kind === 'GET_PROVIDERS' ? held.length : 0))
      insertSorted(closest[path] as number[], peer, k)
      insertSorted(final, peer, k)
      if (kind === 'GET_PROVIDERS') {
        answered.push(peer)
        for (let i = 0; i < closerCount; i++) {
          const closer = this.closerBuf[i] as number
          if (closer === origin || namedSet.has(closer)) continue
          namedSet.add(closer)
          named.push(closer)
        }
        for (const provider of held) {
          if (providerSet.has(provider)) continue
          providerSet.add(provider)
          providers.push(provider)
          firstProviderMs ??= now - start
        }
        if (providers.length >= k) {
          stopped = true
          break
        }
      }
      const list = closest[path] as number[]
      const queue = pending[path] as number[]
      for (let i = 0; i < closerCount; i++) {
        const closer = this.closerBuf[i] as number
        if (closer === origin || seen[closer] === gen) continue
        if (this.cmp(closer, peer) >= 0) continue
        if (!canAdd(list, closer)) continue
        seen[closer] = gen
        depth[closer] = (depth[peer] as number) + 1
        insertSorted(queue, closer, Number.MAX_SAFE_INTEGER)
      }
      pump(path, now)
    }
    result.closest = final
    for (const peer of final) if ((depth[peer] as number) > result.hops) result.hops = depth[peer] as number
    result.timeMs = end - start
    return { result, providers, firstProviderMs, answered, failedPeers, named }
  }
}

/** A 32-bit integer hash (splitmix32's finaliser): the implicit tables' sample stream. */
function mix32 (x: number): number {
  let z = x >>> 0
  z = Math.imul(z ^ (z >>> 16), 0x85ebca6b) >>> 0
  z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35) >>> 0
  return (z ^ (z >>> 16)) >>> 0
}
