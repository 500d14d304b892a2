/**
 * Each baseline on the hand case of fixtures.ts (and a few edges), every placement, start and price
 * worked out by hand in the comments.
 */
import assert from 'node:assert/strict'
import { central } from '../../../../simulations/baselines/central.js'
import { lowestPrice } from '../../../../simulations/baselines/lowest-price.js'
import { oldWay } from '../../../../simulations/baselines/old-way.js'
import { BaselineInputError, BaselineOptionError } from '../../../../simulations/baselines/outcome.js'
import type { JobOutcome, StrategyRun } from '../../../../simulations/model.js'
import { A100, CREDIT, HOUR, MIN, T4, floors, handCase, handFloors, job, listPrice, node, workload } from './fixtures.js'

function byJob (run: StrategyRun): Record<string, JobOutcome> {
  return Object.fromEntries(run.jobs.map((j) => [j.job, j]))
}

function placement (o: JobOutcome | undefined): [string, string | undefined, number | undefined, number] {
  assert.ok(o !== undefined)
  return [o.status, o.node, o.startedAt, o.paid]
}

describe('simulations/baselines: the old way', () => {
  it('rents the cheapest fitting cloud model at list price, starting at submit; the fleet earns nothing', () => {
    const run = oldWay(handCase(), { listPrice })
    const j = byJob(run)
    assert.deepEqual(placement(j.j1), ['completed', 'cloud:nvidia-tesla-t4', 0, 1.5 * CREDIT])
    assert.deepEqual(placement(j.j2), ['completed', 'cloud:nvidia-tesla-t4', 0, 3 * CREDIT], '2 GPU-hours of T4')
    assert.deepEqual(placement(j.j3), ['completed', 'cloud:nvidia-a100-sxm4-80gb', 0, 4 * CREDIT], 'only the A100 is an a100')
    assert.deepEqual(placement(j.j4), ['completed', 'cloud:nvidia-tesla-t4', 10 * MIN, 3 * CREDIT], 'unlimited capacity: 2 GPUs at once')
    assert.deepEqual(placement(j.j5), ['completed', 'cloud:nvidia-tesla-t4', 0, 0.75 * CREDIT], 'the cloud is everywhere and its price is its price: region and cap do not apply')
    for (const o of run.jobs) {
      assert.equal(o.paid, o.listCost, 'the old way pays list price')
      assert.equal(o.slaMiss, false)
    }
    assert.deepEqual(run.nodes.map((n) => [n.node, n.soldGpuHours, n.revenue, n.offeredGpuHours, n.ownerGpuHours]),
      [['A', 0, 0, 23, 1], ['B', 0, 0, 48, 0], ['C', 0, 0, 24, 0]])
  })

  it('leaves unserved a job no catalogue model fits, and cuts a job at the horizon', () => {
    const w = workload([node('A', T4, 1, 'eu-west')], [
      job('big', 0, HOUR, { minVramGB: 40 }),
      job('late', 23 * HOUR, 2 * HOUR, { tier: 'gold' })
    ])
    const j = byJob(oldWay(w, { listPrice }))
    assert.equal(j.big?.status, 'unserved')
    assert.equal(j.big?.slaMiss, true, 'a silver job never started misses its SLA')
    assert.equal(j.late?.status, 'failed')
    assert.equal(j.late?.gpuHours, 1, 'one of its two hours lies inside the horizon')
    assert.equal(j.late?.paid, 1.5 * CREDIT)
    assert.equal(j.late?.endedAt, 24 * HOUR)
  })

  it('refuses a job id twice, a job under 1 ms and a fractional GPU count with a typed error', () => {
    const fleet = [node('A', T4, 1, 'eu-west')]
    const refused = (jobs: ReturnType<typeof job>[]): void => {
      assert.throws(() => oldWay(workload(fleet, jobs), { listPrice }), (e: unknown) => e instanceof BaselineInputError && e.code === 'BASELINE_INPUT')
    }
    refused([job('a', 0, HOUR), job('a', 1, HOUR)])
    refused([job('a', 0, 0.5)])
    refused([job('a', 0, HOUR, { gpus: 1.5 })])
    refused([job('a', 0, HOUR, { gpus: 0 })])
    assert.equal(oldWay(workload(fleet, [job('a', 0, 1)]), { listPrice }).jobs[0]?.status, 'completed', 'exactly 1 ms is a job')
  })

  it('refuses a negative list price and a horizon of 0 with a typed error', () => {
    assert.throws(() => oldWay(handCase(), { listPrice: () => -1 }), BaselineOptionError)
    assert.throws(() => oldWay({ ...handCase(), horizonMs: 0 }, { listPrice }), BaselineOptionError)
    assert.throws(() => oldWay(handCase(), { listPrice, maxStartDelayMs: { gold: -1 } }), BaselineOptionError)
  })
})

