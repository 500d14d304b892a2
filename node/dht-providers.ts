/**
 * Every provider of one DHT key, past kad-dht's k (protocol/README.md §7.4c). kad-dht's `findProviders`
 * returns once it has yielded k (`kBucketSize`) providers, and reads at most k from the local store. So:
 *
 * 1. the DHT's own lookup runs as before, its providers streamed to the caller as they come;
 * 2. when it may have stopped at k (`lookupMayBeCut`), the local store is read whole, the peers closest
 *    to the key are found (`getClosestPeers`: the same walk a provider's ADD_PROVIDER follows, so these
 *    are the peers holding the records), and each one the lookup did not already ask is sent one
 *    `GET_PROVIDERS`; a peer answers with every record it holds.
 *
 * Step 2 reaches two kad-dht 16 members that its public interface leaves out (`providers`, the local
 * record store, and `network.sendRequest`, its request/response client); `kadInternals` checks that they
 * exist and throws DhtLookupError('UNSUPPORTED_DHT') otherwise, so a kad-dht that moves them fails loudly.
 */
import { MessageType, type QueryEvent } from '@libp2p/kad-dht'
import type { AbortOptions, PeerId, PeerInfo } from '@libp2p/interface'
import type { CID } from 'multiformats/cid'
import { lookupMayBeCut, type SearchOutcome } from '../protocol/index.js'
import type { GpumeshLibp2p } from './libp2p.js'

export class DhtLookupError extends Error {
  readonly code: 'UNSUPPORTED_DHT'
  constructor (code: 'UNSUPPORTED_DHT', message: string) {
    super(message)
    this.name = 'DhtLookupError'
    this.code = code
  }
}

/** The kad-dht members step 2 uses, beyond its public `KadDHT` interface. */
interface KadInternals {
  routingTable: { kBucketSize: number }
  providers: { getProviders: (cid: CID, options?: AbortOptions) => Promise<PeerId[]> }
  network: { sendRequest: (to: PeerId, message: { type: MessageType, key: Uint8Array }, options?: AbortOptions) => AsyncIterable<QueryEvent> }
}

function kadInternals (dht: unknown): KadInternals {
  const d = dht as Partial<KadInternals> | undefined
  if (typeof d?.routingTable?.kBucketSize !== 'number' || typeof d.providers?.getProviders !== 'function' || typeof d.network?.sendRequest !== 'function') {
    throw new DhtLookupError('UNSUPPORTED_DHT', 'this @libp2p/kad-dht does not expose routingTable.kBucketSize, providers.getProviders and network.sendRequest (written for kad-dht 16)')
  }
  return d as KadInternals
}

/** The DHT's k (kBucketSize) on this node: its provider lookup stops at this many providers. */
export function dhtK (node: GpumeshLibp2p): number {
  return kadInternals(node.services.dht).routingTable.kBucketSize
}

export type DhtLookupOutcome = Pick<SearchOutcome, 'yielded' | 'lookupFailed' | 'closest'>

/**
 * Looks up `cid`'s providers, past k when the lookup may have been cut, calling `onProvider` once per
 * distinct provider other than this node (addresses are merged into the peer store first, so the
 * provider can be dialled). Resolves when done or when `signal` aborts (then with what it has).
 */
export async function lookupAllProviders (node: GpumeshLibp2p, cid: CID, onProvider: (peer: PeerId) => void, options: { signal: AbortSignal, onError?: (err: unknown) => void }): Promise<DhtLookupOutcome> {
  const kad = kadInternals(node.services.dht)
  const { signal } = options
  const self = node.peerId
  const seen = new Set<string>([self.toString()])
  const asked = new Set<string>()
  const target = cid.multihash.bytes
  const add = async (info: PeerInfo): Promise<void> => {
    const id = info.id.toString()
    if (seen.has(id)) return
    seen.add(id)
    if (info.multiaddrs.length > 0) await node.peerStore.merge(info.id, { multiaddrs: info.multiaddrs }, { signal })
    onProvider(info.id)
  }
  let yielded = 0
  let lookupFailed = false
  try {
    for await (const event of node.services.dht.findProviders(cid, { signal })) {
      if (event.name === 'PROVIDER') {
        yielded += event.providers.length
        for (const p of event.providers) await add(p)
      } else if (event.name === 'PEER_RESPONSE' && event.messageName === 'GET_PROVIDERS' && !event.from.equals(self)) {
        // the whole answer, not only what the lookup passes on before it stops
        asked.add(event.from.toString())
        for (const p of event.providers) await add(p)
      }
    }
  } catch (err) {
    if (signal.aborted) return { yielded, lookupFailed }
    lookupFailed = true
    options.onError?.(err)
  }
  if (!lookupMayBeCut(yielded, kad.routingTable.kBucketSize) || signal.aborted) return { yielded, lookupFailed }

  const closest: PeerId[] = []
  let answered = 0
  try {
    for (const id of await kad.providers.getProviders(cid, { signal })) await add({ id, multiaddrs: [] })
    for await (const event of node.services.dht.getClosestPeers(target, { signal })) {
      if (event.name === 'FINAL_PEER') closest.push(event.peer.id)
    }
    await Promise.all(closest.map(async (peer) => {
      if (peer.equals(self) || asked.has(peer.toString())) {
        answered++
        return
      }
      for await (const event of kad.network.sendRequest(peer, { type: MessageType.GET_PROVIDERS, key: target }, { signal })) {
        if (event.name !== 'PEER_RESPONSE') continue
        answered++
        for (const p of event.providers) await add(p)
      }
    }))
  } catch (err) {
    if (!signal.aborted) {
      lookupFailed = true
      options.onError?.(err)
    }
  }
  return { yielded, lookupFailed, closest: { found: closest.length, answered } }
}
