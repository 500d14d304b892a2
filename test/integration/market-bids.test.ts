import assert from 'node:assert/strict'
import type { Daemon } from '../../node/daemon.js'
import { ApiClient } from '../../node/api/client.js'
import type { BidLogEntry } from '../../node/market/bid-log.js'
import { untilJob } from '../helpers/network.js'
import { FINAL_STATUSES, useNetwork } from '../helpers/market-network.js'

/**
 * `GET /v1/bids` through real daemons (memory transport, the local API on loopback): two sellers of
 * the same GPU in one region at different floors, one buyer. The cheaper wins; the dearer's bid shows
 * lost on price, naming the winner.
 */
const MARKET = { leaseMs: 3_000, billingIntervalSec: 2, damping: false }
const L40S = 'NVIDIA L40S:46068'

describe('GET /v1/bids: what became of a provider\'s bids (in-process daemons, real API)', function () {
  this.timeout(120_000)
  const network = useNetwork([
    { region: 'eu-west', gpus: [L40S], priceFloor: 0.8, market: MARKET, api: true },
    { region: 'eu-west', gpus: [L40S], priceFloor: 1.4, market: MARKET, api: true },
    { sell: false, market: MARKET }
  ], { bootstrapCount: 1 })
  let cheap: Daemon
  let dear: Daemon
  let buyer: Daemon
  before(() => { [cheap, dear, buyer] = network.net.nodes as [Daemon, Daemon, Daemon] })

  const bidsOf = async (d: Daemon): Promise<BidLogEntry[]> => (await (await ApiClient.fromDataDir(d.options.dataDir)).get<{ bids: BidLogEntry[] }>('/v1/bids')).bids

  async function until (d: Daemon, job: string, done: (b: BidLogEntry) => boolean): Promise<BidLogEntry> {
    const deadline = Date.now() + 30_000
    for (;;) {
      const entry = (await bidsOf(d)).find((b) => b.job === job)
      if (entry !== undefined && done(entry)) return entry
      if (Date.now() > deadline) throw new Error(`no such bid entry on ${job}: ${JSON.stringify(entry)}`)
      await new Promise((resolve) => setTimeout(resolve, 100))
    }
  }

  it('the winner shows won, the loser lost on price with the winner named; prices in micros per GPU-hour, newest first', async () => {
    const market = buyer.market
    assert.ok(market !== undefined)
    const submit = async (): Promise<string> => (await market.submit({ command: ['/bin/sh', '-c', 'echo hi > out.txt'], outputs: ['out.txt'], gpus: 1, minVramGB: 40, maxPrice: 2, bidWindowMs: 1_000, maxRuntimeSec: 60 })).job
    const first = await submit()
    const view = await untilJob(buyer, first, (v) => FINAL_STATUSES.has(v.status))
    assert.equal(view.status, 'settled', view.reason)
    assert.equal(view.award?.provider, cheap.identity.peerId)

    const won = await until(cheap, first, (b) => b.outcome !== 'pending')
    const lost = await until(dear, first, (b) => b.outcome !== 'pending')
    const asked = (d: Daemon): number | undefined => view.bids.find((b) => b.provider === d.identity.peerId)?.price
    assert.deepEqual(Object.keys(won).sort(), ['at', 'bid', 'gpus', 'job', 'outcome', 'pricePerGpuHour'])
    assert.equal(won.outcome, 'won')
    assert.equal(won.bid, view.award?.bid)
    assert.equal(won.pricePerGpuHour, asked(cheap))
    assert.equal(won.gpus, 1)
    assert.equal(new Date(won.at).toISOString(), won.at)
    assert.deepEqual({ outcome: lost.outcome, reason: lost.reason, winner: lost.winner }, { outcome: 'lost', reason: 'price', winner: cheap.identity.peerId })
    assert.equal(lost.pricePerGpuHour, asked(dear))
    assert.ok(lost.pricePerGpuHour > won.pricePerGpuHour)

    // a second job: its bid comes first in the list
    const second = await submit()
    await untilJob(buyer, second, (v) => FINAL_STATUSES.has(v.status))
    await until(dear, second, (b) => b.outcome === 'lost')
    const list = await bidsOf(dear)
    assert.deepEqual(list.slice(0, 2).map((b) => b.job), [second, first])
  })

  it('needs the bearer token', async () => {
    const client = await ApiClient.fromDataDir(cheap.options.dataDir)
    const res = await fetch(`${client.url}/v1/bids`)
    assert.equal(res.status, 401)
    const wrong = await fetch(`${client.url}/v1/bids`, { headers: { authorization: 'Bearer nope' } })
    assert.equal(wrong.status, 401)
  })
})
