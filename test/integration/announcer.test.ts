import assert from 'node:assert/strict'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Daemon } from '../../node/daemon.js'
import { startDaemon } from '../helpers/network.js'

async function until (what: string, predicate: () => boolean, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs
  while (!predicate()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
}

describe('announcing capability keys (in-process)', function () {
  this.timeout(60_000)
  let root: string
  const daemons: Daemon[] = []
  before(async () => { root = await mkdtemp(join(tmpdir(), 'gpumesh-announce-')) })
  after(async () => {
    await Promise.all(daemons.map(async (d) => { await d.stop() }))
    await rm(root, { recursive: true, force: true })
  })

  it('a node alone keeps its keys pending, and announces by itself once peers appear', async () => {
    const lonely = await startDaemon(root, { region: 'eu', gpus: ['NVIDIA L4:23034'] })
    daemons.push(lonely)
    await lonely.announcer.idle()
    assert.ok(lonely.announcer.state().length > 0)
    assert.ok(lonely.announcer.state().every((k) => !k.provided))

    const boot = await startDaemon(root, {}, { role: 'bootstrap' })
    const other = await startDaemon(root, { region: 'us', gpus: ['Tesla T4:15360'] }, { dial: [boot.addresses()[0] as string] })
    daemons.push(boot, other)
    await lonely.node.dial(boot.node.getMultiaddrs()[0]!)
    // no manual kick: the peer:connect event restarts the pending provides
    await until('the lonely node to announce', () => lonely.announcer.state().every((k) => k.provided))
    const found = await other.findProviders({ region: 'eu' })
    assert.deepEqual(found.providers.map((p) => p.peerId), [lonely.identity.peerId])
  })

  it('a stopped provider withdraws its keys and is no longer listed', async () => {
    const [lonely, , other] = daemons as [Daemon, Daemon, Daemon]
    await lonely.stop()
    assert.deepEqual(lonely.announcer.state(), [])
    const found = await other.findProviders({ region: 'eu' }, { timeoutMs: 8000 })
    assert.deepEqual(found.providers, [])
    // its records may linger on other peers until they expire; the ad fetch is what settles it
    assert.ok(found.failures.every((f) => f.peerId === lonely.identity.peerId && f.code === 'UNREACHABLE'))
  })
})
