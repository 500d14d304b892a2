import assert from 'node:assert/strict'
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import wabt from 'wabt'
import type { FindResult } from '../../node/discovery.js'
import type { JobView } from '../../node/market/views.js'
import type { JobVerifyView } from '../../node/trust/convictions.js'
import { DaemonProcess, LOCAL_FLAGS, eventually, killAll, waitUntilAnnounced } from '../helpers/processes.js'

const HERE = dirname(fileURLToPath(import.meta.url))
/** dist/test/fixtures/cheating-provider.js: `gpumesh` with a wasm executor that alters outputs. */
const CHEATER_BIN = join(HERE, '..', 'fixtures', 'cheating-provider.js')
/** The wasm test module (a tiny busybox), in the source tree. */
const BOX_WAT = join(HERE, '..', '..', '..', 'test', 'fixtures', 'wasm', 'box.wat')

/**
 * Issue 11's fraud-proof test with real daemons, each a separate process over TCP on 127.0.0.1: a
 * requester, an honest provider, a cheating provider (a real daemon whose wasm executor alters every
 * output; the daemon has no cheat switch, the fixture wraps the executor) and a third node that never
 * dealt with the cheater. The requester submits the job with `replicate 2`: both providers run it, their
 * outputs split 1:1, the requester re-executes the wasm job itself, pays the honest replica, reports the
 * cheater and publishes a wrong-output fraud proof; the third node re-executes the proof, convicts the
 * cheater (`providers --json` names the proof) and awards its next job to the honest provider although
 * the cheater bids lower. A node that joins later learns the conviction from its peers on
 * /gpumesh/history/1.0.0 and refuses the cheater too. The requester runs with `verification.replicaIndependence: peer`: both
 * providers are on 127.0.0.1, one /16, which the default rule refuses as one network.
 */
