/**
 * The provider side of the market (node/market/provider.ts) on two bare in-process libp2p nodes
 * (memory transport, plaintext, yamux, the gpumesh services): a ProviderMarket on one, and the test
 * playing the requester by hand on the other — it publishes job requests, sees the bids on gossip,
 * opens the exec stream, sends the award, reads statuses, logs and the receipt, fetches the outputs
 * by blob, and pays (or cancels, or stops paying). Jobs run with the process executor, unsandboxed.
 */
import assert from 'node:assert/strict'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { yamux } from '@chainsafe/libp2p-yamux'
import { privateKeyFromProtobuf } from '@libp2p/crypto/keys'
import { memory } from '@libp2p/memory'
import { plaintext } from '@libp2p/plaintext'
import { Identity, decodeCanonical, type CID } from '../../crypto/index.js'
import { randomNonce, generateIdentity } from '../../node/random.js'
import {
  EVIDENCE_TOPIC, VirtualScheduler, chargeFor, createMarketParams, jobTopics, marketTopic, openMessage, providerTopics, sealMessage,
  type JobRequest, type Kind, type OpenedMessage, type SealedMessage
} from '../../protocol/index.js'
import { BlobStore } from '../../node/blobs/store.js'
import { resolveConfig } from '../../node/config/load.js'
import { ProcessExecutor } from '../../node/executors/process.js'
import { buildLibp2p, type GpumeshLibp2p } from '../../node/libp2p.js'
import { silentLoggers } from '../../node/logger.js'
import { MarketGossip, type GossipKind } from '../../node/market/gossip.js'
import { AWARD_WAIT_MS, ProviderMarket } from '../../node/market/provider.js'
import { MarketStore } from '../../node/market/store.js'
import { createMetrics } from '../../node/metrics.js'
import { LOG_WINDOW, type ExecChannel } from '../../node/services/exec.js'
import { openLevel } from '../../node/storage.js'
import { ALWAYS } from '../helpers/market-time.js'
import { attestationPayload } from '../../protocol/trust/attestation.js'

const PRICE = 1_000_000
const GPU = 'GPU-test-0'
const TERMS = { leaseMs: 3_000, billingIntervalSec: 1 }
const enc = new TextEncoder()
const dec = new TextDecoder()
let counter = 0

async function startNode (identity: Identity): Promise<GpumeshLibp2p> {
  const config = resolveConfig([{
    source: 'test',
    values: {
      listen: [`/memory/gpumesh-provider-${process.pid}-${counter++}`],
      communityBootstrap: false,
      connections: { inboundPerSecond: 100_000, maxPendingInbound: 100_000 },
      provider: { detectGpus: false, sell: false }
    }
  }])
  const node = await buildLibp2p({
    privateKey: privateKeyFromProtobuf(identity.toProtobuf()),
    config,
    role: 'node',
    bootstrapPeers: [],
    transports: [memory()],
    connectionEncrypters: [plaintext()],
    streamMuxers: [yamux()]
  })
  await node.start()
  return node
}

