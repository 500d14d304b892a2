/**
 * The harness's model of the network: one-way delay between two nodes by their regions, with a
 * seeded jitter, how many mesh hops a gossip message travels, and how often a gossip delivery is
 * lost. Plain data plus one function, so a scenario can swap it for a measured RTT table
 * (DESIGN §8) without touching the bus.
 */
import { Prng } from './prng.js'

export interface NetworkModel {
  /** One-way delay of one message from `from` (in region `fromRegion`) to `to`, ms. */
  latencyMs: (from: Place, to: Place) => number
  /** Gossip reaches a subscriber after this many hops of the sender's latency to it (gossipsub mesh ≈ 2). */
  gossipHops: number
  /** Chance that one gossip delivery (one message to one subscriber) is lost (0 … 1). */
  gossipLoss: number
  /**
   * Whether the network drops one message sent at `at` (the scheduler's clock) from `from` to `to`
   * (a partition, an outage). The bus asks per gossip delivery (a drop counts as lost, like
   * `gossipLoss`), per stream message (a dropped one resets the stream: both ends see onClose with
   * `unreachable`, as a TCP connection to a peer that cannot be reached ends) and per stream open (the
   * opener's end is reset). Absent: nothing is dropped beyond `gossipLoss`.
   */
  drops?: (from: Place, to: Place, at: number, channel: 'gossip' | 'stream') => boolean
  /**
   * Time to move a blob of `bytes` from node `from` to node `to` (peer ids), ms: the size part alone
   * (the shells add the round trip). world.ts `transferMs` uses it; absent: the world's one bandwidth.
   */
  blobMs?: (from: string, to: string, bytes: number) => number
  /** The one-way delay without jitter (its mean), ms: what an overlay model precomputes paths with. Optional. */
  meanLatencyMs?: (from: Place, to: Place) => number
  /**
   * A gossip model's delay from the publisher `from` to the subscriber `to` for `message` on `topics`, ms
   * (Infinity: the copy never reaches it). Optional: when absent the bus uses `gossipHops × latencyMs`.
   * The bus calls it once per subscriber of a publish, in subscriber order, with the same `message` object
   * for one publish (overlay/mesh-gossip.ts: the gossipsub mesh model).
   */
  gossipDelayMs?: (from: Place, to: Place, topics: readonly string[], message: { kind: string, bytes: number }) => number
  /**
   * The same one-way delay drawn from a source the caller gives (the keyed delivery: harness/keyed-delivery.ts
   * seeds it per (message, receiver)), and what the keyed delivery must know of the model. Optional: a model
   * without it cannot run the keyed delivery (KeyedDeliveryError).
   */
  keyed?: KeyedLatency
}

export interface KeyedLatency {
  /** One delay from `from` to `to` drawn from `rng`, ms (whole, at least 1, as `latencyMs`). */
  latencyMs: (from: Place, to: Place, rng: Prng) => number
  /** No draw of `latencyMs` exceeds this, ms. */
  maxMs: number
  /** Whether `drops` may ever answer true (false: it is absent or never drops, so no delivery need be asked). */
  mayDrop: boolean
}

/** Where a node sits: its region, and its country (ISO 3166 alpha-2) where the scenario knows it. */
export interface Place { node: string, region: string, country?: string }

/** The reason a stream ends with when the network dropped one of its messages, or its open. */
export const UNREACHABLE = 'unreachable'

export interface RegionLatency {
  /** Same region (`eu-west` and `eu-west`), ms. */
  sameRegion: number
  /** Same top-level region (`eu-west` and `eu-north`), ms. */
  sameArea: number
  /** Elsewhere, ms. */
  elsewhere: number
  /** Each delivery's delay is scaled by a factor drawn from [1, 1 + jitter). */
  jitter: number
}

export const DEFAULT_REGION_LATENCY: Readonly<RegionLatency> = Object.freeze({ sameRegion: 2, sameArea: 15, elsewhere: 70, jitter: 0.2 })

function area (region: string): string {
  const dash = region.indexOf('-')
  return dash < 0 ? region : region.slice(0, dash)
}

/** A latency model by region (DEFAULT_REGION_LATENCY unless given), jittered by `prng`. Whole ms, at least 1. */
export function regionNetwork (prng: Prng, latency: Partial<RegionLatency> = {}, gossip: { hops?: number, loss?: number } = {}): NetworkModel {
  const l = { ...DEFAULT_REGION_LATENCY, ...latency }
  const jitter = prng.fork('latency-jitter')
  // each region's area, sliced once (a delay is drawn for every gossip delivery)
  const areas = new Map<string, string>()
  const areaOf = (region: string): string => {
    let a = areas.get(region)
    if (a === undefined) areas.set(region, a = area(region))
    return a
  }
  const baseOf = (from: Place, to: Place): number => from.region === to.region ? l.sameRegion : areaOf(from.region) === areaOf(to.region) ? l.sameArea : l.elsewhere
  const draw = (from: Place, to: Place, rng: Prng): number => Math.max(1, Math.round(baseOf(from, to) * (1 + l.jitter * rng.next())))
  return {
    latencyMs: (from, to) => draw(from, to, jitter),
    keyed: { latencyMs: draw, maxMs: Math.max(1, Math.round(Math.max(l.sameRegion, l.sameArea, l.elsewhere) * (1 + l.jitter))), mayDrop: false },
    // the jitter factor is uniform on [1, 1 + jitter): its mean is 1 + jitter / 2
    meanLatencyMs: (from, to) => baseOf(from, to) * (1 + l.jitter / 2),
    gossipHops: gossip.hops ?? 2,
    gossipLoss: gossip.loss ?? 0
  }
}

/** Every message takes exactly `ms` (no jitter, no loss): for tests that count milliseconds. */
export function fixedNetwork (ms: number, gossip: { hops?: number, loss?: number } = {}): NetworkModel {
  return { latencyMs: () => ms, meanLatencyMs: () => ms, keyed: { latencyMs: () => ms, maxMs: ms, mayDrop: false }, gossipHops: gossip.hops ?? 1, gossipLoss: gossip.loss ?? 0 }
}
