/**
 * cli/sim-charts.ts: the report's charts rendered to SVG (parses, same bytes each time) and PNG (a real
 * PNG: signature and IHDR dimensions), with the font found or a typed error before anything is written.
 */
import assert from 'node:assert/strict'
import { mkdtemp, readFile, rm, stat } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Resvg } from '@resvg/resvg-js'
import { ChartFontError, ChartSpecError, findChartFont, renderSvg, writeCharts } from '../../../cli/sim-charts.js'
import { central } from '../../../simulations/baselines/central.js'
import { oldWay } from '../../../simulations/baselines/old-way.js'
import { charts } from '../../../simulations/report/charts.js'
import { metrics } from '../../../simulations/report/metrics.js'
import { buildReport } from '../../../simulations/report/report.js'
import { handCase, handFloors, listPrice } from '../simulations/baselines/fixtures.js'

const PNG_SIGNATURE = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]

function specs (): ReturnType<typeof charts> {
  const w = handCase()
  const runs = [oldWay(w, { listPrice }), central(w, { listPrice, floorOf: handFloors })]
  const report = buildReport(w, metrics(w, runs))
  return charts({ report, runs, messagesVsN: [{ n: 10, messagesPerJob: 12 }, { n: 100, messagesPerJob: 30 }, { n: 1000, messagesPerJob: 55 }] })
}

describe('cli/sim-charts: rendering the report\'s charts', function () {
  this.timeout(20_000)
  let dir: string
  beforeEach(async () => { dir = await mkdtemp(join(tmpdir(), 'gpumesh-charts-')) })
  afterEach(async () => { await rm(dir, { recursive: true, force: true }) })

  it('writes every chart as spec, SVG and PNG; the PNGs open, the SVGs parse', async () => {
    const all = specs()
    assert.deepEqual(Object.keys(all), ['utilization-over-time', 'cost-by-tier', 'wait-cdf', 'messages-per-job', 'revenue-per-idle-hour'])
    const written = await writeCharts(join(dir, 'charts'), all)
    assert.equal(written.length, 15)
    for (const name of Object.keys(all)) {
      const png = await readFile(join(dir, 'charts', `${name}.png`))
      assert.deepEqual([...png.subarray(0, 8)], PNG_SIGNATURE, `${name}.png has the PNG signature`)
      assert.equal(png.subarray(12, 16).toString('latin1'), 'IHDR')
      const width = png.readUInt32BE(16)
      const height = png.readUInt32BE(20)
      assert.ok(width >= 200 && height >= 150, `${name}.png is ${width}×${height}`)
      const svg = await readFile(join(dir, 'charts', `${name}.svg`), 'utf8')
      assert.match(svg, /^<svg[^>]* width="\d+" height="\d+"/)
      const parsed = new Resvg(svg) // throws on SVG it cannot parse
      assert.equal(Math.round(parsed.width), width, 'the PNG is the SVG at its own size')
      assert.deepEqual(JSON.parse(await readFile(join(dir, 'charts', `${name}.vl.json`), 'utf8')), all[name])
    }
    const png = await stat(join(dir, 'charts', 'cost-by-tier.png'))
    assert.ok(png.size > 5_000, 'bars and text drawn, not an empty canvas')
  })

  it('marks the arrival horizon on the utilization chart with a dashed rule at its hour', async () => {
    const w = handCase()
    const runs = [oldWay(w, { listPrice })]
    const report = buildReport(w, metrics(w, runs))
    const spec = charts({ report, runs, messagesVsN: [] })['utilization-over-time'] as { layer: Array<{ mark: { type: string }, data?: { values: Array<{ hour: number }> } }> }
    const rule = spec.layer.find((l) => l.mark.type === 'rule')
    assert.equal(rule?.data?.values[0]?.hour, w.horizonMs / 3_600_000)
    const svg = await renderSvg(spec as unknown as Record<string, unknown>)
    assert.match(svg, /arrival horizon/)
    assert.match(svg, /stroke-dasharray="4,4"/)
  })

  it('renders the same SVG bytes for the same spec', async () => {
    const spec = specs()['cost-by-tier']!
    assert.equal(await renderSvg(spec), await renderSvg(structuredClone(spec)))
  })

  it('fails closed without a font, before writing anything', async () => {
    assert.throws(() => findChartFont(join(dir, 'no-such-font.ttf')), (e: unknown) => e instanceof ChartFontError && e.code === 'NO_CHART_FONT')
    assert.throws(() => findChartFont(undefined, [join(dir, 'a.ttf'), join(dir, 'b.ttf')]), ChartFontError)
    await assert.rejects(writeCharts(join(dir, 'out'), specs(), { fontFile: join(dir, 'missing.ttf') }), ChartFontError)
    await assert.rejects(stat(join(dir, 'out')), 'no folder was created')
  })

  it('refuses a spec vega-lite cannot compile with a typed error', async () => {
    await assert.rejects(renderSvg({ mark: 'no-such-mark', data: { values: [] } }, 'broken'), (e: unknown) => e instanceof ChartSpecError && e.message.startsWith('chart broken:'))
  })
})
