/**
 * A provider without bubblewrap (issue 8): separate `gpumesh node start` processes with bwrap hidden from
 * their PATH. By default the node refuses buyers' process jobs and stops offering them; with
 * `executors.process.sandbox = none` it offers them, and its log, `status`, its capability ad and the
 * buyers' `providers` listing all say they run unsandboxed. Declared GPUs get UUIDs unique to the node and
 * the same after a restart. `providers` filters and shows VRAM in nominal GB.
 */
import assert from 'node:assert/strict'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { CapabilityAd } from '../../protocol/index.js'
import { DaemonProcess, LOCAL_FLAGS, killAll } from '../helpers/processes.js'

interface StatusJson { peerId: string, executors: Record<string, string>, workloads: string[], gpus: Array<{ uuid: string }> }
interface ProvidersJson { providers: Array<{ peerId: string, ad: CapabilityAd, reputation?: { known: boolean } }> }

/** A PATH without bubblewrap (nor anything else). */
const NO_BWRAP = { PATH: '/nonexistent-gpumesh-bin' }
const ARGS = ['node', 'start', ...LOCAL_FLAGS, '--no-detect-gpus', '--declare-gpu', 'NVIDIA L4:23034x2']
const asRoot = process.getuid?.() === 0

describe('issue 8 through the CLI: a provider without a sandbox (bwrap hidden from PATH), declared GPU uuids, nominal VRAM', function () {
  this.timeout(120_000)
  let root: string

  before(async () => { root = await mkdtemp(join(tmpdir(), 'gpumesh-e2e-sandbox-')) })
  after(async () => {
    await killAll()
    if (root !== undefined) await rm(root, { recursive: true, force: true })
  })

  /** The node's own ad, as `providers` lists it (a network of one answers locally). */
  const ownAd = async (daemon: DaemonProcess): Promise<CapabilityAd> => {
    const found = await daemon.json<ProvidersJson>(['providers'])
    assert.equal(found.providers.length, 1)
    return (found.providers[0] as ProvidersJson['providers'][number]).ad
  }

  it('refuses buyers\' process jobs by default, and says so in the log, status and ad', async () => {
    const daemon = await DaemonProcess.start(ARGS, join(root, 'strict'), { env: NO_BWRAP })
    const status = await daemon.json<StatusJson>(['status'])
    assert.match(status.executors.process ?? '', /^refused: bwrap not found on PATH \(\/nonexistent-gpumesh-bin\).*executors\.process\.sandbox to "none"/)
    assert.deepEqual(status.workloads, ['wasm'])
    const ad = await ownAd(daemon)
    assert.deepEqual(ad.workloads, ['wasm'])
    assert.equal(ad.processSandbox, undefined)
    assert.match(daemon.stderr, /refusing buyers' process jobs/)
    const text = await daemon.cli(['status'])
    assert.match(text.stdout, /process: +refused: bwrap not found/)
    const listing = await daemon.cli(['providers'])
    assert.match(listing.stdout, /PROCESS JOBS/)
    assert.match(listing.stdout, /not offered/)
    // the node's reputation view of the provider (itself, no history): the prior, said so
    assert.match(listing.stdout, /REPUTATION/)
    assert.match(listing.stdout, /0\.25 \(no history: the prior\)/)
    const found = await daemon.json<ProvidersJson>(['providers'])
    assert.equal(found.providers[0]?.reputation?.known, false)
    await daemon.stop()
  })

  it('runs them unsandboxed only with sandbox none, visible to buyers; declared GPU UUIDs are unique per node and survive a restart', async () => {
    const dataDir = join(root, 'opted-out')
    const env = { ...NO_BWRAP, GPUMESH_PROCESS_SANDBOX: 'none' }
    // another node (strict, no opt-out) beside it, started at once, to compare GPU uuids with
    const [opted, other] = await Promise.all([DaemonProcess.start(ARGS, dataDir, { env }), DaemonProcess.start(ARGS, join(root, 'strict'), { env: NO_BWRAP })])
    let daemon = opted
    const status = await daemon.json<StatusJson>(['status'])
    assert.match(status.executors.process ?? '', /^UNSANDBOXED \(executors\.process\.sandbox = "none"\)/)
    assert.match(status.executors.process ?? '', asRoot ? /as nobody \(uid 65534, gid 65534\)/ : /as the daemon's own user .* can read identity\.key and api\.token/)
    assert.deepEqual(status.workloads, ['process', 'wasm'])
    assert.match(daemon.stderr, /process jobs run WITHOUT a sandbox/)
    const ad = await ownAd(daemon)
    assert.equal(ad.processSandbox, 'none')
    const listing = (await daemon.cli(['providers'])).stdout
    assert.match(listing, /UNSANDBOXED/)
    assert.match(listing, /2× NVIDIA L4 24 GB \(22\.5 GiB reported\)/)

    // declared UUIDs: derived from this node's peer id, distinct from another node's, stable across restarts
    const uuids = status.gpus.map((g) => g.uuid)
    assert.equal(new Set(uuids).size, 2)
    assert.ok(uuids.every((u) => /^GPU-declared-[0-9a-f]{16}-[01]$/.test(u)), uuids.join(' '))
    const strict = await other.json<StatusJson>(['status'])
    assert.ok(strict.gpus.every((g) => !uuids.includes(g.uuid)), 'two nodes share a GPU uuid')
    await Promise.all([daemon.stop(), other.stop()])
    daemon = await DaemonProcess.start(ARGS, dataDir, { env })
    assert.deepEqual((await daemon.json<StatusJson>(['status'])).gpus.map((g) => g.uuid), uuids)
    await daemon.stop()
  })

  it('with bubblewrap on its PATH, says its process jobs are sandboxed', async function () {
    const daemon = await DaemonProcess.start(ARGS, join(root, 'sandboxed'))
    const status = await daemon.json<StatusJson>(['status'])
    if (/^refused/.test(status.executors.process ?? '')) this.skip() // no working bubblewrap on this machine
    assert.match(status.executors.process ?? '', /^sandboxed with \S*bwrap/)
    assert.equal((await ownAd(daemon)).processSandbox, 'bwrap')
    assert.match((await daemon.cli(['providers'])).stdout, /sandboxed \(bwrap\)/)
    await daemon.stop()
  })

  it('providers filters and shows VRAM in nominal GB: an H100 is 80 GB, not 86; an L40S 48 GB', async () => {
    const args = ['node', 'start', ...LOCAL_FLAGS, '--no-detect-gpus', '--declare-gpu', 'NVIDIA H100 80GB HBM3:81559', 'NVIDIA L40S:46068']
    const daemon = await DaemonProcess.start(args, join(root, 'vram'))
    // a network of one searches only its own ad; when that does not match it says it is not connected (exit 1)
    const count = async (...query: string[]): Promise<number> => {
      const result = await daemon.cli(['providers', '--json', ...query])
      if (result.code === 1 && /not connected to any peer/.test(result.stderr)) return 0
      assert.equal(result.code, 0, result.stderr)
      return (JSON.parse(result.stdout) as ProvidersJson).providers.length
    }
    // independent queries, each its own CLI run: at once
    const queries: Array<[string[], number]> = [[['--min-vram', '86'], 0], [['--min-vram', '81'], 0], [['--min-vram', '80'], 1], [['--min-vram', '48', '--gpu', 'l40s'], 1], [['--min-vram', '49', '--gpu', 'l40s'], 0]]
    assert.deepEqual(await Promise.all(queries.map(async ([query]) => [query, await count(...query)])), queries)
    const listing = (await daemon.cli(['providers', '--min-vram', '48'])).stdout
    assert.match(listing, /NVIDIA H100 80GB HBM3 80 GB \(79\.6 GiB reported\)/)
    assert.match(listing, /NVIDIA L40S 48 GB \(45\.0 GiB reported\)/)
    assert.match((await daemon.cli(['status'])).stdout, /NVIDIA L40S \(48 GB \(45\.0 GiB reported\), declared\)/)
    assert.match((await daemon.cli(['providers', '--help'])).stdout, /nominal GB/)
    await daemon.stop()
  })
})
