import assert from 'node:assert/strict'
import type { Daemon } from '../../node/daemon.js'
import type { LedgerEntry } from '../../node/market/views.js'
import { DEFAULT_MIN_REQUESTER_TRUST } from '../../protocol/market/requester-view.js'
import { untilJob, type TestNetwork } from '../helpers/network.js'
import { SHORT_LEASE_MARKET, TEST_GPU, useNetwork } from '../helpers/market-network.js'

/**
 * Issue 11: a requester that stops paying is reported on `gpumesh/2/evidence`, and a provider that only
 * heard the report — from a reporter it trusts, because that reporter once bought from it and paid —
 * gives the requester's next job no bid, while an honest requester's job still gets bids.
 *
 * Providers: A (floor 1 cr/GPU-h, so it wins the bad requester's job) and B (floor 2.5). Requesters: X
 * (stops paying: it vanishes for A — the link cut both ways while the job runs — the requester-gone-with-work-unpaid
 * ending) and H (honest).
 */
const MARKET = { ...SHORT_LEASE_MARKET, damping: false }
/** Peers X may no longer reach in either direction: how X vanishes from A (a requester that drops the connection reconnects and resumes, §7.7). */
const cutFromX = new Set<string>()
const xGater = {
  denyDialPeer: (peer: { toString: () => string }) => cutFromX.has(peer.toString()),
  denyInboundEncryptedConnection: (peer: { toString: () => string }) => cutFromX.has(peer.toString())
}
const idOf = (d: Daemon): string => d.node.peerId.toString()

async function until<T> (what: string, get: () => Promise<T | undefined> | T | undefined, timeoutMs = 30_000, why?: () => Promise<string>): Promise<T> {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const v = await get()
    if (v !== undefined && v !== false) return v
    if (Date.now() > deadline) assert.fail(`timed out waiting for ${what}${why === undefined ? '' : `: ${await why()}`}`)
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
}

describe('requesters that stop paying are reported and refused (in-process)', function () {
  this.timeout(240_000)
  let net: TestNetwork
  let a: Daemon
  let b: Daemon
  let x: Daemon
  let h: Daemon

  const network = useNetwork([
    { region: 'eu-west', gpus: [TEST_GPU], priceFloor: 1, market: MARKET },
    { region: 'eu-west', gpus: [TEST_GPU], priceFloor: 2.5, market: MARKET },
    { sell: false, market: MARKET, connectionGater: xGater },
    { sell: false, market: MARKET }
  ], { announce: (nodes) => nodes.slice(0, 2) })
  before(() => {
    net = network.net
    ;[a, b, x, h] = net.nodes as [Daemon, Daemon, Daemon, Daemon]
  })

  const submit = async (who: Daemon, command: string): Promise<string> => (await who.market!.submit({
    command: ['/bin/sh', '-c', command], outputs: ['out.txt'], maxRuntimeSec: 60, maxPrice: 3, bidWindowMs: 1_000
  })).job
  const earned = async (who: Daemon, job: string): Promise<LedgerEntry | undefined> => (await who.market!.ledger()).entries.find((e) => e.job === job)

  it('B trusts A as a reporter once A bought from B and paid', async () => {
    const job = await submit(a, 'echo paid > out.txt')
    await untilJob(a, job, (v) => v.status === 'settled', 60_000)
    await until('B\'s ledger to settle', async () => (await earned(b, job))?.state === 'settled')
    assert.deepEqual(b.market!.provider.requesters.own(idOf(a)), { ok: 1, failed: 0 })
    assert.ok(b.market!.provider.requesters.trustIn(idOf(a)) > 0)
  })

  it('A reports X, which vanished with work unpaid; B hears it and refuses X\'s next job; H still gets bids', async () => {
    const first = await submit(x, 'sleep 30; echo late > out.txt')
    const running = await untilJob(x, first, (v) => v.status === 'running', 60_000)
    assert.equal(running.award?.provider, idOf(a), 'the cheaper provider A should win X\'s job')
    // X vanishes for A: the link is cut both ways (X cannot re-open its stream) and the connection dropped
    cutFromX.add(idOf(a))
    await x.node.hangUp(a.node.peerId)
    await until('A to stop X\'s job unpaid', async () => (await earned(a, first))?.state === 'stopped-unpaid', 30_000, async () => JSON.stringify({ a: await earned(a, first), status: a.market!.provider.status(), conns: a.node.getConnections().map((c) => c.remotePeer.toString()), x: idOf(x) }))
    assert.deepEqual(a.market!.provider.requesters.own(idOf(x)), { ok: 0, failed: 1 })
    // B never dealt with X: what it knows comes from A's nonpayment report on the evidence topic
    const heard = await until('B to hear A\'s report', () => {
      const e = b.market!.provider.requesters.explain(idOf(x))
      return e.others.trusted > 0 ? e : undefined
    })
    assert.equal(heard.own.failedCount + heard.own.okCount, 0)
    assert.equal(heard.others.top[0]?.reporter, idOf(a))
    assert.ok(heard.score < DEFAULT_MIN_REQUESTER_TRUST, `X scores ${heard.score} at B`)

    const next = await submit(x, 'echo again > out.txt')
    await until('B to refuse X\'s job request', () => b.market!.provider.status().refused.find((r) => r.requester === idOf(x)))
    const refused = b.market!.provider.status().refused.find((r) => r.requester === idOf(x))
    assert.equal(refused?.reason, 'LOW_TRUST')
    assert.equal(b.status().refusedRequesters?.some((r) => r.requester === idOf(x)), true)

    const honest = await submit(h, 'echo honest > out.txt')
    const awarded = await untilJob(h, honest, (v) => v.award !== undefined, 60_000)
    assert.ok(awarded.bids.length >= 1)
    // X's job drew no bid from either provider
    const view = x.market!.requester.view(next)
    assert.ok(view !== undefined)
    assert.equal(view.bids.filter((bid) => bid.provider === idOf(b)).length, 0)
    assert.equal(view.bids.length, 0, `bids for X: ${JSON.stringify(view.bids)}`)
    assert.equal(b.market!.provider.status().refused.some((r) => r.requester === idOf(h)), false)
  })
})
