/**
 * simulations/report/faults.ts: the faults section counts completion, re-auctions and lost GPU-hours per
 * named fault run and per phase, judges each expectation, and lands in report.json and report.md.
 */
import assert from 'node:assert/strict'
import type { JobOutcome, StrategyRun } from '../../../../simulations/model.js'
import { metrics } from '../../../../simulations/report/metrics.js'
import { buildReport, reportJson, reportMarkdown } from '../../../../simulations/report/report.js'
import { faultMetrics, FaultSpecError, lostGpuHours, type FaultSpec } from '../../../../simulations/report/faults.js'
import { HOUR, MIN, T4, job, node, workload } from '../baselines/fixtures.js'

const w = workload([node('A', T4, 1, 'eu-west')], [
  job('j1', 0, HOUR),
  job('j2', 10 * MIN, HOUR, { tier: 'gold' }),
  job('j3', 2 * HOUR, HOUR, { tier: 'bronze' }),
  job('j4', 3 * HOUR, 2 * HOUR)
])

function outcome (id: string, status: JobOutcome['status'], extra: Partial<JobOutcome> = {}): JobOutcome {
  const j = w.jobs.find((x) => x.id === id)
  if (j === undefined) throw new Error(id)
  return { job: id, tier: j.tier, gpus: 1, status, submittedAt: j.submitAt, endedAt: j.submitAt + HOUR, gpuHours: 0, paid: 0, listCost: 0, preemptions: 0, attempts: status === 'unserved' ? 0 : 1, slaMiss: false, messages: 0, bytes: 0, ...extra }
}

const run = (strategy: string, jobs: JobOutcome[]): StrategyRun => ({ strategy, jobs, nodes: [{ node: 'A', offeredGpuHours: 24, soldGpuHours: 0, ownerGpuHours: 0, revenue: 0 }] })

// under the fault: j1 completed after one lost half-hour attempt (attempts 2, 1.5 GPU-h run, 1 needed),
// j2 failed after 0.25 GPU-h, j3 completed first time, j4 never placed
const faulty = run('gpumesh', [
  outcome('j1', 'completed', { attempts: 2, gpuHours: 1.5, startedAt: 40 * MIN }),
  outcome('j2', 'failed', { attempts: 2, gpuHours: 0.25, startedAt: 20 * MIN }),
  outcome('j3', 'completed', { gpuHours: 1, startedAt: 2 * HOUR }),
  outcome('j4', 'unserved')
])
const clean = run('gpumesh-no-fault', [
  outcome('j1', 'completed', { gpuHours: 1, startedAt: 0 }),
  outcome('j2', 'completed', { gpuHours: 1, startedAt: 10 * MIN }),
  outcome('j3', 'completed', { gpuHours: 1, startedAt: 2 * HOUR }),
  outcome('j4', 'completed', { gpuHours: 2, startedAt: 3 * HOUR })
])
const spec: FaultSpec = {
  name: 'cut',
  fault: 'node A unreachable over [0, 1 h)',
  strategy: 'gpumesh',
  without: 'gpumesh-no-fault',
  phases: [{ name: 'during', fromMs: 0, untilMs: HOUR }, { name: 'after', fromMs: HOUR, untilMs: 24 * HOUR }],
  expect: [
    { id: 'cut-completion', claim: 'honest jobs complete under the cut', minCompletion: 0.5 },
    { id: 'cut-recovery', claim: 'the market recovers after the cut', phase: 'after', minCompletion: 0.5, relative: true },
    { id: 'cut-during', claim: 'jobs submitted during the cut complete', phase: 'during', minCompletion: 0.5 + 1e-9 }
  ]
}

