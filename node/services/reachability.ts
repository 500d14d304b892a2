/**
 * The node's reachability (issue 12, NAT traversal): every REACHABILITY_CHECK_MS it reads what the
 * address manager and AutoNAT know of its own addresses, counts the peers it reaches at public
 * addresses, and asks protocol/nat/reachability.ts whether it is publicly reachable. A node that is
 * not (behind NAT) listens on /p2p-circuit: the circuit-relay transport then finds relays (the
 * bootstrap peers run circuitRelayServer), reserves a slot and announces the relay addresses, and
 * DCUtR (@libp2p/dcutr) upgrades relayed connections to direct ones. It also counts relayed
 * connections and their direct upgrades, for `gpumesh status`.
 *
 * A node that later turns out reachable (AutoNAT verifies a public address: a port forward opened, a
 * firewall changed) releases the relay once it has been public for NAT_RELAY_RELEASE_AFTER_MS without
 * a break (stepRelayHold): it closes the /p2p-circuit listener(s) it opened, withdraws the relay
 * addresses from the address manager and untags the relay connection, and identify-push tells its
 * peers the new address list. Should the decision ask for a relay again, it listens again.
 *
 * What js-libp2p 3 (@libp2p/circuit-relay-v2 4.2) does on that close, read from its source: the
 * listener's close() cancels every reservation in the transport's store (timers cleared, map emptied)
 * but dispatches no `relay:removed`, so it neither withdraws confirmed addresses nor removes the
 * keep-alive tag on the relay; this service does both. Circuit relay v2 has no message to cancel a
 * reservation, and js-libp2p's relay server keeps a slot until its TTL runs out (2 h, its
 * DEFAULT_MAX_RESERVATION_TTL), connection closed or not: the node stops refreshing it, so the slot on
 * the relay lapses within that time, not at once. A relay search still pending at the release (no
 * reservation made yet) is not stopped by close(): libp2p keeps its pending request, and a reservation
 * it makes later is held (and refreshed) though nothing announces it.
 */
import { KEEP_ALIVE, type ComponentLogger, type Connection, type Listener, type Logger, type PeerStore, type Startable } from '@libp2p/interface'
import type { AddressManager, TransportManager, ConnectionManager } from '@libp2p/interface-internal'
import { peerIdFromString } from '@libp2p/peer-id'
import { isPrivate } from '@libp2p/utils'
import { multiaddr, type Multiaddr } from '@multiformats/multiaddr'
import { INITIAL_RELAY_HOLD, NAT_RELAY_RELEASE_AFTER_MS, decideReachability, stepRelayHold, type NatMode, type OwnAddress, type ReachabilityDecision, type RelayHold } from '../../protocol/nat/reachability.js'

/** How often reachability is re-decided. */
export const REACHABILITY_CHECK_MS = 2_000

const CIRCUIT = '/p2p-circuit'
/** The tag the circuit-relay transport keeps a relay's connection open with (its constants.js KEEP_ALIVE_TAG, not exported). */
const RELAY_KEEP_ALIVE_TAG = `${KEEP_ALIVE}-circuit-relay`

export interface ReachabilityComponents {
  addressManager: AddressManager
  transportManager: TransportManager
  connectionManager: ConnectionManager
  /** To untag a released relay (the transport leaves its keep-alive tag behind). */
  peerStore: Pick<PeerStore, 'merge'>
  /** libp2p's event bus (only connection:open is used). */
  events: {
    addEventListener: (type: 'connection:open', listener: (event: CustomEvent<Connection>) => void) => void
    removeEventListener: (type: 'connection:open', listener: (event: CustomEvent<Connection>) => void) => void
  }
  logger: ComponentLogger
}

export interface ReachabilityInit {
  mode: NatMode
  /** Listen on /p2p-circuit when the decision says relay (default true; a bootstrap peer, itself a relay, does not). */
  seekRelay?: boolean
  now?: () => number
  verifyGraceMs?: number
  /** Default NAT_RELAY_RELEASE_AFTER_MS. */
  releaseAfterMs?: number
  checkMs?: number
}

/** What `gpumesh status` shows under `nat`. */
export interface ReachabilityStatus extends ReachabilityDecision {
  mode: NatMode
  /** Whether this node listens for relayed connections (holds or seeks relay reservations). */
  relayListening: boolean
  /** The relay addresses it announces. */
  relayAddresses: string[]
  /** Connections over a relay opened since start (either direction). */
  relayedConnections: number
  /** Direct connections opened to a peer while a relayed one to it was open (DCUtR or a unilateral upgrade). */
  directUpgrades: number
  /** Times the relay was released because the node had become public (since start). */
  relayReleases: number
}

const isRelayed = (ma: Multiaddr): boolean => ma.toString().includes(CIRCUIT)

function publicAddr (ma: Multiaddr): boolean {
  try {
    return !isPrivate(ma)
  } catch {
    return false
  }
}

export class ReachabilityService implements Startable {
  private readonly log: Logger
  private readonly now: () => number
  private timer: NodeJS.Timeout | undefined
  private startedAt = 0
  private decision: ReachabilityDecision = { reachability: 'unknown', relay: false, reason: 'not started' }
  private hold: RelayHold = INITIAL_RELAY_HOLD
  /** The /p2p-circuit listeners this service opened (to close on release). */
  private relayListeners: Listener[] = []
  private relayReleases = 0
  private relayedConnections = 0
  private directUpgrades = 0
  /** Told each change of the decision's reachability (the daemon switches its DHT mode on it). */
  onChange?: (decision: ReachabilityDecision) => void | Promise<void>

