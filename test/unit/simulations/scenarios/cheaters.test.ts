/**
 * The `cheaters` scenario at a small size: with 30 % colluding cheaters and verification `none`, each job
 * whose accepted run was a cheater's counts as a wrong result accepted (checked against the run's job
 * outcomes, another path than the recorder's acceptances), none without cheaters, overhead 1 when every
 * job runs once; the replicate runs award replicas, and the wasm one convicts cheaters only; same seed, same report.
 */
import assert from 'node:assert/strict'
import { cheaters, CHEATERS_SPEC } from '../../../../simulations/scenarios/index.js'
import { pickAdversaries } from '../../../../simulations/scenarios/adversarial.js'
import type { ScenarioResult } from '../../../../simulations/scenarios/index.js'
import { reportText, scenarioData } from './helpers.js'

const SMALL = { seed: 3, nodes: 60, jobs: 30 }

interface Row { run: string, carriedOut: boolean, jobs: number, accepted: number | null, wrongAccepted: number | null, wrongShare: number | null, overhead: number | null, replicatedJobs: number, gpuSecondsVerifying?: number, convicted?: number, convictedHonest?: number }

describe('simulations: the cheaters scenario', function () {
  this.timeout(180_000)
  let r: ScenarioResult
  let rows: Row[]
  before(() => {
    r = cheaters.run(scenarioData(), SMALL)
    rows = (r.sections?.find((s) => s.key === 'verification')?.json as { runs: Row[] }).runs
  })
  const row = (name: string): Row => {
    const x = rows.find((y) => y.run === name)
    assert.ok(x !== undefined, name)
    return x
  }

  it('runs gpumesh without cheaters, with them under none and under replicate 2, the central bound and the old way', () => {
    assert.deepEqual(r.runs.map((x) => x.strategy), ['gpumesh', 'gpumesh+cheaters', 'gpumesh+cheaters+replicate-2', 'gpumesh+cheaters+replicate-2-wasm', 'gpumesh+cheaters+replicate-2-wasm-audit', 'central', 'old-way'])
    assert.deepEqual(rows.map((x) => x.run), ['gpumesh', 'gpumesh+cheaters', 'gpumesh+cheaters+replicate-2', 'gpumesh+cheaters+replicate-2-wasm', 'gpumesh+cheaters+replicate-2-wasm-audit'])
  })

  it('counts as wrong exactly the completed jobs a cheater ran last, and none without cheaters', () => {
    const adversaries = pickAdversaries(r.workload.fleet, SMALL.seed, CHEATERS_SPEC.groups)
    assert.equal(adversaries.size, Math.round(0.3 * SMALL.nodes))
    const faulty = r.runs.find((x) => x.strategy === 'gpumesh+cheaters')!
    const completed = faulty.jobs.filter((j) => j.status === 'completed')
    const byCheaters = completed.filter((j) => j.node !== undefined && adversaries.has(j.node)).length
    assert.ok(byCheaters > 0, 'some job went to a cheater at this seed')
    assert.deepEqual([row('gpumesh+cheaters').accepted, row('gpumesh+cheaters').wrongAccepted], [completed.length, byCheaters])
    assert.equal(row('gpumesh+cheaters').wrongShare, Math.round(byCheaters / completed.length * 10_000) / 10_000)
    assert.equal(row('gpumesh').wrongAccepted, 0)
    assert.ok((row('gpumesh').accepted ?? 0) > 0)
    assert.equal(row('gpumesh+cheaters').overhead, 1, 'no churn, no re-runs after a start: each job ran once')
  })

  it('the replicate runs award replicas; only the wasm one re-executes and convicts, and only cheaters', () => {
    for (const name of ['gpumesh+cheaters+replicate-2', 'gpumesh+cheaters+replicate-2-wasm']) {
      const rep = row(name)
      assert.ok(rep.carriedOut && rep.replicatedJobs > 0, `${name}: some job got two awards at one attempt`)
      assert.ok((rep.overhead ?? 0) > 1, `${name}: replicas cost compute`)
    }
    assert.deepEqual([row('gpumesh+cheaters+replicate-2').gpuSecondsVerifying, row('gpumesh+cheaters+replicate-2').convicted], [0, 0], 'a process job\'s split goes to a tie-break replica, not a re-execution')
    const wasm = row('gpumesh+cheaters+replicate-2-wasm')
    assert.ok((wasm.gpuSecondsVerifying ?? 0) > 0 && (wasm.convicted ?? 0) > 0, 'some split was re-executed and its cheater convicted')
    assert.equal(wasm.convictedHonest, 0)
  })

  it('gives the same report.json for the same seed and another for another seed', () => {
    const text = reportText(r)
    assert.match(text, /"verification"/)
    assert.equal(reportText(cheaters.run(scenarioData(), SMALL)), text)
    assert.notEqual(reportText(cheaters.run(scenarioData(), { ...SMALL, seed: 4 })), text)
  })
})
