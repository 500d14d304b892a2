/**
 * simulations/report/report.ts: report.json is the same bytes for the same run (and differs when the run
 * does), numbers rounded as documented, claims judged plainly.
 */
import assert from 'node:assert/strict'
import { central } from '../../../../simulations/baselines/central.js'
import { lowestPrice } from '../../../../simulations/baselines/lowest-price.js'
import { oldWay } from '../../../../simulations/baselines/old-way.js'
import { randomAssignment } from '../../../../simulations/baselines/random.js'
import { metrics } from '../../../../simulations/report/metrics.js'
import { buildReport, reportJson, reportMarkdown, round } from '../../../../simulations/report/report.js'
import { handCase, handFloors, listPrice } from '../baselines/fixtures.js'

function runAll (seed: number): { json: string, md: string } {
  const w = handCase()
  const opts = { listPrice, floorOf: handFloors }
  const runs = [oldWay(w, opts), central(w, opts), lowestPrice(w, opts), randomAssignment(w, { ...opts, seed })]
  const m = metrics(w, runs, { listPrice })
  const report = buildReport(w, m, { run: { scenario: 'hand', seed } })
  return { json: reportJson(report), md: reportMarkdown(w, m, report) }
}

describe('simulations/report: report.json and report.md', () => {
  it('is byte-identical for the same run, and differs for another seed', () => {
    const a = runAll(1)
    assert.equal(runAll(1).json, a.json)
    assert.equal(runAll(1).md, a.md)
    assert.notEqual(runAll(2).json, a.json, 'the seed is part of the run')
    const parsed = JSON.parse(a.json)
    assert.deepEqual(Object.keys(parsed), ['format', 'run', 'workload', 'strategies', 'claims'])
    assert.deepEqual(parsed.strategies.map((s: { strategy: string }) => s.strategy), ['old-way', 'central', 'lowest-price', 'random'])
    assert.ok(a.json.endsWith('}\n'))
  })

  it('rounds to the documented precision, with no negative zero', () => {
    assert.equal(round(0.123456, 4), 0.1235)
    assert.equal(round(2.0005, 3), 2.001)
    assert.equal(round(1_333_333.4, 0), 1_333_333)
    assert.ok(Object.is(round(-0.00001, 4), 0))
    assert.equal(round(null, 2), null)
    const central = JSON.parse(runAll(1).json).strategies[1]
    assert.equal(central.cost.perGpuHour, Math.round(7_000_000 / 4), 'micros per GPU-hour are whole: 7 credits over 4 GPU-hours')
    assert.equal(central.utilization.offered, round(4 / 95, 4), '4 GPU-hours sold of 95 offered')
  })

  it('says plainly which claims this run supports', () => {
    const { json, md } = runAll(1)
    const claims = JSON.parse(json).claims as Array<{ id: string, verdict: string, detail: string, subject: string }>
    const byId = Object.fromEntries(claims.map((c) => [c.id, c]))
    assert.equal(byId['renter-cost']?.subject, 'central', 'no gpumesh run: judged on the central matcher, and said so')
    assert.match(byId['renter-cost']?.detail ?? '', /not on the gpumesh market/)
    assert.equal(byId['idle-earn']?.verdict, 'supported')
    assert.equal(byId.utilization?.verdict, 'supported')
    // central: gold (j3 at 3 credits) is dearer than bronze (j2 at 1) but silver paid 2: bronze is cheapest here
    assert.equal(byId['bronze-saves']?.verdict, 'supported')
    assert.equal(byId['central-bound']?.verdict, 'not measured')
    assert.match(md, /^# gpumesh sim: hand-made/)
    assert.match(md, /\| strategy \| cost \/ GPU-h \| vs list \|/)
    assert.match(md, /\| central \| 1\.750 \|/)
    for (const c of claims) assert.ok(md.includes(c.detail), `the markdown states ${c.id}`)
  })

  it('judges the claims on a gpumesh run when there is one, against the central bound', () => {
    const w = handCase()
    const opts = { listPrice, floorOf: handFloors }
    const market = { ...lowestPrice(w, opts), strategy: 'gpumesh' }
    const m = metrics(w, [oldWay(w, opts), central(w, opts), market], { listPrice })
    const claims = buildReport(w, m).claims
    const byId = Object.fromEntries(claims.map((c) => [c.id, c]))
    for (const c of claims) {
      assert.equal(c.subject, 'gpumesh')
      assert.doesNotMatch(c.detail, /judged on/)
    }
    // lowest-price on the hand case: same GPU-hours as central (4), but 9 credits against central's 7
    assert.equal(byId['central-bound']?.verdict, 'not supported')
    assert.match(byId['central-bound']?.detail ?? '', /sold 100\.0 % of what the central matcher sold inside the arrival horizon and charged 128\.6 % of its price/)
    assert.equal(byId['renter-cost']?.verdict, 'not supported', 'it paid 105.9 % of list price')
    assert.equal(byId['bronze-saves']?.verdict, 'not supported', 'bronze paid 2 credits, as silver did')
    assert.match(byId['bronze-saves']?.detail ?? '', /the price follows the node chosen, not the tier/)
    const none = buildReport(w, m, { subject: 'nobody' }).claims
    assert.deepEqual(none.map((c) => c.verdict), ['not measured'])
  })
})
