/**
 * simulations/market/discovery.ts: a job's `providers` lookup on the Kademlia model, with the query the
 * daemon would use (node/daemon.ts queryFor: a region only for a strict single-region job).
 */
import assert from 'node:assert/strict'
import type { FleetNode, SimJob } from '../../../../simulations/model.js'
import { discoveryCost, queryForJob } from '../../../../simulations/market/discovery.js'
import { DEFAULT_KADEMLIA_PARAMS } from '../../../../simulations/overlay/kad-params.js'

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
    assert.ok(d.providersFound >= 1 && d.providersFound <= DEFAULT_KADEMLIA_PARAMS.k)
    // 61 nodes: every table holds every node, so one round of queries (10 ms each way) answers
    assert.equal(d.hops, 1)
    assert.equal(d.firstProviderMs.p50, 20)
    assert.ok(d.messagesPerLookup >= 2)
    assert.equal(d.adFetchMessagesPerLookup, 2 * d.providersFound)
  })

  it('the same inputs give the same numbers', () => {
    const input = { fleet: FLEET, jobs: [job('a')], placeOfNode: (n: FleetNode) => ({ node: n.id, region: n.region }), placeOfRenter: () => ({ node: 'r', region: 'eu-west' }), delay: () => 7, seed: 'x' }
    assert.deepEqual(discoveryCost(input), discoveryCost(input))
  })
})
