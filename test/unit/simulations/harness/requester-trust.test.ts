/**
 * The harness requester gets what the daemon's requester always gets (node/market/market.ts): a
 * spotcheck seed, whatever the agreement audit says, and its location, from which bidders are estimated;
 * bidders it holds a connection to are measured on it (node/market/requester-rtt.ts), here at the network
 * model's mean round trip. So latency-aware awards behave in the simulator as in the daemon.
 */
import assert from 'node:assert/strict'
import { Harness, credits } from '../../../../simulations/harness/index.js'
import { countryNetwork, countryOfNodes } from '../../../../simulations/network/country-network.js'
import { runMarket } from '../../../../simulations/market/run-market.js'
import type { FleetNode, SimJob, Workload } from '../../../../simulations/model.js'
import { rttMatrix } from '../network/rtt-file.js'

const MIN = 60_000
const NODES = [{ id: 'peer:de', country: 'DE' }, { id: 'peer:jp', country: 'JP' }, { id: 'peer:buyer', country: 'FR' }]

/** DE near the buyer (FR), JP far and cheaper: who wins each of `jobs` latency-sensitive jobs, one after another. */
function nearAndFar (jobs: number, latencySensitive: boolean): { h: Harness, ids: string[] } {
  const h = new Harness({ seed: 5, network: (p) => countryNetwork(rttMatrix(), countryOfNodes(NODES), p) })
  h.provider('de', { region: 'eu-central', country: 'DE', gpus: { h100: 1 }, floor: credits(3) })
  h.provider('jp', { region: 'ap-east', country: 'JP', gpus: { h100: 1 }, floor: credits(2.5) })
  const buyer = h.requester('buyer', { region: 'eu-west', country: 'FR' })
  const ids: string[] = []
  for (let i = 0; i < jobs; i++) {
    h.at(h.scheduler.now() + i * 30 * MIN, () => { ids.push(buyer.submit({ gpus: 1, maxPrice: credits(4), maxRuntimeSec: 3600, latencySensitive }, { durationMs: 10 * MIN })) })
  }
  h.runUntilQuiet()
  return { h, ids }
}

describe('simulations: the harness requester trusts and measures as the daemon does', function () {
  this.timeout(60_000)

  it('latency-sensitive jobs go to the nearer provider, though the farther asks less; plain jobs to the cheaper', () => {
    const sensitive = nearAndFar(3, true)
    const winners = sensitive.ids.map((id) => sensitive.h.recorder.awards.find((a) => a.job === id)?.provider)
    // before the requester knew where it and its bidders are, every bidder scored at the unknown RTT and jp won
    assert.deepEqual(winners, ['peer:de', 'peer:de', 'peer:de'])
    const plain = nearAndFar(1, false)
    assert.equal(plain.h.recorder.awards[0]?.provider, 'peer:jp')
  })

  it('the first award is scored at the estimate; later bids of a provider it holds a connection to are measured at the model\'s round trip', () => {
    const { h, ids } = nearAndFar(2, true)
    const [first, second] = ids.map((id) => h.recorder.awards.find((a) => a.job === id))
    assert.equal(first?.rttSource, 'estimated')
    assert.equal(second?.rttSource, 'measured')
    assert.equal(second?.scoredRttMs, h.world.bus.meanRttMs('peer:buyer', 'peer:de'))
    assert.equal(second?.rttMs, second?.scoredRttMs)
    // the estimate is the RIPE Atlas table's, the same data the network model draws from
    assert.ok(first?.scoredRttMs !== undefined && first.scoredRttMs > 0)
  })

  it('a spotcheck job is spot-checked with the agreement audit off: every requester has its seed', () => {
    const h = new Harness({ seed: 3 })
    // each in a /16 of its own: replicas must be independent (protocol/trust/subnet.ts)
    ;['a', 'b', 'c'].forEach((name, i) => h.provider(name, { region: 'eu-west', gpus: { h100: 1 }, floor: credits(2), addrs: [`/ip4/10.${i + 1}.0.1/tcp/4001`] }))
    const buyer = h.requester('buyer', { region: 'eu-west' })
    assert.ok(buyer.agent.spotcheckSeed !== undefined && buyer.agent.spotcheckSeed.length === 32)
    assert.equal(buyer.agent.agreementAuditPerMille, undefined)
    const job = buyer.submit({ gpus: 1, maxPrice: credits(4), maxRuntimeSec: 3600, verification: { mode: 'spotcheck', perMille: 1000 } }, { durationMs: 10 * MIN })
    h.runUntilQuiet()
    // drawn (1000 ‰): the job ran on a second provider to compare
    const providers = new Set(h.recorder.awards.filter((a) => a.job === job).map((a) => a.provider))
    assert.equal(providers.size, 2, `awards: ${[...providers].join(', ')}`)
    assert.equal(h.recorder.jobEnding(job)?.status, 'settled')
  })

  it('the market run\'s renters have their seed with the agreement audit off, and the run reports the awards\' RTTs', () => {
    const fleet: FleetNode[] = ['a', 'b', 'c'].map((id) => ({ id, model: 'nvidia-h100-80gb-hbm3', gpuName: 'NVIDIA H100 80GB HBM3', gpus: 1, vramMiB: 81_559, country: 'DE', region: 'eu-west', cpuMilli: 1, memoryMiB: 1 }))
    const jobs: SimJob[] = [0, 1].map((i) => ({ id: `j${i}`, submitAt: i * 30 * MIN, durationMs: 10 * MIN, gpus: 1, gpuMilli: 1000, models: [], minVramGB: 0, tier: 'silver', residency: 'prefer', region: 'eu-west' }))
    const workload: Workload = { name: 'seed test', fleet, jobs, ownerWork: [], horizonMs: 2 * 60 * MIN, drainMs: 60 * MIN }
    const subnet = new Map(fleet.map((n, i) => [n.id, [`/ip4/10.${i + 1}.0.1/tcp/4001`]]))
    const run = runMarket(workload, { floorOf: () => credits(2), capOf: () => credits(4), verification: { mode: 'spotcheck', perMille: 1000 }, addrsOf: (n) => subnet.get(n.id) ?? [] })
    const renter = run.harness.requesters.get('renter-eu-west')
    assert.ok(renter?.agent.spotcheckSeed !== undefined)
    // each job drawn: two awards each
    assert.equal(run.harness.recorder.awards.length, 4)
    assert.equal(run.stats.awardRtt.awards, 4)
    assert.ok(run.stats.awardRtt.meanRttMs !== null && run.stats.awardRtt.meanRttMs > 0)
  })
})
