/**
 * Finds providers for a query (DESIGN §4): one DHT lookup of the most selective capability key,
 * then each provider's signed ad fetched over /gpumesh/capability/1.0.0, verified and filtered.
 */
import type { ReputationExplanation } from '../protocol/trust/reputation.js'
import type { ProbeSummary } from './trust/prober.js'
import type { PeerId } from '@libp2p/interface'
import { adMatches, capabilityKeyCid, lookupKeyFor, type CapabilityAd, type ProviderQuery } from '../protocol/index.js'
import type { GpumeshLibp2p } from './libp2p.js'
import { deadline } from './abort.js'
import type { Logger } from './logger.js'
import type { NodeMetrics } from './metrics.js'
import { CapabilityFetchError } from './services/capability.js'

export const FIND_TIMEOUT_MS = 10_000
export const FETCH_CONCURRENCY = 8

export interface FoundProvider {
  peerId: string
  /** The ad's CID. */
  cid: string
  ad: CapabilityAd
  /** Why this node scores the provider as it does (its reputation view; absent on a node without a market). */
  reputation?: ReputationExplanation
  /** This node's last probe of the provider since it started (node/trust/prober.ts), if any. */
  probe?: ProbeSummary
}

export interface FindResult {
  key: string
  providers: FoundProvider[]
  /** Providers listed on the DHT whose ad could not be fetched or was refused, with the reason. */
  failures: Array<{ peerId: string, code: string, message: string }>
  /** Providers whose ad was fetched but does not match the query. */
  filtered: number
  elapsedMs: number
}

export interface FindOptions {
  signal?: AbortSignal
  timeoutMs?: number
  /** This node's own ad, answered locally when it matches. */
  ownAd?: { cid: string, ad: CapabilityAd }
}

export async function findProviders (node: GpumeshLibp2p, query: ProviderQuery, log: Logger, metrics: NodeMetrics | undefined, options: FindOptions = {}): Promise<FindResult> {
  const started = performance.now()
  const key = lookupKeyFor(query)
  const overall = deadline(options.timeoutMs ?? FIND_TIMEOUT_MS, options.signal)
  const signal = overall.signal
  const self = node.peerId.toString()
  const providers: FoundProvider[] = []
  const failures: FindResult['failures'] = []
  let filtered = 0
  const seen = new Set<string>()
  const queue: PeerId[] = []
  let lookupDone = false
  const waiters: Array<() => void> = []
  const wake = (): void => { for (const resolve of waiters.splice(0)) resolve() }

  const consider = (peerId: string, cid: string, ad: CapabilityAd): void => {
    if (adMatches(ad, query)) providers.push({ peerId, cid, ad })
    else filtered++
  }
  if (options.ownAd !== undefined) {
    seen.add(self)
    consider(self, options.ownAd.cid, options.ownAd.ad)
  }

  const lookup = (async () => {
    try {
      // with no peers a DHT query can only wait for its timeout: a network of one answers locally
      if (node.getConnections().length === 0) return
      for await (const info of node.contentRouting.findProviders(capabilityKeyCid(key), { signal })) {
        const id = info.id.toString()
        if (seen.has(id)) continue
        seen.add(id)
        queue.push(info.id)
        wake()
      }
    } catch (err) {
      if (!signal.aborted) log.debug('find providers ended early', { key, error: err })
    } finally {
      lookupDone = true
      wake()
    }
  })()

  const worker = async (): Promise<void> => {
    while (true) {
      const peer = queue.shift()
      if (peer === undefined) {
        if (lookupDone) return
        await new Promise<void>((resolve) => { waiters.push(resolve) })
        continue
      }
      try {
        // fetch applies its own deadline (CAPABILITY_TIMEOUT_MS), so one slow provider cannot hold a
        // fetch slot for the whole query
        const opened = await node.services.capability.fetch(peer, { signal })
        consider(peer.toString(), opened.cid.toString(), opened.payload)
      } catch (err) {
        if (!(err instanceof CapabilityFetchError)) throw err
        failures.push({ peerId: peer.toString(), code: err.code, message: err.message })
      }
    }
  }
  try {
    await Promise.all([lookup, ...Array.from({ length: FETCH_CONCURRENCY }, worker)])
  } finally {
    overall.clear()
  }
  const elapsedMs = performance.now() - started
  metrics?.findProvidersSeconds.observe(elapsedMs / 1000)
  providers.sort((a, b) => a.peerId < b.peerId ? -1 : a.peerId > b.peerId ? 1 : 0)
  return { key, providers, failures, filtered, elapsedMs }
}
