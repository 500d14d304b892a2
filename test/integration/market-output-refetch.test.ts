import assert from 'node:assert/strict'
import type { CID } from '../../crypto/index.js'
import type { Daemon } from '../../node/daemon.js'
import type { LedgerEntry } from '../../node/market/views.js'
import { startDaemon, untilJob, type NodeSpec, type TestNetwork } from '../helpers/network.js'
import { FINAL_STATUSES, TEST_GPU, useNetwork } from '../helpers/market-network.js'

/**
 * An output fetch cut by the provider's restart is tried again (protocol/README.md §7.8): the
 * provider stops while the requester fetches a receipt's outputs (its blob service is serving the
 * first of them), and starts again on the same data dir. The requester fetches again with back-off
 * within the lease, re-opens the exec stream for its final payment, and the job settles on the same
 * award, with nobody blamed and both ledgers agreeing — not `output-mismatch`.
 */
const MARKET = { leaseMs: 10_000, billingIntervalSec: 2 }
const SELLER: NodeSpec = { region: 'eu-west', gpus: [TEST_GPU], priceFloor: 1, market: MARKET }

describe('an output fetch cut by the provider\'s restart (in-process)', function () {
  this.timeout(120_000)
  let net: TestNetwork
  let seller: Daemon
  let requester: Daemon

  const network = useNetwork([SELLER, { sell: false, market: MARKET }], { announce: (nodes) => nodes.slice(0, 1) })
  before(() => {
    net = network.net
    ;[seller, requester] = net.nodes as [Daemon, Daemon]
  })

  const entryOf = async (daemon: Daemon, job: string): Promise<LedgerEntry | undefined> =>
    (await daemon.market!.ledger()).entries.find((e) => e.job === job)

  it('the fetch is tried again once the provider is back, and the job settles on the same award', async () => {
    const { job: id } = await requester.market!.submit({ command: ['/bin/sh', '-c', 'sleep 2; echo ok > out.txt'], outputs: ['out.txt'], maxRuntimeSec: 30, maxPrice: 3, bidWindowMs: 700 })
    await untilJob(requester, id, (v) => v.status === 'running')
    // the seller's first blob read once the job runs (it has no inputs: the output manifest, being
    // served) never comes: the seller stops instead, with the fetch under way, and starts again on its data dir
    let restarted: Promise<Daemon> | undefined
    const store = seller.node.services.blob.store
    assert.ok(store !== undefined)
    const get = store.get.bind(store)
    store.get = async (cid: CID) => {
      if (restarted !== undefined) return await get(cid)
      restarted = (async () => {
        await seller.stop()
        const again = await startDaemon(net.root, SELLER, {
          dataDir: seller.options.dataDir,
          dial: [net.bootstraps[0]!.addresses()[0] as string, requester.addresses()[0] as string]
        })
        net.all.push(again)
        return again
      })()
      return await new Promise<never>(() => {})
    }
    const done = await untilJob(requester, id, (v) => FINAL_STATUSES.has(v.status), 60_000)
    const events = done.events.map((e) => `${e.type}: ${e.text}`).join('\n')
    assert.ok(restarted !== undefined, 'the seller was never asked for the outputs')
    const again = await restarted
    assert.equal(done.status, 'settled', `${done.reason ?? ''}\n${events}`)
    assert.equal(done.round, 1, events)
    assert.ok(!done.events.some((e) => e.type === 'failure' || e.type === 're-auction'), events)
    assert.equal(done.receipt?.outputsValid, true)
    assert.deepEqual(requester.market!.requester.result(id)?.outputs.map((o) => o.path), ['out.txt'])
    // the final payment reached the restarted seller on the re-opened stream: both ledgers agree
    const spent = await entryOf(requester, id)
    assert.ok(spent?.state === 'settled', JSON.stringify(spent))
    let earned: LedgerEntry | undefined
    for (const deadline = Date.now() + 20_000; earned?.state !== 'settled' && Date.now() < deadline;) {
      await new Promise((resolve) => setTimeout(resolve, 100))
      earned = await entryOf(again, id)
    }
    assert.equal(earned?.state, 'settled', JSON.stringify(earned))
    assert.deepEqual([earned.award, earned.cumulative], [spent.award, spent.cumulative])
  })
})
