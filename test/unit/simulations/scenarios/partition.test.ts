/**
 * simulations/scenarios/partition.ts at a small size: the cut is Europe against every other area in the
 * workload, inside the submissions; it costs failed jobs, and the market recovers after it
 * (the documented bound); the same seed gives the same report; every run's books balance.
 */
import assert from 'node:assert/strict'
import { partition, partitionOf, PARTITION_MIN_RECOVERY } from '../../../../simulations/scenarios/partition.js'
import { submissionSpan } from '../../../../simulations/scenarios/market-setup.js'
import type { ScenarioResult } from '../../../../simulations/scenarios/scenario.js'
import { regionArea } from '../../../../simulations/network/geo.js'
import { assertBooks, reportOf, scenarioData } from './helpers.js'

// 60 jobs: since the renters score bidders by RTT (their location's estimates, measurements on their
// connections) they award nearer providers, so at 40 jobs no award crossed the cut and none failed
const SMALL = { seed: 2, nodes: 80, jobs: 60 }

describe('simulations/scenarios: partition', function () {
  this.timeout(180_000)
  let a: ScenarioResult
  before(() => { a = partition.run(scenarioData(), SMALL) })

  it('cuts Europe from every other area of the workload, while jobs are submitted and with some after it', () => {
    const cut = partitionOf(a.workload)
    assert.deepEqual(cut.sideA, ['eu'])
    assert.ok(!cut.sideB.includes('eu') && cut.sideB.length > 0)
    for (const n of a.workload.fleet) assert.ok(regionArea(n.region) === 'eu' || cut.sideB.includes(regionArea(n.region)), n.region)
    const { firstMs, lastMs } = submissionSpan(a.workload)
    assert.ok(cut.fromMs > firstMs && cut.untilMs < lastMs, `[${cut.fromMs}, ${cut.untilMs}) inside [${firstMs}, ${lastMs}]`)
  })

  it('costs failed jobs across the cut and recovers after it; the same seed gives the same report', () => {
    const { json, faults } = reportOf(a)
    const [m] = faults
    assert.ok(m !== undefined && m.without !== undefined)
    assert.ok(m.run.counts.failed > m.without.counts.failed, `failed ${m.run.counts.failed} with the cut, ${m.without.counts.failed} without`)
    assert.ok((m.run.counts.completion ?? 0) <= (m.without.counts.completion ?? 0))
    const after = m.run.phases.find((p) => p.name === 'after the cut')?.counts
    const calmAfter = m.without.phases.find((p) => p.name === 'after the cut')?.counts
    assert.ok(after !== undefined && calmAfter !== undefined && after.jobs > 0)
    assert.ok((after.completion ?? 0) >= PARTITION_MIN_RECOVERY * (calmAfter.completion ?? 0), `after the cut ${after.completion} against ${calmAfter.completion} without it`)
    const claim = (JSON.parse(json) as { claims: Array<{ id: string, verdict: string }> }).claims.find((c) => c.id === 'partition-recovery')
    assert.equal(claim?.verdict, 'supported')
    assert.equal(reportOf(partition.run(scenarioData(), SMALL)).json, json)
  })

  it('balances every run\'s books', () => {
    for (const run of a.runs) assertBooks(a.workload, run)
  })
})
