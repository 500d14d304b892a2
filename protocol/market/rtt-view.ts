/**
 * A requester's view of the round-trip time to each provider (issue 12), the `rtt` PeerView the award
 * scores with (scoring.ts `distanceFactor`). Pure: the shell feeds measurements in (the connection
 * monitor's `connection.rtt`, or a ping over an existing connection) with their time; the agent feeds
 * estimates from where a bidder says it is (rtt-estimate.ts).
 *
 *  - A measurement is smoothed as TCP smooths its RTT (RFC 6298 §2): the first sample is taken as is,
 *    each later one moves the value by RTT_SMOOTHING (1/8) of the difference. A measurement older than
 *    `measurementTtlMs` (default 10 minutes) no longer counts: the estimate, if any, is used again.
 *  - An estimate is kept beside the measurement and used only while no fresh measurement exists.
 *  - At most `maxPeers` providers are kept; the one updated longest ago is dropped first.
 *
 * `rttMs(peer, now)` is what scoring reads; `entry(peer)` shows both values (`job status`, tests).
 */

/** Weight of a new RTT sample in the smoothed value (RFC 6298's alpha). */
export const RTT_SMOOTHING = 1 / 8
/** A measurement older than this (ms) is stale: 10 minutes, sixty connection-monitor rounds. */
export const RTT_MEASUREMENT_TTL_MS = 10 * 60_000
/** Providers kept in the view. */
export const MAX_RTT_PEERS = 4096
/** Measured RTTs above this (ms) are clamped: a minute is no network path, only a stalled peer. */
export const MAX_RTT_MS = 60_000

export interface RttViewParams {
  /** 0 < x ≤ 1. */
  smoothing: number
  /** > 0. */
  measurementTtlMs: number
  /** ≥ 1, integer. */
  maxPeers: number
}

export const defaultRttViewParams: Readonly<RttViewParams> = Object.freeze({
  smoothing: RTT_SMOOTHING,
  measurementTtlMs: RTT_MEASUREMENT_TTL_MS,
  maxPeers: MAX_RTT_PEERS
})

export class InvalidRttViewParamsError extends RangeError {
  override readonly name = 'InvalidRttViewParamsError'
  constructor (readonly field: keyof RttViewParams, value: unknown) {
    super(`${field}: out of range (${String(value)})`)
  }
}

/** Defaults overridden by `partial`, validated (throws InvalidRttViewParamsError). */
export function createRttViewParams (partial: Partial<RttViewParams> = {}): RttViewParams {
  const p = { ...defaultRttViewParams, ...partial }
  if (!(Number.isFinite(p.smoothing) && p.smoothing > 0 && p.smoothing <= 1)) throw new InvalidRttViewParamsError('smoothing', p.smoothing)
  if (!(Number.isFinite(p.measurementTtlMs) && p.measurementTtlMs > 0)) throw new InvalidRttViewParamsError('measurementTtlMs', p.measurementTtlMs)
  if (!(Number.isInteger(p.maxPeers) && p.maxPeers >= 1)) throw new InvalidRttViewParamsError('maxPeers', p.maxPeers)
  return p
}

/** What the view holds for one provider. */
export interface RttEntry {
  /** Smoothed measured RTT, ms. */
  measuredMs?: number
  /** When the last sample was taken. */
  measuredAt?: number
  /** The estimate from locations, whole ms. */
  estimatedMs?: number
}

/** Where the RTT scoring reads came from. */
export type RttSource = 'measured' | 'estimated'

export class RttView {
  private readonly peers = new Map<string, RttEntry>()
  readonly params: RttViewParams

  constructor (params: Partial<RttViewParams> = {}) {
    this.params = createRttViewParams(params)
  }

  /** A sample of `rttMs` to `peer` taken at `at`; a negative or non-finite sample is ignored. */
  measured (peer: string, rttMs: number, at: number): void {
    if (!Number.isFinite(rttMs) || rttMs < 0 || !Number.isFinite(at)) return
    const sample = Math.min(MAX_RTT_MS, rttMs)
    const old = this.peers.get(peer)
    const fresh = old?.measuredMs !== undefined && old.measuredAt !== undefined && at - old.measuredAt <= this.params.measurementTtlMs
    const measuredMs = fresh ? (old.measuredMs as number) + this.params.smoothing * (sample - (old.measuredMs as number)) : sample
    this.put(peer, { ...old, measuredMs, measuredAt: Math.max(at, old?.measuredAt ?? at) })
  }

  /** An estimate for `peer` (rtt-estimate.ts); undefined or invalid clears none and sets none. */
  estimated (peer: string, rttMs: number | undefined): void {
    if (rttMs === undefined || !Number.isFinite(rttMs) || rttMs < 0) return
    const old = this.peers.get(peer)
    if (old?.estimatedMs === rttMs) return
    this.put(peer, { ...old, estimatedMs: rttMs })
  }

  /** The RTT scoring uses at `now`: a fresh measurement, else the estimate, else undefined. */
  rttMs (peer: string, now: number): number | undefined {
    return this.lookup(peer, now)?.ms
  }

  /** `rttMs` with where it came from. */
  lookup (peer: string, now: number): { ms: number, source: RttSource } | undefined {
    const e = this.peers.get(peer)
    if (e === undefined) return undefined
    if (e.measuredMs !== undefined && e.measuredAt !== undefined && now - e.measuredAt <= this.params.measurementTtlMs) return { ms: e.measuredMs, source: 'measured' }
    return e.estimatedMs === undefined ? undefined : { ms: e.estimatedMs, source: 'estimated' }
  }

  entry (peer: string): Readonly<RttEntry> | undefined {
    const e = this.peers.get(peer)
    return e === undefined ? undefined : { ...e }
  }

  get size (): number {
    return this.peers.size
  }

  private put (peer: string, entry: RttEntry): void {
    this.peers.delete(peer)
    this.peers.set(peer, entry)
    if (this.peers.size > this.params.maxPeers) {
      const oldest = this.peers.keys().next().value as string
      this.peers.delete(oldest)
    }
  }
}
