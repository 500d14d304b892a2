/**
 * simulations/market/discovery.ts: a job's `providers` lookup on the Kademlia model, with the query the
 * daemon would use (node/daemon.ts queryFor: a region only for a strict single-region job).
 */
import assert from 'node:assert/strict'
import type { FleetNode, SimJob } from '../../../../simulations/model.js'
import { discoveryCost, queryForJob, searchProviders } from '../../../../simulations/market/discovery.js'
import { DEFAULT_KADEMLIA_PARAMS } from '../../../../simulations/overlay/kad-params.js'
import { KademliaModel } from '../../../../simulations/overlay/kademlia.js'
import { kadIdOfCapabilityKey } from '../../../../simulations/overlay/kad-id.js'
import { capabilityAd } from '../../../../simulations/harness/payloads.js'
import { compareWalkPeers, createFindParams, xorDistance, type CapabilityAd, type WalkPeer } from '../../../../protocol/index.js'

const node = (i: number): FleetNode => ({ id: `n${i}`, model: i % 3 === 0 ? 'tesla-t4' : 'nvidia-a100-sxm4-80gb', gpuName: 'x', gpus: 1, vramMiB: i % 3 === 0 ? 15_360 : 81_920, country: 'DE', region: i % 2 === 0 ? 'eu-west' : 'us-east', cpuMilli: 1, memoryMiB: 1 })
const job = (id: string, over: Partial<SimJob> = {}): SimJob =>
  ({ id, submitAt: 0, durationMs: 60_000, gpus: 1, gpuMilli: 1000, models: [], minVramGB: 0, tier: 'silver', residency: 'prefer', ...over })
const FLEET = Array.from({ length: 60 }, (_, i) => node(i))

describe('simulations: discovery cost (the providers lookup)', () => {
  it('asks what the daemon asks: a region only for a strict single-region job', () => {
    assert.deepEqual(queryForJob(job('a')), {})
    assert.deepEqual(queryForJob(job('b', { region: 'eu-west' })), {})
    assert.deepEqual(queryForJob(job('c', { region: 'eu-west', residency: 'strict' })), { region: 'eu-west' })
  })

  it('one lookup per job, by capability key; providers announce only the keys looked up; each lookup finds providers', () => {
    const jobs = [job('a'), job('b', { submitAt: 1_000 }), job('c', { region: 'eu-west', residency: 'strict' })]
    const d = discoveryCost({
      fleet: FLEET,
      jobs,
      placeOfNode: (n) => ({ node: `peer:${n.id}`, region: n.region }),
      placeOfRenter: (j) => ({ node: `peer:renter-${j.region ?? 'global'}`, region: j.region ?? 'eu-west' }),
      delay: () => 10,
      seed: 1
    })
    assert.equal(d.lookups, 3)
    assert.deepEqual(d.byKey, { 'region/eu-west': 1, 'vram/8': 2 })
    // every node has ≥ 8 GB (vram/8), the 30 in eu-west also announce region/eu-west
    assert.equal(d.announce.keys, 2)
    assert.equal(d.announce.provides, 60 + 30)
    assert.ok(d.announce.messages > 0)
    assert.equal(d.firstProviderMs.n, 3)
    // past k, as the daemon: both vram/8 lookups list all 60 nodes, region/eu-west its 30 (protocol/README.md §7.4c)
    assert.equal(d.providersFound, (60 + 60 + 30) / 3)
    assert.equal(d.complete, 3)
    assert.deepEqual(d.cut, {})
    // 61 nodes: every table holds every node, so one round of queries (10 ms each way) answers
    assert.equal(d.hops, 1)
    assert.equal(d.firstProviderMs.p50, 20)
    assert.ok(d.messagesPerLookup >= 2)
    assert.equal(d.adFetchMessagesPerLookup, 2 * d.providersFound)
  })

  it('a key with more than k providers: the lookup yields k, the walk past k lists every one, complete', () => {
    const fleet = Array.from({ length: 80 }, (_, i) => node(i))
    const input = {
      fleet,
      jobs: [job('a')],
      placeOfNode: (n: FleetNode) => ({ node: `peer:${n.id}`, region: n.region }),
      placeOfRenter: () => ({ node: 'peer:renter-global', region: 'eu-west' }),
      delay: () => 10,
      seed: 3
    }
    const d = discoveryCost(input)
    const k = DEFAULT_KADEMLIA_PARAMS.k
    assert.ok(fleet.length > k)
    // kad-dht's own lookup stops at k; the search goes on to every provider of vram/8
    assert.equal(d.yieldedPerLookup, k)
    assert.equal(d.providersFound, 80)
    assert.equal(d.complete, 1)
    assert.ok(d.walkQueriesPerLookup > 0)
    assert.equal(d.adFetchMessagesPerLookup, 2 * 80)
  })

  it('a limit below the providers: "at least N", cut at limit, and no more ads fetched than it takes', () => {
    const fleet = Array.from({ length: 80 }, (_, i) => node(i))
    const d = discoveryCost({
      fleet,
      jobs: [job('a')],
      placeOfNode: (n) => ({ node: `peer:${n.id}`, region: n.region }),
      placeOfRenter: () => ({ node: 'peer:renter-global', region: 'eu-west' }),
      delay: () => 10,
      seed: 3,
      limit: 30
    })
    assert.equal(d.providersFound, 30)
    assert.equal(d.complete, 0)
    assert.deepEqual(d.cut, { limit: 1 })
    assert.ok(d.adFetchMessagesPerLookup <= 2 * 80)
  })

  it('the search filters the fetched ads as the daemon does (adMatches): a region key lists only that region', () => {
    const fleet = Array.from({ length: 80 }, (_, i) => node(i))
    const s = discoveryCost({
      fleet,
      jobs: [job('a', { region: 'us-east', residency: 'strict' })],
      placeOfNode: (n) => ({ node: `peer:${n.id}`, region: n.region }),
      placeOfRenter: () => ({ node: 'peer:renter-us-east', region: 'us-east' }),
      delay: () => 10,
      seed: 4
    })
    assert.deepEqual(s.byKey, { 'region/us-east': 1 })
    assert.equal(s.providersFound, 40)
    assert.equal(s.complete, 1)
  })

  it('the same inputs give the same numbers', () => {
    const input = { fleet: FLEET, jobs: [job('a')], placeOfNode: (n: FleetNode) => ({ node: n.id, region: n.region }), placeOfRenter: () => ({ node: 'r', region: 'eu-west' }), delay: () => 7, seed: 'x' }
    assert.deepEqual(discoveryCost(input), discoveryCost(input))
  })
})

