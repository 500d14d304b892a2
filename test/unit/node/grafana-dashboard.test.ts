import assert from 'node:assert/strict'
import { readFile } from 'node:fs/promises'
import { yamux } from '@chainsafe/libp2p-yamux'
import { generateKeyPair } from '@libp2p/crypto/keys'
import { memory } from '@libp2p/memory'
import { plaintext } from '@libp2p/plaintext'
import { resolveConfig } from '../../../node/config/load.js'
import { buildLibp2p, type GpumeshLibp2p } from '../../../node/libp2p.js'
import { createMetrics, type NodeMetrics } from '../../../node/metrics.js'

/** Metric names in a PromQL expression: gpumesh's, libp2p's and gossipsub's. */
function metricNames (expr: string): string[] {
  return [...expr.matchAll(/\b((?:gpumesh|libp2p|gossipsub)_[a-zA-Z0-9_]+)/g)].map((m) => m[1] as string)
}

interface Panel { title: string, targets?: Array<{ expr: string }> }
interface Dashboard { panels: Panel[], templating: { list: Array<{ query?: string }> } }

/** What the dashboard queries: every panel target and every template variable query. */
async function dashboardExprs (): Promise<Array<{ where: string, expr: string }>> {
  const dash = JSON.parse(await readFile(new URL('../../../../docs/grafana/gpumesh.json', import.meta.url), 'utf8')) as Dashboard
  return [
    ...dash.panels.flatMap((p) => (p.targets ?? []).map((t) => ({ where: p.title, expr: t.expr }))),
    ...dash.templating.list.filter((v) => typeof v.query === 'string').map((v) => ({ where: 'a template variable', expr: v.query as string }))
  ]
}

/** The series names a registry exposes: each metric's name, and a histogram's _bucket, _sum and _count. */
async function exposed (metrics: NodeMetrics): Promise<Set<string>> {
  const names = new Set<string>()
  for (const m of await metrics.registry.getMetricsAsJSON()) {
    names.add(m.name)
    if (String(m.type) === 'histogram') for (const s of ['_bucket', '_sum', '_count']) names.add(`${m.name}${s}`)
    if (String(m.type) === 'summary') for (const s of ['_sum', '_count']) names.add(`${m.name}${s}`)
  }
  return names
}

describe('the Grafana dashboard (docs/grafana/gpumesh.json) reads metrics that exist', function () {
  this.timeout(30_000)
  let node: GpumeshLibp2p
  let metrics: NodeMetrics

  before(async () => {
    metrics = createMetrics()
    const config = resolveConfig([{ source: 'test', values: { listen: [`/memory/gpumesh-grafana-${process.pid}`], communityBootstrap: false, provider: { detectGpus: false, sell: false } } }])
    assert.equal(config.metrics.libp2p, true, 'a daemon has libp2p metrics on by default')
    node = await buildLibp2p({ privateKey: await generateKeyPair('Ed25519'), config, role: 'node', bootstrapPeers: [], metrics, transports: [memory()], connectionEncrypters: [plaintext()], streamMuxers: [yamux()] })
    await node.start()
  })
  after(async () => { await node?.stop() })

  it('every metric a panel or variable names is in a daemon\'s registry (gpumesh\'s and libp2p\'s)', async () => {
    const names = await exposed(metrics)
    const exprs = await dashboardExprs()
    assert.ok(exprs.length >= 16, `${exprs.length} queries`)
    const missing = exprs.flatMap(({ where, expr }) => metricNames(expr).filter((n) => !names.has(n)).map((n) => `${where}: ${n}`))
    assert.deepEqual(missing, [])
  })

  it('names every market metric of node/metrics.ts somewhere', async () => {
    const used = new Set((await dashboardExprs()).flatMap(({ expr }) => metricNames(expr)))
    const market = [...await exposed(metrics)].filter((n) => n.startsWith('gpumesh_market_') && !/_(bucket|sum|count)$/.test(n))
    assert.ok(market.length >= 12, market.join(' '))
    const unused = market.filter((n) => !used.has(n) && !['_bucket', '_sum', '_count'].some((s) => used.has(`${n}${s}`)))
    assert.deepEqual(unused, [])
  })
})