describe('simulations/baselines: the central matcher', () => {
  it('places each job on the cheapest node free within its tier delay, at the earliest start', () => {
    const run = central(handCase(), { listPrice, floorOf: handFloors })
    const j = byJob(run)
    // t=0, gold first: j3 (A100 only) → C at 3 credits
    assert.deepEqual(placement(j.j3), ['completed', 'C', 0, 3 * CREDIT])
    assert.equal(j.j3?.listCost, 4 * CREDIT)
    // silver j1: A (1 credit) is busy until 1 h, past silver's 30 min → B at 2 credits
    assert.deepEqual(placement(j.j1), ['completed', 'B', 0, 2 * CREDIT])
    // silver j5: only C lies in na, and it asks 3 credits over the 2-credit cap → unserved when its delay runs out
    assert.deepEqual(placement(j.j5), ['unserved', undefined, undefined, 0])
    assert.equal(j.j5?.endedAt, 30 * MIN)
    assert.equal(j.j5?.slaMiss, true)
    // bronze j2 waits up to 6 h: A frees at 1 h and is the cheapest → A at 1 h, 2 GPU-hours × 1 credit
    assert.deepEqual(placement(j.j2), ['completed', 'A', HOUR, 2 * CREDIT])
    assert.equal(j.j2?.slaMiss, false, 'bronze has no start promise')
    // gold j4 at 10 min needs 2 GPUs: only B has 2, and j1 holds one until 1 h, past 10 min + 5 min
    assert.deepEqual(placement(j.j4), ['unserved', undefined, undefined, 0])
    assert.equal(j.j4?.endedAt, 15 * MIN)
    assert.deepEqual(run.nodes.map((n) => [n.node, n.soldGpuHours, n.revenue]), [['A', 2, 2 * CREDIT], ['B', 1, 2 * CREDIT], ['C', 1, 3 * CREDIT]])
    assert.deepEqual(run.jobs.map((o) => o.job), ['j1', 'j2', 'j3', 'j5', 'j4'], 'outcomes in the workload order')
  })

  it('starts exactly at the end of the tier delay, and not one ms past it', () => {
    const fleet = [node('A', T4, 1, 'eu-west')]
    const owner = (end: number): Array<{ node: string, start: number, end: number, gpus: number }> => [{ node: 'A', start: 0, end, gpus: 1 }]
    const at = central(workload(fleet, [job('g', 0, HOUR, { tier: 'gold' })], owner(5 * MIN)), { listPrice, floorOf: () => CREDIT })
    assert.equal(at.jobs[0]?.startedAt, 5 * MIN)
    assert.equal(at.jobs[0]?.slaMiss, false)
    const past = central(workload(fleet, [job('g', 0, HOUR, { tier: 'gold' })], owner(5 * MIN + 1)), { listPrice, floorOf: () => CREDIT })
    assert.equal(past.jobs[0]?.status, 'unserved')
    const zero = central(workload(fleet, [job('g', 0, HOUR, { tier: 'gold' })], owner(1)), { listPrice, floorOf: () => CREDIT, maxStartDelayMs: { gold: 0 } })
    assert.equal(zero.jobs[0]?.status, 'unserved', 'a delay of 0 means now or never')
  })

  it('at the same ask takes the earliest start, then the lower id; a cap exactly at the ask fits', () => {
    const fleet = [node('A', T4, 1, 'eu-west'), node('B', T4, 1, 'eu-west'), node('C', T4, 1, 'eu-west')]
    const w = workload(fleet, [job('x', 0, HOUR, { maxPrice: CREDIT }), job('y', 0, HOUR, { maxPrice: CREDIT })], [{ node: 'A', start: 0, end: 10 * MIN, gpus: 1 }])
    const j = byJob(central(w, { listPrice, floorOf: floors({ A: CREDIT, B: CREDIT, C: CREDIT + 1 }) }))
    assert.deepEqual(placement(j.x), ['completed', 'B', 0, CREDIT], 'B starts now, A only at 10 min')
    assert.deepEqual(placement(j.y), ['completed', 'A', 10 * MIN, CREDIT], 'C asks one micro over the cap')
  })

  it('serves gold before silver before bronze at the same instant', () => {
    const w = workload([node('A', T4, 1, 'eu-west')], [job('b', 0, HOUR, { tier: 'bronze' }), job('s', 0, HOUR), job('g', 0, HOUR, { tier: 'gold' })])
    const j = byJob(central(w, { listPrice, floorOf: () => CREDIT }))
    assert.equal(j.g?.startedAt, 0)
    assert.equal(j.s?.status, 'unserved', 'silver would start at 1 h, past its 30 min')
    assert.equal(j.b?.startedAt, HOUR)
  })
})

