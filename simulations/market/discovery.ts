/**
 * What discovery costs a renter, on the Kademlia model (overlay/kademlia.ts), kept apart from the award
 * path because that is what the daemon does:
 *
 * - Submitting a job does no DHT lookup: the job request is gossiped on its market topics and providers
 *   bid (node/market/requester.ts). The daemon asks the DHT only in `providers` queries — `gpumesh
 *   providers` / `GET /v1/providers` (node/daemon.ts `findProviders` → node/discovery.ts) and the
 *   requester's explanation of a job that got no bids (requester.ts `explain`, with the job's query:
 *   `queryFor` in node/daemon.ts, a region only for a strict single-region job).
 * - So this measures, per job, the `providers` query a buyer runs for it (the same query `explain` uses):
 *   GET_PROVIDERS for `lookupKeyFor(query)` from the renter's node, and the ad fetches that follow
 *   (a request and a response per provider found, node/discovery.ts fetches every one). It reports time to
 *   the first provider and to the end of the lookup, messages and bytes per lookup, and separately what
 *   announcing cost the providers (ADD_PROVIDER of the keys looked up: each provider that holds the key
 *   provides it once, at t = 0; the keys nobody looks up are announced too in the daemon, but cost the
 *   run nothing it measures).
 *
 * The search is the daemon's (node/discovery.ts, node/dht-providers.ts, protocol/README.md §7.4c), on the
 * same protocol/ decisions: the Kademlia model's GET_PROVIDERS lookup stops at k as kad-dht's does, each
 * answer taken whole; when it may have been cut (`lookupMayBeCut`) the renter reads its own records and
 * walks on (`ProviderWalk`: one GET_PROVIDERS to each of the k peers nearest the key not asked yet, until
 * each of them was asked); the providers' ads (capabilityAd) are filtered with `adMatches`, the search
 * stops at `limit` matches (`limitReached`) or the 10 s deadline (DEFAULT_FIND_TIMEOUT_MS), and
 * `answerCompleteness` says whether the answer is complete or "at least N". Ad fetches are counted, not
 * timed: the search's time is the lookup's and the walk's (a walk step lasts until its slowest answer).
 *
 * Delays are the network model's mean per pair; the tables are static (no churn): see overlay/README.md.
 */
import { DEFAULT_FIND_LIMIT, DEFAULT_FIND_TIMEOUT_MS, ProviderWalk, adMatches, answerCompleteness, capabilityKeys, createFindParams, limitReached, lookupMayBeCut, xorDistance, type CutReason, type FindParams, type ProviderQuery } from '../../protocol/index.js'
import { lookupKeyFor } from '../../protocol/discovery.js'
import type { CapabilityAd } from '../../protocol/messages/capability-ad.js'
import type { Place } from '../harness/network.js'
import { capabilityAd } from '../harness/payloads.js'
import type { Seed } from '../harness/prng.js'
import type { FleetNode, SimJob } from '../model.js'
import { kadIdOfCapabilityKey } from '../overlay/kad-id.js'
import { KademliaModel, type DelayFn, type IsUpFn } from '../overlay/kademlia.js'
import { percentiles, type Percentiles } from '../report/metrics.js'

export interface DiscoveryStats {
  /** `providers` lookups run (one per job). */
  lookups: number
  /** Lookups by capability key. */
  byKey: Record<string, number>
  /** Virtual time to the first provider and to the search's end (the lookup and the walk past k), ms. */
  firstProviderMs: Percentiles
  timeMs: Percentiles
  /** DHT messages and bytes per lookup (requests and responses, the walk's included). */
  messagesPerLookup: number
  bytesPerLookup: number
  /** Mean hops of the DHT's own lookup, and matching providers listed per search. */
  hops: number
  providersFound: number
  /** Mean providers the DHT's own lookup yielded (at most k: kad-dht stops there). */
  yieldedPerLookup: number
  /** The walk past k: GET_PROVIDERS it sent per lookup (0 where the lookup yielded fewer than k). */
  walkQueriesPerLookup: number
  /** Searches whose answer is complete (`answerCompleteness`), and the others by why they are only "at least N". */
  complete: number
  cut: Partial<Record<CutReason, number>>
  /** Capability fetches after the lookup (request + response per provider fetched), per lookup. */
  adFetchMessagesPerLookup: number
  /** The providers' announcements of the keys looked up. */
  announce: { keys: number, provides: number, messages: number, bytes: number, messagesPerNode: number }
}