describe('fraud proofs between real daemons: a wrong output is caught, the proof spreads, a third node refuses the cheater', function () {
  this.timeout(240_000)
  let root: string
  let honest: DaemonProcess
  let cheater: DaemonProcess
  let requester: DaemonProcess
  let third: DaemonProcess
  let honestId: string
  let cheaterId: string
  let jobFile: string
  let bootstrapAddr: string

  const node = (args: string[], name: string, bootstrap: string, bin?: string, env?: NodeJS.ProcessEnv): Promise<DaemonProcess> =>
    DaemonProcess.start(['node', 'start', ...LOCAL_FLAGS, '--log-level', 'warn', '--bootstrap', bootstrap, '--no-detect-gpus', ...args], join(root, name), { timeoutMs: 60_000, ...(bin !== undefined ? { bin } : {}), ...(env !== undefined ? { env } : {}) })

  before(async () => {
    root = await mkdtemp(join(tmpdir(), 'gpumesh-e2e-fraud-'))
    const work = join(root, 'work')
    await mkdir(work, { recursive: true })
    const module = (await wabt()).parseWat('box.wat', await readFile(BOX_WAT, 'utf8'))
    try { module.validate(); await writeFile(join(work, 'box.wasm'), module.toBinary({}).buffer) } finally { module.destroy() }
    jobFile = join(work, 'job.yaml')
    await writeFile(jobFile, [
      'executor: wasm',
      'command: [box.wasm, write, out.txt, "the right answer"]',
      'inputs: [box.wasm]',
      'outputs: [out.txt]',
      'gpus: 1',
      'maxPrice: 2',
      'bidWindow: 1500ms',
      'maxRuntime: 60s',
      ''
    ].join('\n'))
    const bootstrap = await DaemonProcess.start(['bootstrap', ...LOCAL_FLAGS, '--log-level', 'warn'], join(root, 'bootstrap'))
    const addr = bootstrap.addresses()[0] as string
    bootstrapAddr = addr
    ;[honest, cheater, requester, third] = await Promise.all([
      node(['--declare-gpu', 'NVIDIA L40S:46068x1', '--region', 'eu-west', '--price-floor', '1.5'], 'honest', addr),
      node(['--declare-gpu', 'NVIDIA L40S:46068x1', '--region', 'eu-west', '--price-floor', '0.8'], 'cheater', addr, CHEATER_BIN),
      node(['--no-sell'], 'requester', addr, undefined, { GPUMESH_REPLICA_INDEPENDENCE: 'peer' }),
      node(['--no-sell'], 'third', addr)
    ])
    honestId = (await waitUntilAnnounced(honest)).peerId
    cheaterId = (await waitUntilAnnounced(cheater)).peerId
  })

  after(async () => {
    await killAll()
    if (root !== undefined) await rm(root, { recursive: true, force: true })
  })

  /** Submit the wasm job from `d` and wait until it settles. */
  async function runJob (d: DaemonProcess, extra: string[] = []): Promise<JobView> {
    const submitted = await d.cli(['job', 'submit', '--file', jobFile, ...extra, '--wait', '--json'], 120_000)
    assert.equal(submitted.code, 0, `${submitted.stdout}\n${submitted.stderr}`)
    const view = JSON.parse(submitted.stdout) as JobView
    assert.equal(view.status, 'settled', view.reason)
    return view
  }

  it('replicate 2: the replicas split, the requester re-executes, pays the honest one, reports the cheater and publishes the fraud proof', async () => {
    const view = await runJob(requester, ['--replicate', '2'])
    const replicas = view.replication?.replicas ?? []
    assert.deepEqual(replicas.map((r) => r.provider).sort(), [cheaterId, honestId].sort(), JSON.stringify(view.replication))
    // the cheater's outputs agree with its own manifest: nothing but the comparison shows the lie
    assert.notEqual(replicas[0]?.outputs, replicas[1]?.outputs)
    assert.equal(replicas.find((r) => r.provider === honestId)?.verdict, 'matched')
    assert.equal(replicas.find((r) => r.provider === cheaterId)?.verdict, 'outvoted')
    assert.equal(view.replication?.reexecution, replicas.find((r) => r.provider === honestId)?.outputs)
    // the requester's own view: convicted on the proof it signed after its own re-execution
    const convicted = await eventually('the requester to convict the cheater', async () => {
      const found = await requester.json<FindResult>(['providers'])
      return found.providers.find((p) => p.peerId === cheaterId)?.reputation?.convicted
    }, 120_000, 1000)
    assert.match(convicted, /^bafy/)
    // the honest replica's output re-executes to the same bytes (job verify compares the paid receipt)
    const verify = await requester.cli(['job', 'verify', view.id, '--json'], 120_000)
    assert.equal(verify.code, 0, `${verify.stdout}\n${verify.stderr}`)
    const result = JSON.parse(verify.stdout) as JobVerifyView
    assert.equal(result.verified, true)
    assert.equal(result.provider, honestId)
  })

  it('the third node, which never dealt with the cheater, convicts it from the proof and awards its next job to the honest provider', async () => {
    const convicted = await eventually('the third node to convict the cheater', async () => {
      const found = await third.json<FindResult>(['providers'])
      const entry = found.providers.find((p) => p.peerId === cheaterId)
      return entry?.reputation?.convicted
    }, 120_000, 1000)
    assert.match(convicted, /^bafy/)
    const human = await third.cli(['providers'])
    assert.match(human.stdout, new RegExp(`${cheaterId}.*CONVICTED`))
    const view = await runJob(third)
    assert.equal(view.award?.provider, honestId)
    const cheaterBid = view.bids.find((b) => b.provider === cheaterId)
    assert.ok(cheaterBid !== undefined, `the cheater bid: ${JSON.stringify(view.bids)}`)
    assert.ok(cheaterBid.price < (view.bids.find((b) => b.provider === honestId)?.price ?? 0))
    assert.equal(cheaterBid.rejected, 'CONVICTED')
    // and the honest provider's output re-executes to the same bytes
    const verify = await third.cli(['job', 'verify', view.id], 120_000)
    assert.equal(verify.code, 0, `${verify.stdout}\n${verify.stderr}`)
    assert.match(verify.stdout, /verified by re-execution/)
  })

  it('the conviction survives a restart of the third node', async () => {
    assert.equal(await third.stop(), 0)
    third = await DaemonProcess.start(['node', 'start', ...LOCAL_FLAGS, '--log-level', 'warn', '--bootstrap', bootstrapAddr, '--no-sell', '--no-detect-gpus'], third.dataDir, { timeoutMs: 60_000 })
    const found = await eventually('the restarted node to list the cheater', async () => {
      const r = await third.json<FindResult>(['providers'])
      return r.providers.find((p) => p.peerId === cheaterId)
    }, 60_000, 1000)
    assert.match(found.reputation?.convicted ?? '', /^bafy/)
  })

  it('a node that joins after the proof spread learns the conviction from its peers (history, §7.11) and refuses the cheater', async () => {
    // gossip is not replayed: the late joiner asks a few peers for their convictions on joining, re-executes
    // the wrong-output proof they serve, and convicts the cheater before it has dealt with it
    const late = await node(['--no-sell'], 'late', bootstrapAddr)
    const convicted = await eventually('the late joiner to learn the conviction', async () => {
      const found = await late.json<FindResult>(['providers'])
      return found.providers.find((p) => p.peerId === cheaterId)?.reputation?.convicted
    }, 120_000, 1000)
    assert.match(convicted, /^bafy/)
    const human = await late.cli(['providers'])
    assert.match(human.stdout, new RegExp(`${cheaterId}.*CONVICTED`))
    const view = await runJob(late)
    assert.equal(view.award?.provider, honestId)
    const cheaterBid = view.bids.find((b) => b.provider === cheaterId)
    assert.ok(cheaterBid !== undefined, `the cheater bid: ${JSON.stringify(view.bids)}`)
    assert.equal(cheaterBid.rejected, 'CONVICTED')
    const verify = await late.cli(['job', 'verify', view.id, '--json'], 120_000)
    assert.equal(verify.code, 0, `${verify.stdout}\n${verify.stderr}`)
    const result = JSON.parse(verify.stdout) as JobVerifyView
    assert.equal(result.verified, true)
    assert.equal(result.provider, honestId)
  })
})
