import assert from 'node:assert/strict'
import type { Daemon } from '../../node/daemon.js'
import type { LedgerEntry } from '../../node/market/views.js'
import { PropagationDelay } from '../../calibration/delay-transport.js'
import { startNetwork, untilJob, waitForAnnouncements, type TestNetwork } from '../helpers/network.js'
import { TEST_GPU } from '../helpers/market-network.js'

/**
 * A failed attempt's `job-cancel` reaches an honest provider (protocol/README.md §7.7 "Stream
 * lifecycle"): the requester half-closes the stream after it instead of resetting it (a reset may
 * throw away frames not yet written), so the provider ends the job `cancelled` when the cancel
 * arrives, rather than taking the stream's end for the requester gone, running on for a lease and
 * filing `nonpayment`; and its stream ends clean, with no reset.
 *
 * The failure is the lease rule: the network's one-way delay is raised above the lease while the job
 * runs, so the provider's heartbeats (sent on time) reach the requester too late and it fails the
 * attempt (`no-heartbeat`) with the stream alive. The billing interval is long, so no payment falls
 * due (and none is late) while the delay lasts.
 */
const LEASE_MS = 3_000
const MARKET = { leaseMs: LEASE_MS, billingIntervalSec: 120 }
/** Above the lease: no status gets through in time while it holds. */
const SLOW_MS = LEASE_MS + 1_000

describe('a failed attempt against an honest provider (in-process, delayed links)', function () {
  this.timeout(120_000)
  const delay = new PropagationDelay(0)
  let net: TestNetwork
  let seller: Daemon
  let requester: Daemon

  before(async () => {
    net = await startNetwork([
      { region: 'eu-west', gpus: [TEST_GPU], priceFloor: 1, market: MARKET },
      { sell: false, market: MARKET }
    ], { delay })
    ;[seller, requester] = net.nodes as [Daemon, Daemon]
    await waitForAnnouncements([seller], 60_000)
  })
  after(async () => {
    delay.set(0)
    await net?.stop()
  })

  const entryOf = async (daemon: Daemon, job: string): Promise<LedgerEntry | undefined> =>
    (await daemon.market!.ledger()).entries.find((e) => e.job === job)

  /** The seller's exec streams that ended in a reset from the requester (ExecChannel counts them by code). */
  async function resets (): Promise<number> {
    const metric = await seller.metrics.registry.getSingleMetric('gpumesh_exec_stream_errors_total')?.get()
    return metric?.values.find((v) => v.labels.code === 'RESET')?.value ?? 0
  }

  it('the provider hears the cancel on a half-closed stream: its job ends cancelled as the cancel arrives, with no nonpayment', async () => {
    const resetsBefore = await resets()
    const { job: id } = await requester.market!.submit({
      command: ['/bin/sh', '-c', 'sleep 60; echo late > out.txt'], outputs: ['out.txt'], maxRuntimeSec: 90, maxPrice: 3, bidWindowMs: 500
    })
    const running = await untilJob(requester, id, (v) => v.status === 'running' && v.events.some((e) => e.type === 'running'))
    const award = running.award?.cid
    assert.ok(award !== undefined)
    delay.set(SLOW_MS)
    // the lease runs out on the requester's side: the attempt fails with the stream still up
    const failed = await untilJob(requester, id, (v) => v.events.some((e) => e.type === 'failure'), 30_000)
    const failedAt = Date.now()
    delay.set(0)
    assert.match(failed.events.find((e) => e.type === 'failure')?.text ?? '', /no-heartbeat/)
    // the cancel left when the attempt failed and travels SLOW_MS; without it the provider would
    // notice the stream's end only then and run on for a whole lease before it gave up unpaid
    let earned: LedgerEntry | undefined
    while (earned === undefined || earned.state === 'open') {
      assert.ok(Date.now() < failedAt + SLOW_MS + LEASE_MS + 5_000, `the provider's award is still open: ${JSON.stringify(earned)}`)
      await new Promise((resolve) => setTimeout(resolve, 50))
      earned = await entryOf(seller, id)
    }
    const endedAfter = Date.now() - failedAt
    assert.equal(earned.award, award)
    assert.equal(earned.state, 'cancelled', JSON.stringify(earned))
    assert.ok(endedAfter < SLOW_MS + LEASE_MS / 2, `ended ${endedAfter} ms after the failure`)
    // the requester half-closed after its cancel (§7.7): the provider's stream ends clean, never in a reset
    await new Promise((resolve) => setTimeout(resolve, 1_000))
    assert.equal(await resets(), resetsBefore)
  })
})