  constructor (private readonly components: ReachabilityComponents, private readonly init: ReachabilityInit) {
    this.log = components.logger.forComponent('gpumesh:reachability')
    this.now = init.now ?? Date.now
    this.onConnection = this.onConnection.bind(this)
  }

  readonly [Symbol.toStringTag] = 'gpumesh:reachability'

  isStarted (): boolean { return this.timer !== undefined }

  start (): void {
    this.startedAt = this.now()
    this.components.events.addEventListener('connection:open', this.onConnection)
    this.timer = setInterval(() => { this.checkLogged() }, this.init.checkMs ?? REACHABILITY_CHECK_MS)
    this.timer.unref()
  }

  afterStart (): void { this.checkLogged() }

  /** check() from a timer: an error is logged, never thrown into the event loop. */
  private checkLogged (): void {
    this.check().catch((err: unknown) => { this.log.error('reachability check failed - %e', err) })
  }

  stop (): void {
    clearInterval(this.timer)
    this.timer = undefined
    this.components.events.removeEventListener('connection:open', this.onConnection)
  }

  status (): ReachabilityStatus {
    return {
      ...this.decision,
      mode: this.init.mode,
      relayListening: this.hold.listening,
      relayAddresses: this.components.addressManager.getAddresses().filter(isRelayed).map((ma) => ma.toString()),
      relayedConnections: this.relayedConnections,
      directUpgrades: this.directUpgrades,
      relayReleases: this.relayReleases
    }
  }

  /** Decide again; start listening for relayed connections, or release the relay, as stepRelayHold says. */
  async check (): Promise<ReachabilityDecision> {
    const addresses: OwnAddress[] = this.components.addressManager.getAddressesWithMetadata().map((a) => ({
      public: publicAddr(a.multiaddr),
      verified: a.verified,
      relayed: isRelayed(a.multiaddr)
    }))
    const publicPeers = this.components.connectionManager.getConnections()
      .filter((c) => !isRelayed(c.remoteAddr) && publicAddr(c.remoteAddr)).length
    const now = this.now()
    const decision = decideReachability({ mode: this.init.mode, addresses, publicPeers, startedAt: this.startedAt, now, verifyGraceMs: this.init.verifyGraceMs })
    const changed = decision.reachability !== this.decision.reachability
    if (changed) this.log('reachability %s: %s', decision.reachability, decision.reason)
    this.decision = decision
    if (changed) await this.onChange?.(decision)
    if (this.init.seekRelay === false || !this.isStarted()) return decision
    const step = stepRelayHold(this.hold, decision, now, this.init.releaseAfterMs)
    this.hold = step.hold
    if (step.action === 'listen') await this.listenOnRelay()
    else if (step.action === 'release') await this.releaseRelay()
    return decision
  }

  private async listenOnRelay (): Promise<void> {
    const tm = this.components.transportManager
    const before = new Set(tm.getListeners())
    try {
      await tm.listen([multiaddr(CIRCUIT)])
      this.log('listening for relayed connections: seeking a relay reservation')
    } catch (err) {
      this.hold = { ...this.hold, listening: false }
      this.log.error('could not listen on %s - %e', CIRCUIT, err)
    } finally {
      // the transport manager registers a listener before it listens: ours are the new ones, failed or not
      this.relayListeners.push(...tm.getListeners().filter((l) => !before.has(l)))
    }
  }

  /**
   * Close the /p2p-circuit listeners this service opened, withdraw their relay addresses and untag the
   * relays. The listeners' close events make the address manager rewrite the node's peer record, which
   * identify-push sends to every connected peer.
   */
  private async releaseRelay (): Promise<void> {
    const listeners = this.relayListeners
    this.relayListeners = []
    const relayAddrs = new Map([...listeners.flatMap((l) => l.getAddrs()), ...this.components.addressManager.getAddresses().filter(isRelayed)]
      .map((ma) => [ma.toString(), ma]))
    await Promise.all(listeners.map(async (l) => { await l.close() }))
    const relays = new Set<string>()
    for (const ma of relayAddrs.values()) {
      this.components.addressManager.removeObservedAddr(ma)
      const relay = ma.toString().split(CIRCUIT)[0]?.split('/p2p/')[1]
      if (relay !== undefined && relay !== '') relays.add(relay)
    }
    for (const relay of relays) {
      await this.components.peerStore.merge(peerIdFromString(relay), { tags: { [RELAY_KEEP_ALIVE_TAG]: undefined } })
        .catch((err: unknown) => { this.log.error('could not untag relay %s - %e', relay, err) })
    }
    this.relayReleases++
    this.log('public for %d ms: released the relay (%d listener(s), relays %s)', this.init.releaseAfterMs ?? NAT_RELAY_RELEASE_AFTER_MS, listeners.length, [...relays].join(', '))
  }

  private onConnection (event: CustomEvent<Connection>): void {
    const connection = event.detail
    if (isRelayed(connection.remoteAddr)) {
      this.relayedConnections++
      return
    }
    const others = this.components.connectionManager.getConnections(connection.remotePeer)
    if (others.some((c) => c.id !== connection.id && c.status === 'open' && isRelayed(c.remoteAddr))) {
      this.directUpgrades++
      this.log('direct connection to %p replaces a relayed one (%a)', connection.remotePeer, connection.remoteAddr)
    }
  }
}

export function reachabilityService (init: ReachabilityInit): (components: ReachabilityComponents) => ReachabilityService {
  return (components) => new ReachabilityService(components, init)
}
