/**
 * The daemon's prober (node/trust/prober.ts) between real daemons (in-process libp2p): "a provider
 * claiming an H100 that computes like a laptop is flagged by probes" through the daemon's own path — a
 * bid on the buyer's job makes the buyer probe the bidder before the award when the probe fits in the
 * bid window, and right after the award when it does not; the flagged result is a failure in the
 * buyer's own reputation view, reaches the provider on the evidence topic, and shows with the provider
 * in `findProviders`; a provider that no longer answers is signed unreachable.
 */
import assert from 'node:assert/strict'
import type { Daemon } from '../../node/daemon.js'
import { probeBudgetMs } from '../../node/trust/prober.js'
import { untilJob, type TestNetwork } from '../helpers/network.js'
import { SHORT_LEASE_MARKET, useNetwork } from '../helpers/market-network.js'

const H100 = 'NVIDIA H100 80GB HBM3:81559'
const MARKET = { ...SHORT_LEASE_MARKET, damping: false }

describe('the prober: a declared H100 on this CPU is flagged by the daemon\'s own probes (in-process)', function () {
  this.timeout(180_000)
  let net: TestNetwork
  let liarEu: Daemon
  let liarUs: Daemon
  let buyer: Daemon
  let gone: Daemon

  const network = useNetwork([
    { region: 'eu-west', gpus: [H100], priceFloor: 1, market: MARKET },
    { region: 'us-east', gpus: [H100], priceFloor: 1, market: MARKET },
    { sell: false, market: MARKET, probes: { enabled: true } },
    { sell: false, market: MARKET }
  ], { announce: (nodes) => nodes.slice(0, 2) })
  before(() => {
    net = network.net
    ;[liarEu, liarUs, buyer, gone] = net.nodes as [Daemon, Daemon, Daemon, Daemon]
  })

  const job = (fields: Record<string, unknown>): Record<string, unknown> =>
    ({ command: ['/bin/sh', '-c', 'echo ok > out.txt'], outputs: ['out.txt'], maxRuntimeSec: 30, maxPrice: 3, residency: 'strict', ...fields })

  const until = async <T>(what: string, get: () => T | undefined | Promise<T | undefined>, timeoutMs = 30_000): Promise<T> => {
    for (const deadline = Date.now() + timeoutMs; ;) {
      const value = await get()
      if (value !== undefined) return value
      if (Date.now() > deadline) assert.fail(`timed out waiting for ${what}`)
      await new Promise((resolve) => setTimeout(resolve, 50))
    }
  }

  it('a bidder on a job whose window has room is probed before the award, flagged, and counted as a failure', async () => {
    const budget = probeBudgetMs('nvidia-h100-80gb-hbm3')
    const { job: id } = await buyer.market!.submit(job({ regions: ['eu'], bidWindowMs: budget + 4_000 }))
    const awarded = await untilJob(buyer, id, (v) => v.award !== undefined)
    const peer = liarEu.identity.peerId
    assert.equal(awarded.award?.provider, peer)
    const probe = buyer.prober?.lastProbe(peer)
    assert.ok(probe !== undefined, 'probed before the award')
    assert.equal(probe.reason, 'pre-award')
    assert.ok(probe.at <= awarded.award!.awardedAt, `probe signed at ${probe.at}, award at ${awarded.award!.awardedAt}`)
    assert.equal(probe.reading, 'flagged', JSON.stringify(probe))
    assert.equal(probe.flagged, true)
    assert.equal(probe.model, 'nvidia-h100-80gb-hbm3')
    assert.equal(probe.claimedDevice, 'gpu')
    assert.ok(probe.measuredMs > 2 * probe.expectedMs!)
    // the buyer's own view holds it as a failure, and the award's explanation shows it
    assert.equal(buyer.market!.requester.agent.reputation.own(peer)?.failed, 1)
    assert.equal(awarded.providerReputation?.own.failedCount, 1)
    // published: the provider hears the signed result about itself on the evidence topic
    await until('the probe result on the provider', async () => await liarEu.market!.store.getEnvelope(probe.cid))
  })

  it('a bidder whose probe does not fit the window is probed right after the award', async () => {
    const { job: id } = await buyer.market!.submit(job({ regions: ['us'], bidWindowMs: 1_000 }))
    const awarded = await untilJob(buyer, id, (v) => v.award !== undefined)
    const peer = liarUs.identity.peerId
    assert.equal(awarded.award?.provider, peer)
    const probe = await until('the probe after the award', () => buyer.prober?.lastProbe(peer))
    assert.equal(probe.reason, 'first')
    assert.ok(probe.at >= awarded.award!.awardedAt, `probe signed at ${probe.at}, award at ${awarded.award!.awardedAt}`)
    assert.equal(probe.reading, 'flagged', JSON.stringify(probe))
  })

  it('findProviders shows the last probe, and hearing of a probed provider again does not probe it before its interval', async () => {
    const peer = liarEu.identity.peerId
    const before = buyer.prober!.lastProbe(peer)!
    const found = await buyer.findProviders({ region: 'eu' }, { timeoutMs: 10_000 })
    const listed = found.providers.find((p) => p.peerId === peer)
    assert.ok(listed !== undefined, 'the eu liar is found')
    assert.equal(listed.probe?.cid, before.cid)
    assert.equal(listed.probe?.flagged, true)
    const { intervalMs } = buyer.prober!.schedule.params
    assert.ok(buyer.prober!.schedule.dueAt(peer)! >= buyer.prober!.schedule.probedAt(peer)! + intervalMs)
    await new Promise((resolve) => setTimeout(resolve, 500))
    assert.equal(buyer.prober!.lastProbe(peer)?.cid, before.cid, 'no second probe')
  })

  it('a provider that no longer answers is signed unreachable, a failure of uptime', async () => {
    const peer = gone.identity.peerId
    await gone.stop()
    const probe = await buyer.prober!.probeNow(peer, 'nvidia-h100-80gb-hbm3')
    assert.equal(probe.kind, 'ping')
    assert.equal(probe.reading, 'unreachable')
    assert.match(probe.detail ?? '', /^NO_ANSWER/)
    assert.equal(buyer.market!.requester.agent.reputation.own(peer)?.failed, 1)
  })
})
