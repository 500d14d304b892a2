/**
 * The provider's guard on /gpumesh/probe/1.0.0: one probe per peer per PROBE_MIN_INTERVAL_MS, and one
 * probe computing at a time, so probing stays cheap for an honest provider. Time is passed in.
 */

/** A peer may start a probe at most once per minute (documented in protocol/README.md "Attestations and probes"). */
export const PROBE_MIN_INTERVAL_MS = 60_000
/** Peers remembered at once; past this the oldest is forgotten (it may then probe again early). */
export const PROBE_RATE_LIMIT_PEERS = 4096

export class ProbeRateLimit {
  /** Peer → when its last probe was admitted; insertion order is admission order. */
  private readonly last = new Map<string, number>()
  private busy = false

  constructor (readonly minIntervalMs = PROBE_MIN_INTERVAL_MS, readonly maxPeers = PROBE_RATE_LIMIT_PEERS) {}

  /** Admit a probe from `peer` at `now`: 'ok' (it now holds the one computing slot), 'RATE_LIMITED' or 'BUSY'. */
  admit (peer: string, now: number): 'ok' | 'RATE_LIMITED' | 'BUSY' {
    const at = this.last.get(peer)
    if (at !== undefined && now - at < this.minIntervalMs) return 'RATE_LIMITED'
    if (this.busy) return 'BUSY'
    this.last.delete(peer)
    this.last.set(peer, now)
    for (const [oldest, when] of this.last) {
      if (this.last.size <= this.maxPeers && now - when < this.minIntervalMs) break
      this.last.delete(oldest)
    }
    this.busy = true
    return 'ok'
  }

  /** The admitted probe is over (answered, failed or abandoned). */
  release (): void {
    this.busy = false
  }
}
