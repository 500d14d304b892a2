import assert from 'node:assert/strict'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { GossipsubMessage } from '@libp2p/gossipsub'
import type { ConnectionGater, PeerId } from '@libp2p/interface'
import type { Daemon } from '../../node/daemon.js'
import { isRoutableMarketTopic } from '../../node/gossip-router.js'
import { EVIDENCE_TOPIC, marketTopic, openMessage } from '../../protocol/index.js'
import { STRANGER_JOB_RATE } from '../../protocol/trust/budget.js'
import { startDaemon } from '../helpers/network.js'
import { SHORT_LEASE_MARKET, TEST_GPU } from '../helpers/market-network.js'

/**
 * Issue 12: a bootstrap peer is a gossip router (node/gossip-router.ts). A provider and a requester that
 * may connect to the bootstrap peer only (libp2p's connection gater refuses every other peer, both ways)
 * still hear each other's gossip: the job request reaches the provider, relayed by the bootstrap peer, on
 * the global topic and on a region topic the bootstrap peer joined because the provider did.
 */
describe('a bootstrap peer routes the market and evidence topics (in-process)', function () {
  this.timeout(120_000)
  let root: string
  let bootstrap: Daemon
  let provider: Daemon
  let requester: Daemon

  before(async () => {
    root = await mkdtemp(join(tmpdir(), 'gpumesh-router-'))
    bootstrap = await startDaemon(root, {}, { role: 'bootstrap' })
    const only = bootstrap.node.peerId.toString()
    const gater: ConnectionGater = {
      denyDialPeer: async (peer: PeerId) => peer.toString() !== only,
      denyInboundEncryptedConnection: async (peer: PeerId) => peer.toString() !== only,
      denyOutboundEncryptedConnection: async (peer: PeerId) => peer.toString() !== only
    }
    const dial = [bootstrap.addresses()[0] as string]
    provider = await startDaemon(root, { region: 'eu-west', gpus: [TEST_GPU], priceFloor: 1, market: SHORT_LEASE_MARKET }, { dial, connectionGater: gater })
    requester = await startDaemon(root, { sell: false, market: SHORT_LEASE_MARKET }, { dial, connectionGater: gater })
  })

  after(async () => {
    for (const d of [requester, provider, bootstrap]) await d?.stop().catch(() => {})
    await rm(root, { recursive: true, force: true })
  })

  async function until (what: string, done: () => boolean, timeoutMs = 20_000): Promise<void> {
    const started = Date.now()
    while (!done()) {
      if (Date.now() - started > timeoutMs) assert.fail(`${what} within ${timeoutMs} ms`)
      await new Promise((resolve) => setTimeout(resolve, 50))
    }
  }

  /** Submit a job the provider will not bid on (below its floor) and wait until the provider accepts its request from gossip. */
  async function heardVia (fields: Record<string, unknown>): Promise<{ topic: string, from: string }> {
    const seen: Array<{ id: string, topic: string, from: string }> = []
    const listener = (evt: CustomEvent<GossipsubMessage>): void => {
      try {
        const opened = openMessage(evt.detail.msg.data, 'job-request', { now: Date.now() })
        seen.push({ id: opened.cid.toString(), topic: evt.detail.msg.topic, from: evt.detail.propagationSource.toString() })
      } catch {}
    }
    provider.node.services.pubsub.addEventListener('gossipsub:message', listener)
    try {
      const { job } = await requester.market!.submit({ command: ['/bin/true'], maxRuntimeSec: 30, maxPrice: 0.5, bidWindowMs: 2_000, ...fields })
      await until(`the provider hears job ${job}`, () => seen.some((s) => s.id === job))
      return seen.find((s) => s.id === job)!
    } finally {
      provider.node.services.pubsub.removeEventListener('gossipsub:message', listener)
    }
  }

  it('the provider and the requester are connected to the bootstrap peer only', () => {
    const only = bootstrap.node.peerId.toString()
    for (const d of [provider, requester]) assert.deepEqual([...new Set(d.node.getConnections().map((c) => c.remotePeer.toString()))], [only])
  })

  it('a job on the global topic reaches the provider through the bootstrap peer', async () => {
    await until('the bootstrap peer meshes the global topic with both', () => bootstrap.node.services.pubsub.getSubscribers(marketTopic()).length >= 2)
    const heard = await heardVia({})
    assert.equal(heard.topic, marketTopic())
    assert.equal(heard.from, bootstrap.node.peerId.toString())
  })

  it('a job only for eu (strict) reaches the provider in eu-west: the bootstrap peer joined gpumesh/…/market/eu when the provider did', async () => {
    await until('the bootstrap peer routes the eu topic', () => bootstrap.router?.topics().includes(marketTopic('eu')) === true)
    const heard = await heardVia({ regions: ['eu'], residency: 'strict' })
    assert.equal(heard.topic, marketTopic('eu'))
    assert.equal(heard.from, bootstrap.node.peerId.toString())
    // the region topic is scored like the others: a forgery there costs its sender
    const topics = (bootstrap.node.services.pubsub as unknown as { score: { params: { topics: Record<string, unknown> } } }).score.params.topics
    assert.ok(topics[marketTopic('eu')] !== undefined)
    assert.deepEqual(bootstrap.router!.topics(), [EVIDENCE_TOPIC, marketTopic('eu'), marketTopic(), marketTopic('local')].sort())
  })

  it('relays a requester\'s job requests within a stranger\'s budget only: past its burst they are refused RATE_LIMITED (ignored: gossipsub does not relay them)', async () => {
    const limited = async (): Promise<number> => (await bootstrap.metrics.messagesRejected.get()).values.filter((v) => v.labels.reason === 'RATE_LIMITED').reduce((n, v) => n + v.value, 0)
    const before = await limited()
    const extra = 6
    const started = Date.now()
    // the two jobs of the cases above took two tokens already
    for (let i = 0; i < STRANGER_JOB_RATE.burst + extra; i++) await requester.market!.submit({ command: ['/bin/true'], maxRuntimeSec: 30, maxPrice: 0.5, bidWindowMs: 60_000 })
    const refills = Math.floor((Date.now() - started) / STRANGER_JOB_RATE.refillMs)
    const deadline = Date.now() + 10_000
    while (await limited() - before < Math.max(1, extra - refills) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50))
    const refused = await limited() - before
    assert.ok(refused >= Math.max(1, extra - refills) && refused <= extra + 2, `${refused} refused of ${STRANGER_JOB_RATE.burst + extra} sent (${refills} refills)`)
  })

  it('routes market topics of this wire version for top-level regions only', () => {
    assert.equal(isRoutableMarketTopic(marketTopic('eu')), true)
    assert.equal(isRoutableMarketTopic(marketTopic('x'.repeat(32))), true)
    assert.equal(isRoutableMarketTopic(marketTopic('x'.repeat(33))), false)
    assert.equal(isRoutableMarketTopic(marketTopic('eu-west')), false)
    assert.equal(isRoutableMarketTopic(marketTopic('EU')), false)
    assert.equal(isRoutableMarketTopic(marketTopic('')), false)
    assert.equal(isRoutableMarketTopic(EVIDENCE_TOPIC), false)
    assert.equal(isRoutableMarketTopic('other/1/market/eu'), false)
  })
})
