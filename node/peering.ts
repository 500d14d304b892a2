/**
 * Keeps a node connected to enough peers for gossip to work. Gossipsub never dials anyone, and only
 * peers subscribed to a topic relay it, so a node that knows only its bootstrap peers (which run no
 * market) would hear no jobs or bids (../shared/LIBP2P-V3.md: with 4 random extra dials per node, 500
 * nodes reached 100 % delivery). Every `intervalMs`, while the node has fewer than `target`
 * connections, it dials a few random peers it learned of (identify, the DHT) but is not connected to.
 */
import type { PeerId } from '@libp2p/interface'
import type { GpumeshLibp2p } from './libp2p.js'
import type { Logger } from './logger.js'

/** Connections a node keeps at least (protocol/README.md §7.4b). */
export const PEERING_TARGET = 8
/** Random known peers dialled per round while below the target. */
export const PEERING_DIALS_PER_ROUND = 4
/** Time between rounds. */
export const PEERING_INTERVAL_MS = 10_000
/** The first round, soon after start (identify and the first DHT answers have filled the peer store). */
export const PEERING_FIRST_ROUND_MS = 1_000
/** Each dial's limit. */
export const PEERING_DIAL_TIMEOUT_MS = 5_000

export interface PeeringOptions {
  /** Connections to keep at least (default 8). */
  target?: number
  /** Dials per round (default 4). */
  dialsPerRound?: number
  intervalMs?: number
}

export class Peering {
  private timer: NodeJS.Timeout | undefined
  private running = false
  private readonly target: number
  private readonly dialsPerRound: number

  constructor (private readonly node: GpumeshLibp2p, private readonly log: Logger, private readonly options: PeeringOptions = {}) {
    this.target = options.target ?? PEERING_TARGET
    this.dialsPerRound = options.dialsPerRound ?? PEERING_DIALS_PER_ROUND
  }

  start (): void {
    const interval = this.options.intervalMs ?? PEERING_INTERVAL_MS
    this.timer = setInterval(() => { void this.round() }, interval)
    this.timer.unref()
    // once soon after start, when identify and the first DHT queries have filled the peer store
    setTimeout(() => { void this.round() }, Math.min(PEERING_FIRST_ROUND_MS, interval)).unref()
  }

  stop (): void {
    clearInterval(this.timer)
    this.timer = undefined
  }

  /** Dial up to `dialsPerRound` random known, unconnected peers when below target. */
  async round (): Promise<number> {
    if (this.running || this.timer === undefined) return 0
    const connected = new Set(this.node.getConnections().map((c) => c.remotePeer.toString()))
    if (connected.size >= this.target) return 0
    this.running = true
    try {
      const self = this.node.peerId.toString()
      const candidates: PeerId[] = (await this.node.peerStore.all())
        .filter((p) => p.addresses.length > 0 && !connected.has(p.id.toString()) && p.id.toString() !== self)
        .map((p) => p.id)
      const picks = shuffle(candidates).slice(0, Math.min(this.dialsPerRound, this.target - connected.size))
      const results = await Promise.allSettled(picks.map(async (peer) => await this.node.dial(peer, { signal: AbortSignal.timeout(PEERING_DIAL_TIMEOUT_MS) })))
      const ok = results.filter((r) => r.status === 'fulfilled').length
      if (picks.length > 0) this.log.debug('peering round', { dialled: picks.length, connected: ok })
      return ok
    } catch (err) {
      this.log.debug('peering round failed', { error: err })
      return 0
    } finally {
      this.running = false
    }
  }
}

function shuffle<T> (items: T[]): T[] {
  for (let i = items.length - 1; i > 0; i--) {
    const j = Math.floor(Math.random() * (i + 1))
    ;[items[i], items[j]] = [items[j] as T, items[i] as T]
  }
  return items
}
