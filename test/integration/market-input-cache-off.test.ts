/**
 * `provider.inputCacheMiB: 0` over real daemons (libp2p memory transport; issue 12): the provider reads
 * the input it fetched while the job runs (pinned), and once the job has ended it keeps none of it, so
 * its next job fetches the input again and bids nothing as cached.
 */
import assert from 'node:assert/strict'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Daemon } from '../../node/daemon.js'
import { untilJob, type TestNetwork } from '../helpers/network.js'
import { FINAL_STATUSES, useNetwork } from '../helpers/market-network.js'
import { cidOfRaw } from '../../crypto/index.js'

const MARKET = { leaseMs: 3_000, billingIntervalSec: 2 }

describe('an input cache of 0 keeps no input once its job has ended (in-process)', function () {
  this.timeout(120_000)
  let net: TestNetwork
  let provider: Daemon
  let requester: Daemon
  let dir: string
  let input: string
  const bytes = new Uint8Array(64 * 1024).map((_, i) => (i * 31) % 251)
  const fetched: string[] = []

  const network = useNetwork([
    { region: 'eu', gpus: ['NVIDIA L4:23034'], priceFloor: 1, market: MARKET, provider: { inputCacheMiB: 0 } },
    { sell: false, market: MARKET }
  ], { announce: (nodes) => nodes.slice(0, 1) })

  before(async () => {
    net = network.net
    ;[provider, requester] = net.nodes as [Daemon, Daemon]
    const blob = provider.node.services.blob
    const fetch = blob.fetch.bind(blob)
    blob.fetch = async (...args: Parameters<typeof fetch>) => { fetched.push(args[1].toString()); return await fetch(...args) }
    dir = await mkdtemp(join(tmpdir(), 'gpumesh-input-cache-off-'))
    input = join(dir, 'input.bin')
    await writeFile(input, bytes)
  })
  after(async () => { await rm(dir, { recursive: true, force: true }) })

  it('evicts the input when the offer ends, and fetches it again for the next job', async () => {
    const cid = cidOfRaw(bytes)
    const spec = { gpus: 1, maxPrice: 2, bidWindowMs: 700, maxRuntimeSec: 10, inputs: [{ path: 'input.bin', file: input }], outputs: ['out.txt'], command: ['/bin/sh', '-c', 'wc -c < input.bin > out.txt'] }
    const blobs = provider.market!.blobs
    for (const round of [1, 2]) {
      const { job } = await requester.market!.submit(spec)
      const view = await untilJob(requester, job, (v) => FINAL_STATUSES.has(v.status), 60_000)
      assert.equal(view.status, 'settled', view.events.map((e) => `${e.type}: ${e.text}`).join('\n'))
      assert.equal(view.award?.cached, undefined, `round ${round}: nothing cached to bid`)
      assert.equal(fetched.filter((c) => c === cid.toString()).length, round, `round ${round}: fetched each time`)
      // the provider's offer ends a moment after the requester's settlement: then the input goes
      for (let i = 0; i < 100 && await blobs.has(cid); i++) await new Promise((resolve) => setTimeout(resolve, 100))
      assert.equal(await blobs.has(cid), false, `round ${round}: evicted once the job ended`)
      assert.deepEqual(blobs.heldInputs([cid]), [])
    }
  })
})