/** The daemon's query for a job (node/daemon.ts `queryFor`): a region only for a strict single-region job. */
export function queryForJob (job: SimJob): ProviderQuery {
  return job.region !== undefined && job.residency === 'strict' ? { region: job.region } : {}
}

export interface DiscoveryInput {
  fleet: readonly FleetNode[]
  jobs: readonly SimJob[]
  /** A node's place on the bus (a fleet node's or a renter's peer id). */
  placeOfNode: (node: FleetNode) => Place
  placeOfRenter: (job: SimJob) => Place
  /** One-way delay between two places, ms (the network model's mean). */
  delay: (from: Place, to: Place) => number
  seed: Seed
  /** The searches' `--limit` (default DEFAULT_FIND_LIMIT, as the daemon's). */
  limit?: number
}

/** One search's result (`searchProviders`). */
export interface ProviderSearch {
  /** Matching providers listed (at most the limit), node indices in the order found. */
  listed: number[]
  /** Every provider heard of (matching or not). */
  heard: number
  yielded: number
  complete: boolean
  cut?: CutReason
  firstProviderMs: number | undefined
  timeMs: number
  hops: number
  messages: number
  bytes: number
  walkQueries: number
  /** Ads fetched (each a request and a response). */
  fetched: number
}

/**
 * The daemon's provider search for `key` from node `origin` at `at` on the model (module comment):
 * `adOf(i)` is node i's ad (undefined: not a provider), filtered with `adMatches(ad, query)`.
 */
export function searchProviders (kad: KademliaModel, origin: number, key: string, query: ProviderQuery, adOf: (node: number) => CapabilityAd | undefined, options: { delay: DelayFn, at: number, params: FindParams, isUp?: IsUpFn }): ProviderSearch {
  const { delay, at, params } = options
  const up = options.isUp !== undefined ? { isUp: options.isUp } : {}
  const deadline = at + DEFAULT_FIND_TIMEOUT_MS
  const k = params.k
  const heard = new Set<number>()
  const listed: number[] = []
  let matched = 0
  // the daemon fetches ads as providers come and stops fetching once `limit` match
  let fetchedAtLimit: number | undefined
  const add = (p: number): void => {
    if (p === origin || heard.has(p)) return
    heard.add(p)
    const ad = adOf(p)
    if (ad === undefined || !adMatches(ad, query)) return
    matched++
    if (listed.length < params.limit) listed.push(p)
    if (fetchedAtLimit === undefined && limitReached(matched, params)) fetchedAtLimit = heard.size
  }
  const r = kad.findProviders(origin, key, { delay, at, ...up })
  for (const p of r.answers.providers) add(p)
  const yielded = r.providers.length
  let messages = r.messages
  let bytes = r.bytes
  let now = at + r.timeMs
  let timedOut = now > deadline
  let pending = false
  let walkQueries = 0
  let closest: { found: number, answered: number } | undefined
  if (!timedOut && lookupMayBeCut(yielded, k)) {
    if (limitReached(matched, params)) pending = true
    else {
      for (const p of kad.providersAt(origin, key)) add(p)
      const keyId = kadIdOfCapabilityKey(key)
      const walk = new ProviderWalk<number>(k)
      const idOf = (i: number): string => kad.ids[i] as string
      const learn = (i: number): void => {
        if (i === origin || walk.has(idOf(i))) return
        walk.learn(idOf(i), xorDistance(kad.kadId(i), keyId), i)
      }
      // the lookup's answers, as node/dht-providers.ts takes them from kad-dht's events
      for (const i of r.answers.answered) { learn(i); walk.asking(idOf(i)) }
      // a peer that did not answer the lookup still counts among the nearest (outcome: not complete)
      for (const i of r.answers.failed) { learn(i); walk.failed(idOf(i)) }
      for (const i of r.answers.named) learn(i)
      // no answer to start from: the peers it is connected to (the model's table peers need no dial)
      if (walk.size === 0) for (const i of kad.tableOf(origin)) learn(i)
      for (;;) {
        const toAsk = walk.next()
        if (toAsk.length === 0) break
        if (limitReached(matched, params)) { pending = true; break }
        let stepEnd = now
        for (const id of toAsk) {
          walk.asking(id)
          const q = kad.queryProviders(origin, walk.info(id) as number, key, { delay, at: now, ...up })
          walkQueries++
          messages += q.messages
          bytes += q.bytes
          if (q.doneAt > deadline) { timedOut = true; stepEnd = deadline; continue }
          stepEnd = Math.max(stepEnd, q.doneAt)
          if (!q.ok) { walk.failed(id); continue }
          for (const c of q.closer) learn(c)
          for (const p of q.providers) add(p)
        }
        now = stepEnd
        if (timedOut) break
      }
      closest = walk.outcome()
    }
  }
  const completeness = answerCompleteness({ yielded, lookupFailed: false, ...(closest !== undefined ? { closest } : {}), timedOut, matched, pending }, params)
  return {
    listed,
    heard: heard.size,
    yielded,
    complete: completeness.complete,
    ...(!completeness.complete ? { cut: completeness.cut } : {}),
    firstProviderMs: r.firstProviderMs,
    timeMs: Math.min(now, deadline) - at,
    hops: r.hops,
    messages,
    bytes,
    walkQueries,
    fetched: fetchedAtLimit ?? heard.size
  }
}