describe('simulations/report: faults', () => {
  it('counts completion, re-auctions, attempts and lost GPU-hours, for the whole run and each phase', () => {
    const [m] = faultMetrics(w, [faulty, clean], [spec])
    assert.ok(m !== undefined)
    assert.deepEqual(m.run.counts, { jobs: 4, completed: 2, failed: 1, atHorizon: 0, unserved: 1, completion: 0.5, reauctioned: 2, attempts: 5, lostGpuHours: 0.75 })
    assert.deepEqual(m.without?.counts, { jobs: 4, completed: 4, failed: 0, atHorizon: 0, unserved: 0, completion: 1, reauctioned: 0, attempts: 4, lostGpuHours: 0 })
    const cut = faultMetrics(w, [run('gpumesh', [outcome('j4', 'failed', { gpuHours: 3, endedAt: 24 * HOUR })])], [{ name: 'x', fault: 'x', strategy: 'gpumesh' }])[0]
    assert.deepEqual([cut?.run.counts.failed, cut?.run.counts.atHorizon, cut?.run.counts.lostGpuHours], [1, 1, 0], 'a job the horizon cut is counted apart and loses nothing')
    assert.deepEqual(m.run.phases.map((p) => [p.name, p.counts.jobs, p.counts.completed, p.counts.lostGpuHours]), [['during', 2, 1, 0.75], ['after', 2, 1, 0]])
    assert.equal(m.run.waitByTier.silver.n, 1)
    assert.equal(m.run.waitByTier.silver.p50, 40 * MIN)
    assert.equal(m.run.waitByTier.gold.p50, 10 * MIN)
    assert.equal(m.bound, undefined)
  })

  it('takes a strategy\'s own lostGpuHours when it reports one, and clamps a completed job\'s surplus at 0', () => {
    const H = 24 * HOUR
    assert.equal(lostGpuHours(outcome('j1', 'completed', { gpuHours: 1.5, lostGpuHours: 0.2 }), 1, H), 0.2)
    assert.equal(lostGpuHours(outcome('j1', 'completed', { gpuHours: 0.9 }), 1, H), 0, 'hourly billing may charge a little less than the duration')
    assert.equal(lostGpuHours(outcome('j1', 'completed', { gpuHours: 1 }), 1, H), 0, 'exactly what it needed: nothing lost')
    assert.equal(lostGpuHours(outcome('j2', 'failed', { gpuHours: 0.25 }), 1, H), 0.25)
    assert.equal(lostGpuHours(outcome('j2', 'failed', { gpuHours: 0.25, endedAt: H - 1 }), 1, H), 0.25, 'failed one ms before the horizon: lost')
    assert.equal(lostGpuHours(outcome('j2', 'failed', { gpuHours: 0.25, endedAt: H }), 1, H), 0, 'still running at the horizon: cut, not lost')
  })

  it('judges each expectation, exactly at the bound and one step past it', () => {
    const [m] = faultMetrics(w, [faulty, clean], [spec])
    assert.ok(m !== undefined)
    const claims = buildReport(w, metrics(w, [faulty, clean]), { faults: [m] }).claims
    const byId = Object.fromEntries(claims.map((c) => [c.id, c]))
    assert.equal(byId['cut-completion']?.verdict, 'supported', '0.5 completed at a bound of 0.5')
    assert.equal(byId['cut-completion']?.subject, 'gpumesh')
    assert.match(byId['cut-completion']?.detail ?? '', /gpumesh completed 50\.0 % \(2 of 4\) under cut/)
    assert.equal(byId['cut-recovery']?.verdict, 'supported', 'after: 1 of 2 against 2 of 2 without the fault is 50 %')
    assert.match(byId['cut-recovery']?.detail ?? '', /50\.0 % of the 100\.0 % gpumesh-no-fault completed without it/)
    assert.equal(byId['cut-during']?.verdict, 'not supported', 'one step past the bound')
  })

  it('puts a faults section in report.json (before claims) and report.md; none when no fault ran', () => {
    const faults = faultMetrics(w, [faulty, clean], [spec])
    const m = metrics(w, [faulty, clean])
    const report = buildReport(w, m, { faults })
    const json = JSON.parse(reportJson(report))
    assert.deepEqual(Object.keys(json), ['format', 'run', 'workload', 'strategies', 'faults', 'claims'])
    assert.deepEqual(json.faults[0].runs.map((r: { role: string, strategy: string }) => [r.role, r.strategy]), [['fault', 'gpumesh'], ['without', 'gpumesh-no-fault']])
    assert.equal(json.faults[0].runs[0].lostGpuHours, 0.75)
    assert.deepEqual(json.faults[0].phases[1], { name: 'after', fromMs: HOUR, untilMs: 24 * HOUR })
    assert.equal(reportJson(buildReport(w, m, { faults: faultMetrics(w, [faulty, clean], [spec]) })), reportJson(report), 'same bytes')
    const md = reportMarkdown(w, m, report, faults)
    assert.match(md, /## Faults\n\n/)
    assert.match(md, /\| under the fault \| gpumesh \| 4 \| 50\.0 % \| 1 \(0\) \| 1 \| 2 \| 5 \| 0\.750 \|/)
    assert.match(md, /\| after \| 1\.00–24\.00 \| without it \(gpumesh-no-fault\) \| 2 \| 100\.0 % \|/)
    assert.ok(md.indexOf('## Faults') < md.indexOf('## Claims'))
    const plain = buildReport(w, m)
    assert.deepEqual(Object.keys(plain), ['format', 'run', 'workload', 'strategies', 'claims'])
    assert.doesNotMatch(reportMarkdown(w, m, plain), /Faults/)
  })

  it('refuses a spec naming an unknown strategy or phase, or a phase that ends before it starts', () => {
    const code = (s: FaultSpec): string | undefined => {
      try { faultMetrics(w, [faulty, clean], [s]); return undefined } catch (err) { return err instanceof FaultSpecError ? err.code : 'other' }
    }
    assert.equal(code({ ...spec, without: 'nope' }), 'UNKNOWN_STRATEGY')
    assert.equal(code({ ...spec, expect: [{ id: 'x', claim: 'x', phase: 'later', minCompletion: 0 }] }), 'UNKNOWN_PHASE')
    assert.equal(code({ ...spec, phases: [{ name: 'during', fromMs: HOUR, untilMs: HOUR - 1 }] }), 'BAD_PHASE')
    assert.equal(code({ ...spec, phases: [{ name: 'after', fromMs: HOUR, untilMs: Infinity }], expect: [] }), 'BAD_PHASE')
    assert.equal(code({ ...spec, phases: [{ name: 'empty', fromMs: HOUR, untilMs: HOUR }], expect: [] }), undefined, 'an empty phase is allowed')
  })
})
