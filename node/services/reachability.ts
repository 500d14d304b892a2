/**
 * The node's reachability (issue 12, NAT traversal): every REACHABILITY_CHECK_MS it reads what the
 * address manager and AutoNAT know of its own addresses, counts the peers it reaches at public
 * addresses, and asks protocol/nat/reachability.ts whether it is publicly reachable. A node that is
 * not (behind NAT) listens on /p2p-circuit once: the circuit-relay transport then finds relays (the
 * bootstrap peers run circuitRelayServer), reserves a slot and announces the relay addresses, and
 * DCUtR (@libp2p/dcutr) upgrades relayed connections to direct ones. It also counts relayed
 * connections and their direct upgrades, for `gpumesh status`.
 *
 * The reservation is kept once made (until the node stops), even if the node later turns out reachable.
 */
import type { ComponentLogger, Connection, Logger, Startable } from '@libp2p/interface'
import type { AddressManager, TransportManager, ConnectionManager } from '@libp2p/interface-internal'
import { isPrivate } from '@libp2p/utils'
import { multiaddr, type Multiaddr } from '@multiformats/multiaddr'
import { decideReachability, type NatMode, type OwnAddress, type ReachabilityDecision } from '../../protocol/nat/reachability.js'

/** How often reachability is re-decided. */
export const REACHABILITY_CHECK_MS = 2_000

const CIRCUIT = '/p2p-circuit'

export interface ReachabilityComponents {
  addressManager: AddressManager
  transportManager: TransportManager
  connectionManager: ConnectionManager
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
  private relayListening = false
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
      relayListening: this.relayListening,
      relayAddresses: this.components.addressManager.getAddresses().filter(isRelayed).map((ma) => ma.toString()),
      relayedConnections: this.relayedConnections,
      directUpgrades: this.directUpgrades
    }
  }

  /** Decide again, and start listening for relayed connections the first time the decision asks for it. */
  async check (): Promise<ReachabilityDecision> {
    const addresses: OwnAddress[] = this.components.addressManager.getAddressesWithMetadata().map((a) => ({
      public: publicAddr(a.multiaddr),
      verified: a.verified,
      relayed: isRelayed(a.multiaddr)
    }))
    const publicPeers = this.components.connectionManager.getConnections()
      .filter((c) => !isRelayed(c.remoteAddr) && publicAddr(c.remoteAddr)).length
    const decision = decideReachability({ mode: this.init.mode, addresses, publicPeers, startedAt: this.startedAt, now: this.now(), verifyGraceMs: this.init.verifyGraceMs })
    const changed = decision.reachability !== this.decision.reachability
    if (changed) this.log('reachability %s: %s', decision.reachability, decision.reason)
    this.decision = decision
    if (changed) await this.onChange?.(decision)
    if (decision.relay && this.init.seekRelay !== false && !this.relayListening && this.isStarted()) {
      this.relayListening = true
      try {
        await this.components.transportManager.listen([multiaddr(CIRCUIT)])
        this.log('listening for relayed connections: seeking a relay reservation')
      } catch (err) {
        this.relayListening = false
        this.log.error('could not listen on %s - %e', CIRCUIT, err)
      }
    }
    return decision
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
