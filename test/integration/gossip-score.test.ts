import assert from 'node:assert/strict'
import type { GossipsubMessage, Message } from '@libp2p/gossipsub'
import type { Daemon } from '../../node/daemon.js'
import { GOSSIP_SCORE_THRESHOLDS, SCORE_DECAY_INTERVAL_MS } from '../../node/peer-score.js'
import { Identity, cidOfValue, type CID } from '../../crypto/index.js'
import { EVIDENCE_TOPIC, gossipMessageId, marketTopic, openMessage, sealMessage } from '../../protocol/index.js'
import { STRANGER_JOB_RATE } from '../../protocol/trust/budget.js'
import { untilJob } from '../helpers/network.js'
import { FINAL_STATUSES, SHORT_LEASE_MARKET, TEST_GPU, useNetwork } from '../helpers/market-network.js'

/**
 * Issue 11: a peer whose messages are rejected pays for them in gossipsub's peer score (node/peer-score.ts).
 * An attacker connected to the requester publishes forgeries on the market topic; within a few
 * heartbeats its score at the requester is below the graylist threshold, its next valid message is
 * neither delivered nor relayed by the peers that saw the forgeries, and the requester's honest job,
 * submitted while the attack goes on, still settles.
 */
describe('gossipsub peer scoring (in-process)', function () {
  this.timeout(120_000)
  const network = useNetwork([
    { region: 'eu', gpus: [TEST_GPU], priceFloor: 1, market: SHORT_LEASE_MARKET },
    { sell: false, market: SHORT_LEASE_MARKET },
    { sell: false, market: SHORT_LEASE_MARKET },
    { sell: false, market: SHORT_LEASE_MARKET }
  ])

  // the attacker's own jobs ask below the provider's floor: no one bids, they only travel as gossip
  const unbiddable = { command: ['/bin/true'], maxRuntimeSec: 30, maxPrice: 0.5, bidWindowMs: 60_000 }
  const honestJob: { id?: string, [k: string]: unknown } = { command: ['/bin/sh', '-c', 'echo ok > out.txt'], outputs: ['out.txt'], maxRuntimeSec: 30, maxPrice: 3, bidWindowMs: 2_500 }

  const spec = (job: Record<string, unknown>): Record<string, unknown> => { const { id: _, ...fields } = job; return fields }

  const isJob = (bytes: Uint8Array, id: string): boolean => {
    try { return openMessage(bytes, 'job-request', { now: Date.now() }).cid.toString() === id } catch { return false }
  }

  /**
   * Record, at every daemon but `author`, the messages it accepted and from whom it had them. Gossip is
   * unsigned at the gossipsub layer (StrictNoSign, §7.6), so the author of a message is its envelope's
   * signer: the cases pick the author's messages out by their job ids (isJob).
   */
  function watch (daemons: Daemon[], author: Daemon): { seen: Array<{ at: Daemon, from: string, data: Uint8Array, msgId: string, type: Message['type'] }>, stop: () => void } {
    const seen: Array<{ at: Daemon, from: string, data: Uint8Array, msgId: string, type: Message['type'] }> = []
    const stops = daemons.filter((d) => d !== author).map((d) => {
      const listener = (evt: CustomEvent<GossipsubMessage>): void => {
        const m: Message = evt.detail.msg
        seen.push({ at: d, from: evt.detail.propagationSource.toString(), data: m.data, msgId: evt.detail.msgId, type: m.type })
      }
      d.node.services.pubsub.addEventListener('gossipsub:message', listener)
      return () => { d.node.services.pubsub.removeEventListener('gossipsub:message', listener) }
    })
    return { seen, stop: () => { for (const s of stops) s() } }
  }

  async function until (what: string, done: () => boolean, timeoutMs: number): Promise<number> {
    const started = Date.now()
    while (!done()) {
      if (Date.now() - started > timeoutMs) assert.fail(`${what} within ${timeoutMs} ms`)
      await new Promise((resolve) => setTimeout(resolve, 20))
    }
    return Date.now() - started
  }

  it('a peer publishing rejected messages is graylisted within a few heartbeats while honest jobs still complete', async () => {
    const [, requester, attacker] = network.net.nodes as [Daemon, Daemon, Daemon]
    const attackerId = attacker.node.peerId.toString()
    const requesterId = requester.node.peerId.toString()
    await attacker.node.dial(requester.node.getMultiaddrs()[0]!)
    const pubsub = requester.node.services.pubsub
    // the router class has getScore; the GossipSub interface libp2p services are typed with does not
    const score = (): number => (pubsub as unknown as { getScore: (peer: string) => number }).getScore(attackerId)
    await until('the attacker joins the requester\'s market topic', () => pubsub.getSubscribers(marketTopic()).some((p) => p.toString() === attackerId), 10_000)

    // before the attack: the attacker's valid job is accepted by the requester, and its score is not negative
    const watcher = watch(network.net.all, attacker)
    try {
      const { job: before } = await attacker.market!.submit(unbiddable)
      await until('the requester accepts the attacker\'s job before the attack', () => watcher.seen.some((s) => s.at === requester && isJob(s.data, before)), 10_000)
      // §7.6: the message carries no gossipsub author, seqno or signature, and its id is the SHA-256 of its topic and data
      const first = watcher.seen.find((s) => s.at === requester && isJob(s.data, before))!
      assert.equal(first.type, 'unsigned')
      // (gossipsub's string form of an id is unpadded base64)
      assert.equal(first.msgId, Buffer.from(gossipMessageId(marketTopic(), first.data)).toString('base64').replace(/=+$/, ''))
      assert.ok(score() >= 0, `score ${score()} before any rejection`)

      // the honest job is on its way while the attack goes on
      const { job: honest } = await requester.market!.submit(spec(honestJob))

      // five forgeries: random bytes (MALFORMED_ENVELOPE) and the attacker's own job with a flipped byte (BAD_SIGNATURE)
      const original = watcher.seen.find((s) => s.at === requester && isJob(s.data, before))!.data
      const tampered = original.slice()
      tampered[tampered.length - 1] = (tampered[tampered.length - 1] as number) ^ 1
      const forgeries = [tampered, ...Array.from({ length: 4 }, (_, i) => new Uint8Array(200 + i).map((_, j) => (j * 31 + i) % 256))]
      const rejectedBefore = await rejections(requester)
      const attackStart = Date.now()
      for (const bytes of forgeries) await attacker.node.services.pubsub.publish(marketTopic(), bytes)
      const tookMs = await until('the attacker is graylisted', () => score() < GOSSIP_SCORE_THRESHOLDS.graylistThreshold, 5 * SCORE_DECAY_INTERVAL_MS)
      assert.ok(await rejections(requester) >= rejectedBefore + forgeries.length, 'the requester counted each forgery')
      // a few heartbeats (one heartbeat = one second, gossipsub's default, and the score cache lives as long)
      assert.ok(Date.now() - attackStart <= 5 * SCORE_DECAY_INTERVAL_MS, `graylisted after ${tookMs} ms`)

      // after it: the attacker's next valid job is neither accepted by the requester nor relayed by it.
      // The router let RPCs from a peer whose score was last seen ≥ 0 through unchecked for up to a
      // second (gossipsub's accept-from whitelist, 1 s or 128 messages): the cut-off takes one heartbeat more
      await new Promise((resolve) => setTimeout(resolve, SCORE_DECAY_INTERVAL_MS + 100))
      const seenBefore = watcher.seen.length
      const { job: after } = await attacker.market!.submit(unbiddable)
      await new Promise((resolve) => setTimeout(resolve, 3 * SCORE_DECAY_INTERVAL_MS))
      const later = watcher.seen.slice(seenBefore).filter((s) => isJob(s.data, after))
      assert.deepEqual(later.filter((s) => s.at === requester).map((s) => s.from), [], 'the requester accepted the graylisted peer\'s job')
      assert.deepEqual(later.filter((s) => s.from === requesterId).map((s) => s.at.node.peerId.toString()), [], 'the requester relayed the graylisted peer\'s job')
      assert.ok(score() < GOSSIP_SCORE_THRESHOLDS.graylistThreshold, 'still graylisted three heartbeats on')

      const view = await untilJob(requester, honest, (v) => FINAL_STATUSES.has(v.status), 60_000)
      honestJob.id = honest
      assert.equal(view.status, 'settled', `${view.reason ?? ''}: ${view.events.map((e) => `${e.type}: ${e.text}`).join('; ')}`)
    } finally {
      watcher.stop()
    }
  })

  it('budgets: a stranger\'s job requests past its burst are refused RATE_LIMITED by the provider, its evidence about nothing known is not kept, about a known job it is', async () => {
    const [provider, requester, , stranger] = network.net.nodes as [Daemon, Daemon, Daemon, Daemon]
    const strangerId = stranger.node.peerId.toString()
    await stranger.node.dial(requester.node.getMultiaddrs()[0]!)
    await stranger.node.dial(provider.node.getMultiaddrs()[0]!)
    for (const d of [requester, provider]) {
      await until('the stranger joins the market and evidence topics', () => [marketTopic(), EVIDENCE_TOPIC].every((t) => d.node.services.pubsub.getSubscribers(t).some((p) => p.toString() === strangerId)), 10_000)
    }
    // the burst and a few more, as fast as the stranger can sign them
    const limitedBefore = await rejections(provider, 'RATE_LIMITED')
    const extra = 6
    const started = Date.now()
    for (let i = 0; i < STRANGER_JOB_RATE.burst + extra; i++) await stranger.market!.submit(unbiddable)
    const elapsedMs = Date.now() - started
    // every request past the burst is refused, less the tokens earned while they were sent (one a second)
    const refills = Math.floor(elapsedMs / STRANGER_JOB_RATE.refillMs)
    const deadline = Date.now() + 10_000
    let limited = 0
    while ((limited = await rejections(provider, 'RATE_LIMITED') - limitedBefore) < Math.max(1, extra - refills) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50))
    assert.ok(limited >= Math.max(1, extra - refills) && limited <= extra, `${limited} refused of ${STRANGER_JOB_RATE.burst + extra} sent in ${elapsedMs} ms`)

    // evidence: a failure report about a job and a peer the requester never heard of, then one about its honest job
    const now = Date.now()
    const report = (job: CID, subject: string) => sealMessage(stranger.identity, 'failure-report', {
      v: 1, issuedAt: now, expiresAt: now + 3_600_000, job, subject, reason: 'no-show', observedAt: now, evidence: []
    })
    const irrelevant = report(cidOfValue({ unrelated: now }).cid, new Identity(new Uint8Array(32).fill(7)).peerId)
    const relevant = report(openMessage((await requester.market!.store.getEnvelope(honestJob.id!))!, 'job-request', { now: Date.now(), historical: true }).cid, provider.node.peerId.toString())
    const irrelevantBefore = await rejections(requester, 'IRRELEVANT')
    await stranger.market!.gossip.publish(irrelevant, [EVIDENCE_TOPIC])
    await stranger.market!.gossip.publish(relevant, [EVIDENCE_TOPIC])
    const keptBy = Date.now() + 10_000
    while (await requester.market!.store.getEnvelope(relevant.cid.toString()) === undefined) {
      if (Date.now() > keptBy) assert.fail('the report about the requester\'s job was not kept')
      await new Promise((resolve) => setTimeout(resolve, 50))
    }
    assert.equal(await rejections(requester, 'IRRELEVANT'), irrelevantBefore + 1)
    assert.equal(await requester.market!.store.getEnvelope(irrelevant.cid.toString()), undefined)

    // the kept report reaches the requester's reputation view, where a stranger's word counts for nothing …
    const reputation = requester.market!.requester.agent.reputation
    const providerId = provider.node.peerId.toString()
    const heard = reputation.explain(providerId, now)
    assert.ok(heard.others.reporters > 0, JSON.stringify(heard.others))
    assert.ok(!heard.others.top.some((r) => r.reporter === strangerId), 'an untrusted reporter moves nothing')
    const before = reputation.score(providerId, now)
    // … until the requester has its own good history with the reporter: then the same report counts
    reputation.record(strangerId, true, now)
    assert.ok(reputation.explain(providerId, now).others.top.some((r) => r.reporter === strangerId && r.failed > 0))
    assert.ok(reputation.score(providerId, now) < before, `${reputation.score(providerId, now)} < ${before}`)
  })
})

async function rejections (daemon: Daemon, reason?: string): Promise<number> {
  const metric = await daemon.metrics.messagesRejected.get()
  return metric.values.filter((v) => reason === undefined || v.labels.reason === reason).reduce((n, v) => n + v.value, 0)
}
