/**
 * Data-aware placement over real daemons (libp2p memory transport; issue 12, protocol/README §5.4
 * `cached`, §5.6 "Cached inputs"): two providers alike in price, hardware and region, and two
 * requesters. The first requester's job fetches a 2 MiB input to its winner, which keeps it in its
 * blob store. The second requester, who knows neither provider, submits a job with the same input
 * file: the provider holding it bids `cached`, wins over the equal-price one that does not, runs
 * without fetching the input again, and the job view shows what was cached and the time it saved.
 */
import assert from 'node:assert/strict'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Daemon } from '../../node/daemon.js'
import { untilJob, type TestNetwork } from '../helpers/network.js'
import { FINAL_STATUSES, useNetwork } from '../helpers/market-network.js'
import { cachedText } from '../../cli/job-commands.js'

const MARKET = { leaseMs: 3_000, billingIntervalSec: 2 }
const INPUT_BYTES = 2 * 1024 * 1024

describe('cached inputs: the provider holding a job\'s input wins and does not fetch it again (in-process)', function () {
  this.timeout(180_000)
  let net: TestNetwork
  let providers: Daemon[]
  let first: Daemon
  let second: Daemon
  let dir: string
  let input: string
  /** CIDs each provider fetched from a requester, by peer id. */
  const fetched = new Map<string, string[]>()
  /** The provider that won the first job and holds its input since. */
  let firstHolder = ''

  // room for one 2 MiB input and not two: a second input evicts the first unless it is pinned
  const network = useNetwork([
    { region: 'eu', gpus: ['NVIDIA L4:23034'], priceFloor: 1, market: MARKET, provider: { inputCacheMiB: 3 } },
    { region: 'eu', gpus: ['NVIDIA L4:23034'], priceFloor: 1, market: MARKET, provider: { inputCacheMiB: 3 } },
    { sell: false, market: MARKET },
    { sell: false, market: MARKET }
  ], { announce: (nodes) => nodes.slice(0, 2) })

  before(async () => {
    net = network.net
    const [p1, p2, r1, r2] = net.nodes as [Daemon, Daemon, Daemon, Daemon]
    providers = [p1, p2]
    first = r1
    second = r2
    for (const p of providers) {
      const blob = p.node.services.blob
      const fetch = blob.fetch.bind(blob)
      const log: string[] = []
      fetched.set(p.identity.peerId, log)
      blob.fetch = async (...args: Parameters<typeof fetch>) => { log.push(args[1].toString()); return await fetch(...args) }
    }
    dir = await mkdtemp(join(tmpdir(), 'gpumesh-input-cache-'))
    input = join(dir, 'input.bin')
    await writeFile(input, new Uint8Array(INPUT_BYTES).map((_, i) => (i * 7919) % 251))
  })
  after(async () => { await rm(dir, { recursive: true, force: true }) })

  const spec = (): Record<string, unknown> => ({
    gpus: 1,
    maxPrice: 2,
    bidWindowMs: 1_000,
    maxRuntimeSec: 10,
    inputs: [{ path: 'input.bin', file: input }],
    outputs: ['out.txt'],
    command: ['/bin/sh', '-c', 'wc -c < input.bin > out.txt']
  })

  it('the second job goes to the provider holding its input, bid as cached, and is not fetched again', async () => {
    const { job: one } = await first.market!.submit(spec())
    const v1 = await untilJob(first, one, (v) => FINAL_STATUSES.has(v.status), 60_000)
    assert.equal(v1.status, 'settled', v1.events.map((e) => `${e.type}: ${e.text}`).join('\n'))
    const holder = v1.award!.provider
    firstHolder = holder
    const other = providers.find((p) => p.identity.peerId !== holder)!.identity.peerId
    assert.equal(v1.award!.cached, undefined, 'nobody held the input for the first job')
    assert.ok(v1.bids.every((b) => b.cached === undefined))
    const holderFetches = fetched.get(holder)!
    assert.equal(holderFetches.length, 1, `the first winner fetched the input once: ${holderFetches.join(', ')}`)

    const { job: two } = await second.market!.submit(spec())
    const v2 = await untilJob(second, two, (v) => FINAL_STATUSES.has(v.status), 60_000)
    const events = v2.events.map((e) => `${e.type}: ${e.text}`).join('\n')
    assert.equal(v2.status, 'settled', events)
    assert.equal(v2.bids.length, 2, events)
    assert.equal(v2.award!.provider, holder, events)
    assert.deepEqual(v2.award!.cached, { paths: ['input.bin'], savedSec: 2 })
    const [mine, theirs] = [v2.bids.find((b) => b.provider === holder)!, v2.bids.find((b) => b.provider === other)!]
    assert.equal(mine.cached, 1)
    assert.equal(theirs.cached, undefined)
    assert.equal(mine.price, theirs.price, 'an equal price: the cached input decided it')
    assert.ok(mine.effectivePrice! < theirs.effectivePrice!, `${mine.effectivePrice} vs ${theirs.effectivePrice}`)
    assert.equal(holderFetches.length, 1, `the holder fetched nothing for the second job: ${holderFetches.join(', ')}`)
    assert.deepEqual(fetched.get(other), [], 'the other provider never ran a job')
    assert.ok(v2.receipt?.outputsValid, events)
    assert.equal(cachedText(v2.award!.cached!), 'input.bin (≈ 2s of transfer saved at 1 MiB/s)')
  })

  it('an input a bid says is cached stays cached until the award, even when another input arrives meanwhile', async () => {
    // the holder of the input from the first case
    const holderId = firstHolder
    const holder = providers.find((p) => p.identity.peerId === holderId)!
    const holderFetches = fetched.get(holderId)!
    const before = holderFetches.length
    const { job } = await first.market!.submit(spec())
    // the holder's cached bid is in: now another job's 2 MiB input lands in its cache (over the 3 MiB cap)
    await untilJob(first, job, (v) => v.bids.some((b) => b.provider === holderId && b.cached === 1), 10_000)
    const other = await holder.market!.blobs.put(new Uint8Array(INPUT_BYTES).map((_, i) => (i * 104729) % 241))
    await holder.market!.blobs.keepInput(other.cid, INPUT_BYTES)
    const v = await untilJob(first, job, (x) => FINAL_STATUSES.has(x.status), 60_000)
    const events = v.events.map((e) => `${e.type}: ${e.text}`).join('\n')
    assert.equal(v.status, 'settled', events)
    assert.equal(v.award!.provider, holderId, events)
    assert.deepEqual(v.award!.cached, { paths: ['input.bin'], savedSec: 2 })
    assert.equal(holderFetches.length, before, `the holder fetched its cached input again: ${holderFetches.join(', ')}`)
    // the offer over, the pin is gone: the cap evicts the least recently used now (the other input)
    assert.equal(holder.market!.blobs.heldInputs([other.cid]).length, 0)
  })
})
