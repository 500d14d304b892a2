import assert from 'node:assert/strict'
import type { Daemon } from '../../node/daemon.js'
import type { JobView } from '../../node/market/views.js'
import { DEFAULT_CLOCK_SKEW_MS } from '../../protocol/index.js'
import { untilJob, type TestNetwork } from '../helpers/network.js'
import { FINAL_STATUSES, SHORT_LEASE_MARKET, TEST_GPU, useNetwork } from '../helpers/market-network.js'

/**
 * Providers whose clocks are off (protocol/README §5.4, "When a provider may bid"): each times the bid
 * window from when it received the job, opened no later than the job's `issuedAt` + the skew allowance
 * by its own clock. A provider 5 s ahead or behind bids on a 2 s window and can win and run the job;
 * one 120 s ahead sees the window closed long ago (beyond the allowance) and does not bid; one 120 s
 * behind ignores the job as FUTURE_DATED.
 */
const GPU = TEST_GPU
const MARKET = SHORT_LEASE_MARKET
const FINAL = FINAL_STATUSES
const skewed = (ms: number) => () => Date.now() + ms

describe('providers with skewed clocks (in-process)', function () {
  this.timeout(180_000)
  let net: TestNetwork
  let ahead5: Daemon
  let behind5: Daemon
  let ahead120: Daemon
  let behind120: Daemon
  let requester: Daemon

  const network = useNetwork([
    // the two far-off clocks ask the least: they would win if they bid
    { region: 'eu-west', gpus: [GPU], priceFloor: 1.5, market: MARKET, now: skewed(5_000) },
    { region: 'eu-west', gpus: [GPU], priceFloor: 2, market: MARKET, now: skewed(-5_000) },
    { region: 'eu-west', gpus: [GPU], priceFloor: 0.5, market: MARKET, now: skewed(120_000) },
    { region: 'eu-west', gpus: [GPU], priceFloor: 0.5, market: MARKET, now: skewed(-120_000) },
    { sell: false, market: MARKET }
  ])
  before(() => {
    net = network.net
    ;[ahead5, behind5, ahead120, behind120, requester] = net.nodes as [Daemon, Daemon, Daemon, Daemon, Daemon]
  })

  const until = untilJob

  it('providers 5 s ahead and 5 s behind bid on a 2 s window; one 5 s ahead wins and the job settles', async () => {
    const futureBefore = await rejections(behind120, 'FUTURE_DATED')
    const { job: id } = await requester.market!.submit({
      command: ['/bin/sh', '-c', 'echo ok > out.txt'], outputs: ['out.txt'], maxRuntimeSec: 30, maxPrice: 3, bidWindowMs: 2_000
    })
    const view = await until(requester, id, (v) => FINAL.has(v.status))
    const bidders = new Set(view.bids.map((b) => b.provider))
    const name = (d: Daemon): string => d.node.peerId.toString()
    assert.ok(bidders.has(name(ahead5)), `the provider 5 s ahead did not bid: ${JSON.stringify(view.bids)}`)
    assert.ok(bidders.has(name(behind5)), `the provider 5 s behind did not bid: ${JSON.stringify(view.bids)}`)
    // 120 s ahead: the job is fresh (not expired) but its window closed by the allowance long ago
    assert.ok(120_000 > DEFAULT_CLOCK_SKEW_MS + 2_000)
    assert.ok(!bidders.has(name(ahead120)), 'the provider 120 s ahead bid on a window that closed beyond the skew allowance')
    // 120 s behind: the job is issued beyond the allowance in its future
    assert.ok(!bidders.has(name(behind120)), 'the provider 120 s behind bid on a job it should see as future-dated')
    assert.ok(await rejections(behind120, 'FUTURE_DATED') > futureBefore, 'the provider 120 s behind ignored the job as FUTURE_DATED')
    assert.equal(view.status, 'settled', view.reason)
    assert.equal(view.award?.provider, name(ahead5), `the cheapest provider in time should win: ${JSON.stringify(view.bids)}`)
  })
})

async function rejections (daemon: Daemon, reason: string): Promise<number> {
  const metric = await daemon.metrics.messagesRejected.get()
  return metric.values.filter((v) => v.labels.reason === reason).reduce((n, v) => n + v.value, 0)
}
