/**
 * Feeds the requester agent's RTT view (protocol/market/rtt-view.ts) with measurements, for bidders
 * only (issue 12). Measure, never dial: a bidder this node has a connection to is measured on it —
 * the connection monitor's last reading (`connection.rtt`, libp2p pings every connection every
 * ~10 s) when there is one, else one ping (/ipfs/ping/1.0.0) over that connection. A bidder without
 * a connection keeps the estimate from its bid's region and country (the agent's), or none.
 */
import { peerIdFromString } from '@libp2p/peer-id'
import type { PeerId } from '@libp2p/interface'
import type { RttView } from '../../protocol/index.js'
import type { GpumeshLibp2p } from '../libp2p.js'
import type { Logger } from '../logger.js'

/** A ping that takes longer than this is abandoned (the estimate, if any, stays). */
export const RTT_PING_TIMEOUT_MS = 5_000
/** Pings in flight at once (the ping service allows 8 outbound streams per connection). */
export const MAX_RTT_PINGS = 8
/** A bidder measured less than this long ago is not pinged again: the smoothed value is fresh enough. */
export const RTT_REPING_MS = 30_000

export interface RttMeterOptions {
  node: GpumeshLibp2p
  view: RttView
  now: () => number
  log: Logger
}

export class RttMeter {
  private readonly inFlight = new Set<string>()

  constructor (private readonly options: RttMeterOptions) {}

  /** Measure `peer` if it can be measured without a dial; the result lands in the view. */
  observe (peer: string): void {
    let id: PeerId
    try { id = peerIdFromString(peer) } catch { return }
    const connections = this.options.node.getConnections(id).filter((c) => c.status === 'open')
    if (connections.length === 0) return
    const now = this.options.now()
    const readings = connections.map((c) => c.rtt).filter((r): r is number => typeof r === 'number' && Number.isFinite(r) && r >= 0)
    if (readings.length > 0) {
      this.options.view.measured(peer, Math.min(...readings), now)
      return
    }
    const last = this.options.view.entry(peer)?.measuredAt
    if (last !== undefined && now - last < RTT_REPING_MS) return
    if (this.inFlight.has(peer) || this.inFlight.size >= MAX_RTT_PINGS) return
    this.inFlight.add(peer)
    this.options.node.services.ping.ping(id, { signal: AbortSignal.timeout(RTT_PING_TIMEOUT_MS) })
      .then((ms) => { this.options.view.measured(peer, ms, this.options.now()) })
      .catch((err: unknown) => { this.options.log.debug('rtt ping failed', { peer, error: err }) })
      .finally(() => { this.inFlight.delete(peer) })
  }
}
