import assert from 'node:assert/strict'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { DaemonProcess, LOCAL_FLAGS, killAll, waitUntilAnnounced } from '../helpers/processes.js'

interface ProvidersJson { providers: Array<{ peerId: string }>, failures: unknown[] }

// Six providers; three have GPUs of at least 40 GB (memory totals as nvidia-smi reports them)
const NODES = [
  { region: 'eu-west', gpu: 'NVIDIA H100 80GB HBM3:81559x8', big: true },
  { region: 'eu-north', gpu: 'NVIDIA A100-SXM4-40GB:40960x4', big: true },
  { region: 'us-east', gpu: 'NVIDIA L40S:46068x2', big: true },
  { region: 'us-west', gpu: 'NVIDIA GeForce RTX 4090:24564x2', big: false },
  { region: 'ap-south', gpu: 'Tesla T4:15360x4', big: false },
  { region: 'eu-west', gpu: 'NVIDIA A10:23028', big: false }
]

describe('a local network of separate gpumesh processes over TCP', function () {
  this.timeout(300_000)
  let root: string
  const bootstraps: DaemonProcess[] = []
  const nodes: DaemonProcess[] = []
  let bootstrapAddrs: string[] = []
  const peerIds: string[] = []

  const nodeArgs = (spec: { region: string, gpu: string }, peers: string[]): string[] => [
    'node', 'start', ...LOCAL_FLAGS, '--no-detect-gpus', '--region', spec.region, '--declare-gpu', spec.gpu,
    ...peers.flatMap((a) => ['--bootstrap', a])
  ]

  before(async () => {
    root = await mkdtemp(join(tmpdir(), 'gpumesh-e2e-'))
    bootstraps.push(...await Promise.all([0, 1].map(async (i) => await DaemonProcess.start(['bootstrap', ...LOCAL_FLAGS], join(root, `bootstrap-${i}`)))))
    bootstrapAddrs = bootstraps.map((b) => b.addresses()[0] as string)
    assert.ok(bootstrapAddrs.every((a) => /^\/ip4\/127\.0\.0\.1\/tcp\/\d+\/p2p\/12D3KooW/.test(a)), bootstrapAddrs.join(' '))
    nodes.push(...await Promise.all(NODES.map(async (spec, i) => await DaemonProcess.start(nodeArgs(spec, bootstrapAddrs), join(root, `node-${i}`)))))
    // the peer ids as `gpumesh status --json` gave them once every key was on the DHT
    peerIds.push(...(await Promise.all(nodes.map(async (n) => await waitUntilAnnounced(n)))).map((s) => s.peerId))
  })

  after(async () => {
    await killAll()
    if (root !== undefined) await rm(root, { recursive: true, force: true })
  })

  const peerIdOf = async (d: DaemonProcess): Promise<string> => (await d.json<{ peerId: string }>(['status'])).peerId
  const bigOnes = (): string[] => NODES.flatMap((s, i) => s.big ? [peerIds[i] as string] : []).sort()

  it('gpumesh providers --min-vram 40 --json returns exactly the right set, from any node', async () => {
    const expected = bigOnes()
    for (const asker of [nodes[3], nodes[4], bootstraps[1]]) {
      const result = await asker!.json<ProvidersJson>(['providers', '--min-vram', '40'])
      assert.deepEqual(result.providers.map((p) => p.peerId).sort(), expected)
      assert.deepEqual(result.failures, [])
    }
  })

  it('gpumesh peers and status report the network', async () => {
    const peers = await bootstraps[0]!.json<Array<{ peerId: string }>>(['peers'])
    assert.ok(peers.length >= NODES.length, `bootstrap sees ${peers.length} peers`)
    const status = await nodes[0]!.json<{ role: string, selling: boolean, gpus: unknown[], dht: { mode: string } }>(['status'])
    assert.equal(status.role, 'node')
    assert.equal(status.selling, true)
    assert.equal(status.gpus.length, 8)
    assert.equal(status.dht.mode, 'server')
  })

  it('with one bootstrap peer gone, a new node still joins through the other', async () => {
    assert.equal(await bootstraps[0]!.stop(), 0)
    const late = await DaemonProcess.start(nodeArgs({ region: 'eu-central', gpu: 'NVIDIA H100 80GB HBM3:81559x2' }, bootstrapAddrs), join(root, 'late'))
    nodes.push(late)
    const { peerId } = await waitUntilAnnounced(late)
    // the newcomer finds the others, and the others find it
    const seen = await late.json<ProvidersJson>(['providers', '--min-vram', '40'])
    assert.deepEqual(seen.providers.map((p) => p.peerId).sort(), [...bigOnes(), peerId].sort())
    const found = await nodes[4]!.json<ProvidersJson>(['providers', '--region', 'eu-central'])
    assert.deepEqual(found.providers.map((p) => p.peerId), [peerId])
  })

  it('a restarted node keeps its peer id and is found again', async () => {
    const before = await peerIdOf(nodes[1]!)
    assert.equal(await nodes[1]!.stop(), 0)
    nodes[1] = await DaemonProcess.start(nodeArgs(NODES[1]!, bootstrapAddrs), nodes[1]!.dataDir)
    const after = await waitUntilAnnounced(nodes[1]!)
    assert.equal(after.peerId, before)
    const found = await nodes[5]!.json<ProvidersJson>(['providers', '--gpu', 'a100'])
    assert.deepEqual(found.providers.map((p) => p.peerId), [before])
  })
})
