import assert from 'node:assert/strict'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { generateKeyPair } from '@libp2p/crypto/keys'
import { peerIdFromPrivateKey } from '@libp2p/peer-id'
import { BootstrapWatcher, retryDelayMs, type WatcherClock } from '../../node/bootstrap-watcher.js'
import type { Daemon } from '../../node/daemon.js'
import { createLoggerFactory } from '../../node/logger.js'
import { startDaemon } from '../helpers/network.js'

/** A stopped clock: timers fire only when the test says so. */
class ManualClock implements WatcherClock {
  at = 1_000_000
  readonly pending: Array<{ due: number, fn: () => void }> = []
  now (): number { return this.at }
  after (ms: number, fn: () => void): () => void {
    const timer = { due: this.at + ms, fn }
    this.pending.push(timer)
    return () => { this.pending.splice(this.pending.indexOf(timer), 1) }
  }

  /** Move to the next timer and run it; returns how far the clock moved. */
  fireNext (): number {
    this.pending.sort((a, b) => a.due - b.due)
    const next = this.pending.shift()
    assert.ok(next !== undefined, 'a retry is scheduled')
    const moved = next.due - this.at
    this.at = next.due
    next.fn()
    return moved
  }
}

describe('the bootstrap watcher (real libp2p nodes over the memory transport, stopped clock)', function () {
  this.timeout(30_000)
  let root: string
  const daemons: Daemon[] = []
  const lines: Array<{ level: string, msg: string }> = []
  const log = createLoggerFactory({ level: 'debug', format: 'json', sink: { write: (l: string) => { lines.push(JSON.parse(l) as { level: string, msg: string }) } } }).forComponent('bootstrap-peers')
  const watchers: BootstrapWatcher[] = []
  before(async () => { root = await mkdtemp(join(tmpdir(), 'gpumesh-bootwatch-')) })
  afterEach(() => { for (const w of watchers.splice(0)) w.stop() })
  after(async () => {
    await Promise.all(daemons.map(async (d) => { await d.stop() }))
    await rm(root, { recursive: true, force: true })
  })
  beforeEach(() => { lines.length = 0 })

  const nobody = async (): Promise<string> => `/memory/gpumesh-nobody-${process.pid}/p2p/${peerIdFromPrivateKey(await generateKeyPair('Ed25519')).toString()}`

  it('warns at once when no bootstrap peer answers, then retries after 1, 2, 4, 8 s, warning only once', async () => {
    const node = await startDaemon(root, { sell: false })
    daemons.push(node)
    const clock = new ManualClock()
    const watcher = new BootstrapWatcher(node.node, [await nobody()], log, { clock })
    watchers.push(watcher)
    assert.equal(watcher.status().state, 'dialling')
    watcher.start()
    await watcher.settled()
    const first = watcher.status()
    assert.equal(first.state, 'unreachable')
    assert.equal(first.failedRounds, 1)
    assert.equal(first.connected, 0)
    assert.equal(first.nextAttemptAt, clock.at + 1_000)
    assert.equal(first.lastErrors.length, 1)
    assert.deepEqual(lines.filter((l) => l.level === 'warn').map((l) => l.msg), ['no bootstrap peer answers (1 configured); retrying with backoff, check the --bootstrap addresses'])
    const waits: number[] = []
    for (let i = 0; i < 4; i++) {
      waits.push(clock.fireNext())
      await watcher.settled()
    }
    assert.deepEqual(waits, [1_000, 2_000, 4_000, 8_000])
    assert.equal(watcher.status().failedRounds, 5)
    assert.equal(clock.pending[0]?.due, clock.at + 16_000)
    assert.equal(lines.filter((l) => l.level === 'warn').length, 1)
    watcher.stop()
    assert.equal(clock.pending.length, 0, 'stop cancels the retry')
    assert.equal(watcher.status().nextAttemptAt, undefined)
  })

  it('connects to a bootstrap peer that answers, and dials again once every connection is lost', async () => {
    const boot = await startDaemon(root, {}, { role: 'bootstrap' })
    const node = await startDaemon(root, { sell: false })
    daemons.push(boot, node)
    const clock = new ManualClock()
    const addr = boot.addresses()[0] as string
    const watcher = new BootstrapWatcher(node.node, [await nobody(), addr, node.addresses()[0] as string], log, { clock })
    watchers.push(watcher)
    watcher.start()
    await watcher.settled()
    assert.deepEqual({ ...watcher.status(), lastErrors: [] }, { state: 'connected', configured: 2, connected: 1, failedRounds: 0, lastErrors: [] }, 'its own address is left out')
    assert.equal(clock.pending.length, 0)
    assert.equal(lines.filter((l) => l.level === 'warn').length, 0)

    await node.node.hangUp(boot.node.peerId)
    assert.equal(node.node.getConnections().length, 0)
    assert.equal(watcher.status().connected, 0)
    assert.equal(watcher.status().nextAttemptAt, clock.at + 1_000)
    assert.ok(lines.some((l) => l.level === 'warn' && l.msg.includes('lost every connection')))
    clock.fireNext()
    await watcher.settled()
    assert.equal(watcher.status().state, 'connected')
    assert.equal(watcher.status().connected, 1)
  })

  it('no bootstrap peers configured: state none, nothing dialled', async () => {
    const node = await startDaemon(root, { sell: false })
    daemons.push(node)
    const clock = new ManualClock()
    const watcher = new BootstrapWatcher(node.node, [], log, { clock })
    watcher.start()
    assert.deepEqual(watcher.status(), { state: 'none', configured: 0, connected: 0, failedRounds: 0, lastErrors: [] })
    assert.equal(clock.pending.length, 0)
    assert.equal(node.status().bootstrap.state, 'none', 'the daemon reports it in status')
  })
})

describe('retryDelayMs (exponential backoff)', () => {
  it('1 s after the first failure, doubling, capped at 60 s', () => {
    assert.equal(retryDelayMs(0), 0)
    assert.deepEqual([1, 2, 3, 4, 5, 6, 7].map((n) => retryDelayMs(n)), [1_000, 2_000, 4_000, 8_000, 16_000, 32_000, 60_000])
    assert.equal(retryDelayMs(1_000), 60_000)
    // exactly at the cap and one past it
    assert.equal(retryDelayMs(3, { initialMs: 10, maxMs: 40, factor: 2 }), 40)
    assert.equal(retryDelayMs(4, { initialMs: 10, maxMs: 40, factor: 2 }), 40)
  })
})
