/**
 * simulations/report/report.ts: a scenario's own sections (ReportSection) go under `sections` by key,
 * after `faults` and before `claims`, and into report.md under their titles; without any, report.json
 * keeps its keys (and bytes).
 */
import assert from 'node:assert/strict'
import { central } from '../../../../simulations/baselines/central.js'
import { metrics } from '../../../../simulations/report/metrics.js'
import { buildReport, reportJson, reportMarkdown, type ReportSection } from '../../../../simulations/report/report.js'
import { handCase, handFloors, listPrice } from '../baselines/fixtures.js'

const w = handCase()
const m = metrics(w, [central(w, { listPrice, floorOf: handFloors })], { listPrice })
const A: ReportSection = { key: 'adversaries', title: 'Adversaries', json: { groups: [{ name: 'no-show', nodes: 2 }] }, markdown: ['two no-shows'] }
const B: ReportSection = { key: 'spam', title: 'Spam', json: { perJob: 1.5 }, markdown: ['| a |', '|---|'] }

describe('simulations/report: a scenario\'s own sections', () => {
  it('puts each section\'s JSON under sections[key], in order, before the claims, and its lines under ## title', () => {
    const report = buildReport(w, m, { sections: [A, B] })
    const parsed = JSON.parse(reportJson(report)) as Record<string, unknown>
    assert.deepEqual(Object.keys(parsed), ['format', 'run', 'workload', 'strategies', 'sections', 'claims'])
    assert.deepEqual(parsed.sections, { adversaries: A.json, spam: B.json })
    const md = reportMarkdown(w, m, report, [], [A, B])
    assert.ok(md.indexOf('## Adversaries\n\ntwo no-shows') > 0, md)
    assert.ok(md.indexOf('## Spam\n\n| a |\n|---|') > md.indexOf('## Adversaries'))
    assert.ok(md.indexOf('## Spam') < md.indexOf('## Claims'))
  })

  it('leaves report.json as it was without sections (none given, or an empty list)', () => {
    const plain = reportJson(buildReport(w, m))
    assert.equal(reportJson(buildReport(w, m, { sections: [] })), plain)
    assert.ok(!('sections' in JSON.parse(plain)))
    assert.doesNotMatch(reportMarkdown(w, m, buildReport(w, m)), /## Adversaries/)
  })
})
