import assert from 'node:assert/strict'
import type { Daemon } from '../../node/daemon.js'
import { ApiClient } from '../../node/api/client.js'
import { readApiToken } from '../../node/api/credentials.js'
import { untilJob } from '../helpers/network.js'
import { FINAL_STATUSES, useNetwork } from '../helpers/market-network.js'
import { parsePrometheusText, sumOf, type Sample } from '../helpers/prom-text.js'

/**
 * The market metrics (node/metrics.ts) move where the events happen: a real job between in-process
 * daemons, each serving its local API, and /metrics scraped through it and parsed as Prometheus text.
 */
const MARKET = { leaseMs: 3_000, billingIntervalSec: 1, damping: false }
const L40S = 'NVIDIA L40S:46068'

function require_ (names: ReadonlySet<string>, wanted: readonly string[]): void {
  const missing = wanted.filter((w) => !names.has(w))
  assert.deepEqual(missing, [], `have: ${[...names].filter((n) => n.startsWith('libp2p') || n.startsWith('gossip')).join(' ')}`)
}

describe('market metrics through /metrics (in-process daemons, real API)', function () {
  this.timeout(120_000)
  const network = useNetwork([
    { region: 'eu-west', gpus: [L40S], priceFloor: 0.8, market: MARKET, api: true },
    { region: 'eu-west', gpus: [L40S], priceFloor: 1.4, market: MARKET, api: true },
    { sell: false, market: MARKET, api: true, libp2pMetrics: true }
  ], { bootstrapCount: 1 })
  let cheap: Daemon
  let dear: Daemon
  let buyer: Daemon
  before(() => { [cheap, dear, buyer] = network.net.nodes as [Daemon, Daemon, Daemon] })

  const scrape = async (d: Daemon): Promise<Sample[]> => {
    const client = await ApiClient.fromDataDir(d.options.dataDir)
    const res = await fetch(`${client.url}/metrics`, { headers: { authorization: `Bearer ${await readApiToken(d.options.dataDir) ?? ''}` } })
    assert.equal(res.status, 200)
    return parsePrometheusText(await res.text())
  }

  async function eventually (d: Daemon, check: (s: Sample[]) => boolean, what: string): Promise<Sample[]> {
    const deadline = Date.now() + 20_000
    for (;;) {
      const samples = await scrape(d)
      if (check(samples)) return samples
      if (Date.now() > deadline) throw new Error(`${what}: ${samples.filter((s) => s.name.startsWith('gpumesh_market') || s.name.startsWith('gpumesh_messages')).map((s) => `${s.name}${JSON.stringify(s.labels)} ${s.value}`).join('\n')}`)
      await new Promise((resolve) => setTimeout(resolve, 200))
    }
  }

  it('a job run and paid moves jobs seen, bids, awards won and lost, auction time, GPU-seconds, credits and job states', async () => {
    const market = buyer.market
    assert.ok(market !== undefined)
    const before = { cheap: await scrape(cheap), dear: await scrape(dear), buyer: await scrape(buyer) }
    assert.equal(sumOf(before.cheap, 'gpumesh_market_bids_sent_total'), 0)
    const { job } = await market.submit({ command: ['/bin/sh', '-c', 'sleep 1.5; echo hi > out.txt'], outputs: ['out.txt'], gpus: 1, minVramGB: 40, maxPrice: 2, bidWindowMs: 1_000, maxRuntimeSec: 60 })
    const view = await untilJob(buyer, job, (v) => FINAL_STATUSES.has(v.status))
    assert.equal(view.status, 'settled', view.reason)
    assert.equal(view.award?.provider, cheap.identity.peerId)

    const c = await eventually(cheap, (s) => sumOf(s, 'gpumesh_market_earned_microcredits_total') > 0, 'the winner earned nothing')
    assert.equal(sumOf(c, 'gpumesh_market_jobs_seen_total', { round: 'first' }), 1)
    assert.equal(sumOf(c, 'gpumesh_market_bids_sent_total'), 1)
    assert.equal(sumOf(c, 'gpumesh_market_awards_won_total'), 1)
    assert.ok(sumOf(c, 'gpumesh_market_gpu_seconds_sold_total') > 0)
    assert.equal(sumOf(c, 'gpumesh_market_jobs', { side: 'provider', state: 'running' }), 0)

    const d = await eventually(dear, (s) => sumOf(s, 'gpumesh_market_awards_lost_total') > 0, 'the loser saw no lost award')
    assert.equal(sumOf(d, 'gpumesh_market_bids_sent_total'), 1)
    assert.equal(sumOf(d, 'gpumesh_market_awards_lost_total', { reason: 'price' }), 1)
    assert.equal(sumOf(d, 'gpumesh_market_awards_won_total'), 0)

    const b = await eventually(buyer, (s) => sumOf(s, 'gpumesh_market_spent_microcredits_total') >= sumOf(c, 'gpumesh_market_earned_microcredits_total'), 'the buyer spent less than the winner earned')
    assert.equal(sumOf(b, 'gpumesh_market_auction_seconds_count'), 1)
    const auction = sumOf(b, 'gpumesh_market_auction_seconds_sum')
    assert.ok(auction >= 1 && auction < 10, `auction took ${auction} s with a 1 s bid window`)
    assert.equal(sumOf(b, 'gpumesh_market_jobs', { side: 'requester', state: 'settled' }), 1)
    const final = await eventually(cheap, (s) => sumOf(s, 'gpumesh_market_earned_microcredits_total') === sumOf(b, 'gpumesh_market_spent_microcredits_total'), 'the winner did not earn what the buyer spent')
    assert.ok(sumOf(final, 'gpumesh_market_earned_microcredits_total') > 0)
  })

  it('libp2p\'s own metrics share the registry where turned on (the buyer), and stay out where off', async () => {
    const names = new Set((await scrape(buyer)).map((s) => s.name))
    require_(names, ['libp2p_connection_manager_connections', 'libp2p_protocol_streams_total', 'libp2p_data_transfer_bytes_total', 'gossipsub_mesh_peer_count', 'gossipsub_score_avg', 'libp2p_kad_dht_operations_total', 'libp2p_kad_dht_routing_table_size'])
    assert.ok(names.has('gpumesh_market_auction_seconds_count'), 'gpumesh metrics are in the same registry')
    assert.ok(![...(await scrape(cheap)).map((s) => s.name)].some((n) => n.startsWith('libp2p_') || n.startsWith('gossipsub_')))
  })

  it('a job no one can host moves bids declined, by the bid policy\'s reason', async () => {
    const market = buyer.market
    assert.ok(market !== undefined)
    await market.submit({ command: ['/bin/true'], gpus: 1, minVramGB: 80, maxPrice: 2, bidWindowMs: 500, maxRuntimeSec: 60 })
    const s = await eventually(cheap, (x) => sumOf(x, 'gpumesh_market_bids_declined_total', { reason: 'VRAM' }) >= 1, 'no VRAM decline counted')
    assert.equal(sumOf(s, 'gpumesh_market_jobs_seen_total'), 2)
  })
})
