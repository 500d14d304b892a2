import assert from 'node:assert/strict'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { FindResult } from '../../node/discovery.js'
import type { ProbeSummary } from '../../node/trust/prober.js'
import { DaemonProcess, LOCAL_FLAGS, killAll, waitUntilAnnounced } from '../helpers/processes.js'

/**
 * `gpumesh probe <peer-id>` against a real network (separate processes over TCP): a provider that
 * declares an H100 on this CPU is flagged, the answer labelled cpu; `providers` then shows that probe.
 */
describe('gpumesh probe: a declared H100 on this CPU is flagged (separate processes)', function () {
  this.timeout(120_000)
  let root: string
  let provider: DaemonProcess
  let buyer: DaemonProcess

  before(async () => {
    root = await mkdtemp(join(tmpdir(), 'gpumesh-e2e-probe-'))
    const bootstrap = await DaemonProcess.start(['bootstrap', ...LOCAL_FLAGS, '--log-level', 'warn'], join(root, 'bootstrap'), { timeoutMs: 60_000 })
    const addr = bootstrap.addresses()[0] as string
    ;[provider, buyer] = await Promise.all([
      DaemonProcess.start(['node', 'start', ...LOCAL_FLAGS, '--log-level', 'warn', '--bootstrap', addr, '--no-detect-gpus', '--declare-gpu', 'NVIDIA H100 80GB HBM3:81559', '--region', 'eu-west'], join(root, 'provider'), { timeoutMs: 60_000 }),
      DaemonProcess.start(['node', 'start', ...LOCAL_FLAGS, '--log-level', 'warn', '--bootstrap', addr, '--no-sell'], join(root, 'buyer'), { timeoutMs: 60_000 })
    ])
  })

  after(async () => {
    await killAll()
    if (root !== undefined) await rm(root, { recursive: true, force: true })
  })

  it('prints measured against claimed, flags the claim, and providers lists the probe', async () => {
    const { peerId } = await waitUntilAnnounced(provider)
    const json = await buyer.cli(['probe', peerId, '--json'], 60_000)
    assert.equal(json.code, 0, json.stderr)
    const p = JSON.parse(json.stdout) as ProbeSummary & { adFetched: boolean }
    assert.equal(p.peer, peerId)
    assert.equal(p.kind, 'freivalds-matmul')
    assert.equal(p.model, 'nvidia-h100-80gb-hbm3')
    assert.equal(p.claimedDevice, 'gpu')
    assert.equal(p.adFetched, true)
    assert.equal(p.flagged, true, json.stdout)
    assert.ok(p.measuredMs > 2 * p.expectedMs!)

    const text = await buyer.cli(['probe', peerId], 60_000)
    assert.equal(text.code, 0, text.stderr)
    assert.match(text.stdout, /verdict: +FLAGGED — the claim is more than 2× faster than measured/)
    assert.match(text.stdout, /against nvidia-h100-80gb-hbm3 \(gpu, from its ad\)/)

    const found = await buyer.json<FindResult>(['providers'])
    const listed = found.providers.find((f) => f.peerId === peerId)
    assert.ok(listed?.probe !== undefined, JSON.stringify(found.providers.map((f) => f.peerId)))
    assert.equal(listed.probe.flagged, true)
    const table = await buyer.cli(['providers'])
    assert.match(table.stdout, /LAST PROBE/)
    assert.match(table.stdout, /FLAGGED \(\d+ ms vs \d+ ms expected for nvidia-h100-80gb-hbm3/)
  })
})