describe('simulations: the provider search past k on a walking network (searchProviders)', () => {
  // small tables (4 cells × 5 peers) over 300 nodes, so lookups walk and k = 5 cuts them
  const ids = Array.from({ length: 300 }, (_, i) => `n${i}`)
  const delay = (a: number, b: number): number => 5 + ((Math.min(a, b) * 7919 + Math.max(a, b) * 104729) % 50)
  const key = 'vram/80'
  const providers = Array.from({ length: 14 }, (_, i) => i * 20)
  const build = (): KademliaModel => {
    const kad = KademliaModel.build(ids, { seed: 'walk', params: { k: 5, prefixLength: 2 } })
    for (const p of providers) kad.provide(p, key, { delay })
    return kad
  }
  const ad = (i: number): CapabilityAd | undefined => providers.includes(i) ? capabilityAd(ids[i] as string, { region: 'eu-west', gpus: { h100: 1 }, floor: 0 }, 0) : undefined
  const params = createFindParams({ k: 5 })

  it('the lookup yields k = 5; the walk lists all 14, complete — the old model stopped at 5', () => {
    const kad = build()
    const origin = 299
    assert.equal(kad.findProviders(origin, key, { delay }).providers.length, 5)
    const s = searchProviders(kad, origin, key, {}, ad, { delay, at: 0, params })
    assert.equal(s.yielded, 5)
    assert.deepEqual([...s.listed].sort((a, b) => a - b), providers)
    assert.equal(s.complete, true)
    assert.ok(s.walkQueries > 0)
    assert.ok(s.timeMs > 0)
  })

  it('one of the k peers nearest the key down: the next nearest answers in its place, but the answer is "at least N" (cut at k)', () => {
    const kad = build()
    const origin = 299
    const keyId = kadIdOfCapabilityKey(key)
    // the record holder nearest the key among the peers the lookup's answers name (so the search hears of it
    // whether or not it is down; a peer only the searcher's own table holds, failing, is never heard of)
    const named = kad.findProviders(origin, key, { delay }).answers.named
    const dist = (i: number): WalkPeer => ({ id: ids[i] as string, distance: xorDistance(kad.kadId(i), keyId) })
    const nearest = named.filter((i) => !providers.includes(i) && kad.providersAt(i, key).length > 0).sort((a, b) => compareWalkPeers(dist(a), dist(b)))[0] as number
    assert.ok(nearest !== undefined)
    const s = searchProviders(kad, origin, key, {}, ad, { delay, at: 0, params, isUp: (n) => n !== nearest })
    assert.equal(s.complete, false)
    assert.equal(s.cut, 'k')
    // the others still hold every record: all listed (the down peer's are its copies)
    assert.ok(s.listed.length >= 5)
  })
})
