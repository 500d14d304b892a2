import assert from 'node:assert/strict'
import { chmod, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { openMessage } from '../../protocol/index.js'
import { runCli } from '../helpers/cli.js'

describe('gpumesh CLI (separate processes)', () => {
  let dir: string
  beforeEach(async () => { dir = await mkdtemp(join(tmpdir(), 'gpumesh-cli-')) })
  afterEach(async () => { await rm(dir, { recursive: true, force: true }) })

  it('--version prints the package version, --help lists the commands', async () => {
    const pkg = JSON.parse(await readFile(new URL('../../../package.json', import.meta.url), 'utf8')) as { version: string }
    const version = await runCli(['--version'])
    assert.equal(version.code, 0)
    assert.equal(version.stdout.trim(), pkg.version)
    const help = await runCli(['--help'])
    assert.equal(help.code, 0)
    assert.match(help.stdout, /Usage: gpumesh/)
    assert.match(help.stdout, /\binit\b/)
  })

  it('an unknown command is a usage error (exit 2)', async () => {
    const result = await runCli(['frobnicate'])
    assert.equal(result.code, 2)
    assert.match(result.stderr, /unknown command/)
  })

  it('init creates a 0600 identity once and keeps its peer id', async () => {
    const first = await runCli(['init', '--data-dir', dir, '--json'])
    assert.equal(first.code, 0, first.stderr)
    const a = JSON.parse(first.stdout) as { peerId: string, created: boolean, identityFile: string }
    assert.equal(a.created, true)
    assert.match(a.peerId, /^12D3KooW/)
    assert.equal((await stat(a.identityFile)).mode & 0o777, 0o600)
    const second = await runCli(['init', '--data-dir', dir, '--json'])
    const b = JSON.parse(second.stdout) as { peerId: string, created: boolean }
    assert.equal(b.created, false)
    assert.equal(b.peerId, a.peerId)
  })

  it('GPUMESH_DATA_DIR chooses the data dir', async () => {
    const result = await runCli(['init', '--json'], { env: { GPUMESH_DATA_DIR: dir } })
    assert.equal(result.code, 0, result.stderr)
    assert.equal((JSON.parse(result.stdout) as { identityFile: string }).identityFile, join(dir, 'identity.key'))
  })

  it('init --show-ad prints a signed capability ad that any peer can verify', async () => {
    const result = await runCli(['init', '--data-dir', dir, '--show-ad', '--json', '--region', 'eu-west',
      '--declare-gpu', 'NVIDIA H100 80GB HBM3:81559', '--declare-gpu', 'NVIDIA H100 80GB HBM3:81559', '--price-floor', '1.85'])
    assert.equal(result.code, 0, result.stderr)
    const out = JSON.parse(result.stdout) as { peerId: string, capabilityAd: { envelope: string, cid: string, dhtKeys: Array<{ key: string }> } }
    const opened = openMessage(new Uint8Array(Buffer.from(out.capabilityAd.envelope, 'base64')), 'capability-ad', { now: Date.now() })
    assert.equal(opened.signer, out.peerId)
    assert.equal(opened.cid.toString(), out.capabilityAd.cid)
    assert.equal(opened.payload.gpus.length, 2)
    assert.equal(opened.payload.price.floor, 1_850_000)
    assert.ok(opened.payload.gpus.every((g) => g.provenance === 'declared' && g.model === 'nvidia-h100-80gb-hbm3'))
    assert.ok(out.capabilityAd.dhtKeys.some((k) => k.key === 'market/eu/80'))
  })

  it('a bad --declare-gpu or --region is a clear error', async () => {
    const gpu = await runCli(['init', '--data-dir', dir, '--show-ad', '--declare-gpu', 'H100'])
    assert.equal(gpu.code, 1)
    assert.match(gpu.stderr, /NAME:VRAM_MIB/)
    const region = await runCli(['init', '--data-dir', dir, '--show-ad', '--region', 'Europe West'])
    assert.equal(region.code, 1)
    assert.match(region.stderr, /region/)
  })

  it('a corrupt identity file is an error and is left untouched', async () => {
    await runCli(['init', '--data-dir', dir])
    const path = join(dir, 'identity.key')
    const garbage = Buffer.from('not a key at all')
    await writeFile(path, garbage, { mode: 0o600 })
    const result = await runCli(['init', '--data-dir', dir])
    assert.equal(result.code, 1)
    assert.match(result.stderr, /corrupt/)
    assert.deepEqual(await readFile(path), garbage)
  })

  it('an identity file readable by others is refused', async () => {
    await runCli(['init', '--data-dir', dir])
    await chmod(join(dir, 'identity.key'), 0o644)
    const result = await runCli(['init', '--data-dir', dir])
    assert.equal(result.code, 1)
    assert.match(result.stderr, /chmod 600/)
  })
})
