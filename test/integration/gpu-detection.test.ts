/**
 * A real daemon selling what nvidia-smi reports on unified-memory parts and on a garbled line (issue 8):
 * the GPU whose memory is unknown is still sold, with no VRAM bucket, until the owner declares its VRAM;
 * a line that cannot be read costs only that line; `status` says both.
 */
import assert from 'node:assert/strict'
import { readFile, mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { resolveConfig } from '../../node/config/load.js'
import { Daemon } from '../../node/daemon.js'
import { readNvidiaSmiCsv } from '../../node/gpu/nvidia-smi.js'
import { silentLoggers } from '../../node/logger.js'

const FIXTURES = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..', 'test', 'fixtures', 'nvidia-smi')

describe('GPU detection in the daemon: unknown memory and unreadable lines', function () {
  this.timeout(30_000)
  let dir: string
  beforeEach(async () => { dir = await mkdtemp(join(tmpdir(), 'gpumesh-detect-')) })
  afterEach(async () => { await rm(dir, { recursive: true, force: true }) })

  const start = async (fixture: string, provider: Record<string, unknown> = {}): Promise<Daemon> => {
    const text = await readFile(join(FIXTURES, fixture), 'utf8')
    return await Daemon.start({
      dataDir: dir,
      role: 'node',
      config: resolveConfig([{ source: 'test', values: { listen: ['/ip4/127.0.0.1/tcp/0'], communityBootstrap: false, provider } }]),
      bootstrapPeers: [],
      loggers: silentLoggers,
      version: 'test',
      api: false,
      peerStore: 'memory',
      detect: async () => readNvidiaSmiCsv(text)
    })
  }

  it('sells a GB10 with VRAM unknown and no VRAM bucket, and with the VRAM its owner declares', async () => {
    const unknown = await start('gb10-dgx-spark.csv')
    try {
      const status = unknown.status()
      assert.equal(status.selling, true)
      assert.deepEqual(status.gpus.map((g) => [g.name, g.vramMiB, g.provenance]), [['NVIDIA GB10', 0, 'detected']])
      assert.match(status.gpuDetection, /GPU 0 \(NVIDIA GB10\) reports no memory size: sold with VRAM unknown \(no VRAM bucket\); declare it as provider\.gpuVramMiB/)
      assert.deepEqual(status.capabilityKeys.map((k) => k.key).sort(), ['gpu/nvidia-gb10', 'region/local'])
    } finally {
      await unknown.stop()
    }
    const declared = await start('gb10-dgx-spark.csv', { gpuVramMiB: { 0: 122_880 } })
    try {
      const status = declared.status()
      assert.equal(status.gpus[0]?.vramMiB, 122_880)
      assert.match(status.gpuDetection, /122880 MiB declared in provider\.gpuVramMiB/)
      assert.ok(status.capabilityKeys.some((k) => k.key === 'vram/96'))
      assert.ok(!status.capabilityKeys.some((k) => k.key === 'vram/141'))
    } finally {
      await declared.stop()
    }
  })

  it('sells the GPUs on the readable lines and names the one it skipped', async () => {
    const daemon = await start('h100-x8-not-supported-and-truncated.csv')
    try {
      const status = daemon.status()
      assert.deepEqual(status.gpus.map((g) => g.index), [0, 1, 2, 3, 4, 6, 7])
      assert.match(status.gpuDetection, /^nvidia-smi: 7 GPU\(s\); skipped line 6: expected 8 comma-separated fields/)
      assert.match(status.gpuDetection, /GPU 2 \(NVIDIA H100 80GB HBM3\) reports no memory size/)
    } finally {
      await daemon.stop()
    }
  })
})
