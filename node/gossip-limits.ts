/**
 * How big an inbound gossipsub RPC may be, and counting the RPCs refused for it (protocol/README §7.6).
 *
 * Gossipsub reads each RPC whole (`maxInboundDataLength`, 4 MiB by default) before gpumesh's topic
 * validator sees any message in it, and an RPC over the limit ends that peer's inbound stream with
 * only a debug line. gpumesh messages are at most MAX_ENVELOPE_BYTES, so the limit is set a little
 * above what one RPC can legitimately carry: one message at the envelope cap with its piggybacked
 * control (IHAVE/IWANT ids), or an IWANT answer of a few large messages (gossipsub does not split
 * those). What is refused is counted (`gpumesh_gossip_rpc_dropped_total{reason}`) and logged.
 */
import type { PeerId } from '@libp2p/interface'
import { MAX_ENVELOPE_BYTES } from '../protocol/index.js'
import type { Logger } from './logger.js'
import type { NodeMetrics } from './metrics.js'

/** The largest inbound gossipsub RPC read: four envelopes at the cap (1 MiB), a quarter of gossipsub's default. */
export const GOSSIP_MAX_RPC_BYTES = 4 * MAX_ENVELOPE_BYTES

/** Reasons counted, by the length-prefix decoder's error name. */
const DROP_REASONS: Readonly<Record<string, string>> = {
  InvalidDataLengthError: 'rpc-too-large',
  InvalidDataLengthLengthError: 'bad-length-prefix',
  InvalidMessageLengthError: 'bad-length-prefix'
}

interface ReadStreamErrorHook {
  handlePeerReadStreamError?: (err: unknown, peerId: PeerId) => void
}

/**
 * Count and log the inbound RPCs gossipsub refuses before validation. Gossipsub has no event or
 * option for it: its (untyped) `handlePeerReadStreamError` is wrapped, and when that hook is not
 * there (another gossipsub version) this says so instead of counting nothing in silence.
 */
export function countDroppedRpcs (pubsub: unknown, metrics: NodeMetrics | undefined, log: Logger): void {
  const hook = pubsub as ReadStreamErrorHook
  const original = hook.handlePeerReadStreamError
  if (typeof original !== 'function') {
    log.warn('this gossipsub has no read-stream error hook: refused RPCs are not counted')
    return
  }
  hook.handlePeerReadStreamError = (err: unknown, peerId: PeerId): void => {
    const reason = DROP_REASONS[(err as Error | undefined)?.name ?? '']
    if (reason !== undefined) {
      metrics?.gossipRpcDropped.inc({ reason })
      log.warn('gossip RPC refused before validation', { peer: peerId.toString(), reason, limit: GOSSIP_MAX_RPC_BYTES, error: (err as Error).message })
    }
    original.call(pubsub, err, peerId)
  }
}
