/**
 * /gpumesh/probe/1.0.0 between real daemons (in-process libp2p): a provider that declares an H100 but
 * computes on this machine's CPU is flagged; probed against a CPU claim the same machine passes, with
 * its answer labelled `cpu`; the provider refuses a second probe from the same peer; and its ad lists
 * the attestation it signed at start.
 */
import assert from 'node:assert/strict'
import type { Daemon } from '../../node/daemon.js'
import { lpStream } from '@libp2p/utils'
import { ProbeError, deriveMatrix, encodeProduct, multiply } from '../../protocol/trust/probe.js'
import { decodeProbeFrame, encodeProbeFrame } from '../../protocol/trust/probe-frames.js'
import { PROTOCOLS, openMessage } from '../../protocol/index.js'
import { expectedProbeMs, probeClaim } from '../../protocol/trust/probe-throughput.js'
import { cpuProbeDevice } from '../../node/trust/probe-compute.js'
import { verifyAttestation } from '../../protocol/trust/attestation.js'
import { startNetwork, type TestNetwork } from '../helpers/network.js'

describe('/gpumesh/probe/1.0.0: a claimed H100 that computes like a laptop (in-process)', function () {
  this.timeout(120_000)
  let net: TestNetwork
  let liar: Daemon
  let prober: Daemon
  let second: Daemon
  let cheat: Daemon

  before(async () => {
    net = await startNetwork([
      { region: 'eu', gpus: ['NVIDIA H100 80GB HBM3:81559'] },
      { region: 'eu', sell: false },
      { region: 'eu', sell: false },
      { region: 'eu', sell: false }
    ])
    ;[liar, prober, second, cheat] = net.nodes as [Daemon, Daemon, Daemon, Daemon]
    await prober.node.dial(liar.node.getMultiaddrs()[0]!)
    await second.node.dial(liar.node.getMultiaddrs()[0]!)
    await prober.node.dial(cheat.node.getMultiaddrs()[0]!)
  })
  after(async () => { await net?.stop() })

  it('the ad lists the attestation the provider signed at start, and it verifies', async () => {
    const ad = await prober.node.services.capability.fetch(liar.node.peerId)
    const attestation = liar.attestation
    assert.ok(attestation !== undefined)
    assert.deepEqual(ad.payload.attestations.map(String), [attestation.cid.toString()])
    const verified = verifyAttestation(attestation.bytes, ad, { now: Date.now() })
    assert.equal(verified.attestation.payload.gpus[0]?.provenance, 'declared')
    assert.equal(verified.attestation.payload.benchmark.name, 'freivalds-matmul-cpu')
    assert.ok(verified.attestation.payload.benchmark.value > 0)
  })

  it('flags the H100 claim after a CPU probe, and signs what it measured', async () => {
    const ad = await prober.node.services.capability.fetch(liar.node.peerId)
    const claim = probeClaim(ad.payload.gpus[0]?.model)
    assert.equal(claim.device, 'gpu')
    const outcome = await prober.node.services.probe.probe(liar.node.peerId, { claim })
    assert.equal(outcome.verdict, 'flagged', JSON.stringify({ ...outcome.result.payload, nonce: undefined }))
    const opened = openMessage(outcome.result.bytes, 'probe-result', { now: Date.now() })
    assert.equal(opened.signer, prober.node.peerId.toString())
    assert.equal(opened.payload.subject, liar.node.peerId.toString())
    assert.equal(opened.payload.model, 'nvidia-h100-80gb-hbm3')
    assert.ok(opened.payload.durationMs > 2 * opened.payload.expectedMs!)
  })

  it('refuses a second probe from the same peer within the interval', async () => {
    await assert.rejects(prober.node.services.probe.probe(liar.node.peerId, { claim: probeClaim(undefined) }),
      (err: unknown) => err instanceof ProbeError && err.code === 'RATE_LIMITED' && err.message.includes('RATE_LIMITED'))
  })

  it('passes the same machine against a claim it meets many times over, its answer labelled cpu and checked', async () => {
    // 10⁵ MAC/s: n = 32 and ≈ 380 ms expected for ≈ 1 ms of work, so the event-loop noise of four daemons
    // in one process on a loaded machine cannot flag it (the default CPU claim can be, at load 20)
    const claim = { model: 'cpu', device: 'cpu' as const, macPerSec: 1e5 }
    // the abandoned H100-sized product stops at its next slice once the stream is gone
    let outcome
    for (const until = Date.now() + 5_000; ;) {
      try {
        outcome = await second.node.services.probe.probe(liar.node.peerId, { claim })
        break
      } catch (err) {
        if (!(err instanceof ProbeError && err.message.includes('BUSY') && Date.now() < until)) throw err
        await new Promise((resolve) => setTimeout(resolve, 100))
      }
    }
    const p = outcome.result.payload
    assert.equal(outcome.verdict, 'pass', JSON.stringify({ ...p, nonce: undefined }))
    assert.equal(p.ok, true)
    assert.equal(p.device, 'cpu')
    assert.equal(p.model, 'cpu')
    assert.equal(p.size, 32)
    assert.ok(p.durationMs <= 2 * p.expectedMs!)
  })

  it('fails a fast answer that is not the product of this challenge, whatever device it claims', async () => {
    // a cheat answers at once with a product it computed earlier, for another nonce
    const stale = new Uint8Array(16).fill(0xee)
    const precomputed = new Map<number, Uint16Array>()
    cheat.node.services.probe.device = {
      device: 'gpu',
      multiply: async (_nonce, n) => {
        if (!precomputed.has(n)) precomputed.set(n, multiply(deriveMatrix(stale, 'A', n), deriveMatrix(stale, 'B', n), n))
        return precomputed.get(n)!
      }
    }
    const outcome = await prober.node.services.probe.probe(cheat.node.peerId, { claim: probeClaim(undefined) })
    const p = outcome.result.payload
    assert.equal(outcome.verdict, 'failed', JSON.stringify({ ...p, nonce: undefined }))
    assert.equal(p.ok, false)
    assert.equal(p.device, 'gpu')
    assert.match(p.detail ?? '', /^WRONG_PRODUCT/)
  })

  it('fails an answer that does not hash to the digest sent first (a digest sent before the work)', async () => {
    await cheat.node.unhandle(PROTOCOLS.probe)
    await cheat.node.handle(PROTOCOLS.probe, async (stream) => {
      const lp = lpStream(stream)
      const ping = decodeProbeFrame((await lp.read()).subarray(), ['ping'])
      await lp.write(encodeProbeFrame({ kind: 'pong', nonce: ping.nonce }))
      const challenge = decodeProbeFrame((await lp.read()).subarray(), ['freivalds-matmul'])
      // the clock stops at the digest: a cheat sends one at once, then computes the real product
      await lp.write(encodeProbeFrame({ kind: 'digest', device: 'gpu', digest: new Uint8Array(32) }))
      const { nonce, n } = challenge
      await lp.write(encodeProduct(multiply(deriveMatrix(nonce, 'A', n), deriveMatrix(nonce, 'B', n), n)))
      await stream.close()
    })
    const outcome = await second.node.services.probe.probe(cheat.node.peerId, { claim: probeClaim(undefined) })
    const p = outcome.result.payload
    assert.equal(outcome.verdict, 'failed', JSON.stringify({ ...p, nonce: undefined }))
    assert.match(p.detail ?? '', /^DIGEST_MISMATCH/)
  })

  it('flags a right answer whose digest comes later than twice the expected time', async () => {
    const claim = { model: 'cpu', device: 'cpu' as const, macPerSec: 1e5 }
    const late = 2 * expectedProbeMs(claim, 32) + 100
    liar.node.services.probe.device = {
      device: 'cpu',
      multiply: async (nonce, n, signal) => {
        await new Promise((resolve) => setTimeout(resolve, late))
        return await cpuProbeDevice.multiply(nonce, n, signal)
      }
    }
    await cheat.node.dial(liar.node.getMultiaddrs()[0]!)
    const outcome = await cheat.node.services.probe.probe(liar.node.peerId, { claim })
    const p = outcome.result.payload
    assert.equal(p.ok, true, 'the answer arrived and is right')
    assert.equal(outcome.verdict, 'flagged', JSON.stringify({ ...p, nonce: undefined }))
    assert.ok(p.durationMs > 2 * p.expectedMs!)
  })

  it('a reachability probe signs the round trip, and a peer that is gone is signed as not answering', async () => {
    const up = await prober.node.services.probe.ping(liar.node.peerId)
    assert.equal(up.verdict, 'pass')
    assert.equal(up.result.payload.kind, 'ping')
    assert.equal(up.result.payload.ok, true)
    assert.ok(up.result.payload.rttMs !== undefined)
    // pings are not rate-limited: the same peer again at once
    assert.equal((await prober.node.services.probe.ping(liar.node.peerId)).verdict, 'pass')
    await cheat.node.unhandle(PROTOCOLS.probe)
    const down = await prober.node.services.probe.ping(cheat.node.peerId)
    assert.equal(down.verdict, 'failed')
    assert.equal(down.result.payload.ok, false)
    assert.match(down.result.payload.detail ?? '', /^NO_ANSWER/)
  })
})
