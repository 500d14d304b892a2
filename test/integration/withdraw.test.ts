import assert from 'node:assert/strict'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { resolveConfig } from '../../node/config/load.js'
import { Daemon } from '../../node/daemon.js'
import { silentLoggers } from '../../node/logger.js'
import { NodeStore } from '../../node/storage.js'
import { capabilityKeys, modelSlug } from '../../protocol/index.js'

describe('capability keys across restarts (level peer store)', function () {
  this.timeout(30_000)
  let dir: string
  before(async () => { dir = await mkdtemp(join(tmpdir(), 'gpumesh-withdraw-')) })
  after(async () => { await rm(dir, { recursive: true, force: true }) })

  const start = async (provider: Record<string, unknown>): Promise<Daemon> => await Daemon.start({
    dataDir: dir,
    role: 'node',
    config: resolveConfig([{ source: 'test', values: { listen: ['/ip4/127.0.0.1/tcp/0'], communityBootstrap: false, provider: { detectGpus: false, ...provider } } }]),
    bootstrapPeers: [],
    loggers: silentLoggers,
    version: 'test',
    api: false
  })

  it('remembers what it announces, forgets it on a clean stop, and drops what a crashed run left', async () => {
    const gpus = [{ name: 'NVIDIA L4', vramMiB: 23034, count: 1 }]
    const wanted = capabilityKeys({ gpus: [{ model: modelSlug('NVIDIA L4'), vramMiB: 23034 }], region: 'eu' })
    const first = await start({ region: 'eu', gpus })
    assert.deepEqual((await first.store.announcedKeys()).sort(), wanted)
    await first.stop()
    let store = await NodeStore.open(dir)
    assert.deepEqual(await store.announcedKeys(), [])
    // a run that died without withdrawing leaves its keys recorded
    await store.setAnnouncedKeys(['region/us', ...wanted])
    await store.close()

    const second = await start({ region: 'eu', gpus })
    assert.deepEqual((await second.store.announcedKeys()).sort(), wanted)
    await second.stop()

    store = await NodeStore.open(dir)
    await store.setAnnouncedKeys(wanted)
    await store.close()
    const notSelling = await start({ sell: false })
    assert.deepEqual(await notSelling.store.announcedKeys(), [])
    assert.deepEqual(notSelling.announcer.state(), [])
    await notSelling.stop()
  })
})
