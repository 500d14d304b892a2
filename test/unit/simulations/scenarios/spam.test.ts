/**
 * The `spam` scenario at a small size: the flood raises bids, messages and bytes per job against the
 * same workload without it, replays and forgeries are dropped at the first hop (counted, never handed to
 * an agent), honest completion holds, the central bound completes at least as much, the books balance,
 * and the same seed gives the same report.
 */
import assert from 'node:assert/strict'
import { spam } from '../../../../simulations/scenarios/index.js'
import type { ScenarioResult } from '../../../../simulations/scenarios/index.js'
import { assertBooks, reportText, scenarioData } from './helpers.js'

const SMALL = { seed: 5, nodes: 80, jobs: 40 }

interface Traffic { bidsPerJob: number, messagesPerJob: number, bytesPerJob: number, replaysPerJob: number, forgedPerJob: number }

describe('simulations: the spam scenario', function () {
  this.timeout(120_000)
  let r: ScenarioResult
  before(() => { r = spam.run(scenarioData(), SMALL) })

  it('the flood raises bids, messages and bytes per job; replays and forgeries are counted as dropped', () => {
    const t = (r.sections?.find((s) => s.key === 'adversaries')?.json as { traffic: Record<string, Traffic> }).traffic
    const honest = t.gpumesh as Traffic
    const faulty = t['gpumesh+spam'] as Traffic
    assert.ok(faulty.bidsPerJob > honest.bidsPerJob, `${faulty.bidsPerJob} vs ${honest.bidsPerJob} bids per job`)
    assert.ok(faulty.messagesPerJob > honest.messagesPerJob)
    assert.ok(faulty.bytesPerJob > honest.bytesPerJob)
    assert.ok(faulty.replaysPerJob > 0 && faulty.forgedPerJob > 0)
    assert.deepEqual([honest.replaysPerJob, honest.forgedPerJob], [0, 0])
    assert.equal(r.market.byKind['bid-forged']?.count, faulty.forgedPerJob * r.workload.jobs.length)
  })

  it('honest completion holds under the flood, and the central bound completes at least as much', () => {
    const completed = (name: string): number => r.runs.find((x) => x.strategy === name)?.jobs.filter((j) => j.status === 'completed').length ?? -1
    assert.ok(completed('gpumesh+spam') >= 0.9 * completed('gpumesh'), `${completed('gpumesh+spam')} vs ${completed('gpumesh')}`)
    assert.ok(completed('central') >= completed('gpumesh+spam'))
  })

  it('keeps the books of every run on the fleet (the old way pays a cloud)', () => {
    for (const run of r.runs.filter((x) => x.strategy !== 'old-way')) assertBooks(r.workload, run)
  })

  it('gives the same report.json for the same seed', () => {
    assert.equal(reportText(spam.run(scenarioData(), SMALL)), reportText(r))
  })
})