async function until<T> (what: string, probe: () => T | undefined | Promise<T | undefined>, timeoutMs = 10_000): Promise<T> {
  const deadline = Date.now() + timeoutMs
  while (true) {
    const value = await probe()
    if (value !== undefined && value !== false) return value
    if (Date.now() > deadline) assert.fail(`timed out waiting for ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
}

/** The requester's end of one exec stream: every frame read, opened. */
class Reader {
  readonly messages: Array<OpenedMessage<Kind>> = []
  log = ''
  ended = false

  constructor (readonly channel: ExecChannel) {
    void (async () => {
      try {
        for await (const frame of channel.frames()) {
          if (frame.type === 'log') this.log += dec.decode(frame.data)
          else if (frame.type === 'message') this.messages.push(openMessage(frame.bytes, ['award-response', 'job-status', 'receipt'], { now: Date.now() }))
        }
      } catch {}
      this.ended = true
    })()
  }

  async next<K extends Kind> (kind: K, match: (m: OpenedMessage<K>) => boolean = () => true): Promise<OpenedMessage<K>> {
    return await until(`a ${kind}`, () => this.messages.find((m) => m.kind === kind && match(m as OpenedMessage<K>)) as OpenedMessage<K> | undefined)
  }

  states (): string[] {
    return this.messages.filter((m) => m.kind === 'job-status').map((m) => (m as OpenedMessage<'job-status'>).payload.state)
  }
}

describe('the provider market (two bare nodes, the requester played by hand)', function () {
  this.timeout(60_000)
  let root: string
  const requesterId = generateIdentity()
  const providerId = generateIdentity()
  let requester: GpumeshLibp2p
  let provider: GpumeshLibp2p
  let requesterBlobs: BlobStore
  let providerStore: MarketStore
  let market: ProviderMarket
  let requesterGossip: MarketGossip
  const metrics = createMetrics({ processMetrics: false })
  const gossiped: Array<OpenedMessage<GossipKind>> = []
  const closers: Array<() => Promise<void>> = []
  let attestationCid: CID

  before(async () => {
    root = await mkdtemp(join(tmpdir(), 'gpumesh-provider-market-'))
    requester = await startNode(requesterId)
    provider = await startNode(providerId)
    requesterBlobs = await BlobStore.open(join(root, 'requester-blobs'))
    requester.services.blob.store = requesterBlobs
    const providerBlobs = await BlobStore.open(join(root, 'provider-blobs'))
    provider.services.blob.store = providerBlobs
    const db = await openLevel<unknown>(join(root, 'provider-db'), 'json')
    closers.push(async () => { await db.close() })
    providerStore = new MarketStore(db)

    const now = Date.now()
    const gpu = { index: 0, uuid: GPU, name: 'NVIDIA L4', model: 'nvidia-l4', vramMiB: 23034, provenance: 'declared' as const }
    attestationCid = sealMessage(providerId, 'attestation', attestationPayload({
      provider: providerId.peerId, gpus: [gpu], host: { cpuCores: 4, memoryMiB: 8192 }, benchmark: { name: 'freivalds-matmul-cpu', value: 1, unit: 'mac-per-s', durationMs: 1 }, now
    })).cid
    const ad = sealMessage(providerId, 'capability-ad', {
      v: 1, issuedAt: now, expiresAt: now + 86_400_000, seq: 1,
      gpus: [{ index: 0, uuid: GPU, name: 'NVIDIA L4', model: 'nvidia-l4', vramMiB: 23034, provenance: 'declared' }],
      host: { cpuCores: 4, memoryMiB: 8192, diskGiB: 10 },
      region: 'eu',
      price: { floor: PRICE },
      availability: { timeZone: 'UTC', windows: ALWAYS },
      workloads: ['process'],
      limits: {},
      attestations: [attestationCid],
      addrs: []
    })
    let providerMarket: ProviderMarket | undefined
    const providerGossip = new MarketGossip({
      node: provider,
      now: Date.now,
      log: silentLoggers.forComponent('gossip'),
      onMessage: (m) => {
        if (m.kind === 'job-request') providerMarket?.onJob(m as OpenedMessage<'job-request'>)
        if (m.kind === 'bid') providerMarket?.onBid(m as OpenedMessage<'bid'>)
      }
    })
    market = providerMarket = new ProviderMarket({
      signer: providerId,
      peerId: providerId.peerId,
      node: provider,
      gossip: providerGossip,
      store: providerStore,
      blobs: providerBlobs,
      executors: { process: new ProcessExecutor({ sandbox: 'none', killGraceMs: 200, workRoot: root }) },
      ad: () => ad,
      now: Date.now,
      log: silentLoggers.forComponent('provider'),
      metrics,
      params: createMarketParams({ preemptNoticeMs: 300 }),
      // one hand-played requester serves every test, and one of them stops paying: this provider's view
      // would then refuse it (test/integration/market-payers.test.ts covers that); serve it throughout
      minRequesterTrust: 0
    })
    provider.services.exec.onChannel = (channel) => { market.handleChannel(channel) }
    providerGossip.subscribe(providerTopics('eu'))
    requesterGossip = new MarketGossip({ node: requester, now: Date.now, log: silentLoggers.forComponent('gossip'), onMessage: (m) => { gossiped.push(m) } })
    requesterGossip.subscribe([marketTopic(), EVIDENCE_TOPIC])
    closers.push(async () => { await market.stop(); providerGossip.stop(); requesterGossip.stop() })

    await requester.dial(provider.getMultiaddrs()[0]!)
    await until('gossip subscriptions', () => provider.services.pubsub.getSubscribers(marketTopic()).some((p) => p.equals(requester.peerId)) &&
      requester.services.pubsub.getSubscribers(marketTopic()).some((p) => p.equals(provider.peerId)))
  })

  after(async () => {
    for (const close of closers.reverse()) await close().catch(() => {})
    await Promise.all([requester?.stop(), provider?.stop()])
    await rm(root, { recursive: true, force: true })
  })

  /** Publish a job running `script` (sh -c) and wait for the provider's bid. */
  async function auction (script: string, inputs: JobRequest['workload']['inputs'] = [], tier: JobRequest['sla']['tier'] = 'silver', maxStartDelaySec = 60): Promise<{ request: SealedMessage<'job-request'>, bid: OpenedMessage<'bid'> }> {
    const now = Date.now()
    const request = sealMessage(requesterId, 'job-request', {
      v: 1, issuedAt: now, expiresAt: now + 3_600_000, nonce: randomNonce(16),
      workload: { executor: 'process', argv: ['/bin/sh', '-c', script], env: {}, inputs, outputs: ['out.txt', 'missing.txt'], maxRuntimeSec: 60, network: false },
      resources: { gpus: 1, minVramGB: 16, models: [], cpuCores: 1, memoryMiB: 256, diskMiB: 100 },
      sla: { tier, maxPrice: 2 * PRICE, maxStartDelaySec },
      placement: { regions: [], residency: 'prefer' },
      verification: { mode: 'none' },
      auction: { bidWindowMs: 300, paymentRule: 'first-price' }
    })
    await requesterGossip.publish(request, jobTopics(request.payload.placement))
    const bid = await until('a bid', () => gossiped.find((m) => m.kind === 'bid' && (m as OpenedMessage<'bid'>).payload.job.equals(request.cid)) as OpenedMessage<'bid'> | undefined)
    return { request, bid }
  }

  /** Award the bid and hand the award over on a new exec stream. */
  async function hand (request: SealedMessage<'job-request'>, bid: OpenedMessage<'bid'>, extra: { winner?: string, signer?: Identity } = {}): Promise<{ award: SealedMessage<'award'>, reader: Reader }> {
    const now = Date.now()
    const award = sealMessage(extra.signer ?? requesterId, 'award', {
      v: 1, issuedAt: now, expiresAt: now + 600_000, job: request.cid, attempt: 1, winner: extra.winner ?? bid.signer, bid: bid.cid,
      price: bid.payload.price, paymentRule: 'first-price', considered: [bid.cid], excluded: [], ...TERMS
    })
    const channel = await requester.services.exec.open(provider.peerId)
    const reader = new Reader(channel)
    await channel.sendMessage(award.bytes)
    return { award, reader }
  }

  function payment (request: SealedMessage<'job-request'>, award: SealedMessage<'award'>, seq: number, cumulative: number, gpuSeconds: number, payee = providerId.peerId): Uint8Array {
    const now = Date.now()
    return sealMessage(requesterId, 'payment', { v: 1, issuedAt: now, expiresAt: now + 86_400_000, job: request.cid, award: award.cid, payee, seq, interval: seq, cumulative, gpuSeconds }).bytes
  }

  async function ledgerState (award: SealedMessage<'award'>): Promise<string | undefined> {
    return (await providerStore.ledger()).find((e) => e.award === award.cid.toString())?.state
  }

  async function fetchFromProvider (cid: CID): Promise<Uint8Array> {
    return await requester.services.blob.fetch(provider.peerId, cid, { maxBytes: 1024 * 1024 })
  }

  it('bids, runs the job, streams logs, hands over outputs and a receipt, and settles when paid', async () => {
    const input = await requesterBlobs.put(enc.encode('input-data\n'))
    const { request, bid } = await auction('cat in.txt; echo hi > out.txt', [{ path: 'in.txt', cid: input.cid, size: input.size }])
    assert.equal(bid.signer, providerId.peerId)
    assert.equal(bid.payload.price, PRICE)
    assert.deepEqual(bid.payload.gpus, [GPU])
    assert.equal(bid.payload.model, 'nvidia-l4')
    assert.equal(bid.payload.region, 'eu')
    // the requester grants the inputs to the winner before sending the award
    requesterBlobs.grant(input.cid, provider.peerId)
    const { award, reader } = await hand(request, bid)

    assert.equal((await reader.next('award-response')).payload.decision, 'accept')
    const receipt = await reader.next('receipt')
    const r = receipt.payload
    assert.equal(r.exitCode, 0)
    assert.equal(r.requester, requesterId.peerId)
    assert.deepEqual(r.gpus, [GPU])
    assert.equal(r.attestation?.toString(), attestationCid.toString(), 'the receipt names the attestation the ad lists')
    assert.ok(r.gpuSeconds >= 1)
    assert.equal(r.inputs[0]?.toString(), input.cid.toString())
    // a garbage frame and a payment to someone else are dropped; the job goes on
    const rejected = (await metrics.messagesRejected.get()).values.length
    await reader.channel.sendMessage(enc.encode('not an envelope'))
    await reader.channel.sendMessage(payment(request, award, 1, 1, 1, requesterId.peerId))
    const owed = chargeFor(award.payload.price, 1, r.gpuSeconds * 1000)
    await reader.channel.sendMessage(payment(request, award, 1, owed, r.gpuSeconds))
    await until('the provider to close the stream', () => reader.ended)
    assert.ok((await metrics.messagesRejected.get()).values.length > rejected)
    // the payment to someone else bounced: a nonpayment report on the evidence topic embeds it
    const bounced = await until('a report of the bounced payment', () => gossiped.find((m) => m.kind === 'failure-report' && (m as OpenedMessage<'failure-report'>).payload.job.equals(request.cid)) as OpenedMessage<'failure-report'> | undefined)
    assert.equal(bounced.payload.reason, 'nonpayment')
    assert.equal(bounced.payload.subject, requesterId.peerId)
    assert.equal(openMessage(bounced.payload.evidence[1]!, 'payment', { now: Date.now(), historical: true }).payload.payee, requesterId.peerId)

    assert.deepEqual(reader.states().filter((s, i, all) => all.indexOf(s) === i), ['accepted', 'fetching-inputs', 'running', 'completed'])
    assert.equal(reader.log, 'input-data\n')
    const manifest = decodeCanonical(await fetchFromProvider(r.outputs)) as { files: Array<{ path: string, size: number, cid: CID }> }
    assert.deepEqual(manifest.files.map((f) => f.path), ['out.txt'])
    assert.equal(dec.decode(await fetchFromProvider(manifest.files[0]!.cid)), 'hi\n')
    assert.ok(r.logs !== undefined)
    assert.equal(dec.decode(await fetchFromProvider(r.logs)), 'input-data\n')
    assert.equal(await until('the ledger', async () => await ledgerState(award)), 'settled')
    const entry = (await providerStore.ledger()).find((e) => e.award === award.cid.toString())
    assert.equal(entry?.cumulative, owed)
    assert.equal(entry?.owed, owed)
    assert.equal(entry?.counterparty, requesterId.peerId)
    await until('the receipt on the evidence topic', () => gossiped.some((m) => m.kind === 'receipt' && m.cid.equals(receipt.cid)))
    assert.equal(market.status().completed, 1)
    assert.deepEqual(market.status().jobs, [])
  })

  it('paces the log by the requester\'s credit: one window at first, more when granted; the receipt never waits for it', async () => {
    const size = 600_000
    const { request, bid } = await auction(`head -c ${size} /dev/zero | tr '\\0' a; echo hi > out.txt`)
    const { award, reader } = await hand(request, bid)
    // this reader grants nothing: the provider sends the first window, then the receipt
    const receipt = await reader.next('receipt')
    assert.equal(reader.log.length, LOG_WINDOW)
    await new Promise((resolve) => setTimeout(resolve, 200))
    assert.equal(reader.log.length, LOG_WINDOW, 'log sent past the credit')
    // a credit below the current one changes nothing; one past the end brings the rest
    await reader.channel.send({ type: 'credit', upTo: 1000 })
    await reader.channel.send({ type: 'credit', upTo: size + LOG_WINDOW })
    await until('the rest of the log', () => reader.log.length === size)
    assert.equal(reader.log, 'a'.repeat(size))
    assert.ok(receipt.payload.logs !== undefined)
    assert.equal((await fetchFromProvider(receipt.payload.logs)).byteLength, size)
    const owed = chargeFor(award.payload.price, 1, receipt.payload.gpuSeconds * 1000)
    await reader.channel.sendMessage(payment(request, award, 1, owed, receipt.payload.gpuSeconds))
    assert.equal(await until('the ledger', async () => await ledgerState(award) === 'settled' ? 'settled' : undefined), 'settled')
  })

  it('stops and reports cancelled when the requester cancels', async () => {
    const { request, bid } = await auction('echo started; exec sleep 30')
    const { award, reader } = await hand(request, bid)
    await reader.next('job-status', (m) => m.payload.state === 'running')
    assert.deepEqual(market.status().jobs.map((j) => [j.status, j.gpus]), [['running', [GPU]]])
    const now = Date.now()
    await reader.channel.sendMessage(sealMessage(requesterId, 'job-cancel', { v: 1, issuedAt: now, expiresAt: now + 60_000, job: request.cid, award: award.cid, reason: 'changed my mind' }).bytes)
    const status = await reader.next('job-status', (m) => m.payload.state === 'cancelled')
    assert.match(status.payload.message ?? '', /changed my mind/)
    await until('the provider to close the stream', () => reader.ended)
    assert.equal(await until('the ledger', async () => { const state = await ledgerState(award); return state !== undefined && state !== 'open' ? state : undefined }), 'cancelled')
    assert.equal(reader.messages.some((m) => m.kind === 'receipt'), false)
  })

  it('stops work and reports the requester when it stops paying', async () => {
    const { request, bid } = await auction('exec sleep 30')
    const { award, reader } = await hand(request, bid)
    await reader.next('job-status', (m) => m.payload.state === 'running')
    // interval 1 is due 1 s after the start, with a 2 s grace: the provider stops about 3 s in
    await until('the provider to stop', () => reader.ended, 8_000)
    assert.equal(await until('the ledger', async () => { const state = await ledgerState(award); return state !== undefined && state !== 'open' ? state : undefined }), 'stopped-unpaid')
    const report = await until('a failure report', () => gossiped.find((m) => m.kind === 'failure-report' && (m as OpenedMessage<'failure-report'>).payload.job.equals(request.cid)) as OpenedMessage<'failure-report'> | undefined)
    assert.equal(report.signer, providerId.peerId)
    assert.equal(report.payload.subject, requesterId.peerId)
    assert.equal(report.payload.reason, 'nonpayment')
    assert.equal(openMessage(report.payload.evidence[0]!, 'award', { now: Date.now(), historical: true }).cid.toString(), award.cid.toString())
    assert.equal(market.status().ended['stopped-unpaid'], 1)
    // the provider's own experience of the requester: the bounced payment of the first test, and this stop
    assert.equal(market.requesters.own(requesterId.peerId)?.failed, 2)
  })

  it('refuses an award that is not for one of its waiting bids', async () => {
    const { request, bid } = await auction('true')
    const wrong = await hand(request, bid, { winner: requesterId.peerId })
    await until('the refused stream to end', () => wrong.reader.ended)
    assert.equal(wrong.reader.messages.length, 0)
    // a forged award: right job and bid, signed by someone other than the job's requester
    const forged = await hand(request, bid, { signer: new Identity(new Uint8Array(32).fill(77)) })
    await until('the forged award\'s stream to end', () => forged.reader.ended)
    assert.equal(forged.reader.messages.length, 0)
    // the bid still waits, and the right award is taken
    const { reader } = await hand(request, bid)
    assert.equal((await reader.next('award-response')).payload.decision, 'accept')
    const receipt = await reader.next('receipt')
    assert.equal(receipt.payload.exitCode, 0)
    // the requester closes its side without paying: the provider stops waiting for the money
    await reader.channel.close()
    await until('the provider to close the stream', () => reader.ended)
  })

  it('refuses a stream with no award after AWARD_WAIT_MS on its scheduler\'s time, not before', async () => {
    const clock = new VirtualScheduler(Date.now())
    const timed = new ProviderMarket({
      signer: providerId,
      peerId: providerId.peerId,
      node: provider,
      gossip: requesterGossip,
      store: providerStore,
      blobs: requesterBlobs,
      executors: {},
      ad: () => undefined,
      now: Date.now,
      scheduler: clock,
      log: silentLoggers.forComponent('provider'),
      metrics
    })
    const refusals = async (): Promise<number> => (await metrics.registry.getSingleMetric('gpumesh_messages_rejected_total')?.get())?.values
      .filter((v) => v.labels.kind === 'award' && v.labels.via === 'exec' && v.labels.reason === 'NO_AWARD').reduce((n, v) => n + v.value, 0) ?? 0
    const before = await refusals()
    provider.services.exec.onChannel = (channel) => { timed.handleChannel(channel) }
    try {
      const reader = new Reader(await requester.services.exec.open(provider.peerId))
      // the provider has the stream once it waits for the award
      await until('the provider to take the stream', () => clock.next() !== undefined)
      const start = clock.now()
      assert.equal(clock.next(), start + AWARD_WAIT_MS)
      clock.runUntil(start + AWARD_WAIT_MS - 1)
      await new Promise((resolve) => setTimeout(resolve, 200))
      assert.equal(reader.ended, false, 'refused before the award wait was over')
      clock.runUntil(start + AWARD_WAIT_MS)
      await until('the stream to be refused', () => reader.ended, 2_000)
      assert.equal(await refusals(), before + 1)
    } finally {
      provider.services.exec.onChannel = (channel) => { market.handleChannel(channel) }
      await timed.stop()
    }
  })

  it('preempts a running bronze job for a silver one, with notice', async () => {
    const bronze = await auction('exec sleep 30', [], 'bronze')
    const b = await hand(bronze.request, bronze.bid)
    await b.reader.next('job-status', (m) => m.payload.state === 'running')
    // the only GPU is busy for the next minute: a silver job that must start within 5 s still gets a
    // bid, which preempts the bronze one
    const silver = await auction('echo hi > out.txt', [], 'silver', 5)
    const s = await hand(silver.request, silver.bid)
    assert.equal((await s.reader.next('award-response')).payload.decision, 'accept')
    const notice = await b.reader.next('job-status', (m) => m.payload.state === 'preempted')
    assert.equal(notice.payload.message, 'preempted: 300 ms notice')
    await until('the bronze stream to end', () => b.reader.ended)
    assert.equal(await until('the bronze ledger', async () => await ledgerState(b.award) !== 'open' ? await ledgerState(b.award) : undefined), 'preempted')
    // the silver job runs once the GPU is free
    const receipt = await s.reader.next('receipt')
    assert.equal(receipt.payload.exitCode, 0)
    assert.ok(receipt.payload.startedAt >= notice.payload.issuedAt + 300)
    await s.reader.channel.sendMessage(payment(silver.request, s.award, 1, chargeFor(PRICE, 1, receipt.payload.gpuSeconds * 1000), receipt.payload.gpuSeconds))
    await until('the silver stream to end', () => s.reader.ended)
    assert.equal(await ledgerState(s.award), 'settled')
  })

  it('does not bid in a round it is excluded from, nor twice in one round', async () => {
    const now = Date.now()
    const request = sealMessage(requesterId, 'job-request', {
      v: 1, issuedAt: now, expiresAt: now + 3_600_000, nonce: randomNonce(16),
      workload: { executor: 'process', argv: ['/bin/true'], env: {}, inputs: [], outputs: [], maxRuntimeSec: 60, network: false },
      // no GPU: its pending bid holds none (protocol/README §5.6, "Reservations"), so the tests after it find the GPU free
      resources: { gpus: 0, minVramGB: 0, models: [], cpuCores: 1, memoryMiB: 256, diskMiB: 100 },
      sla: { tier: 'silver', maxPrice: 2 * PRICE, maxStartDelaySec: 60 },
      placement: { regions: [], residency: 'prefer' },
      verification: { mode: 'none' },
      auction: { bidWindowMs: 60_000, paymentRule: 'first-price' }
    })
    const opened = openMessage(request.bytes, 'job-request', { now })
    market.onJob(opened, { round: 2, attempt: 2, excluded: [providerId.peerId], opensAt: now })
    assert.equal(market.status().pending, 0)
    market.onJob(opened, { round: 2, attempt: 2, excluded: [], opensAt: now })
    market.onJob(opened, { round: 2, attempt: 2, excluded: [], opensAt: now })
    assert.equal(market.status().pending, 1)
    // the requester is this node itself: never a bid
    market.onJob({ ...opened, signer: providerId.peerId }, { round: 3, attempt: 2, excluded: [], opensAt: now })
    assert.equal(market.status().pending, 1)
  })

  it('damps on the bids the award would consider: five 1-micro bids that fail screening do not silence it, five that pass do (issue 9 bug 4)', async () => {
    const others = Array.from({ length: 5 }, (_, i) => new Identity(new Uint8Array(32).fill(90 + i)))
    const run = async (startIn: number): Promise<boolean> => {
      const now = Date.now()
      const request = sealMessage(requesterId, 'job-request', {
        v: 1, issuedAt: now, expiresAt: now + 3_600_000, nonce: randomNonce(16),
        workload: { executor: 'process', argv: ['/bin/true'], env: {}, inputs: [], outputs: [], maxRuntimeSec: 60, network: false },
        // no GPU: the first run's bid, still waiting for its award, holds none when the second is decided
        resources: { gpus: 0, minVramGB: 0, models: [], cpuCores: 1, memoryMiB: 256, diskMiB: 100 },
        sla: { tier: 'silver', maxPrice: 2 * PRICE, maxStartDelaySec: 60 },
        placement: { regions: [], residency: 'prefer' },
        verification: { mode: 'none' },
        // the provider's ask is half the cap: it waits about 0.5 × 60 % of the window, time to see the others
        auction: { bidWindowMs: 2_000, paymentRule: 'first-price' }
      })
      const waiting = market.status().pending
      market.onJob(openMessage(request.bytes, 'job-request', { now }))
      assert.equal(market.status().pending, waiting + 1)
      for (const other of others) {
        const bid = sealMessage(other, 'bid', {
          v: 1, issuedAt: now, expiresAt: now + 60_000, job: request.cid, provider: other.peerId, price: 1,
          gpus: [`GPU-other-${other.peerId.slice(-6)}`], model: 'nvidia-l4', vramMiB: 23034, region: 'eu', startBy: now + startIn, ad: request.cid
        })
        market.onBid(openMessage(bid.bytes, 'bid', { now }))
      }
      await until('the damping delay', () => market.status().pending === waiting ? true : undefined)
      await new Promise((resolve) => setTimeout(resolve, 300))
      return gossiped.some((m) => m.kind === 'bid' && m.signer === providerId.peerId && (m as OpenedMessage<'bid'>).payload.job.equals(request.cid))
    }
    // a start a day away is LATE_START for a job that allows 60 s: the award would drop them
    assert.equal(await run(86_400_000), true, 'bids despite five cheaper bids the award would drop')
    assert.equal(await run(1_000), false, 'silent after five cheaper bids the award would consider')
  })

  it('starts a job waiting for a busy GPU as soon as the GPU comes free', async () => {
    const first = await auction('sleep 1; echo first > out.txt')
    const a = await hand(first.request, first.bid)
    await a.reader.next('job-status', (m) => m.payload.state === 'running')
    // the GPU is held for up to a minute (the first job's max runtime): the second bids to start then
    const second = await auction('echo second > out.txt', [], 'silver', 120)
    assert.ok(second.bid.payload.startBy >= Date.now() + 50_000)
    const b = await hand(second.request, second.bid)
    assert.equal((await b.reader.next('award-response')).payload.decision, 'accept')
    const receiptA = await a.reader.next('receipt')
    await a.reader.channel.sendMessage(payment(first.request, a.award, 1, chargeFor(PRICE, 1, receiptA.payload.gpuSeconds * 1000), receiptA.payload.gpuSeconds))
    // the first job settles, its GPU is released, and the second starts at once
    const receiptB = await b.reader.next('receipt')
    assert.equal(receiptB.payload.exitCode, 0)
    assert.ok(receiptB.payload.startedAt >= receiptA.payload.endedAt)
    assert.ok(receiptB.payload.startedAt < second.bid.payload.startBy - 50_000)
    await b.reader.channel.sendMessage(payment(second.request, b.award, 1, chargeFor(PRICE, 1, receiptB.payload.gpuSeconds * 1000), receiptB.payload.gpuSeconds))
    await until('both streams to end', () => a.reader.ended && b.reader.ended)
    assert.equal(await ledgerState(b.award), 'settled')
  })

  it('places a manifest input as a directory, and fails cleanly when an input is not granted', async () => {
    const a = await requesterBlobs.put(enc.encode('a\n'))
    const b = await requesterBlobs.put(enc.encode('b\n'))
    const dir = await requesterBlobs.putCbor({ files: [{ path: 'a.txt', size: a.size, cid: a.cid }, { path: 'sub/b.txt', size: b.size, cid: b.cid }] })
    for (const cid of [dir.cid, a.cid, b.cid]) requesterBlobs.grant(cid, provider.peerId)
    const ok = await auction('cat data/a.txt data/sub/b.txt > out.txt', [{ path: 'data', cid: dir.cid, size: a.size + b.size }])
    const run = await hand(ok.request, ok.bid)
    const receipt = await run.reader.next('receipt')
    assert.equal(receipt.payload.exitCode, 0)
    const manifest = decodeCanonical(await fetchFromProvider(receipt.payload.outputs)) as { files: Array<{ cid: CID }> }
    assert.equal(dec.decode(await fetchFromProvider(manifest.files[0]!.cid)), 'a\nb\n')
    await run.reader.channel.sendMessage(payment(ok.request, run.award, 1, chargeFor(PRICE, 1, receipt.payload.gpuSeconds * 1000), receipt.payload.gpuSeconds))
    await until('the stream to end', () => run.reader.ended)

    // an input the requester never granted: the job fails (exit −1) and says why
    const secret = await requesterBlobs.put(enc.encode('secret\n'))
    const bad = await auction('cat secret.txt', [{ path: 'secret.txt', cid: secret.cid, size: secret.size }])
    const failed = await hand(bad.request, bad.bid)
    const status = await failed.reader.next('job-status', (m) => m.payload.state === 'failed')
    assert.match(status.payload.message ?? '', /inputs could not be fetched/)
    assert.equal((await failed.reader.next('receipt')).payload.exitCode, -1)
    await until('the stream to end', () => failed.reader.ended)
    // the ledger entry is written beside the stream's close, not before it
    assert.equal(await until('the ledger', async () => await ledgerState(failed.award) !== 'open' ? await ledgerState(failed.award) : undefined), 'failed')
  })
})
