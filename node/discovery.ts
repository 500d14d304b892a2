/**
 * Finds providers for a query (DESIGN §4): one DHT lookup of the most selective capability key,
 * continued past kad-dht's k when it may have been cut (node/dht-providers.ts), then each provider's
 * signed ad fetched over /gpumesh/capability/1.0.0, verified and filtered, up to `limit` matches. The
 * answer says whether it is complete or "at least N" (protocol/discovery-completeness.ts, §7.4c).
 */
import type { ReputationExplanation } from '../protocol/trust/reputation.js'
import type { ProbeSummary } from './trust/prober.js'
import type { PeerId } from '@libp2p/interface'
import { setMaxListeners } from 'node:events'
import { DEFAULT_FIND_TIMEOUT_MS, adMatches, answerCompleteness, capabilityKeyCid, createFindParams, limitReached, lookupKeyFor, type CapabilityAd, type CutReason, type ProviderQuery } from '../protocol/index.js'
import type { GpumeshLibp2p } from './libp2p.js'
import { deadline } from './abort.js'
import type { Logger } from './logger.js'
import type { NodeMetrics } from './metrics.js'
import { CapabilityFetchError } from './services/capability.js'
import { dhtK, lookupAllProviders, type DhtLookupOutcome } from './dht-providers.js'

export const FIND_TIMEOUT_MS = DEFAULT_FIND_TIMEOUT_MS
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
  /**
   * True when `providers` is every matching provider the DHT holds; false when it is only at least that
   * many, cut for the reason in `cut` (the limit, the deadline, the DHT's k, or a failed lookup).
   */
  complete: boolean
  cut?: CutReason
  /** The most providers this search would list (`--limit`). */
  limit: number
}

export interface FindOptions {
  signal?: AbortSignal
  timeoutMs?: number
  /** This node's own ad, answered locally when it matches. */
  ownAd?: { cid: string, ad: CapabilityAd }
  /** Stop once this many matching providers are listed (default DEFAULT_FIND_LIMIT; FindParamsError outside 1 … MAX_FIND_LIMIT). */
  limit?: number
}

export async function findProviders (node: GpumeshLibp2p, query: ProviderQuery, log: Logger, metrics: NodeMetrics | undefined, options: FindOptions = {}): Promise<FindResult> {
  const started = performance.now()
  const key = lookupKeyFor(query)
  // with no peers a DHT query can only wait for its timeout: a network of one answers locally
  const connected = node.getConnections().length > 0
  const params = createFindParams({ ...(options.limit !== undefined ? { limit: options.limit } : {}), ...(connected ? { k: dhtK(node) } : {}) })
  const overall = deadline(options.timeoutMs ?? FIND_TIMEOUT_MS, options.signal)
  const signal = overall.signal
  // the lookup also stops once the limit is met; ad fetches already running finish
  const lookupStop = new AbortController()
  setMaxListeners(Infinity, lookupStop.signal)
  const onOverall = (): void => { lookupStop.abort(signal.reason) }
  if (signal.aborted) onOverall()
  else signal.addEventListener('abort', onOverall, { once: true })
  const self = node.peerId.toString()
  const providers: FoundProvider[] = []
  const failures: FindResult['failures'] = []
  let filtered = 0
  const queue: PeerId[] = []
  let lookupDone = false
  let stopped = false
  let pending = false
  let inFlight = 0
  const waiters: Array<() => void> = []
  const wake = (): void => { for (const resolve of waiters.splice(0)) resolve() }

  const consider = (peerId: string, cid: string, ad: CapabilityAd): void => {
    if (!adMatches(ad, query)) {
      filtered++
      return
    }
    providers.push({ peerId, cid, ad })
    if (!stopped && limitReached(providers.length, params)) {
      stopped = true
      // the fetch that found this match is still counted in flight
      pending = queue.length > 0 || !lookupDone || inFlight > 1
      queue.length = 0
      lookupStop.abort()
      wake()
    }
  }
  if (options.ownAd !== undefined) consider(self, options.ownAd.cid, options.ownAd.ad)

  let outcome: DhtLookupOutcome = { yielded: 0, lookupFailed: false }
  const lookup = (async () => {
    try {
      if (!connected || stopped) return
      const onProvider = (peer: PeerId): void => {
        if (stopped) {
          pending = true
          return
        }
        queue.push(peer)
        wake()
      }
      outcome = await lookupAllProviders(node, capabilityKeyCid(key), onProvider, {
        signal: lookupStop.signal,
        onError: (err) => { log.debug('find providers ended early', { key, error: err }) }
      })
    } finally {
      lookupDone = true
      wake()
    }
  })()

  const worker = async (): Promise<void> => {
    while (true) {
      const peer = queue.shift()
      if (peer === undefined) {
        if (lookupDone || stopped) return
        await new Promise<void>((resolve) => { waiters.push(resolve) })
        continue
      }
      inFlight++
      try {
        // fetch applies its own deadline (CAPABILITY_TIMEOUT_MS), so one slow provider cannot hold a
        // fetch slot for the whole query
        const opened = await node.services.capability.fetch(peer, { signal })
        consider(peer.toString(), opened.cid.toString(), opened.payload)
      } catch (err) {
        if (!(err instanceof CapabilityFetchError)) throw err
        failures.push({ peerId: peer.toString(), code: err.code, message: err.message })
      } finally {
        inFlight--
      }
    }
  }
  try {
    await Promise.all([lookup, ...Array.from({ length: FETCH_CONCURRENCY }, worker)])
  } finally {
    signal.removeEventListener('abort', onOverall)
    overall.clear()
  }
  const timedOut = signal.aborted
  const completeness = answerCompleteness({ ...outcome, timedOut, matched: providers.length, pending: pending || (timedOut && (queue.length > 0 || !lookupDone)) }, params)
  const elapsedMs = performance.now() - started
  metrics?.findProvidersSeconds.observe(elapsedMs / 1000)
  providers.sort((a, b) => a.peerId < b.peerId ? -1 : a.peerId > b.peerId ? 1 : 0)
  if (providers.length > params.limit) providers.length = params.limit
  return {
    key,
    providers,
    failures,
    filtered,
    elapsedMs,
    complete: completeness.complete,
    ...(!completeness.complete ? { cut: completeness.cut } : {}),
    limit: params.limit
  }
}
