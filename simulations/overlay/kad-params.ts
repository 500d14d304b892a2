/**
 * The Kademlia model's parameters, their defaults (each from the daemon's configuration or from
 * @libp2p/kad-dht 16 in node_modules; simulations/overlay/README.md lists where), and the sizes of the
 * DHT's protobuf messages, counted the way kad-dht's `Message` encodes them.
 */
import { checkRanges } from './errors.js'

export interface KademliaParams {
  /** Bucket size and the number of closest peers a lookup returns (kad-dht KBUCKET_SIZE / K). */
  k: number
  /** Queries in flight per path (node/config/schema.ts `dht.alpha`; kad-dht's own default is 10). */
  alpha: number
  /** Disjoint paths a lookup splits its starting peers into (node/config/schema.ts `dht.disjointPaths`). */
  disjointPaths: number
  /** Depth up to which kad-dht's routing-table trie splits a full bucket (routing-table PREFIX_LENGTH). */
  prefixLength: number
  /** How long a query to an unreachable peer takes to fail, ms (@libp2p/utils AdaptiveTimeout's minimum). */
  rpcTimeoutMs: number
  /** Round trips to open a connection before the first query to a peer outside the caller's table (TCP + Noise XX). */
  dialRoundTrips: number
  /** Bytes of one peer's addresses in a response: a /ip4/…/tcp and a /ip4/…/tcp/…/ws multiaddr with field headers. */
  addrBytesPerPeer: number
}

export const DEFAULT_KADEMLIA_PARAMS: Readonly<KademliaParams> = Object.freeze({
  k: 20,
  alpha: 3,
  disjointPaths: 2,
  prefixLength: 6,
  rpcTimeoutMs: 5_000,
  dialRoundTrips: 2,
  addrBytesPerPeer: 21
})

/** The largest prefixLength the model takes: a node keeps 2^prefixLength cell offsets. */
export const MAX_PREFIX_LENGTH = 10

export function validateKademliaParams (p: KademliaParams): void {
  checkRanges([
    ['k', p.k, 1, 256, true],
    ['alpha', p.alpha, 1, 64, true],
    ['disjointPaths', p.disjointPaths, 1, 64, true],
    ['prefixLength', p.prefixLength, 0, MAX_PREFIX_LENGTH, true],
    ['rpcTimeoutMs', p.rpcTimeoutMs, 1, 3_600_000, false],
    ['dialRoundTrips', p.dialRoundTrips, 0, 16, true],
    ['addrBytesPerPeer', p.addrBytesPerPeer, 0, 4_096, true]
  ])
}

/** The defaults overridden by `init`, validated (throws InvalidOverlayParamsError). */
export function createKademliaParams (init: Partial<KademliaParams> = {}): KademliaParams {
  const p = { ...DEFAULT_KADEMLIA_PARAMS, ...init }
  validateKademliaParams(p)
  return p
}

/** An Ed25519 peer id's multihash: identity code, length 36, the protobuf public key (4 + 32). */
export const PEER_ID_MULTIHASH_BYTES = 38
/** A sha2-256 multihash (a CID's key in the DHT): code, length, 32 bytes. */
export const CID_MULTIHASH_BYTES = 34

/** Bytes of a protobuf varint holding `n`. */
export function varintBytes (n: number): number {
  let bytes = 1
  while (n >= 0x80) {
    n = Math.floor(n / 0x80)
    bytes++
  }
  return bytes
}

/** A length-delimited protobuf field (tag, length, content). */
function field (contentBytes: number): number {
  return 1 + varintBytes(contentBytes) + contentBytes
}

/** One `Message.Peer` as it sits in closerPeers / providerPeers: id, addrs, connection type. */
export function peerEntryBytes (p: KademliaParams): number {
  return field(field(PEER_ID_MULTIHASH_BYTES) + p.addrBytesPerPeer + 2)
}

/**
 * One DHT message with its length prefix (kad-dht writes each as a varint-prefixed protobuf on its own
 * stream): the type (2 bytes), the key, and `peers` peer entries (closer and provider peers together).
 * Transport framing (Noise, yamux, multistream-select) is not counted, as the harness does not count it.
 */
export function dhtMessageBytes (p: KademliaParams, keyBytes: number, peers: number): number {
  const body = 2 + field(keyBytes) + peers * peerEntryBytes(p)
  return varintBytes(body) + body
}
