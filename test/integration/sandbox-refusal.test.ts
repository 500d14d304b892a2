/**
 * A real daemon whose only configured workload is `process`, with bubblewrap hidden from its PATH:
 * it refuses those jobs, so it has nothing to sell — no ad, no capability keys — and says why.
 */
import assert from 'node:assert/strict'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { resolveConfig } from '../../node/config/load.js'
import { Daemon } from '../../node/daemon.js'
import { createLoggerFactory } from '../../node/logger.js'

describe('a daemon that can only sell process jobs and has no sandbox', function () {
  this.timeout(30_000)
  let dir: string
  const savedPath = process.env.PATH
  before(async () => { dir = await mkdtemp(join(tmpdir(), 'gpumesh-refusal-')) })
  after(async () => {
    process.env.PATH = savedPath
    await rm(dir, { recursive: true, force: true })
  })

  it('sells nothing, announces nothing, and names the reason', async () => {
    const lines: string[] = []
    process.env.PATH = '/nonexistent-gpumesh-bin' // the executors read the daemon's PATH when they are made
    let daemon: Daemon
    try {
      daemon = await Daemon.start({
        dataDir: dir,
        role: 'node',
        config: resolveConfig([{ source: 'test', values: { listen: ['/ip4/127.0.0.1/tcp/0'], communityBootstrap: false, provider: { detectGpus: false, gpus: ['NVIDIA L4:23034'], workloads: ['process'] } } }]),
        bootstrapPeers: [],
        loggers: createLoggerFactory({ level: 'info', format: 'json', sink: { write: (line) => { lines.push(line) } } }),
        version: 'test',
        api: false,
        peerStore: 'memory'
      })
    } finally {
      process.env.PATH = savedPath
    }
    try {
      const status = daemon.status()
      assert.equal(status.selling, false)
      assert.equal(status.ad, undefined)
      assert.deepEqual(status.capabilityKeys, [])
      assert.deepEqual(status.workloads, [])
      assert.match(status.executors.process ?? '', /^refused: bwrap not found on PATH/)
      assert.ok(lines.some((l) => l.includes('refusing buyers\' process jobs')), lines.join(''))
      assert.ok(lines.some((l) => l.includes('nothing to sell: every configured workload is refused')), lines.join(''))
    } finally {
      await daemon.stop()
    }
  })
})
