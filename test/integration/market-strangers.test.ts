import assert from 'node:assert/strict'
import { CID, Identity, cidOfValue } from '../../crypto/index.js'
import type { Daemon } from '../../node/daemon.js'
import type { JobView, LedgerEntry } from '../../node/market/views.js'
import { marketTopic, sealMessage } from '../../protocol/index.js'
import { untilJob, type TestNetwork } from '../helpers/network.js'
import { FINAL_STATUSES, SHORT_LEASE_MARKET, TEST_GPU, useNetwork } from '../helpers/market-network.js'

/**
 * Issue 9, bug 10, over real libp2p: three throw-away identities underbid every round and never
 * answer the exec stream (no node holds their keys: the award cannot even be delivered). Each costs
 * the job one lease, but none uses up its attempts: the honest provider's job completes.
 */
const GPU = TEST_GPU
const MARKET = SHORT_LEASE_MARKET
const FINAL = FINAL_STATUSES

describe('throw-away identities that underbid and never answer (in-process)', function () {
  this.timeout(180_000)
  let net: TestNetwork
  let requester: Daemon
  let attacker: Daemon

  const network = useNetwork([
    { region: 'eu-west', gpus: [GPU], priceFloor: 1, market: MARKET },
    { sell: false, market: MARKET },
    { sell: false, market: MARKET }
  ])
  before(() => {
    net = network.net
    requester = net.nodes[1] as Daemon
    attacker = net.nodes[2] as Daemon
  })

  const strangers = [1, 2, 3].map((i) => {
    const seed = new Uint8Array(32).fill(23)
    seed[0] = i
    return new Identity(seed)
  })

  /** A fresh bid from each stranger for the job's current round, 1–3 micros per GPU-hour. */
  const bidsFor = (job: CID, round: number): Uint8Array[] => {
    const now = Date.now()
    return strangers.map((signer, i) => sealMessage(signer, 'bid', {
      v: 1, issuedAt: now, expiresAt: now + 60_000, job, provider: signer.peerId, price: i + 1,
      gpus: [`GPU-stranger-${i}-${round}`], model: 'nvidia-l40s', vramMiB: 46_068, region: 'eu-west', startBy: now + 1_000,
      ad: cidOfValue({ stranger: i, round }).cid
    }).bytes)
  }

  it('three strangers no-show in turn, and the honest provider\'s job still settles', async () => {
    const { job: id } = await requester.market!.submit({
      command: ['/bin/sh', '-c', 'echo ok > out.txt'], outputs: ['out.txt'], maxRuntimeSec: 30, maxPrice: 3, bidWindowMs: 1_500
    })
    const jobCid = CID.parse(id)
    const bidOn = new Set<number>()
    let view: JobView | undefined
    // bid in every round the requester opens, as soon as it opens it
    while (view === undefined || !FINAL.has(view.status)) {
      view = requester.market!.requester.view(id)
      if (view !== undefined && view.status === 'bidding' && !bidOn.has(view.round)) {
        bidOn.add(view.round)
        for (const bytes of bidsFor(jobCid, view.round)) await attacker.node.services.pubsub.publish(marketTopic(), bytes).catch(() => {})
      }
      await new Promise((resolve) => setTimeout(resolve, 50))
    }
    const done = await untilJob(requester, id, (v) => FINAL.has(v.status))
    const timeline = done.events.map((e) => `${e.type}: ${e.text}`).join('\n')
    assert.equal(done.status, 'settled', `${done.reason ?? ''}\n${timeline}`)
    assert.equal(done.award?.provider, net.nodes[0]?.identity.peerId, 'the honest provider ran it')
    // every stranger won a round and no-showed
    const failures = done.events.filter((e) => e.type === 'failure')
    assert.deepEqual(failures.map((e) => e.peer), strangers.map((s) => s.peerId), timeline)
    assert.ok(failures.every((e) => e.text.startsWith('no-show')), timeline)
    // the buyer's ledger holds every award it sent: three failed at 0, one settled
    const mine = (await requester.market!.ledger()).entries.filter((e: LedgerEntry) => e.job === id && e.role === 'requester')
    assert.deepEqual(mine.map((e) => e.state).sort(), ['failed', 'failed', 'failed', 'settled'], JSON.stringify(mine))
  })
})
