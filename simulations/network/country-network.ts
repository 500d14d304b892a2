/**
 * A harness NetworkModel (simulations/harness/network.ts) on measured delays: each node has a
 * country (the one it joined the bus with, `Place.country`, else the `countryOf` adapter), one
 * message's one-way delay is a draw from the RIPE Atlas RTT matrix (latency.ts), with per-node
 * bandwidth for blob transfers (bandwidth.ts), a per-message loss rate and region partitions
 * (partition.ts). Through the harness's hooks:
 * - loss: `lossRate` is the model's `gossipLoss`, which the bus applies to each gossip delivery.
 *   Streams stay reliable, as a TCP stream is (it retransmits).
 * - partitions: `drops(from, to, at, channel)` answers true for a pair a partition separates at `at`;
 *   the bus counts a dropped gossip delivery as lost and resets a stream whose message (or open) is
 *   dropped.
 * - blobs: `blobMs(from, to, bytes)` is the size over the narrower of the two nodes' links; the
 *   harness's `transferMs` uses it.
 * `delivers` answers both loss and partition for one message, for models that send their own (the
 * overlay models).
 */
import type { NetworkModel, Place } from '../harness/network.js'
import type { Prng } from '../harness/prng.js'
import { type BandwidthClass, DEFAULT_BANDWIDTH_CLASSES, type NodeBandwidth, drawBandwidth, transferMs, validateBandwidthClasses } from './bandwidth.js'
import { type JitterModel, JITTER_MODELS, LatencyMatrix } from './latency.js'
import type { RttTable } from './rtt-table.js'
import { type RegionPartition, partitioned, validatePartition } from './partition.js'

export interface CountryNetworkOptions {
  /** Chance that one message is lost (0 … 1); the bus applies it to gossip deliveries. Default 0. */
  lossRate?: number
  /** Each node's link is drawn from these (DEFAULT_BANDWIDTH_CLASSES), or given per node. */
  bandwidth?: readonly BandwidthClass[] | ((node: string) => NodeBandwidth)
  /** Default `lognormal` (latency.ts). */
  jitter?: JitterModel
  /** Mesh hops a gossip message travels (the bus multiplies the delay by it). Default 2. */
  gossipHops?: number
  partitions?: readonly RegionPartition[]
  /**
   * The virtual clock (the scheduler's `now`). No longer needed: the bus passes the time to `drops`;
   * accepted (and unused) so older callers keep working.
   */
  now?: () => number
}

export interface CountryNetwork extends NetworkModel {
  readonly matrix: LatencyMatrix
  readonly lossRate: number
  /**
   * The node's country: the one it was seen with (`Place.country`), else the `countryOf` given; throws
   * UnknownCountryError when the matrix lacks it, UnknownNodeError when neither knows the node.
   */
  countryOf: (node: string) => string
  /** The node's link (drawn once per node from a stream forked by its id). */
  bandwidthOf: (node: string) => NodeBandwidth
  /** One draw of the one-way delay, ms (fractional; latencyMs rounds it). */
  delayMs: (from: Place, to: Place) => number
  /** How long `bytes` take from `from` to `to`: one delay draw plus the size over the narrower link, ms. */
  transferMs: (from: Place, to: Place, bytes: number) => number
  /** The size part alone: `bytes` over the narrower of the sender's up and the receiver's down link, ms. */
  blobMs: (from: string, to: string, bytes: number) => number
  /** True when a message between the two regions sent at `at` falls in a partition. */
  isPartitioned: (fromRegion: string, toRegion: string, at: number) => boolean
  /** The harness's drop hook: a partition separates the two places at `at` (both channels alike). */
  drops: (from: Place, to: Place, at: number, channel: 'gossip' | 'stream') => boolean
  /** Whether one message sent at `at` arrives: not partitioned and not lost (one loss draw). */
  delivers: (from: Place, to: Place, at: number) => boolean
}

export type CountryNetworkErrorCode = 'LOSS_RATE' | 'GOSSIP_HOPS' | 'JITTER'

export class InvalidCountryNetworkError extends Error {
  override readonly name = 'InvalidCountryNetworkError'
  constructor (readonly code: CountryNetworkErrorCode, message: string) {
    super(`country network: ${message}`)
  }
}

/**
 * The model over `source` (a LatencyMatrix, or a parsed table to build one from: build it once and
 * share it when making several models); `prng` seeds its jitter, loss and bandwidth streams (forks
 * `latency-jitter`, `message-loss`, `bandwidth:<node>`). Nodes are placed by the country they join the
 * bus with; `countryOf` (e.g. `countryOfNodes`) places those that join without one. Validates its
 * options; throws InvalidCountryNetworkError, InvalidBandwidthError or InvalidPartitionError.
 */
