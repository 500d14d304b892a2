import assert from 'node:assert/strict'
import { startNetwork, waitForAnnouncements, type NodeSpec, type TestNetwork } from '../helpers/network.js'
import { A100_80, CATALOG } from '../helpers/catalog.js'
import type { ProviderQuery } from '../../protocol/index.js'

const SPECS = CATALOG

describe('provider discovery over the DHT (20 in-process nodes)', function () {
  this.timeout(240_000)
  let net: TestNetwork

  before(async () => {
    net = await startNetwork(SPECS, { bootstrapCount: 1 })
    await waitForAnnouncements(net.nodes, 180_000)
  })
  after(async () => { await net?.stop() })

  /** The nodes that must answer `query`, by the same rule written out by hand. */
  function expected (predicate: (spec: NodeSpec) => boolean): string[] {
    return SPECS.map((spec, i) => ({ spec, id: net.nodes[i]?.identity.peerId as string }))
      .filter(({ spec }) => spec.sell !== false && predicate(spec))
      .map(({ id }) => id).sort()
  }

  const vramOf = (gpu: string): number => Number(/:(\d+)/.exec(gpu)?.[1])
  const hasGpu = (spec: NodeSpec, test: (gpu: string) => boolean): boolean => (spec.gpus ?? []).some(test)

  const cases: Array<[string, ProviderQuery, (spec: NodeSpec) => boolean]> = [
    ['min VRAM 40 GB', { minVramGB: 40 }, (s) => hasGpu(s, (g) => vramOf(g) >= 40 * 1024 * 0.92)],
    ['min VRAM 80 GB', { minVramGB: 80 }, (s) => hasGpu(s, (g) => vramOf(g) >= 80 * 1024 * 0.92)],
    ['model h100', { gpu: 'h100' }, (s) => hasGpu(s, (g) => g.startsWith('NVIDIA H100'))],
    ['model "A100 80GB"', { gpu: 'A100 80GB' }, (s) => hasGpu(s, (g) => g.startsWith(A100_80))],
    ['region eu', { region: 'eu' }, (s) => (s.region ?? '').startsWith('eu')],
    ['region us-east', { region: 'us-east' }, (s) => s.region === 'us-east'],
    ['region eu, min VRAM 40 GB', { region: 'eu', minVramGB: 40 }, (s) => (s.region ?? '').startsWith('eu') && hasGpu(s, (g) => vramOf(g) >= 40 * 1024 * 0.92)],
    ['region ap, model 4090', { region: 'ap', gpu: '4090' }, (s) => (s.region ?? '').startsWith('ap') && hasGpu(s, (g) => g.includes('4090'))],
    ['min VRAM 50 GB (between buckets)', { minVramGB: 50 }, (s) => hasGpu(s, (g) => vramOf(g) >= 50 * 1024 * 0.92)],
    ['min VRAM 200 GB (nobody)', { minVramGB: 200 }, () => false]
  ]

  for (const [name, query, predicate] of cases) {
    it(`${name}: exactly the matching providers`, async () => {
      // ask from a node that sells nothing matching, and from a bootstrap peer
      for (const asker of [net.bootstraps[0], net.nodes[19]]) {
        const result = await asker!.findProviders(query)
        assert.deepEqual(result.providers.map((p) => p.peerId).sort(), expected(predicate), `${name} asked by ${asker!.identity.peerId}`)
        assert.deepEqual(result.failures, [])
      }
    })
  }

  it('every listed ad is signed by the provider that serves it', async () => {
    const result = await net.bootstraps[0]!.findProviders({ region: 'eu' })
    for (const p of result.providers) {
      const daemon = net.nodes.find((n) => n.identity.peerId === p.peerId)
      assert.ok(daemon !== undefined)
      assert.equal(p.ad.region, daemon.options.config.provider.region)
    }
  })
})
