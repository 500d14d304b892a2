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
 * Delays are the network model's mean per pair; the tables are static (no churn): see overlay/README.md.
 */
import { capabilityKeys, type ProviderQuery } from '../../protocol/index.js'
import { lookupKeyFor } from '../../protocol/discovery.js'
import type { Place } from '../harness/network.js'
import type { Seed } from '../harness/prng.js'
import type { FleetNode, SimJob } from '../model.js'
import { KademliaModel } from '../overlay/kademlia.js'
import { percentiles, type Percentiles } from '../report/metrics.js'

export interface DiscoveryStats {
  /** `providers` lookups run (one per job). */
  lookups: number
  /** Lookups by capability key. */
  byKey: Record<string, number>
  /** Virtual time to the first provider and to the lookup's end, ms. */
  firstProviderMs: Percentiles
  timeMs: Percentiles
  /** DHT messages and bytes per lookup (requests and responses). */
  messagesPerLookup: number
  bytesPerLookup: number
  /** Mean hops and providers found per lookup. */
  hops: number
  providersFound: number
  /** Capability fetches after the lookup (request + response per provider found), per lookup. */
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

  const keys = input.jobs.map((j) => lookupKeyFor(queryForJob(j)))
  const wanted = new Set(keys)
  let provides = 0
  let announceMessages = 0
  let announceBytes = 0
  input.fleet.forEach((node, i) => {
    const held = capabilityKeys({ gpus: [{ model: node.model, vramMiB: node.vramMiB }], region: node.region })
    for (const key of held) {
      if (!wanted.has(key)) continue
      const r = kad.provide(i, key, { delay, at: 0 })
      provides++
      announceMessages += r.messages
      announceBytes += r.bytes
    }
  })

  const byKey: Record<string, number> = {}
  const first: number[] = []
  const time: number[] = []
  let messages = 0
  let bytes = 0
  let hops = 0
  let found = 0
  input.jobs.forEach((job, n) => {
    const key = keys[n] as string
    byKey[key] = (byKey[key] ?? 0) + 1
    const r = kad.findProviders(renters[n] as number, key, { delay, at: job.submitAt })
    if (r.firstProviderMs !== undefined) first.push(r.firstProviderMs)
    time.push(r.timeMs)
    messages += r.messages
    bytes += r.bytes
    hops += r.hops
    found += r.providers.length
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
    adFetchMessagesPerLookup: per(2 * found),
    announce: { keys: wanted.size, provides, messages: announceMessages, bytes: announceBytes, messagesPerNode: input.fleet.length === 0 ? 0 : announceMessages / input.fleet.length }
  }
}