export function discoveryCost (input: DiscoveryInput): DiscoveryStats {
  const places: Place[] = input.fleet.map(input.placeOfNode)
  const index = new Map<string, number>()
  places.forEach((p, i) => index.set(p.node, i))
  const renterIndex = (job: SimJob): number => {
    const p = input.placeOfRenter(job)
    let i = index.get(p.node)
    if (i === undefined) {
      i = places.length
      places.push(p)
      index.set(p.node, i)
    }
    return i
  }
  const renters = input.jobs.map(renterIndex)
  const kad = KademliaModel.build(places.map((p) => p.node), { seed: input.seed })
  const delay = (a: number, b: number): number => input.delay(places[a] as Place, places[b] as Place)
  const params = createFindParams({ limit: input.limit ?? DEFAULT_FIND_LIMIT, k: kad.params.k })
  // each provider's ad, as the search fetches it (only what adMatches reads matters)
  const ads: Array<CapabilityAd | undefined> = input.fleet.map((n, i) => capabilityAd(places[i]?.node ?? n.id, { region: n.region, country: n.country, gpus: {}, hardware: [{ name: n.gpuName, vramMiB: n.vramMiB, count: n.gpus }], floor: 0 }, 0))
  const held = input.fleet.map((n) => capabilityKeys({ gpus: [{ model: n.model, vramMiB: n.vramMiB }], region: n.region }))

  const keys = input.jobs.map((j) => lookupKeyFor(queryForJob(j)))
  const wanted = new Set(keys)
  let provides = 0
  let announceMessages = 0
  let announceBytes = 0
  input.fleet.forEach((_node, i) => {
    for (const key of held[i] as string[]) {
      if (!wanted.has(key)) continue
      const r = kad.provide(i, key, { delay, at: 0 })
      provides++
      announceMessages += r.messages
      announceBytes += r.bytes
    }
  })

  const byKey: Record<string, number> = {}
  const cut: Partial<Record<CutReason, number>> = {}
  const first: number[] = []
  const time: number[] = []
  let messages = 0
  let bytes = 0
  let hops = 0
  let found = 0
  let yielded = 0
  let walkQueries = 0
  let fetched = 0
  let complete = 0
  input.jobs.forEach((job, n) => {
    const key = keys[n] as string
    byKey[key] = (byKey[key] ?? 0) + 1
    const r = searchProviders(kad, renters[n] as number, key, queryForJob(job), (i) => ads[i], { delay, at: job.submitAt, params })
    if (r.firstProviderMs !== undefined) first.push(r.firstProviderMs)
    time.push(r.timeMs)
    messages += r.messages
    bytes += r.bytes
    hops += r.hops
    found += r.listed.length
    yielded += r.yielded
    walkQueries += r.walkQueries
    fetched += r.fetched
    if (r.complete) complete++
    else if (r.cut !== undefined) cut[r.cut] = (cut[r.cut] ?? 0) + 1
  })
  const lookups = input.jobs.length
  const per = (x: number): number => (lookups === 0 ? 0 : x / lookups)
  return {
    lookups,
    byKey: Object.fromEntries(Object.entries(byKey).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))),
    firstProviderMs: percentiles(first),
    timeMs: percentiles(time),
    messagesPerLookup: per(messages),
    bytesPerLookup: per(bytes),
    hops: per(hops),
    providersFound: per(found),
    yieldedPerLookup: per(yielded),
    walkQueriesPerLookup: per(walkQueries),
    complete,
    cut,
    adFetchMessagesPerLookup: per(2 * fetched),
    announce: { keys: wanted.size, provides, messages: announceMessages, bytes: announceBytes, messagesPerNode: input.fleet.length === 0 ? 0 : announceMessages / input.fleet.length }
  }
}
