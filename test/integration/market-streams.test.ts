import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { mkdir } from 'node:fs/promises'
import { join } from 'node:path'
import { lpStream } from '@libp2p/utils'
import { PROTOCOLS, openMessage } from '../../protocol/index.js'
import type { Daemon } from '../../node/daemon.js'
import { sealAwardResponse, sealStatus } from '../../node/market/provider-messages.js'
import { MAX_JOB_LOG_BYTES } from '../../node/market/requester.js'
import type { JobView } from '../../node/market/views.js'
import { LOG_WINDOW, MAX_LOG_CHUNK, type ExecChannel } from '../../node/services/exec.js'
import { untilJob, type TestNetwork } from '../helpers/network.js'
import { FINAL_STATUSES, sellerAndBuyer, useNetwork } from '../helpers/market-network.js'

/**
 * The exec stream under load and abuse, over real libp2p (memory transport, yamux) between real
 * daemons: a job that prints megabytes of log, a provider that overruns the log pacing, and peers that
 * open exec streams with frames no honest node sends. The lease is long (30 s), so an attempt that
 * ends "at once" cannot have been ended by it; a stream that merely drops is re-opened, and the lease
 * decides (protocol/README.md §7.7 "Resuming").
 */

const MARKET = { leaseMs: 30_000, billingIntervalSec: 2 }
const FINAL = FINAL_STATUSES

