/**
 * Latency-aware routing over real TCP (issue 12): four in-process daemons on 127.0.0.1 (TCP, Noise,
 * yamux — the production stack), two equal providers and a requester in Germany. Provider `near`
 * says it is in Australia but the requester reaches it directly; provider `far` says it is in
 * Germany but the requester reaches it only through a delaying TCP proxy (+DELAY_MS each way; the
 * requester's connection gater refuses every other path to it). The estimates before measuring come
 * from the RIPE Atlas table (and point the wrong way); the measurement over the connections wins: a
 * `--latency-sensitive` job goes to `near`.
 */
import assert from 'node:assert/strict'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { multiaddr, type Multiaddr } from '@multiformats/multiaddr'
import type { PeerId } from '@libp2p/interface'
import { resolveConfig } from '../../node/config/load.js'
import { Daemon, type DaemonOptions } from '../../node/daemon.js'
import { silentLoggers } from '../../node/logger.js'
import { startBootstrap } from '../../bootstrap/role.js'
import { countryRttMs } from '../../protocol/market/rtt-estimate.js'
import { startDelayProxy, type DelayProxy } from '../helpers/delay-proxy.js'
import { untilJob } from '../helpers/network.js'

/** Added one way by the proxy: the far provider's RTT is at least twice this. */
const DELAY_MS = 150
const L4 = { name: 'NVIDIA L4', vramMiB: 23_034, count: 1 }

let counter = 0

function options (root: string, provider: Record<string, unknown>, gater?: DaemonOptions['libp2p']): Omit<DaemonOptions, 'role'> {
  const config = resolveConfig([{
    source: 'test',
    values: {
      listen: ['/ip4/127.0.0.1/tcp/0'],
      communityBootstrap: false,
      connections: { inboundPerSecond: 100_000, maxPendingInbound: 100_000, allow: ['/ip4/127.0.0.1'] },
      gossip: { allowColocation: true },
      probes: { enabled: false },
      provider: { detectGpus: false, ...provider }
    }
  }])
  return {
    dataDir: join(root, `node-${counter++}`),
    config,
    bootstrapPeers: [],
    loggers: silentLoggers,
    version: 'test',
    api: false,
    peerStore: 'memory',
    market: { damping: false },
    ...(gater !== undefined ? { libp2p: gater } : {})
  }
}

function port (d: Daemon): number {
  const addr = d.node.getMultiaddrs().find((ma) => ma.toString().includes('/tcp/'))
  assert.ok(addr !== undefined)
  return Number(addr.toString().split('/tcp/')[1]?.split('/')[0])
}

describe('latency-aware routing over TCP with a delayed link', function () {
  this.timeout(90_000)
  let root: string
  let proxy: DelayProxy | undefined
  const daemons: Daemon[] = []

  after(async () => {
    await Promise.all(daemons.map(async (d) => { await d.stop() }))
    await proxy?.close()
    if (root !== undefined) await rm(root, { recursive: true, force: true })
  })

  it('scores bidders at the table\'s estimate, then at their measured RTT: the nearer of two equal providers wins a --latency-sensitive job', async () => {
    root = await mkdtemp(join(tmpdir(), 'gpumesh-latency-'))
    const boot = await startBootstrap(options(root, {}))
    daemons.push(boot)
    const seller = { sell: true, gpus: [L4], priceFloor: 1 }
    const near = await Daemon.start({ ...options(root, { ...seller, region: 'oc', country: 'AU' }), role: 'node' })
    const far = await Daemon.start({ ...options(root, { ...seller, region: 'eu-central', country: 'DE' }), role: 'node' })
    daemons.push(near, far)
    const farId = far.identity.peerId
    const farPort = port(far)
    proxy = await startDelayProxy(farPort, DELAY_MS)
    const viaProxy = `/ip4/127.0.0.1/tcp/${proxy.port}/p2p/${farId}`
    // the requester reaches `far` only through the proxy: no dial to its own port, no connection from it
    const gater = {
      connectionGater: {
        denyDialMultiaddr: (ma: Multiaddr) => ma.toString().includes(`/tcp/${farPort}`),
        denyInboundEncryptedConnection: (peer: PeerId) => peer.toString() === farId
      }
    }
    const requester = await Daemon.start({ ...options(root, { sell: false, region: 'eu-central', country: 'DE' }, gater), role: 'node' })
    daemons.push(requester)
    const bootAddr = boot.addresses()[0] as string
    for (const d of [near, far, requester]) await d.node.dial(multiaddr(bootAddr))
    await requester.node.dial(multiaddr(near.addresses()[0] as string))
    await requester.node.dial(multiaddr(viaProxy))
    await near.node.dial(multiaddr(far.addresses()[0] as string))

    const market = requester.market
    assert.ok(market !== undefined)
    // both providers subscribed to the global market topic (where a job without regions goes), as the requester sees it
    for (let i = 0; i < 200; i++) {
      const subscribers = requester.node.services.pubsub.getSubscribers('gpumesh/2/market/global').map(String)
      if (subscribers.includes(near.identity.peerId) && subscribers.includes(farId)) break
      await new Promise((resolve) => setTimeout(resolve, 100))
    }
    const { job } = await market.submit({
      command: ['/bin/sh', '-c', 'true'], bidWindowMs: 3_000, maxRuntimeSec: 60, maxPrice: 5, latencySensitive: true
    })
    const view = await untilJob(requester, job, (v) => v.award !== undefined || v.status === 'failed' || v.status === 'expired', 60_000)
    const bidOf = (peer: string): { rttMs?: number, rttSource?: string, price: number } | undefined => view.bids.find((b) => b.provider === peer)
    const [nearBid, farBid] = [bidOf(near.identity.peerId), bidOf(farId)]
    assert.ok(nearBid !== undefined && farBid !== undefined, `bids: ${JSON.stringify(view.bids)}`)
    assert.equal(nearBid.price, farBid.price)

    // the estimates from the bids' countries are the table's, and point the wrong way
    const rtt = market.requester.agent.rtt
    assert.equal(rtt.entry(farId)?.estimatedMs, countryRttMs('DE', 'DE'))
    assert.equal(rtt.entry(near.identity.peerId)?.estimatedMs, countryRttMs('DE', 'AU'))
    assert.ok((countryRttMs('DE', 'DE') as number) < (countryRttMs('DE', 'AU') as number))

    // the measurements over the connections replaced them, and decided
    assert.equal(farBid.rttSource, 'measured')
    assert.equal(nearBid.rttSource, 'measured')
    assert.ok((farBid.rttMs as number) >= 2 * DELAY_MS, `far ${farBid.rttMs} ms`)
    assert.ok((nearBid.rttMs as number) < (farBid.rttMs as number), `near ${nearBid.rttMs} ms, far ${farBid.rttMs} ms`)
    assert.equal(view.award?.provider, near.identity.peerId, view.events.map((e) => e.text).join('\n'))
    await market.requester.cancel(job).catch(() => {})
  })
})