describe('simulations/baselines: lowest-price-only auction', () => {
  it('gives each job the cheapest fitting node free now, never waiting', () => {
    const run = lowestPrice(handCase(), { listPrice, floorOf: handFloors })
    const j = byJob(run)
    assert.deepEqual(placement(j.j3), ['completed', 'C', 0, 3 * CREDIT])
    assert.deepEqual(placement(j.j1), ['completed', 'B', 0, 2 * CREDIT], 'A is busy now')
    assert.deepEqual(placement(j.j5), ['unserved', undefined, undefined, 0])
    assert.deepEqual(placement(j.j2), ['completed', 'B', 0, 4 * CREDIT], 'bronze does not wait for A either: B\'s second GPU')
    assert.deepEqual(placement(j.j4), ['unserved', undefined, undefined, 0], 'B is full at 10 min')
    assert.equal(j.j4?.endedAt, 10 * MIN)
  })

  it('a no-show wins, vanishes, and the job is re-auctioned one lease later to the next cheapest', () => {
    const fleet = [node('cheap', T4, 1, 'eu-west'), node('honest', T4, 1, 'eu-west')]
    const w = workload(fleet, [job('a', 0, HOUR), job('b', 2 * HOUR, HOUR)])
    const opts = { listPrice, floorOf: floors({ cheap: CREDIT, honest: 2 * CREDIT }), failures: { noShows: new Set(['cheap']), leaseMs: 30_000 } }
    const j = byJob(lowestPrice(w, opts))
    assert.deepEqual(placement(j.a), ['completed', 'honest', 30_000, 2 * CREDIT])
    assert.equal(j.a?.attempts, 2)
    assert.equal(j.a?.awardedAt, 30_000)
    assert.equal(j.b?.attempts, 2, 'the no-show stays in the market and wins again: nothing weighs reliability')
    const once = byJob(lowestPrice(w, { ...opts, failures: { ...opts.failures, maxAttempts: 1 } }))
    assert.equal(once.a?.status, 'failed')
    assert.equal(once.a?.node, 'cheap')
    assert.equal(once.a?.gpuHours, 0)
    assert.equal(once.a?.endedAt, 30_000)
    assert.throws(() => lowestPrice(w, { ...opts, failures: { maxAttempts: 0 } }), BaselineOptionError)
    assert.throws(() => lowestPrice(w, { ...opts, failures: { leaseMs: 0 } }), BaselineOptionError)
  })

  it('fails a job whose every fitting node no-shows, after as many awards', () => {
    const w = workload([node('x', A100, 1, 'eu-west'), node('y', T4, 1, 'eu-west')], [job('a', 0, HOUR, { tier: 'gold' })])
    const j = byJob(lowestPrice(w, { listPrice, floorOf: () => CREDIT, failures: { noShows: new Set(['x', 'y']) } }))
    assert.equal(j.a?.status, 'failed')
    assert.equal(j.a?.attempts, 2)
    assert.equal(j.a?.slaMiss, true)
  })
})