describe('exec streams: any amount of log, and peers that overfill or break them (in-process)', function () {
  this.timeout(120_000)
  let net: TestNetwork
  let provider: Daemon
  let requester: Daemon

  const network = useNetwork(sellerAndBuyer(MARKET), { announce: (nodes) => nodes.slice(0, 1) })
  before(() => {
    net = network.net
    ;[provider, requester] = net.nodes as [Daemon, Daemon]
  })

  async function submit (fields: Record<string, unknown>): Promise<string> {
    const { job } = await requester.market!.submit({ gpus: 1, maxPrice: 2, bidWindowMs: 700, maxRuntimeSec: 60, outputs: ['out.txt'], ...fields })
    return job
  }

  const until = async (id: string, done: (v: JobView) => boolean, timeoutMs?: number): Promise<JobView> => await untilJob(requester, id, done, timeoutMs)

  async function counter (daemon: Daemon, name: string, label: string, value: string): Promise<number> {
    const metric = await daemon.metrics.registry.getSingleMetric(name)?.get()
    return metric?.values.find((v) => v.labels[label] === value)?.value ?? 0
  }

  it('a job that prints 8 MB of log settles on the first provider, with all of its log and no failure report', async () => {
    const size = 8_000_000
    const id = await submit({ command: ['/bin/sh', '-c', `yes 0123456789abcdef | head -c ${size}; echo done > out.txt`] })
    const view = await until(id, (v) => FINAL.has(v.status), 60_000)
    const events = view.events.map((e) => `${e.type}: ${e.text}`).join('\n')
    assert.equal(view.status, 'settled', events)
    assert.equal(view.award?.attempt, 1, events)
    assert.ok(!view.events.some((e) => e.type === 'failure' || e.type === 'stream-failed' || e.type === 're-auction'), events)
    assert.equal(view.logCut, undefined)
    const logs = await requester.market!.requester.logs(id, 0)
    assert.ok(logs !== undefined)
    assert.equal(logs.next, size)
    assert.equal(logs.text, '0123456789abcdef\n'.repeat(Math.ceil(size / 17)).slice(0, size))
    assert.equal(logs.cut, undefined)
  })

  it('a job that prints more than the log cap: the buyer keeps exactly the cap and says the log was cut', async () => {
    const id = await submit({ command: ['/bin/sh', '-c', `head -c ${MAX_JOB_LOG_BYTES + 100_000} /dev/zero | tr '\\0' x; echo done > out.txt`] })
    const view = await until(id, (v) => FINAL.has(v.status), 60_000)
    const events = view.events.map((e) => `${e.type}: ${e.text}`).join('\n')
    assert.equal(view.status, 'settled', events)
    assert.ok(!view.events.some((e) => e.type === 'failure'), events)
    assert.equal(view.logBytes, MAX_JOB_LOG_BYTES)
    assert.match(view.logCut ?? '', new RegExp(`at most ${MAX_JOB_LOG_BYTES} bytes`))
    assert.ok(view.events.some((e) => e.type === 'log-cut'), events)
    const logs = await requester.market!.requester.logs(id, 0)
    assert.equal(logs?.next, MAX_JOB_LOG_BYTES)
    assert.ok(logs?.cut !== undefined)
  })

  it('a winning provider that sends log past its credit: the buyer keeps only what it allowed, says so, and ends the attempt at once', async () => {
    const honest = provider.node.services.exec.onChannel
    let sent = 0
    let stopped: string | undefined
    // the provider still bids as usual; its exec stream is answered by this hostile responder
    provider.node.services.exec.onChannel = (channel: ExecChannel) => {
      void (async () => {
        const frames = channel.frames()
        const first = await frames.next()
        assert.ok(first.done !== true && first.value.type === 'message')
        const award = openMessage(first.value.bytes, 'award', { now: Date.now() })
        const ref = { job: award.payload.job, award: award.cid }
        await channel.sendMessage(sealAwardResponse(provider.identity, ref, 'accept', undefined, Date.now()).bytes)
        await channel.sendMessage(sealStatus(provider.identity, ref, 1, 'running', 0, undefined, Date.now()).bytes)
        const chunk = new Uint8Array(MAX_LOG_CHUNK).fill(0x41)
        try {
          // 16 MiB, paced by the transport, ignoring every credit
          for (; sent < 16 * 1024 * 1024; sent += chunk.byteLength) await channel.send({ type: 'log', offset: sent, data: chunk })
        } catch (err) {
          stopped = (err as Error).message
        }
      })()
    }
    try {
      const before = await counter(requester, 'gpumesh_exec_stream_errors_total', 'code', 'LOG_CREDIT')
      const id = await submit({ command: ['/bin/true'] })
      const view = await until(id, (v) => v.events.some((e) => e.type === 'failure'), 20_000)
      const events = view.events.map((e) => `${e.type}: ${e.text}`).join('\n')
      assert.ok(view.events.some((e) => e.type === 'stream-failed' && /past the credit/.test(e.text)), events)
      assert.ok(view.events.some((e) => e.type === 'failure' && /no-heartbeat: exec stream: log up to byte \d+, past the credit/.test(e.text)), events)
      assert.match(view.logCut ?? '', /past the credit given/)
      assert.ok((view.logBytes ?? 0) <= LOG_WINDOW, `kept ${view.logBytes} bytes`)
      const logs = await requester.market!.requester.logs(id, 0)
      assert.ok((logs?.next ?? 0) <= LOG_WINDOW)
      assert.equal(await counter(requester, 'gpumesh_exec_stream_errors_total', 'code', 'LOG_CREDIT'), before + 1)
      // the stream was aborted: the hostile provider could not push its 16 MiB
      await until(id, () => stopped !== undefined, 10_000)
      assert.ok(sent < 16 * 1024 * 1024, `sent ${sent}`)
      await requester.market!.requester.cancel(id)
    } finally {
      provider.node.services.exec.onChannel = honest
    }
  })

  it('a winning provider that resets the stream mid-job: the requester re-opens it with the same award each time, and the attempt goes on', async () => {
    const honest = provider.node.services.exec.onChannel
    const awards: string[] = []
    provider.node.services.exec.onChannel = (channel: ExecChannel) => {
      void (async () => {
        const first = await channel.frames().next()
        assert.ok(first.done !== true && first.value.type === 'message')
        const award = openMessage(first.value.bytes, 'award', { now: Date.now() })
        awards.push(award.cid.toString())
        const ref = { job: award.payload.job, award: award.cid }
        await channel.sendMessage(sealAwardResponse(provider.identity, ref, 'accept', undefined, Date.now()).bytes)
        await channel.sendMessage(sealStatus(provider.identity, ref, awards.length, 'running', 0, undefined, Date.now()).bytes)
        await new Promise((resolve) => setTimeout(resolve, 200))
        channel.abort(new Error('gone'))
      })()
    }
    try {
      const id = await submit({ command: ['/bin/true'] })
      // each re-opened stream carries a fresher status, so the attempt goes on: the lease (unit-tested in resume.test.ts) never runs out
      await until(id, () => awards.length >= 3, 20_000)
      const view = await until(id, (v) => v.status === 'running')
      const events = view.events.map((e) => `${e.type}: ${e.text}`).join('\n')
      assert.ok(awards.every((a) => a === awards[0]), `the same award on every re-opened stream: ${awards.join(', ')}`)
      assert.ok(view.events.some((e) => e.type === 'stream-failed' && /dropped/.test(e.text)), events)
      assert.ok(!view.events.some((e) => e.type === 'failure' || e.type === 're-auction'), events)
      assert.equal(view.award?.attempt, 1)
      await requester.market!.requester.cancel(id)
    } finally {
      provider.node.services.exec.onChannel = honest
    }
  })

  it('a log this node cannot write ends the job with the reason, blaming nobody', async () => {
    const id = await submit({ command: ['/bin/sh', '-c', 'echo some log; sleep 1; echo done > out.txt'] })
    // the job's log file cannot be created: a directory stands in its place
    await mkdir(join(requester.options.dataDir, 'jobs', id, 'log'), { recursive: true })
    const view = await until(id, (v) => FINAL.has(v.status), 20_000)
    const events = view.events.map((e) => `${e.type}: ${e.text}`).join('\n')
    assert.equal(view.status, 'failed', events)
    assert.match(view.reason ?? '', /^exec stream \(this node\): cannot write the job's log: EISDIR/)
    assert.ok(!view.events.some((e) => e.type === 'failure' || e.type === 're-auction'), events)
  })

  it('exec streams that open with a bad length prefix or bytes no node sends are aborted at once and counted', async () => {
    const badPrefix = randomBytes(64)
    badPrefix[0] = (badPrefix[0] as number) | 0x80
    badPrefix[1] = (badPrefix[1] as number) | 0x80
    badPrefix[2] = (badPrefix[2] as number) | 0x80
    const requests = [
      Uint8Array.from([0xff, 0xff, 0x7f]), // a frame of 2 MiB: over the 32769-byte limit
      Uint8Array.from([0x80, 0x80, 0x80]), // a length prefix longer than any frame's
      Uint8Array.from([0x80, 0x00]), // a non-minimal prefix
      Uint8Array.from([0x03, 0x09, 0x01, 0x02]), // an unknown tag
      badPrefix // random bytes
    ]
    const before = await counter(provider, 'gpumesh_exec_stream_errors_total', 'code', 'BAD_FRAME')
    for (const request of requests) {
      const stream = await requester.node.dialProtocol(provider.node.peerId, PROTOCOLS.exec)
      stream.send(request)
      // the provider waits 10 s for an award: a reset well before is the frame being refused
      const err = await lpStream(stream).read({ signal: AbortSignal.timeout(3_000) }).then(() => undefined, (e: Error) => e)
      const hex = Buffer.from(request).toString('hex')
      assert.ok(err !== undefined, `${hex}: answered`)
      assert.ok(err.name !== 'TimeoutError' && err.name !== 'AbortError', `${hex}: the stream was held until the reader gave up`)
      assert.equal(stream.status, 'reset', hex)
    }
    assert.equal(await counter(provider, 'gpumesh_exec_stream_errors_total', 'code', 'BAD_FRAME'), before + requests.length)
    // and the provider still takes honest work
    const id = await submit({ command: ['/bin/sh', '-c', 'echo ok > out.txt'] })
    // the GPU may still be held for an earlier test's bid, whose award a hostile responder took (until the bid expires)
    assert.equal((await until(id, (v) => FINAL.has(v.status), 90_000)).status, 'settled')
  })
})
