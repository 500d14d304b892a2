/**
 * The `sybil` scenario at a small size: 20 % Sybil identities win awards (they bid low), vouch for each
 * other on the evidence topic (the payments are in the traffic), and the renters' views end with every
 * Sybil they know ranked by the same real reputation code; honest completion is reported against the
 * calm run; same seed, same report.
 */
import assert from 'node:assert/strict'
import { sybil, SYBIL_SPEC } from '../../../../simulations/scenarios/index.js'
import { pickAdversaries } from '../../../../simulations/scenarios/adversarial.js'
import type { RenterView } from '../../../../simulations/scenarios/sybil.js'
import type { ScenarioResult } from '../../../../simulations/scenarios/index.js'
import { UNKNOWN_RELIABILITY } from '../../../../protocol/market/scoring.js'
import { reportText, scenarioData } from './helpers.js'

const SMALL = { seed: 3, nodes: 60, jobs: 30 }

describe('simulations: the sybil scenario', function () {
  this.timeout(180_000)
  let r: ScenarioResult
  before(() => { r = sybil.run(scenarioData(), SMALL) })

  it('runs the calm market, the market with Sybils and the central bound on one workload, with a faults entry', () => {
    assert.deepEqual(r.runs.map((x) => x.strategy), ['gpumesh', 'gpumesh+sybil', 'gpumesh+sybil+silent', 'central', 'old-way'])
    assert.equal(r.faults?.[0]?.without, 'gpumesh')
  })

  it('the Sybils win awards in the runs with them', () => {
    const sybils = pickAdversaries(r.workload.fleet, SMALL.seed, SYBIL_SPEC.groups)
    assert.equal(sybils.size, Math.round(0.2 * SMALL.nodes))
    const section = r.sections?.find((s) => s.key === 'adversaries')?.json as { awardsByThird: Array<{ toAdversaries: number }> }
    assert.ok(section.awardsByThird.reduce((s, t) => s + t.toAdversaries, 0) > 0)
    const lines = (r.sections?.find((s) => s.key === 'sybil')?.json as { runs: Array<{ run: string, toSybils: number }> }).runs
    assert.deepEqual(lines.map((l) => l.run), ['gpumesh', 'gpumesh+sybil', 'gpumesh+sybil+silent'])
    for (const l of lines.slice(1)) assert.ok(l.toSybils > 0, l.run)
  })

  it('each renter\'s view ranks the Sybils it knows with the real reputation view: a Sybil that no-showed to it scores below the prior', () => {
    const renters = (r.sections?.find((s) => s.key === 'sybil')?.json as { renters: Record<string, RenterView[]> }).renters
    assert.deepEqual(Object.keys(renters), ['gpumesh+sybil', 'gpumesh+sybil+silent'])
    const views = Object.values(renters).flat()
    assert.ok(views.length > 0)
    for (const v of views) {
      if (v.bestSybil === null) continue
      assert.ok(v.bestSybil.rank >= 1 && v.bestSybil.rank <= v.known)
      if (v.bestSybil.ownFailed > 0 && v.bestSybil.ownOk === 0 && v.bestSybil.trustedReporters === 0) assert.ok(v.bestSybil.score < UNKNOWN_RELIABILITY, `${v.renter}: ${v.bestSybil.score}`)
      if (v.bestHonest !== null) assert.equal(v.honestAbove > 0, v.bestHonest.rank < v.bestSybil.rank)
    }
  })

  it('gives the same report.json for the same seed and another for another seed', () => {
    const text = reportText(r)
    assert.match(text, /"sybil"/)
    assert.equal(reportText(sybil.run(scenarioData(), SMALL)), text)
    assert.notEqual(reportText(sybil.run(scenarioData(), { ...SMALL, seed: 4 })), text)
  })
})
