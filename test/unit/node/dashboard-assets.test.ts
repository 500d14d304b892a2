import assert from 'node:assert/strict'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { request as httpRequest } from 'node:http'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { DASHBOARD_PATH, SECURITY_HEADERS, loadDashboard } from '../../../node/api/dashboard-assets.js'
import { startApiServer, type ApiServer } from '../../../node/api/server.js'
import { silentLoggers } from '../../../node/logger.js'
import { createMetrics } from '../../../node/metrics.js'

const TOKEN = 'test-token-0123456789'

/** The dashboard's own browser modules, as the build copied them (plain JS, no types). */
const dashboardModule = async (name: string): Promise<any> => await import(new URL(`../../../node/api/dashboard/${name}`, import.meta.url).href)

/** A raw GET of `path` as written (fetch would normalise `..`). */
async function rawGet (url: string, path: string, method = 'GET'): Promise<{ status: number, type: string }> {
  return await new Promise((resolve, reject) => {
    const req = httpRequest(new URL(url), { method, path }, (res) => {
      res.resume()
      res.on('end', () => { resolve({ status: res.statusCode ?? 0, type: String(res.headers['content-type'] ?? '') }) })
    })
    req.on('error', reject)
    req.end()
  })
}

describe('dashboard files on the API port (node/api/dashboard-assets.ts)', () => {
  let server: ApiServer

  before(async () => {
    server = await startApiServer({
      host: '127.0.0.1', port: 0, token: TOKEN, metrics: createMetrics(), log: silentLoggers.forComponent('api'),
      routes: { '/v1/status': async () => ({ ok: true }) }
    })
  })
  after(async () => { await server.close() })

  it('serves the page and its files without the token, with the strict policy; nothing else skips the token', async () => {
    for (const [path, type] of [['/dashboard', 'text/html'], ['/dashboard/', 'text/html'], ['/dashboard?view=buyer', 'text/html'], ['/dashboard/app.js', 'text/javascript'], ['/dashboard/style.css', 'text/css']] as const) {
      const res = await fetch(new URL(path, server.url))
      assert.equal(res.status, 200, path)
      assert.match(res.headers.get('content-type') ?? '', new RegExp(`^${type}`), path)
      assert.equal(res.headers.get('content-security-policy'), SECURITY_HEADERS['content-security-policy'], path)
      assert.match(res.headers.get('content-security-policy') ?? '', /^default-src 'self';/)
    }
    // an API answer carries the policy too, and still needs the token
    const denied = await fetch(new URL('/v1/status', server.url))
    assert.equal(denied.status, 401)
    assert.equal(denied.headers.get('x-content-type-options'), 'nosniff')
    const ok = await fetch(new URL('/v1/status', server.url), { headers: { authorization: `Bearer ${TOKEN}` } })
    assert.equal(ok.status, 200)
    assert.ok(ok.headers.get('content-security-policy') !== null)
    // no other path, method or spelling gets past the token check
    for (const [path, method] of [['/dashboard/nope.js', 'GET'], ['/dashboard/../api.token', 'GET'], ['/dashboard/app.js', 'POST'], ['/dashboardx', 'GET'], ['/DASHBOARD', 'GET']] as const) {
      assert.equal((await rawGet(server.url, path, method)).status, 401, `${method} ${path}`)
    }
  })

  it('loads only web files with plain names from the folder; a missing folder serves nothing', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'gpumesh-dash-'))
    try {
      for (const name of ['index.html', 'a.js', 'notes.txt', 'key.pem', '.hidden.js', 'Upper.js']) await writeFile(join(dir, name), name)
      const assets = await loadDashboard(pathToFileURL(`${dir}/`))
      assert.deepEqual([...assets.keys()].sort(), [DASHBOARD_PATH, `${DASHBOARD_PATH}/`, `${DASHBOARD_PATH}/a.js`, `${DASHBOARD_PATH}/index.html`])
      assert.equal(assets.get(DASHBOARD_PATH)?.body.toString(), 'index.html')
      assert.equal((await loadDashboard(pathToFileURL(join(dir, 'missing/')))).size, 0)
    } finally {
      await rm(dir, { recursive: true, force: true })
    }
  })
})

