/**
 * The `no-shows` scenario at a small size: no-shows and undercutters lower honest completion against
 * the same workload without them, the central bound (which never awards to them) completes at least as
 * much, the books balance, the adversaries earn nothing, and the same seed gives the same report.
 */
import assert from 'node:assert/strict'
import { noShows, NO_SHOWS_SPEC } from '../../../../simulations/scenarios/index.js'
import { pickAdversaries, thirds } from '../../../../simulations/scenarios/adversarial.js'
import type { ScenarioResult } from '../../../../simulations/scenarios/index.js'
import type { StrategyRun, Workload } from '../../../../simulations/model.js'
import { assertBooks, reportText, scenarioData } from './helpers.js'

const SMALL = { seed: 5, nodes: 80, jobs: 40 }

function runOf (r: ScenarioResult, name: string): StrategyRun {
  const run = r.runs.find((x) => x.strategy === name)
  assert.ok(run !== undefined, `${name} in ${r.runs.map((x) => x.strategy).join(', ')}`)
  return run
}
const completed = (run: StrategyRun): number => run.jobs.filter((j) => j.status === 'completed').length

describe('simulations: the no-shows scenario', function () {
  this.timeout(120_000)
  let r: ScenarioResult
  before(() => { r = noShows.run(scenarioData(), SMALL) })

  it('runs gpumesh without and with the adversaries, the central bound and the old way on one workload', () => {
    assert.deepEqual(r.runs.map((x) => x.strategy), ['gpumesh', 'gpumesh+no-shows', 'central', 'old-way'])
    assert.equal(r.faults?.[0]?.strategy, 'gpumesh+no-shows')
    assert.equal(r.faults?.[0]?.without, 'gpumesh')
    assert.equal(r.faults?.[0]?.bound, 'central')
  })

  it('no-shows and undercutters lower honest completion; the central bound completes at least as much as gpumesh under them', () => {
    const honest = completed(runOf(r, 'gpumesh'))
    const faulty = completed(runOf(r, 'gpumesh+no-shows'))
    assert.ok(faulty < honest, `completed ${faulty} with the adversaries, ${honest} without`)
    assert.ok(completed(runOf(r, 'central')) >= faulty)
    const reauctioned = runOf(r, 'gpumesh+no-shows').jobs.filter((j) => j.attempts > 1).length
    assert.ok(reauctioned > runOf(r, 'gpumesh').jobs.filter((j) => j.attempts > 1).length)
  })

  it('the adversaries win awards but sell and earn nothing; the central bound never places a job on one', () => {
    const adversaries = pickAdversaries(r.workload.fleet, SMALL.seed, NO_SHOWS_SPEC.groups)
    assert.ok(adversaries.size > 0)
    const section = r.sections?.find((s) => s.key === 'adversaries')?.json as { awardsByThird: Array<{ toAdversaries: number, jobs: number }> }
    assert.ok(section.awardsByThird.reduce((s, t) => s + t.toAdversaries, 0) > 0)
    assert.equal(section.awardsByThird.reduce((s, t) => s + t.jobs, 0), r.workload.jobs.length)
    for (const n of runOf(r, 'gpumesh+no-shows').nodes) if (adversaries.has(n.node)) assert.deepEqual([n.soldGpuHours, n.revenue], [0, 0])
    for (const j of runOf(r, 'central').jobs) assert.ok(j.node === undefined || !adversaries.has(j.node), `central placed ${j.job} on ${j.node}`)
  })

  it('keeps the books of every run on the fleet (the old way pays a cloud)', () => {
    for (const run of r.runs.filter((x) => x.strategy !== 'old-way')) assertBooks(r.workload, run)
  })

  it('gives the same report.json for the same seed and another for another seed', () => {
    const text = reportText(r)
    assert.match(text, /"faults"/)
    assert.match(text, /"adversaries"/)
    assert.equal(reportText(noShows.run(scenarioData(), SMALL)), text)
    assert.notEqual(reportText(noShows.run(scenarioData(), { ...SMALL, seed: 6 })), text)
  })
})

describe('simulations: adversary picking and thirds', () => {
  const fleet = Array.from({ length: 40 }, (_, i) => ({ id: `n${i}`, model: 'm', gpuName: 'M', gpus: 1, vramMiB: 1, country: 'DE', region: 'eu-west', cpuMilli: 1, memoryMiB: 1 }))

  it('cuts disjoint groups of the rounded shares from a seeded shuffle (0 % is none, 100 % is all)', () => {
    const g = (name: string, share: number) => ({ name, share, behaviour: () => ({}), describe: name })
    const picked = pickAdversaries(fleet, 1, [g('a', 0.1), g('b', 0.05)])
    assert.equal([...picked.values()].filter((x) => x === 'a').length, 4)
    assert.equal([...picked.values()].filter((x) => x === 'b').length, 2)
    assert.deepEqual(pickAdversaries(fleet, 1, [g('a', 0.1), g('b', 0.05)]), picked)
    assert.notDeepEqual([...pickAdversaries(fleet, 2, [g('a', 0.1)]).keys()], [...picked.keys()].slice(0, 4))
    assert.equal(pickAdversaries(fleet, 1, [g('a', 0)]).size, 0)
    assert.equal(pickAdversaries(fleet, 1, [g('a', 1), g('b', 0.5)]).size, 40, 'groups never overlap, nor go past the fleet')
  })

  it('splits the jobs by submission into thirds that hold every job once', () => {
    const w = (n: number): Workload => ({ name: 't', fleet, ownerWork: [], horizonMs: 1e6, jobs: Array.from({ length: n }, (_, i) => ({ id: `j${i}`, submitAt: i * 10, durationMs: 1, gpus: 1, gpuMilli: 1000, models: [], minVramGB: 0, tier: 'silver' as const, residency: 'prefer' as const })) })
    assert.deepEqual(thirds(w(0)), [])
    for (const n of [1, 2, 3, 4, 10]) {
      const p = thirds(w(n))
      const inside = (t: number): number => p.filter((x) => t >= x.fromMs && t < x.untilMs).length
      for (const j of w(n).jobs) assert.equal(inside(j.submitAt), 1, `n=${n}, ${j.id}`)
    }
    assert.deepEqual(thirds(w(3)).map((x) => [x.fromMs, x.untilMs]), [[0, 10], [10, 20], [20, 21]])
  })
})
