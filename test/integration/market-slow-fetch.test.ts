import assert from 'node:assert/strict'
import { readFile } from 'node:fs/promises'
import type { Daemon } from '../../node/daemon.js'
import type { JobView } from '../../node/market/views.js'
import { untilJob, type TestNetwork } from '../helpers/network.js'
import { FINAL_STATUSES, sellerAndBuyer, useNetwork } from '../helpers/market-network.js'

/**
 * A receipt whose outputs take longer than one lease to fetch, over real libp2p between real daemons
 * (memory transport, yamux): the requester's blob fetches are held back, the bytes still travel for
 * real and are hash-checked. The lease stops at the receipt, and the provider allows for the fetch
 * before it expects the final payment (protocol/README.md §7.7), so nobody is blamed.
 */

const LEASE_MS = 1_000
const MARKET = { leaseMs: LEASE_MS, billingIntervalSec: 1 }
const FINAL = FINAL_STATUSES
/** 4 MiB of output: the provider allows 1 s (interval) + 1 s (lease) + 4 s (at 1 MiB/s) for the final payment. */
const OUTPUT_BYTES = 4 * 1024 * 1024
/** Held back before the manifest fetch: longer than two leases, well inside the provider's allowance. */
const FETCH_DELAY_MS = 2.5 * LEASE_MS

describe('a receipt whose outputs take longer than a lease to fetch (in-process)', function () {
  this.timeout(120_000)
  let net: TestNetwork
  let provider: Daemon
  let requester: Daemon

  const network = useNetwork(sellerAndBuyer(MARKET), { announce: (nodes) => nodes.slice(0, 1) })
  before(() => {
    net = network.net
    ;[provider, requester] = net.nodes as [Daemon, Daemon]
  })

  it('settles on the first provider, with no failure report on either side', async () => {
    const blob = requester.node.services.blob
    const fetch = blob.fetch.bind(blob)
    let fetches = 0
    let heldMs = 0
    blob.fetch = async (...args: Parameters<typeof fetch>) => {
      // only the first fetch (the manifest) is held back: the job's inputs are none
      if (fetches++ === 0) {
        const t = Date.now()
        await new Promise((resolve) => setTimeout(resolve, FETCH_DELAY_MS))
        heldMs = Date.now() - t
      }
      return await fetch(...args)
    }
    try {
      const { job: id } = await requester.market!.submit({
        gpus: 1,
        maxPrice: 2,
        bidWindowMs: 700,
        maxRuntimeSec: 60,
        outputs: ['out.bin'],
        command: ['/bin/sh', '-c', `head -c ${OUTPUT_BYTES} /dev/zero > out.bin`]
      })
      const view: JobView = await untilJob(requester, id, (v) => FINAL.has(v.status), 60_000)
      const events = view.events.map((e) => `${e.type}: ${e.text}`).join('\n')
      assert.ok(!view.events.some((e) => e.type === 'failure' || e.type === 're-auction'), events)
      assert.equal(view.status, 'settled', events)
      assert.equal(view.award?.attempt, 1, events)
      assert.equal(view.receipt?.outputsValid, true, events)
      assert.ok(heldMs >= FETCH_DELAY_MS - 5, `the fetch was held ${heldMs} ms`)
      // the outputs arrived whole
      const out = requester.market!.requester.result(id)?.outputs.find((o) => o.path === 'out.bin')
      assert.ok(out !== undefined, events)
      assert.equal((await readFile(out.file)).byteLength, OUTPUT_BYTES)
      // the provider was paid in full and did not stop for non-payment
      const spent = (await requester.market!.ledger()).entries.find((e) => e.job === id)
      let earned = (await provider.market!.ledger()).entries.find((e) => e.job === id)
      for (let i = 0; i < 50 && earned?.state !== 'settled'; i++) {
        await new Promise((resolve) => setTimeout(resolve, 100))
        earned = (await provider.market!.ledger()).entries.find((e) => e.job === id)
      }
      assert.ok(spent !== undefined && earned !== undefined)
      assert.equal(earned.state, 'settled', JSON.stringify(earned))
      assert.equal(earned.cumulative, spent.cumulative)
    } finally {
      blob.fetch = fetch
    }
  })
})
