import assert from 'node:assert/strict'
import { lpStream } from '@libp2p/utils'
import { generateIdentity } from '../../node/random.js'
import { PROTOCOLS, RejectReason, sealMessage, type CapabilityAd } from '../../protocol/index.js'
import { multiaddr, type Multiaddr } from '@multiformats/multiaddr'
import { AD_ADDRESS_RESIGN_MS, type Daemon } from '../../node/daemon.js'
import { CapabilityFetchError } from '../../node/services/capability.js'
import { startNetwork, type TestNetwork } from '../helpers/network.js'

/** libp2p's components, which the node object holds but its public type does not name. */
interface WithTransports { components: { transportManager: { listen: (addrs: Multiaddr[]) => Promise<void> } } }

describe('/gpumesh/capability/1.0.0 against misbehaving peers (in-process)', function () {
  this.timeout(60_000)
  let net: TestNetwork
  let honest: Daemon
  let liar: Daemon
  let asker: Daemon

  before(async () => {
    net = await startNetwork([
      { region: 'eu', gpus: ['NVIDIA L4:23034'] },
      { region: 'eu', gpus: ['NVIDIA L4:23034'] },
      { region: 'eu', sell: false }
    ])
    ;[honest, liar, asker] = net.nodes as [Daemon, Daemon, Daemon]
    await asker.node.dial(honest.node.getMultiaddrs()[0]!)
    await asker.node.dial(liar.node.getMultiaddrs()[0]!)
  })
  after(async () => { await net?.stop() })

  async function fetchError (): Promise<CapabilityFetchError> {
    try {
      await asker.node.services.capability.fetch(liar.node.peerId, { signal: AbortSignal.timeout(5000) })
    } catch (err) {
      assert.ok(err instanceof CapabilityFetchError, String(err))
      return err
    }
    assert.fail('the bad ad was accepted')
  }

  function liarServes (bytes: Uint8Array | undefined): void {
    liar.node.services.capability.currentAd = () => bytes
  }

  const validAd = (): CapabilityAd => honestAd()
  function honestAd (): CapabilityAd {
    return { v: 1, issuedAt: Date.now(), expiresAt: Date.now() + 60_000, seq: 1, gpus: honest.status().gpus, host: { cpuCores: 1, memoryMiB: 1, diskGiB: 0 }, region: 'eu', price: { floor: 1 }, availability: { timeZone: 'UTC', windows: [] }, workloads: ['process'], limits: {}, attestations: [], addrs: [] }
  }

  it('fetches and verifies an honest ad', async () => {
    const ad = await asker.node.services.capability.fetch(honest.node.peerId)
    assert.equal(ad.signer, honest.identity.peerId)
    assert.equal(ad.payload.gpus[0]?.name, 'NVIDIA L4')
  })

  it('a new address is in the ad fetched about 2 s later, with a higher seq (AD_ADDRESS_RESIGN_MS)', async () => {
    const before = await asker.node.services.capability.fetch(honest.node.peerId)
    // a new listener, as a relay reservation adds one (its /p2p-circuit address)
    const added = `/memory/capability-test-${process.pid}/p2p/${honest.identity.peerId}`
    assert.ok(!before.payload.addrs.includes(added))
    await (honest.node as unknown as WithTransports).components.transportManager.listen([multiaddr(`/memory/capability-test-${process.pid}`)])
    const start = Date.now()
    let after = before
    while (!after.payload.addrs.includes(added)) {
      assert.ok(Date.now() - start < 10_000, `the ad still names ${before.payload.addrs.join(', ')}`)
      await new Promise((resolve) => setTimeout(resolve, 200))
      after = await asker.node.services.capability.fetch(honest.node.peerId)
    }
    assert.ok(after.payload.seq > before.payload.seq)
    assert.ok(Date.now() - start >= AD_ADDRESS_RESIGN_MS - 500, 'signed again before the burst window ended')
  })

  it('garbage in the response frame is a typed rejection', async () => {
    liarServes(new Uint8Array([1, 2, 3, 4, 5]))
    const err = await fetchError()
    assert.equal(err.code, 'BAD_RESPONSE')
    assert.equal(err.reason, RejectReason.MALFORMED_ENVELOPE)
  })

  it('an ad signed by someone else is refused (WRONG_SIGNER)', async () => {
    liarServes(sealMessage(generateIdentity(), 'capability-ad', validAd()).bytes)
    assert.equal((await fetchError()).code, 'WRONG_SIGNER')
  })

  it('a replayed copy of another provider\'s real ad is refused', async () => {
    const real = await asker.node.services.capability.fetch(honest.node.peerId)
    liarServes(real.bytes)
    assert.equal((await fetchError()).code, 'WRONG_SIGNER')
  })

  it('an expired ad is refused', async () => {
    const ad = { ...validAd(), issuedAt: Date.now() - 120_000, expiresAt: Date.now() - 60_000 }
    liarServes(sealMessage(liar.identity, 'capability-ad', ad).bytes)
    const err = await fetchError()
    assert.equal(err.code, 'BAD_RESPONSE')
    assert.equal(err.reason, RejectReason.EXPIRED)
  })

  it('an oversized frame is refused before it is read', async () => {
    liarServes(new Uint8Array(64 * 1024).fill(7))
    const err = await fetchError()
    assert.equal(err.code, 'BAD_RESPONSE')
    assert.equal(err.reason, RejectReason.TOO_LARGE)
  })

  it('a provider that stops selling answers NOT_SELLING', async () => {
    liarServes(undefined)
    assert.equal((await fetchError()).code, 'NOT_SELLING')
  })

  it('garbage sent to a provider aborts that stream only; it keeps serving', async () => {
    for (const request of [Uint8Array.from([5, 1, 2, 3, 4, 5]), Uint8Array.from([0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01])]) {
      const stream = await asker.node.dialProtocol(honest.node.peerId, PROTOCOLS.capability)
      stream.send(request)
      await assert.rejects(lpStream(stream).read({ signal: AbortSignal.timeout(5000) }))
    }
    const served = await honest.metrics.registry.getSingleMetricAsString('gpumesh_capability_served_total')
    assert.match(served, /result="bad-request"\} 2/)
    const ad = await asker.node.services.capability.fetch(honest.node.peerId)
    assert.equal(ad.signer, honest.identity.peerId)
  })

  it('an over-long length prefix that never ends is refused at once, not at the 5 s timeout', async () => {
    const before = await servedBadRequests()
    for (const request of [Uint8Array.from([0x80]), Uint8Array.from([0x80, 0x80]), Uint8Array.from([0x80, 0x00])]) {
      const stream = await asker.node.dialProtocol(honest.node.peerId, PROTOCOLS.capability)
      stream.send(request)
      // the responder's own timeout is 5 s: a reset before 2 s is the prefix being refused
      const err = await lpStream(stream).read({ signal: AbortSignal.timeout(2_000) }).then(() => undefined, (e: Error) => e)
      assert.ok(err !== undefined, 'the stream was answered')
      assert.notEqual(err.name, 'TimeoutError', `stream ${Buffer.from(request).toString('hex')} was held until the reader gave up`)
      assert.notEqual(err.name, 'AbortError', `stream ${Buffer.from(request).toString('hex')} was held until the reader gave up`)
    }
    assert.equal(await servedBadRequests(), before + 3)
  })

  async function servedBadRequests (): Promise<number> {
    const metric = await honest.metrics.registry.getSingleMetric('gpumesh_capability_served_total')?.get()
    return metric?.values.find((v) => v.labels.result === 'bad-request')?.value ?? 0
  }

  it('discovery reports a misbehaving provider as a failure and lists the honest one', async () => {
    liarServes(new Uint8Array([9, 9, 9]))
    await Promise.all([honest, liar].map(async (d) => { d.announcer.kick(); await d.announcer.idle() }))
    const result = await asker.findProviders({ region: 'eu' })
    assert.deepEqual(result.providers.map((p) => p.peerId), [honest.identity.peerId])
    assert.deepEqual(result.failures.map((f) => [f.peerId, f.code]), [[liar.identity.peerId, 'BAD_RESPONSE']])
    const rejected = await asker.metrics.registry.getSingleMetricAsString('gpumesh_messages_rejected_total')
    assert.match(rejected, /kind="capability-ad",reason="MALFORMED_ENVELOPE"/)
  })
})
