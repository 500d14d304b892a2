/**
 * countryNetwork under the real scenario harness: a whole auction on measured delays, and a region
 * partition that keeps the cheaper provider's bid from reaching the buyer.
 */
import assert from 'node:assert/strict'
import { Harness, credits } from '../../../../simulations/harness/index.js'
import { UnknownNodeError, countryNetwork, countryOfNodes } from '../../../../simulations/network/country-network.js'
import type { RegionPartition } from '../../../../simulations/network/partition.js'
import { rttMatrix } from './rtt-file.js'

const MIN = 60_000
const NODES = [{ id: 'peer:de', country: 'DE' }, { id: 'peer:jp', country: 'JP' }, { id: 'peer:buyer', country: 'FR' }]

function market (partitions: RegionPartition[] = []): { h: Harness, job: string } {
  const h = new Harness({ seed: 5, network: (p) => countryNetwork(rttMatrix(), countryOfNodes(NODES), p, { partitions }) })
  h.provider('de', { region: 'eu-central', gpus: { h100: 1 }, floor: credits(3) })
  h.provider('jp', { region: 'ap-east', gpus: { h100: 1 }, floor: credits(2) })
  const job = h.requester('buyer', { region: 'eu-west' }).submit({ gpus: 1, maxPrice: credits(4), maxRuntimeSec: 3600 }, { durationMs: 10 * MIN })
  h.runUntilQuiet()
  return { h, job }
}

describe('simulations/network countryNetwork in the harness', () => {
  it('runs a whole auction on measured delays: the cheaper, farther provider wins and the job settles', () => {
    const { h, job } = market()
    assert.equal(h.recorder.count('bid').count, 2)
    const award = h.recorder.awards.find((a) => a.job === job)
    assert.equal(award?.provider, 'peer:jp')
    assert.equal(h.recorder.jobEnding(job)?.status, 'settled')
  })

  it('drops the far provider\'s bid across an eu | ap partition: the nearer one wins', () => {
    const start = new Harness().scheduler.now()
    const { h, job } = market([{ sideA: ['eu'], sideB: ['ap'], fromMs: start, untilMs: start + 24 * 60 * MIN }])
    assert.equal(h.recorder.count('bid').count, 1, 'the job request never reached jp')
    assert.ok(h.recorder.snapshot().lost >= 1, 'the dropped deliveries are counted lost')
    const award = h.recorder.awards.find((a) => a.job === job)
    assert.equal(award?.provider, 'peer:de')
    assert.equal(h.recorder.jobEnding(job)?.status, 'settled')
  })

  it('fails at the first message of a node it has no country for', () => {
    const h = new Harness({ network: (p) => countryNetwork(rttMatrix(), countryOfNodes(NODES), p) })
    h.provider('de', { region: 'eu-central', gpus: { h100: 1 }, floor: credits(3) })
    assert.throws(() => {
      h.requester('stranger', { region: 'eu-west' }).submit({ gpus: 1, maxPrice: credits(4), maxRuntimeSec: 3600 }, { durationMs: MIN })
      h.runUntilQuiet()
    }, (e: unknown) => e instanceof UnknownNodeError && e.node === 'peer:stranger')
  })
})
