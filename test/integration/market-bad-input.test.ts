import assert from 'node:assert/strict'
import { open, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { ApiError } from '../../node/api/server.js'
import type { Daemon } from '../../node/daemon.js'
import { MAX_INPUT_BYTES } from '../../node/market/market.js'
import type { JobView } from '../../node/market/views.js'
import type { Message } from '@libp2p/gossipsub'
import { CID, Identity, cidOfValue, sealEnvelope } from '../../crypto/index.js'
import { ENVELOPE_DOMAIN, encodePayload, marketTopic, openMessage, payloadTypeOf, sealMessage } from '../../protocol/index.js'
import { startDaemon, untilJob, type TestNetwork } from '../helpers/network.js'
import { FINAL_STATUSES, SHORT_LEASE_MARKET, TEST_GPU, useNetwork } from '../helpers/market-network.js'

/**
 * Bad input against a running market: forged, tampered, replayed and random gossip; bad and oversized
 * jobs; a restart with a job in flight. Nothing is lost, the daemons stay up, the honest job settles.
 */
const GPU = TEST_GPU
const MARKET = SHORT_LEASE_MARKET
const FINAL = FINAL_STATUSES

describe('the market under bad input (in-process)', function () {
  this.timeout(180_000)
  let net: TestNetwork
  let requester: Daemon
  let attacker: Daemon
  /** Publishes the forgeries: gossipsub's peer scoring graylists it (node/peer-score.ts), so the attacker's valid-but-hostile messages come from another peer. */
  let forger: Daemon

  const network = useNetwork([
    { region: 'eu-west', gpus: [GPU], priceFloor: 1, market: MARKET },
    { region: 'eu-west', gpus: [GPU], priceFloor: 2, market: MARKET },
    { sell: false, market: MARKET },
    { sell: false, market: MARKET },
    { sell: false, market: MARKET }
  ])
  before(() => {
    net = network.net
    requester = net.nodes[2] as Daemon
    attacker = net.nodes[3] as Daemon
    forger = net.nodes[4] as Daemon
  })

  const until = untilJob

  const job = (fields: Record<string, unknown> = {}): Record<string, unknown> =>
    ({ command: ['/bin/sh', '-c', 'echo ok > out.txt'], outputs: ['out.txt'], maxRuntimeSec: 30, maxPrice: 3, ...fields })

  it('forged, tampered, replayed and random gossip is refused; the honest auction goes on', async () => {
    // the forger watches the market topic for the first honest bid
    const seen: Uint8Array[] = []
    const pubsub = forger.node.services.pubsub
    const onMessage = (evt: CustomEvent<Message>): void => { if (evt.detail.topic === marketTopic()) seen.push(evt.detail.data) }
    pubsub.addEventListener('message', onMessage)
    const rejectedBefore = await rejections(requester)
    const { job: id } = await requester.market!.submit(job({ bidWindowMs: 2_500 }))
    await until(requester, id, (v) => v.bids.length >= 1)
    const isBid = (bytes: Uint8Array): boolean => { try { openMessage(bytes, 'bid', { now: Date.now() }); return true } catch { return false } }
    const honest = seen.find(isBid) as Uint8Array
    assert.ok(honest !== undefined, 'the forger saw a bid')
    const tampered = honest.slice()
    tampered[tampered.length - 1] = (tampered[tampered.length - 1] as number) ^ 1
    const random = new Uint8Array(300).map((_, i) => (i * 73) % 256)
    // the honest bid's payload signed by the forger: it names another provider than its signer
    const payload = openMessage(honest, 'bid', { now: Date.now() }).payload
    const resigned = sealEnvelope(forger.identity, ENVELOPE_DOMAIN, payloadTypeOf('bid'), encodePayload('bid', payload).bytes)
    for (const bytes of [tampered, random, resigned, honest]) await pubsub.publish(marketTopic(), bytes).catch(() => {})
    const view = await until(requester, id, (v) => FINAL.has(v.status))
    pubsub.removeEventListener('message', onMessage)
    assert.equal(view.status, 'settled', view.reason)
    // two honest bids at most, each once: the replay counted once, the forgeries not at all
    assert.ok(view.bids.length <= 2 && new Set(view.bids.map((b) => b.cid)).size === view.bids.length, JSON.stringify(view.bids))
    assert.ok(await rejections(requester) > rejectedBefore, 'the requester counted the rejected messages')
  })

  /**
   * Gossip message ids are the SHA-256 of topic and data (§7.6), so a byte-identical copy on the same topic is
   * a duplicate to gossipsub itself for its seen window (2 min): the attacker's own router refuses to publish
   * it, and every other router drops it unread. The copy on another topic (or after the seen window) is a new
   * gossip message, and there the envelope's replay cache (§6.3) refuses it.
   */
  it('a byte-identical replay of a job request is ignored as a REPLAY by every node, its requester too, and not re-gossiped', async () => {
    // the attacker records the requester's job request as gossiped
    const seen: Uint8Array[] = []
    const attackerPubsub = attacker.node.services.pubsub
    const onSeen = (evt: CustomEvent<Message>): void => { if (evt.detail.topic === marketTopic()) seen.push(evt.detail.data) }
    attackerPubsub.addEventListener('message', onSeen)
    // every other node reports each copy of the job it accepts (and so forwards) on the topic the copy goes to:
    // the requester's own region topic, which the job was never published on
    const replayTopic = marketTopic('local')
    assert.ok(requester.node.services.pubsub.getTopics().includes(replayTopic), `the requester listens on ${replayTopic}`)
    const others = net.all.filter((d) => d !== attacker)
    const accepted = new Map<Daemon, number>(others.map((d) => [d, 0]))
    const counters = others.map((d) => {
      const onMessage = (evt: CustomEvent<Message>): void => {
        const m = evt.detail
        if (m.topic === replayTopic && isJob(m.data)) accepted.set(d, (accepted.get(d) ?? 0) + 1)
      }
      d.node.services.pubsub.addEventListener('message', onMessage)
      return () => { d.node.services.pubsub.removeEventListener('message', onMessage) }
    })
    const isJob = (bytes: Uint8Array): boolean => { try { openMessage(bytes, 'job-request', { now: Date.now() }); return true } catch { return false } }
    try {
      const replaysBefore = await rejections(requester, 'REPLAY')
      const { job: id } = await requester.market!.submit(job({ bidWindowMs: 2_500 }))
      const deadline = Date.now() + 20_000
      let original: Uint8Array | undefined
      while ((original = seen.find((b) => isJob(b) && openMessage(b, 'job-request', { now: Date.now() }).cid.toString() === id)) === undefined) {
        if (Date.now() > deadline) assert.fail('the attacker never saw the job request')
        await new Promise((resolve) => setTimeout(resolve, 20))
      }
      // the same topic: a duplicate for gossipsub, which never sends it
      await assert.rejects(attackerPubsub.publish(marketTopic(), original.slice()), /Duplicate/)
      await attackerPubsub.publish(replayTopic, original.slice())
      // the requester has the job's nonce on record: it ignores the copy as a replay
      const until2 = Date.now() + 10_000
      while (await rejections(requester, 'REPLAY') <= replaysBefore) {
        if (Date.now() > until2) assert.fail(`the requester accepted a replay of its own job (accepted: ${[...accepted.values()].join(', ')})`)
        await new Promise((resolve) => setTimeout(resolve, 50))
      }
      // give any forwarded copy time to arrive
      await new Promise((resolve) => setTimeout(resolve, 1_000))
      for (const [daemon, count] of accepted) assert.equal(count, 0, `${daemon.node.peerId.toString()} accepted the replayed job request`)
      const view = await until(requester, id, (v) => FINAL.has(v.status))
      assert.equal(view.status, 'settled', view.reason)
    } finally {
      attackerPubsub.removeEventListener('message', onSeen)
      for (const stop of counters) stop()
    }
  })

  /**
   * 300 fresh identities, each with one bid for `jobCid` at `price` that promises to start a day from now
   * (LATE_START): it cannot win, so it must neither take a slot in the requester's round nor, in the
   * providers' damping, count as a better bid that holds an honest one back (issue 9 bugs 3 and 4).
   */
  const junkBids = (jobCid: CID, price: number): Uint8Array[] => {
    const now = Date.now()
    return Array.from({ length: 300 }, (_, i) => {
      const seed = new Uint8Array(32).fill(11)
      seed[0] = i & 0xff
      seed[1] = i >> 8
      const signer = new Identity(seed)
      return sealMessage(signer, 'bid', {
        v: 1, issuedAt: now, expiresAt: now + 60_000, job: jobCid, provider: signer.peerId, price,
        gpus: [`GPU-junk-${i}`], model: 'nvidia-l40s', vramMiB: 46_068, region: 'eu-west', startBy: now + 86_400_000, ad: cidOfValue({ junk: i }).cid
      }).bytes
    })
  }

  // priced above the honest asks (they would rank after them if they passed) and at 1 micro (they would
  // rank first, and before the fix of bug 4 their raw asks silenced both honest providers)
  for (const price of [2_500_000, 1]) {
    it(`300 bids that cannot win at ${price} micros, gossiped before the honest ones, take no slot and silence no one: the honest bid wins the first round`, async () => {
      // a window with room for every node in this one process to check 300 extra bids on a busy machine
      // (with 2.5 s, one CI run saw no honest bid in round 1)
      const { job: id } = await requester.market!.submit(job({ bidWindowMs: 6_000 }))
      for (const bytes of junkBids(CID.parse(id), price)) await attacker.node.services.pubsub.publish(marketTopic(), bytes).catch(() => {})
      const view = await until(requester, id, (v) => FINAL.has(v.status))
      assert.equal(view.status, 'settled', view.reason)
      assert.ok(!view.events.some((e) => e.type === 'no-bids' || e.type === 're-auction'), view.events.map((e) => `${e.type}: ${e.text}`).join('\n'))
      assert.equal(view.award?.provider, net.nodes[0]?.identity.peerId, 'the cheaper honest provider won')
      const honest = new Set(net.nodes.slice(0, 2).map((d) => d.identity.peerId))
      assert.ok(view.bids.length <= 2 && view.bids.every((b) => honest.has(b.provider)), JSON.stringify(view.bids.map((b) => [b.provider, b.price])))
    })
  }

  it('a job spec that is not valid is a 400 naming the problem, and nothing is submitted', async () => {
    const before = requester.market!.requester.list().length
    await assert.rejects(requester.market!.submit({ command: [], gpus: 65 }), (err: unknown) =>
      err instanceof ApiError && err.status === 400 && err.code === 'BAD_JOB' && /command/.test(err.message) && /gpus/.test(err.message))
    await assert.rejects(requester.market!.submit('not an object'), (err: unknown) => err instanceof ApiError && err.code === 'BAD_JOB')
    assert.equal(requester.market!.requester.list().length, before)
  })

  it('an oversized input is refused before anything is gossiped', async () => {
    const file = join(net.root, 'huge.bin')
    // sparse: the size is checked before a byte is read
    const handle = await open(file, 'w')
    await handle.truncate(MAX_INPUT_BYTES + 1)
    await handle.close()
    const before = requester.market!.requester.list().length
    await assert.rejects(requester.market!.submit(job({ inputs: [{ path: 'huge.bin', file }] })), (err: unknown) =>
      err instanceof ApiError && err.code === 'BAD_INPUT' && /over the limit/.test(err.message))
    await writeFile(file, '')
    assert.equal(requester.market!.requester.list().length, before)
  })

  it('a requester restarted with a job in flight keeps its record and its reputation view, and resumes the job on the same award', async () => {
    const { job: id } = await requester.market!.submit(job({ command: ['/bin/sh', '-c', 'sleep 4'], outputs: [] }))
    const running = await until(requester, id, (v) => v.status === 'running')
    const dataDir = requester.options.dataDir
    await requester.stop()
    // the reputation view as it was when the requester stopped (earlier tests' jobs gave it history)
    const kept = requester.market!.requester.agent.reputation.snapshot()
    assert.ok(kept.pairs.length > 0, 'the requester has a history to keep')
    // the provider keeps running the job for a lease, waiting for the requester to re-open the stream
    const again = await startDaemon(net.root, { sell: false, market: MARKET }, { dial: [net.bootstraps[0]!.addresses()[0] as string], dataDir })
    net.all.push(again)
    const view = again.market?.requester.view(id)
    assert.ok(view !== undefined)
    assert.equal(view.status, 'running')
    assert.ok(view.events.some((e) => e.type === 'restarted'), JSON.stringify(view.events))
    // reputation is the same after the restart (market-reputation/self in the level db)
    assert.deepEqual(again.market!.requester.agent.reputation.snapshot(), kept)
    const done = await until(again, id, (v) => FINAL.has(v.status))
    assert.equal(done.status, 'settled', `${done.reason ?? ''} ${JSON.stringify(done.events)}`)
    // resumed on the same award; or, when the restart outlasted the 3 s lease and the provider had
    // stopped, re-auctioned with nobody blamed — the job is not lost either way
    const events = JSON.stringify(done.events)
    assert.ok(!done.events.some((e) => e.type === 'failure'), events)
    if (done.award?.cid !== running.award?.cid) assert.ok(done.events.some((e) => e.type === 're-auction' && /restarted/.test(e.text)), events)
    const entries = (await again.market!.ledger()).entries.filter((e) => e.job === id)
    assert.ok(entries.length >= 1 && entries.every((e) => e.state !== 'open'), JSON.stringify(entries))
    assert.equal(entries.find((e) => e.award === done.award?.cid)?.state, 'settled')
    // the providers are still up and take the next job
    const { job: next } = await again.market!.submit(job())
    const after = await until(again, next, (v) => FINAL.has(v.status))
    assert.equal(after.status, 'settled', after.reason)
  })
})

async function rejections (daemon: Daemon, reason?: string): Promise<number> {
  const metric = await daemon.metrics.messagesRejected.get()
  return metric.values.filter((v) => reason === undefined || v.labels.reason === reason).reduce((n, v) => n + v.value, 0)
}