export function countryNetwork (source: LatencyMatrix | RttTable, prng: Prng, options?: CountryNetworkOptions): CountryNetwork
export function countryNetwork (source: LatencyMatrix | RttTable, countryOf: (node: string) => string, prng: Prng, options?: CountryNetworkOptions): CountryNetwork
export function countryNetwork (source: LatencyMatrix | RttTable, a: Prng | ((node: string) => string), b?: Prng | CountryNetworkOptions, c?: CountryNetworkOptions): CountryNetwork {
  const countryOf = typeof a === 'function' ? a : undefined
  const prng = (typeof a === 'function' ? b : a) as Prng
  const options = (typeof a === 'function' ? c : b as CountryNetworkOptions | undefined) ?? {}
  const matrix = source instanceof LatencyMatrix ? source : new LatencyMatrix(source)
  const lossRate = options.lossRate ?? 0
  if (!(lossRate >= 0 && lossRate <= 1)) throw new InvalidCountryNetworkError('LOSS_RATE', `lossRate: expected a number in 0 … 1, got ${String(lossRate)}`)
  const gossipHops = options.gossipHops ?? 2
  if (!(Number.isInteger(gossipHops) && gossipHops >= 1)) throw new InvalidCountryNetworkError('GOSSIP_HOPS', `gossipHops: expected an integer ≥ 1, got ${String(gossipHops)}`)
  const jitterModel = options.jitter ?? 'lognormal'
  if (!JITTER_MODELS.includes(jitterModel)) throw new InvalidCountryNetworkError('JITTER', `jitter: expected one of ${JITTER_MODELS.join(', ')}, got ${String(jitterModel)}`)
  const partitions = options.partitions ?? []
  for (const p of partitions) validatePartition(p)
  const bandwidth = options.bandwidth ?? DEFAULT_BANDWIDTH_CLASSES
  if (typeof bandwidth !== 'function') validateBandwidthClasses(bandwidth)

  const jitter = prng.fork('latency-jitter')
  const loss = prng.fork('message-loss')
  const countryIndex = new Map<string, number>()
  const links = new Map<string, NodeBandwidth>()

  const indexOf = (node: string, country?: string): number => {
    let i = countryIndex.get(node)
    if (i === undefined) {
      const c = country ?? countryOf?.(node)
      if (c === undefined) throw new UnknownNodeError(node)
      i = matrix.indexOf(c)
      countryIndex.set(node, i)
    }
    return i
  }
  const bandwidthOf = (node: string): NodeBandwidth => {
    let link = links.get(node)
    if (link === undefined) {
      if (typeof bandwidth === 'function') link = bandwidth(node)
      else {
        const { upMbps, downMbps } = drawBandwidth(prng.fork(`bandwidth:${node}`), bandwidth)
        link = { upMbps, downMbps }
      }
      links.set(node, link)
    }
    return link
  }
  const isPartitioned = (fromRegion: string, toRegion: string, at: number): boolean => partitions.some((p) => partitioned(p, fromRegion, toRegion, at))
  const delayMs = (from: Place, to: Place): number => matrix.sampleByIndex(indexOf(from.node, from.country), indexOf(to.node, to.country), jitter, jitterModel)
  const drops = (from: Place, to: Place, at: number): boolean => partitions.length > 0 && isPartitioned(from.region, to.region, at)

  // the keyed delivery's draw (harness/network.ts KeyedLatency): the same delay from the stream it gives
  let maxMs: number | undefined
  const maxOneWay = (): number => {
    if (maxMs === undefined) {
      maxMs = 1
      for (const a of matrix.countries) for (const b of matrix.countries) maxMs = Math.max(maxMs, Math.ceil(matrix.rtt(a, b).max / 2))
    }
    return maxMs
  }
  const keyed = {
    latencyMs: (from: Place, to: Place, rng: Prng): number => Math.max(1, Math.round(matrix.sampleByIndex(indexOf(from.node, from.country), indexOf(to.node, to.country), rng, jitterModel))),
    get maxMs (): number { return maxOneWay() },
    mayDrop: partitions.length > 0
  }

  return {
    matrix,
    lossRate,
    keyed,
    gossipHops,
    gossipLoss: lossRate,
    countryOf: (node) => matrix.countries[indexOf(node)] as string,
    bandwidthOf,
    delayMs,
    // the pair's mean (no draw: 'none' reads the matrix only)
    meanLatencyMs: (from, to) => matrix.sampleByIndex(indexOf(from.node), indexOf(to.node), jitter, 'none'),
    latencyMs: (from, to) => Math.max(1, Math.round(delayMs(from, to))),
    transferMs: (from, to, bytes) => transferMs(bytes, delayMs(from, to), bandwidthOf(from.node), bandwidthOf(to.node)),
    blobMs: (from, to, bytes) => transferMs(bytes, 0, bandwidthOf(from), bandwidthOf(to)),
    isPartitioned,
    drops,
    delivers: (from, to, at) => !isPartitioned(from.region, to.region, at) && !loss.chance(lossRate)
  }
}

/** A node that `countryOfNodes` was not given. */
export class UnknownNodeError extends Error {
  override readonly name = 'UnknownNodeError'
  readonly code = 'UNKNOWN_NODE'
  constructor (readonly node: string) {
    super(`country network: no country for node ${JSON.stringify(node)}`)
  }
}

/**
 * The `countryOf` adapter for a list of nodes with countries (a Workload's fleet: FleetNode has `id`
 * and `country`; harness peers are `peer:<name>`, so key them that way). Throws UnknownNodeError
 * for a node not in the list, so a mis-keyed world fails at its first message, not with a default.
 */
export function countryOfNodes (nodes: Iterable<{ id: string, country: string }>): (node: string) => string {
  const map = new Map<string, string>()
  for (const n of nodes) map.set(n.id, n.country)
  return (node) => {
    const c = map.get(node)
    if (c === undefined) throw new UnknownNodeError(node)
    return c
  }
}
