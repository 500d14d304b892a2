/**
 * simulations/scenarios/churn.ts at a small size: the same seed gives the same report.json; churn costs
 * the market re-auctions and completion, honest completion stays above the documented floor and the
 * claim is judged on the documented bound;
 * the central oracle never places a job across a node's downtime; every run's books balance.
 */
import assert from 'node:assert/strict'
import { churn, churnOf, CHURN_BURST, CHURN_FLOOR_RELATIVE_COMPLETION, CHURN_MIN_RELATIVE_COMPLETION } from '../../../../simulations/scenarios/churn.js'
import { intoSubmissions } from '../../../../simulations/scenarios/market-setup.js'
import type { ScenarioResult } from '../../../../simulations/scenarios/scenario.js'
import { assertBooks, reportOf, scenarioData } from './helpers.js'

const SMALL = { seed: 3, nodes: 80, jobs: 40 }

describe('simulations/scenarios: churn', function () {
  this.timeout(180_000)
  let a: ScenarioResult
  before(() => { a = churn.run(scenarioData(), SMALL) })

  it('gives byte-identical report.json for the same seed, with the faults section', () => {
    const first = reportOf(a)
    assert.equal(reportOf(churn.run(scenarioData(), SMALL)).json, first.json)
    const parsed = JSON.parse(first.json) as { faults: Array<{ name: string, runs: Array<{ role: string, strategy: string }> }>, strategies: Array<{ strategy: string }> }
    assert.deepEqual(parsed.strategies.map((s) => s.strategy), ['gpumesh', 'gpumesh+churn', 'central', 'old-way'])
    assert.deepEqual(parsed.faults.map((f) => f.name), ['churn'])
    assert.deepEqual(parsed.faults[0]?.runs.map((r) => `${r.role}:${r.strategy}`), ['fault:gpumesh+churn', 'without:gpumesh', 'bound:central'])
  })

  it('costs the market re-auctions and completion, above the documented floor, and judges the claim on the bound', () => {
    const [m] = reportOf(a).faults
    assert.ok(m !== undefined && m.without !== undefined)
    const under = m.run.counts
    const calm = m.without.counts
    assert.ok(under.attempts > calm.attempts, `attempts ${under.attempts} under churn, ${calm.attempts} without`)
    assert.ok(under.reauctioned > calm.reauctioned, `re-auctioned ${under.reauctioned} under churn, ${calm.reauctioned} without`)
    assert.ok((under.completion ?? 0) <= (calm.completion ?? 0), `completion ${under.completion} under churn, ${calm.completion} without`)
    assert.ok((under.completion ?? 0) >= CHURN_FLOOR_RELATIVE_COMPLETION * (calm.completion ?? 0), `completion ${under.completion} under churn below ${CHURN_FLOOR_RELATIVE_COMPLETION} × ${calm.completion}`)
    const claim = (JSON.parse(reportOf(a).json) as { claims: Array<{ id: string, verdict: string }> }).claims.find((c) => c.id === 'churn-completion')
    const holds = (under.completion ?? 0) >= CHURN_MIN_RELATIVE_COMPLETION * (calm.completion ?? 0)
    assert.equal(claim?.verdict, holds ? 'supported' : 'not supported')
    assert.equal(a.market.ledgerMismatches, 0, 'both ledgers agree on every award that ended')
  })

  it('lets the central oracle place no job across a node\'s downtime', () => {
    const w = a.workload
    const schedule = churnOf(w.fleet.map((n) => n.id), w.horizonMs, intoSubmissions(w, CHURN_BURST.atShare), SMALL.seed)
    const offline = new Map(schedule.nodes.map((n) => [n.node, n.offline]))
    const oracle = a.runs.find((r) => r.strategy === 'central')
    assert.ok(oracle !== undefined)
    const byId = new Map(w.jobs.map((j) => [j.id, j]))
    let placed = 0
    for (const j of oracle.jobs) {
      if (j.startedAt === undefined || j.node === undefined) continue
      placed++
      const end = j.startedAt + (byId.get(j.job)?.durationMs ?? 0)
      for (const iv of offline.get(j.node) ?? []) assert.ok(end <= iv.from || j.startedAt >= iv.until, `${j.job} on ${j.node} over [${j.startedAt}, ${end}) meets its downtime [${iv.from}, ${iv.until})`)
    }
    assert.ok(placed > 0)
    assert.equal(oracle.jobs.filter((j) => j.attempts > 1).length, 0, 'the oracle never re-auctions')
  })

  it('balances every run\'s books, churned or not', () => {
    for (const run of a.runs) assertBooks(a.workload, run)
  })
})
