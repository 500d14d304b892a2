/**
 * Every provider of one DHT key, past kad-dht's k (protocol/README.md §7.4c). kad-dht's `findProviders`
 * returns once it has yielded k (`kBucketSize`) providers, and reads at most k from the local store. So:
 *
 * 1. the DHT's own lookup runs as before, its providers streamed to the caller as they come;
 * 2. when it may have stopped at k (`lookupMayBeCut`), the local store is read whole and the walk goes
 *    on (protocol/provider-walk.ts): the k nearest known peers that the lookup did not ask are sent one
 *    `GET_PROVIDERS` each, their closer peers join the known ones, and so on until every one of the k
 *    peers nearest the key that answer has been asked. Those are the peers a provider's ADD_PROVIDER
 *    reached (its own walk toward the same key), and each answers with every record it holds.
 *
 * Step 2 reaches two kad-dht 16 members that its public interface leaves out (`providers`, the local
 * record store, and `network.sendRequest`, its request/response client); `kadInternals` checks that they
 * exist and throws DhtLookupError('UNSUPPORTED_DHT') otherwise, so a kad-dht that moves them fails loudly.
 */
import { createHash } from 'node:crypto'
import { MessageType, type PeerResponseEvent, type QueryEvent } from '@libp2p/kad-dht'
import type { AbortOptions, PeerId, PeerInfo } from '@libp2p/interface'
import type { CID } from 'multiformats/cid'
import { ProviderWalk, lookupMayBeCut, xorDistance, type SearchOutcome } from '../protocol/index.js'
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
  const k = kad.routingTable.kBucketSize
  const { signal } = options
  const self = node.peerId
  const seen = new Set<string>([self.toString()])
  const target = cid.multihash.bytes
  const keyId = kadId(target)
  // the walk's state (protocol/provider-walk.ts): every peer heard of, with its distance to the key, asked and failed
  const walk = new ProviderWalk<PeerInfo>(k)
  const learn = (info: PeerInfo): void => {
    const id = info.id.toString()
    if (info.id.equals(self) || walk.has(id)) return
    walk.learn(id, xorDistance(kadId(info.id.toMultihash().bytes), keyId), info)
  }
  const add = async (info: PeerInfo): Promise<void> => {
    const id = info.id.toString()
    if (seen.has(id)) return
    seen.add(id)
    if (info.multiaddrs.length > 0) await node.peerStore.merge(info.id, { multiaddrs: info.multiaddrs }, { signal })
    onProvider(info.id)
  }
  const answer = async (event: PeerResponseEvent): Promise<void> => {
    for (const p of event.closer) learn(p)
    for (const p of event.providers) await add(p)
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
        learn({ id: event.from, multiaddrs: [] })
        walk.asking(event.from.toString())
        await answer(event)
      } else if (event.name === 'QUERY_ERROR' && !event.from.equals(self)) {
        // a peer that did not answer still counts among the nearest: one of the k closest that
        // failed makes the answer "at least" (outcome), though the walk asks the next one in its place
        learn({ id: event.from, multiaddrs: [] })
        walk.failed(event.from.toString())
      }
    }
  } catch (err) {
    if (signal.aborted) return { yielded, lookupFailed }
    lookupFailed = true
    options.onError?.(err)
  }
  if (!lookupMayBeCut(yielded, k) || signal.aborted) return { yielded, lookupFailed }

  // past k: the local store whole, then a walk that asks each of the k closest peers GET_PROVIDERS once
  try {
    for (const id of await kad.providers.getProviders(cid, { signal })) await add({ id, multiaddrs: [] })
    if (walk.size === 0) for (const c of node.getConnections()) learn({ id: c.remotePeer, multiaddrs: [] })
    for (;;) {
      const toAsk = walk.next()
      if (toAsk.length === 0 || signal.aborted) break
      await Promise.all(toAsk.map(async (id) => {
        walk.asking(id)
        const peer = walk.info(id) as PeerInfo
        if (peer.multiaddrs.length > 0) await node.peerStore.merge(peer.id, { multiaddrs: peer.multiaddrs }, { signal })
        let answered = false
        for await (const event of kad.network.sendRequest(peer.id, { type: MessageType.GET_PROVIDERS, key: target }, { signal })) {
          if (event.name !== 'PEER_RESPONSE') continue
          answered = true
          await answer(event)
        }
        if (!answered) walk.failed(id)
      }))
    }
  } catch (err) {
    if (!signal.aborted) {
      lookupFailed = true
      options.onError?.(err)
    }
  }
  return { yielded, lookupFailed, closest: walk.outcome() }
}

/** A Kademlia id: sha2-256 of the key's or peer id's multihash bytes (§7.3). */
function kadId (bytes: Uint8Array): Uint8Array {
  return new Uint8Array(createHash('sha256').update(bytes).digest())
}