describe('the dashboard\'s numbers (node/api/dashboard/*.js, run here in Node)', () => {
  const entry = (role: string, cumulative: number, updatedAt: number, gpuSeconds = 0): Record<string, unknown> => ({ role, cumulative, updatedAt, gpuSeconds, state: 'settled' })

  it('earnings add up the provider side only, in time order; spend the requester side', async () => {
    const { earningsSeries } = await dashboardModule('provider.js')
    const { spendSeries } = await dashboardModule('buyer.js')
    const entries = [entry('provider', 300, 20), entry('requester', 50, 5), entry('provider', 100, 10), entry('provider', 0, 30)]
    assert.deepEqual(earningsSeries(entries), [{ x: 10, y: 100 }, { x: 20, y: 400 }])
    assert.deepEqual(spendSeries(entries), [{ x: 5, y: 50 }])
  })

  it('fill rate: GPU-seconds sold since start over the GPUs offered × time since start; none offered when not selling', async () => {
    const { fillRate } = await dashboardModule('provider.js')
    const status = { selling: true, gpus: [{}, {}], startedAt: 1_000 }
    // 2 GPUs × 100 s offered; 50 GPU-s sold since start (the entry before the start does not count)
    const entries = [entry('provider', 1, 2_000, 50), entry('provider', 1, 500, 40), entry('requester', 1, 3_000, 70)]
    assert.deepEqual(fillRate(status, entries, 101_000), { sold: 50, offered: 200, rate: 0.25 })
    assert.equal(fillRate({ ...status, selling: false }, entries, 101_000).rate, 0)
    // the daemon's offered GPU-seconds (its availability windows) win over the time since start
    assert.deepEqual(fillRate({ ...status, offered: { gpuSeconds: 100, since: 1_000 } }, entries, 101_000), { sold: 50, offered: 100, rate: 0.5 })
  })

  it('axis ticks reach the largest value; the credit axis shows as many decimals as its step needs', async () => {
    const { ticks } = await dashboardModule('chart.js')
    for (const max of [1, 7, 446, 999, 1000, 0.3, 123_456]) {
      const t = ticks(max) as number[]
      assert.ok((t.at(-1) as number) >= max, `${max}: ${t.join(',')}`)
      assert.ok(t.length <= 6, `${max}: ${t.join(',')}`)
    }
    assert.deepEqual(ticks(446), [0, 200, 400, 600])
    const { creditsAxis } = await dashboardModule('dom.js')
    assert.equal(creditsAxis(400, 200), '0.0004')
    assert.equal(creditsAxis(2_500_000, 1_000_000), '2.50')
  })

  it('jobs not bid on: the declined counter summed by reason, most first, zeros left out', async () => {
    const { skippedJobs } = await dashboardModule('provider.js')
    const m = (reason: string, value: number): unknown => ({ name: 'gpumesh_market_bids_declined_total', labels: { reason }, value })
    assert.deepEqual(skippedJobs([m('vram', 1), m('price', 3), m('calendar', 0), { name: 'other', labels: { reason: 'vram' }, value: 9 }, m('vram', 1)]), [['price', 3], ['vram', 2]])
  })

  it('reads Prometheus text: names, labels, values; comments skipped', async () => {
    const { parseMetrics } = await dashboardModule('api.js')
    const text = '# HELP x y\n# TYPE x counter\ngpumesh_dht_provides_total{result="ok"} 3\ngpumesh_connected_peers 2\nweird{a="q\\"x",b="2"} 1.5\n'
    assert.deepEqual(parseMetrics(text), [
      { name: 'gpumesh_dht_provides_total', labels: { result: 'ok' }, value: 3 },
      { name: 'gpumesh_connected_peers', labels: {}, value: 2 },
      { name: 'weird', labels: { a: 'q\\"x', b: '2' }, value: 1.5 }
    ])
  })
})
