import assert from 'node:assert/strict'
import {
  CALIBRATION_DEFAULTS, InvalidCalibrationSizeError, calibrationWorkload, compareMeasures, discoveryLookups,
  runCalibrationModel, wholeMsHops, withinTolerance, type CalibrationMeasures
} from '../../../../simulations/calibration/index.js'
import { Harness } from '../../../../simulations/harness/index.js'
import type { Message } from '../../../../simulations/harness/bus.js'
import { credits } from '../../../../simulations/harness/payloads.js'

function measures (over: Partial<CalibrationMeasures> = {}): CalibrationMeasures {
  return {
    jobs: 10, awarded: 10, settled: 10, timeToAwardMs: 200, timeToAwardP50Ms: 200, timeToAwardP90Ms: 200, bidsPerJob: 4,
    reauctionsPerJob: 0, messagesPerJob: 18, messagesPerJobByKind: {}, gossipDeliveriesPerJob: 60, gossipDelayMs: 25,
    discoveryFirstMs: 0, discoveryMs: 100, ...over
  }
}

describe('calibration (pure half)', () => {
  describe('withinTolerance: |model − real| ≤ 25 % of real', () => {
    it('holds at 0, and exactly at the limit on either side', () => {
      assert.equal(withinTolerance(100, 100), true)
      assert.equal(withinTolerance(125, 100), true)
      assert.equal(withinTolerance(75, 100), true)
      assert.equal(withinTolerance(0, 0), true)
    })
    it('fails one past the limit, and for anything against a real 0', () => {
      assert.equal(withinTolerance(125.01, 100), false)
      assert.equal(withinTolerance(74.99, 100), false)
      assert.equal(withinTolerance(0.1, 0), false)
    })
  })

  describe('compareMeasures', () => {
    it('judges only time to award and bids per job, with the ratio model ÷ real', () => {
      const c = compareMeasures(measures({ messagesPerJob: 100 }), measures())
      assert.equal(c.ok, true)
      const rows = new Map(c.rows.map((r) => [r.measure, r]))
      assert.equal(rows.get('time to award')?.within, true)
      assert.equal(rows.get('bids per job')?.within, true)
      assert.equal(rows.get('messages per job')?.within, undefined)
      assert.ok(Math.abs((rows.get('messages per job')?.ratio ?? 0) - 100 / 18) < 1e-9)
    })
    it('fails when either checked measure is off', () => {
      assert.equal(compareMeasures(measures({ bidsPerJob: 5.01 }), measures()).ok, false)
      assert.equal(compareMeasures(measures({ timeToAwardMs: 400 }), measures()).ok, false)
      assert.equal(compareMeasures(measures({ timeToAwardMs: 250 }), measures()).ok, true)
    })
    it('has no ratio against a real 0', () => {
      const c = compareMeasures(measures({ bidsPerJob: 1 }), measures({ bidsPerJob: 0 }))
      assert.equal(c.rows.find((r) => r.measure === 'bids per job')?.ratio, undefined)
      assert.equal(c.ok, false)
    })
  })

  describe('the workload', () => {
    it('is the default 20 nodes (18 providers, 2 buyers) and 24 jobs, the same for the same seed', () => {
      const a = calibrationWorkload({ seed: 3 })
      assert.equal(a.fleet.length + a.buyers.length, CALIBRATION_DEFAULTS.nodes)
      assert.equal(a.jobs.length, CALIBRATION_DEFAULTS.jobs)
      assert.deepEqual(calibrationWorkload({ seed: 3 }), a)
      assert.notDeepEqual(calibrationWorkload({ seed: 4 }).jobs, a.jobs)
      for (let i = 1; i < a.jobs.length; i++) assert.ok((a.jobs[i] as { submitAt: number }).submitAt > (a.jobs[i - 1] as { submitAt: number }).submitAt)
    })
    it('takes 4 nodes at least, and one job', () => {
      assert.equal(calibrationWorkload({ nodes: 4, jobs: 1 }).fleet.length, 2)
      assert.throws(() => calibrationWorkload({ nodes: 3 }), InvalidCalibrationSizeError)
      assert.throws(() => calibrationWorkload({ jobs: 0 }), InvalidCalibrationSizeError)
    })
    it('lists each buyer\'s lookups once', () => {
      const l = discoveryLookups(calibrationWorkload())
      assert.ok(l.length > 0)
      assert.equal(new Set(l.map((x) => `${x.buyer} ${x.key}`)).size, l.length)
    })
  })

  it('wholeMsHops rounds a mean hop count so that hops × latency is whole ms', () => {
    assert.equal(wholeMsHops(1.27, 20), 1.25)
    assert.equal(wholeMsHops(4 / 3, 20), 1.35)
    assert.equal(wholeMsHops(0.5, 20), 1)
    assert.equal(wholeMsHops(2, 0), 2)
    for (const h of [1.1, 1.33, 1.9, 2.06]) for (const l of [2, 7, 20, 60]) assert.ok(Number.isInteger(wholeMsHops(h, l) * l))
  })

  describe('the model run', () => {
    const w = calibrationWorkload({ seed: 1 })
    it('awards every job one bid window after its publish when the network is quick, and is deterministic', () => {
      const m = runCalibrationModel(w, { seed: 1, latencyMs: 20, gossipHops: 1.3, bidWindowMs: 200 })
      assert.equal(m.awarded, w.jobs.length)
      assert.equal(m.settled, w.jobs.length)
      assert.equal(m.timeToAwardMs, 200)
      assert.ok(m.bidsPerJob >= 1 && m.bidsPerJob <= 10, String(m.bidsPerJob))
      assert.deepEqual(runCalibrationModel(w, { seed: 1, latencyMs: 20, gossipHops: 1.3, bidWindowMs: 200 }), m)
    })
    it('is out of tolerance against itself when mis-set: latency × 3, or 4 hops', () => {
      const right = runCalibrationModel(w, { seed: 1, latencyMs: 20, gossipHops: 1.3, bidWindowMs: 200 })
      const slow = runCalibrationModel(w, { seed: 1, latencyMs: 60, gossipHops: 1.3, bidWindowMs: 200 })
      const far = runCalibrationModel(w, { seed: 1, latencyMs: 20, gossipHops: 4, bidWindowMs: 200 })
      assert.equal(compareMeasures(slow, right).ok, false)
      assert.equal(compareMeasures(far, right).ok, false)
    })
  })

  it('the harness tells a tap of every message, after its recorder, with the channel', () => {
    const seen: string[] = []
    const h = new Harness({ seed: 1, tap: { sent: (c, _f, m: Message) => { seen.push(`${c} ${m.kind}`) }, delivered: () => {}, lost: () => {} } })
    h.provider('p1', { region: 'eu-west', gpus: { h100: 1 }, floor: credits(1) })
    const buyer = h.requester('b', { region: 'eu-west' })
    buyer.submit({ gpus: 1, maxPrice: credits(4) }, { durationMs: 60_000 })
    h.runUntilQuiet()
    assert.ok(seen.includes('gossip job-request'))
    assert.ok(seen.includes('gossip bid'))
    assert.ok(seen.includes('stream award'))
    const recorded = Object.values(h.recorder.snapshot().sent).reduce((a, c) => a + c.count, 0)
    assert.equal(seen.length, recorded - (h.recorder.count('output-blob').count + h.recorder.count('input-blob').count))
  })

  it('a harness provider gossips its receipt on the evidence topic too, as the daemon does (node/market/provider-jobs.ts): calibration counted one receipt fewer per job', () => {
    const seen: string[] = []
    const h = new Harness({ seed: 1, tap: { sent: (c, _f, m: Message) => { seen.push(`${c} ${m.kind}`) }, delivered: () => {}, lost: () => {} } })
    h.provider('p1', { region: 'eu-west', gpus: { h100: 1 }, floor: credits(1) })
    h.requester('b', { region: 'eu-west' }).submit({ gpus: 1, maxPrice: credits(4) }, { durationMs: 60_000 })
    h.runUntilQuiet()
    assert.deepEqual(seen.filter((x) => x.endsWith(' receipt')).sort(), ['gossip receipt', 'stream receipt'])
  })
})
