/**
 * The gossip mesh model's parameters, their defaults (@libp2p/gossipsub 17's constants.js and
 * gossipsub.js option defaults; node/libp2p.ts overrides none of these), and the sizes of gossipsub's
 * protobuf RPCs as it encodes them with the default StrictSign policy.
 */
import { checkRanges, InvalidOverlayParamsError } from './errors.js'
import { PEER_ID_MULTIHASH_BYTES, varintBytes } from './kad-params.js'

export interface GossipParams {
  /** Wanted mesh degree per topic (GossipsubD). */
  D: number
  /** Fewer mesh peers than this and a heartbeat grafts more (GossipsubDlo). */
  Dlo: number
  /** More than this and a heartbeat prunes down to D (GossipsubDhi). */
  Dhi: number
  /** Non-mesh topic peers a node sends IHAVE gossip to at each heartbeat (GossipsubDlazy). */
  Dlazy: number
  /** Heartbeat period, ms (GossipsubHeartbeatInterval). */
  heartbeatMs: number
  /** Heartbeats a message id is advertised in IHAVE after it arrives (GossipsubHistoryGossip). */
  historyGossip: number
  /** Messages at least this large make the receiver send IDONTWANT to its mesh (GossipsubIdontwantMinDataSize). */
  idontwantMinBytes: number
  /** The publisher sends to every topic peer it is connected to, not only its mesh (gossipsub `floodPublish`). */
  floodPublish: boolean
}

export const DEFAULT_GOSSIP_PARAMS: Readonly<GossipParams> = Object.freeze({
  D: 6,
  Dlo: 4,
  Dhi: 12,
  Dlazy: 6,
  heartbeatMs: 1_000,
  historyGossip: 3,
  idontwantMinBytes: 512,
  floodPublish: true
})

export function validateGossipParams (p: GossipParams): void {
  checkRanges([
    ['Dlo', p.Dlo, 0, 1_000, true],
    ['D', p.D, 1, 1_000, true],
    ['Dhi', p.Dhi, 1, 1_000, true],
    ['Dlazy', p.Dlazy, 0, 1_000, true],
    ['heartbeatMs', p.heartbeatMs, 1, 3_600_000, false],
    ['historyGossip', p.historyGossip, 1, 100, true],
    ['idontwantMinBytes', p.idontwantMinBytes, 0, Number.MAX_SAFE_INTEGER, true]
  ])
  if (!(p.Dlo <= p.D && p.D <= p.Dhi)) throw new InvalidOverlayParamsError('D', `expected Dlo ≤ D ≤ Dhi, got ${p.Dlo}, ${p.D}, ${p.Dhi}`)
  if (typeof p.floodPublish !== 'boolean') throw new InvalidOverlayParamsError('floodPublish', `expected true or false, got ${String(p.floodPublish)}`)
}

/** The defaults overridden by `init`, validated (throws InvalidOverlayParamsError). */
export function createGossipParams (init: Partial<GossipParams> = {}): GossipParams {
  const p = { ...DEFAULT_GOSSIP_PARAMS, ...init }
  validateGossipParams(p)
  return p
}

/** A gossipsub message id under StrictSign (default msgIdFn): the sender's peer id bytes + the 8-byte seqno. */
export const MESSAGE_ID_BYTES = PEER_ID_MULTIHASH_BYTES + 8
const SEQNO_BYTES = 8
const SIGNATURE_BYTES = 64

function field (contentBytes: number): number {
  return 1 + varintBytes(contentBytes) + contentBytes
}

function rpc (contentBytes: number): number {
  return varintBytes(contentBytes) + contentBytes
}

/** One RPC carrying one published message of `dataBytes` on `topicBytes` (from, data, seqno, topic, signature). */
export function publishRpcBytes (dataBytes: number, topicBytes: number): number {
  const message = field(PEER_ID_MULTIHASH_BYTES) + field(dataBytes) + field(SEQNO_BYTES) + field(topicBytes) + field(SIGNATURE_BYTES)
  return rpc(field(message))
}

/** One RPC with one IHAVE for one message id. */
export function ihaveRpcBytes (topicBytes: number): number {
  return rpc(field(field(field(topicBytes) + field(MESSAGE_ID_BYTES))))
}

/** One RPC with one IWANT (or IDONTWANT: the same shape) for one message id. */
export function iwantRpcBytes (): number {
  return rpc(field(field(field(MESSAGE_ID_BYTES))))
}
