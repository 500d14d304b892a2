/**
 * A relay's slots (a bootstrap peer runs circuitRelayServer), given back when their holders stop using
 * them. Circuit relay v2 has no message to cancel a reservation, and js-libp2p's relay server keeps a
 * slot until its TTL (2 h) even after the holder closed the connection; with 15 slots per relay by
 * default, slots held by nodes that no longer need them turn newcomers behind NAT away. A node that
 * gives its relay up (it became publicly reachable, node/services/reachability.ts) withdraws its relay
 * addresses, and identify-push tells this relay: when a peer's addresses go from including one through
 * this relay to none, its slot is freed here at once. A peer that just vanishes keeps its slot to the
 * TTL, as before (its addresses do not change), so a holder briefly offline does not lose it.
 */
import type { PeerId, PeerUpdate } from '@libp2p/interface'
import type { Logger } from './logger.js'

/** What RelaySlots needs of the node: its id, peer updates, and the relay server's reservations. */
export interface RelaySlotsNode {
  peerId: PeerId
  addEventListener: (type: 'peer:update', listener: (event: CustomEvent<PeerUpdate>) => void) => void
  removeEventListener: (type: 'peer:update', listener: (event: CustomEvent<PeerUpdate>) => void) => void
}

/** The relay server's reservations (circuitRelayServer's `reservations`, a PeerMap). */
export interface ReservationMap {
  readonly size: number
  has: (peer: PeerId) => boolean
  delete: (peer: PeerId) => void
}

export interface RelaySlotsStatus {
  /** Slots held now. */
  reservations: number
  /** Slots freed since start because their holder withdrew its relay addresses. */
  freed: number
}

export class RelaySlots {
  private freed = 0
  private readonly through: string

  constructor (private readonly node: RelaySlotsNode, private readonly reservations: ReservationMap, private readonly log: Logger) {
    this.through = `/p2p/${node.peerId.toString()}/p2p-circuit`
    this.onUpdate = this.onUpdate.bind(this)
  }

  start (): void {
    this.node.addEventListener('peer:update', this.onUpdate)
  }

  stop (): void {
    this.node.removeEventListener('peer:update', this.onUpdate)
  }

  status (): RelaySlotsStatus {
    return { reservations: this.reservations.size, freed: this.freed }
  }

  private viaThisRelay (addresses: PeerUpdate['peer']['addresses']): boolean {
    return addresses.some((a) => a.multiaddr.toString().includes(this.through))
  }

  private onUpdate (event: CustomEvent<PeerUpdate>): void {
    const { peer, previous } = event.detail
    if (previous === undefined || !this.reservations.has(peer.id)) return
    if (!this.viaThisRelay(previous.addresses) || this.viaThisRelay(peer.addresses)) return
    this.reservations.delete(peer.id)
    this.freed++
    this.log.info('relay slot freed: its holder withdrew its relay address', { peer: peer.id.toString() })
  }
}
