import assert from 'node:assert/strict'
import { chmod, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { openMessage } from '../../protocol/index.js'
import { runCli } from '../helpers/cli.js'

describe('gpumesh CLI (separate processes)', function () {
  // a test spawns up to nine `gpumesh` processes one after another: a backstop for a loaded machine, no speed target
  this.timeout(120_000)
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

  it('help <command> <subcommand> prints the subcommand\'s help; bootstrap --help lists no seller flags', async () => {
    const submit = await runCli(['help', 'job', 'submit'])
    assert.equal(submit.code, 0, submit.stderr)
    assert.match(submit.stdout, /^Usage: gpumesh job submit /)
    assert.match(submit.stdout, /--max-price <credits>/)
    assert.equal((await runCli(['help', 'job'])).stdout, (await runCli(['job', '--help'])).stdout)
    const unknown = await runCli(['help', 'job', 'frobnicate'])
    assert.equal(unknown.code, 2)
    assert.match(unknown.stderr, /unknown command 'job frobnicate'/)
    const bootstrap = await runCli(['bootstrap', '--help'])
    assert.equal(bootstrap.code, 0)
    assert.match(bootstrap.stdout, /--bootstrap <multiaddr\.\.\.>/)
    for (const seller of ['--region', '--country', '--price-floor', '--declare-gpu', '--no-detect-gpus', '--no-sell', '--windows', '--time-zone']) {
      assert.ok(!bootstrap.stdout.includes(seller), `bootstrap --help lists ${seller}`)
    }
  })

  it('init on a new data dir names the flags it saved; on an existing one it applies them and shows what changed', async () => {
    const fresh = await runCli(['init', '--data-dir', dir, '--region', 'us-east'])
    assert.equal(fresh.code, 0, fresh.stderr)
    assert.match(fresh.stdout, /config: +\S+config\.json \(written with the defaults and --region; /)
    const file = join(dir, 'config.json')
    const again = await runCli(['init', '--data-dir', dir, '--region', 'eu-west', '--price-floor', '1.85', '--declare-gpu', 'NVIDIA L4:23034x2'])
    assert.equal(again.code, 0, again.stderr)
    assert.match(again.stdout, /config: +\S+config\.json \(updated\)\n +provider\.region: "us-east" → "eu-west" \(--region\)\n +provider\.priceFloor: 2 → 1\.85 \(--price-floor\)\n +provider\.gpus: \[\] → \[\{"name":"NVIDIA L4","vramMiB":23034,"count":2\}\] \(--declare-gpu\)\n$/)
    const saved = JSON.parse(await readFile(file, 'utf8')) as { provider: { region: string, priceFloor: number, gpus: unknown[] } }
    assert.deepEqual([saved.provider.region, saved.provider.priceFloor, saved.provider.gpus.length], ['eu-west', 1.85, 1])
    const same = await runCli(['init', '--data-dir', dir, '--region', 'eu-west', '--json'])
    assert.deepEqual((JSON.parse(same.stdout) as { configChanges: unknown[] }).configChanges, [])
    // a bad flag changes nothing
    const before = await readFile(file, 'utf8')
    const bad = await runCli(['init', '--data-dir', dir, '--region', 'Europe West', '--price-floor', '3'])
    assert.equal(bad.code, 1)
    assert.match(bad.stderr, /provider\.region: .*flag --region/)
    assert.equal(await readFile(file, 'utf8'), before)
    // without flags, init only shows
    const show = await runCli(['init', '--data-dir', dir])
    assert.match(show.stdout, /config: +\S+config\.json\n$/)
    assert.equal(await readFile(file, 'utf8'), before)
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
