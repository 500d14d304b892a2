/**
 * `gpumesh sim` through the CLI (a separate process, as a researcher runs it): a small `market` run
 * writes every report file, its PNG charts open (a valid PNG header and size), the same seed gives
 * byte-identical report.json and another seed a different one, and bad input is a clear usage error;
 * one tiny case each for `churn`, `partition`, `no-shows`, `spam`, `sybil`, `cheaters`, `scale` and `flash-crowd`.
 */
import assert from 'node:assert/strict'
import { mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { runCli } from '../helpers/cli.js'

const SMALL = ['sim', '--scenario', 'market', '--nodes', '40', '--jobs', '30']

/** Width and height from a PNG's IHDR, or a failed assertion when the bytes are no PNG. */
function pngSize (bytes: Buffer): { width: number, height: number } {
  assert.deepEqual([...bytes.subarray(0, 8)], [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a], 'PNG signature')
  assert.equal(bytes.subarray(12, 16).toString('latin1'), 'IHDR')
  return { width: bytes.readUInt32BE(16), height: bytes.readUInt32BE(20) }
}

describe('gpumesh sim (separate processes)', function () {
  this.timeout(240_000)
  let root: string
  before(async () => { root = await mkdtemp(join(tmpdir(), 'gpumesh-sim-')) })
  after(async () => { await rm(root, { recursive: true, force: true }) })

  it('writes report.json, report.md, run.json and every chart as SVG and PNG; the same seed gives the same report.json', async () => {
    const a = await runCli([...SMALL, '--seed', '3', '--out', join(root, 'a')], { timeoutMs: 200_000 })
    assert.equal(a.code, 0, a.stderr)
    assert.match(a.stdout, /gpumesh/)
    assert.match(a.stdout, /old-way/)
    assert.match(a.stderr, /gpumesh: 100 %/, 'plain progress lines when stderr is no TTY')
    const files = await readdir(join(root, 'a'))
    for (const f of ['report.json', 'report.md', 'run.json', 'charts']) assert.ok(files.includes(f), `${f} in ${files.join(', ')}`)
    const charts = await readdir(join(root, 'a', 'charts'))
    const pngs = charts.filter((f) => f.endsWith('.png'))
    assert.ok(pngs.length >= 4, charts.join(', '))
    for (const png of pngs) {
      const { width, height } = pngSize(await readFile(join(root, 'a', 'charts', png)))
      assert.ok(width > 100 && height > 100, `${png}: ${width}×${height}`)
      assert.ok(charts.includes(png.replace(/\.png$/, '.svg')))
    }
    const report = JSON.parse(await readFile(join(root, 'a', 'report.json'), 'utf8')) as { run: { seed: number, nodes: number, jobs: number }, strategies: Array<{ strategy: string }>, sections: { traffic: { nodes: number, jobs: number } } }
    assert.deepEqual(report.run, { scenario: 'market', seed: 3, nodes: 40, jobs: 30 })
    assert.deepEqual(Object.keys(report), ['format', 'run', 'workload', 'strategies', 'sections', 'claims'], 'the traffic is a section, not a `scenario` key')
    assert.deepEqual([report.sections.traffic.nodes, report.sections.traffic.jobs], [40, 30])
    assert.match(await readFile(join(root, 'a', 'report.md'), 'utf8'), /## Traffic \(gpumesh\)[\s\S]*## Claims[\s\S]*## Assumptions/)
    assert.deepEqual(report.strategies.map((s) => s.strategy), ['gpumesh', 'old-way', 'central', 'lowest-price', 'random'])
    const run = JSON.parse(await readFile(join(root, 'a', 'run.json'), 'utf8')) as { wallMs: number, peakRssBytes: number }
    assert.ok(run.wallMs > 0 && run.peakRssBytes > 10_000_000)

    const again = await runCli([...SMALL, '--seed', '3', '--out', join(root, 'b'), '--json'], { timeoutMs: 200_000 })
    assert.equal(again.code, 0, again.stderr)
    assert.equal(await readFile(join(root, 'b', 'report.json'), 'utf8'), await readFile(join(root, 'a', 'report.json'), 'utf8'))
    const summary = JSON.parse(again.stdout) as { strategies: unknown[], files: string[] }
    assert.equal(summary.strategies.length, 5)
    const other = await runCli([...SMALL, '--seed', '4', '--out', join(root, 'c')], { timeoutMs: 200_000 })
    assert.equal(other.code, 0, other.stderr)
    assert.notEqual(await readFile(join(root, 'c', 'report.json'), 'utf8'), await readFile(join(root, 'a', 'report.json'), 'utf8'))
  })

  for (const [scenario, fault] of [['no-shows', 'gpumesh+no-shows'], ['spam', 'gpumesh+spam']] as const) {
    it(`runs the ${scenario} scenario at a tiny size: its faults entry and adversaries section in report.json and report.md`, async () => {
      const dir = join(root, scenario)
      const r = await runCli(['sim', '--scenario', scenario, '--nodes', '30', '--jobs', '16', '--out', dir], { timeoutMs: 200_000 })
      assert.equal(r.code, 0, r.stderr)
      assert.match(r.stdout, new RegExp(fault.replace('+', '\\+')))
      const report = JSON.parse(await readFile(join(dir, 'report.json'), 'utf8')) as { strategies: Array<{ strategy: string }>, faults: Array<{ name: string, runs: Array<{ role: string, strategy: string }> }>, sections: { adversaries: { awardsByThird: unknown[] } } }
      assert.deepEqual(report.strategies.map((s) => s.strategy), ['gpumesh', fault, 'central', 'old-way'])
      assert.deepEqual(report.faults.map((f) => [f.name, f.runs.map((x) => `${x.role}:${x.strategy}`)]), [[scenario, [`fault:${fault}`, 'without:gpumesh', 'bound:central']]])
      assert.equal(report.sections.adversaries.awardsByThird.length, 3)
      const md = await readFile(join(dir, 'report.md'), 'utf8')
      assert.match(md, /## Faults/)
      assert.match(md, /## Adversaries/)
      assert.ok((await readdir(join(dir, 'charts'))).some((f) => f.endsWith('.png')))
    })
  }

  for (const [scenario, variants, section] of [['sybil', ['gpumesh+sybil+silent'], 'sybil'], ['cheaters', ['gpumesh+cheaters+replicate-2', 'gpumesh+cheaters+replicate-2-wasm', 'gpumesh+cheaters+replicate-2-wasm-audit'], 'verification']] as const) {
    it(`runs the ${scenario} scenario at a tiny size: its variant run, faults entry and ${section} section in report.json and report.md`, async () => {
      const dir = join(root, scenario)
      const r = await runCli(['sim', '--scenario', scenario, '--nodes', '30', '--jobs', '12', '--out', dir], { timeoutMs: 200_000 })
      assert.equal(r.code, 0, r.stderr)
      const fault = `gpumesh+${scenario}`
      assert.match(r.stdout, new RegExp(fault.replace('+', '\\+')))
      const report = JSON.parse(await readFile(join(dir, 'report.json'), 'utf8')) as { strategies: Array<{ strategy: string }>, faults: Array<{ name: string }>, sections: Record<string, unknown> }
      assert.deepEqual(report.strategies.map((s) => s.strategy), ['gpumesh', fault, ...variants, 'central', 'old-way'])
      assert.deepEqual(report.faults.map((f) => f.name), [scenario])
      assert.ok(report.sections.adversaries !== undefined && report.sections[section] !== undefined)
      const md = await readFile(join(dir, 'report.md'), 'utf8')
      assert.match(md, /## Adversaries/)
      assert.match(md, section === 'sybil' ? /## Sybil identities/ : /## Verification/)
    })
  }

  for (const [scenario, fault] of [['churn', 'gpumesh+churn'], ['partition', 'gpumesh+partition']] as const) {
    it(`runs --scenario ${scenario}: the faults section in report.json and report.md, and its charts`, async () => {
      const dir = join(root, scenario)
      const r = await runCli(['sim', '--scenario', scenario, '--nodes', '40', '--jobs', '30', '--seed', '2', '--out', dir], { timeoutMs: 200_000 })
      assert.equal(r.code, 0, r.stderr)
      assert.match(r.stdout, new RegExp(fault.replace('+', '\\+')))
      assert.match(r.stderr, /\bgpumesh: 100 %/)
      const report = JSON.parse(await readFile(join(dir, 'report.json'), 'utf8')) as { run: { scenario: string }, faults: Array<{ name: string, runs: Array<{ role: string, strategy: string, completion: number }> }>, claims: Array<{ id: string, verdict: string }> }
      assert.equal(report.run.scenario, scenario)
      assert.deepEqual(report.faults.map((f) => f.name), [scenario])
      assert.deepEqual(report.faults[0]?.runs.map((x) => x.strategy), [fault, 'gpumesh', 'central'])
      assert.ok(report.claims.some((c) => c.id.startsWith(scenario) && c.verdict !== 'not measured'), JSON.stringify(report.claims))
      const md = await readFile(join(dir, 'report.md'), 'utf8')
      assert.match(md, new RegExp(`## Faults[\\s\\S]*### ${scenario}[\\s\\S]*## Claims`))
      const charts = await readdir(join(dir, 'charts'))
      assert.ok(charts.filter((f) => f.endsWith('.png')).length >= 4, charts.join(', '))
    })
  }

  it('scale: a tiny ladder writes the scale table, its rows under `sections.scale` in report.json and the messages-per-job chart', async () => {
    const r = await runCli(['sim', '--scenario', 'scale', '--nodes', '110', '--jobs', '6', '--out', join(root, 'scale')], { timeoutMs: 200_000 })
    assert.equal(r.code, 0, r.stderr)
    const report = JSON.parse(await readFile(join(root, 'scale', 'report.json'), 'utf8')) as { run: { scenario: string }, sections: { scale: { sizes: Array<{ nodes: number, wireMessagesPerJob: number, messagesPerJob: number }> } } }
    assert.equal(report.run.scenario, 'scale')
    assert.ok(!('scenario' in report), 'one place for a scenario\'s own results: sections')
    assert.deepEqual(report.sections.scale.sizes.map((s) => s.nodes), [100, 110])
    assert.ok(report.sections.scale.sizes.every((s) => s.wireMessagesPerJob > s.messagesPerJob))
    assert.match(await readFile(join(root, 'scale', 'report.md'), 'utf8'), /## Scale \(gpumesh, 6 jobs at each size\)/)
    const charts = await readdir(join(root, 'scale', 'charts'))
    assert.ok(charts.includes('messages-per-job.png'), charts.join(', '))
    pngSize(await readFile(join(root, 'scale', 'charts', 'messages-per-job.png')))
  })

  it('flash-crowd: a tiny run compares gpumesh and central during and outside the burst', async () => {
    const r = await runCli(['sim', '--scenario', 'flash-crowd', '--nodes', '30', '--jobs', '12', '--out', join(root, 'flash'), '--json'], { timeoutMs: 200_000 })
    assert.equal(r.code, 0, r.stderr)
    const summary = JSON.parse(r.stdout) as { strategies: Array<{ strategy: string }> }
    assert.deepEqual(summary.strategies.map((s) => s.strategy), ['gpumesh', 'central'])
    const report = JSON.parse(await readFile(join(root, 'flash', 'report.json'), 'utf8')) as { sections: { 'flash-crowd': { burst: { jobs: number }, byWindow: Record<string, { during: { all: { jobs: number } } }> }, traffic: { nodes: number } } }
    const flash = report.sections['flash-crowd']
    assert.ok(flash.burst.jobs > 0)
    assert.ok(flash.byWindow.central !== undefined && flash.byWindow.gpumesh !== undefined)
    assert.equal(report.sections.traffic.nodes, 30)
    assert.match(await readFile(join(root, 'flash', 'report.md'), 'utf8'), /\| gpumesh \| during the burst \|/)
  })

  it('refuses an unknown scenario, a bad size and a missing or malformed trace with one clear line', async () => {
    const unknown = await runCli(['sim', '--scenario', 'nope'])
    assert.equal(unknown.code, 2)
    assert.match(unknown.stderr, /unknown scenario "nope" \(known: market/)
    assert.match(unknown.stderr, /\bchurn\b.*\bpartition\b/)
    const size = await runCli(['sim', '--nodes', '0'])
    assert.equal(size.code, 2)
    assert.match(size.stderr, /--nodes must be a whole number ≥ 1, got "0"/)
    const missing = await runCli(['sim', '--trace', join(root, 'none.csv')])
    assert.equal(missing.code, 2)
    assert.match(missing.stderr, /--trace .*none\.csv: no such file/)
    const bad = join(root, 'bad.csv')
    await writeFile(bad, 'submit_s,duration_s,gpus\n0,60,1\n5,-1,1\n')
    const malformed = await runCli([...SMALL, '--trace', bad, '--out', join(root, 'd')])
    assert.equal(malformed.code, 1)
    assert.match(malformed.stderr, /bad\.csv:3: column duration_s: duration must be > 0/)
    assert.doesNotMatch(malformed.stderr, /at .*\.js:\d+/, 'no stack trace')
  })

  it('--calibrate runs real daemons and the model side by side and writes calibration.json; a size below 4 nodes is a usage error', async () => {
    const out = join(root, 'calibration')
    const r = await runCli(['sim', '--calibrate', '--nodes', '4', '--jobs', '2', '--latency', '0', '--bid-window', '500', '--out', out], { timeoutMs: 200_000 })
    const record = JSON.parse(await readFile(join(out, 'calibration.json'), 'utf8')) as { real: { jobs: number }, model: { jobs: number }, stuck: unknown[], comparison: { ok: boolean, rows: Array<{ measure: string }> } }
    assert.equal(r.code, record.comparison.ok ? 0 : 1, r.stderr)
    assert.match(r.stdout, /time to award +ms/)
    assert.match(r.stdout, /bids per job/)
    assert.equal(record.real.jobs, 2)
    assert.equal(record.model.jobs, 2)
    assert.deepEqual(record.stuck, [])
    assert.ok(record.comparison.rows.some((row) => row.measure === 'discovery, whole lookup'))
    const small = await runCli(['sim', '--calibrate', '--nodes', '3'])
    assert.equal(small.code, 2)
    assert.match(small.stderr, /--nodes must be a whole number ≥ 4, got "3"/)
  })
})

