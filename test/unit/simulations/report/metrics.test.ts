/**
 * simulations/report/metrics.ts on a hand-made run (every number worked out in the comments) and the
 * nearest-rank percentile at its edges.
 */
import assert from 'node:assert/strict'
import { metrics, nearestRank, percentiles, strategyMetrics } from '../../../../simulations/report/metrics.js'
import type { JobOutcome, StrategyRun } from '../../../../simulations/model.js'
import { CREDIT, HOUR, MIN, T4, job, listPrice, node, workload } from '../baselines/fixtures.js'

const base = { preemptions: 0, attempts: 1, slaMiss: false, messages: 0, bytes: 0, listCost: 0, paid: 0, gpuHours: 0 }

/** A: 2 GPUs, its owner busy on both over [0, 2 h); B: 2 GPUs; horizon 4 h (fleet 16 GPU-h, owner 4, offered 12). */
export function handRun (): { w: ReturnType<typeof workload>, run: StrategyRun } {
  const w = workload([node('A', T4, 2, 'eu-west'), node('B', T4, 2, 'eu-west')],
    [job('g1', 0, HOUR, { tier: 'gold' }), job('s1', 0, HOUR, { gpus: 2 }), job('b1', HOUR, HOUR, { tier: 'bronze' })],
    [{ node: 'A', start: 0, end: 2 * HOUR, gpus: 2 }], 4 * HOUR)
  const jobs: JobOutcome[] = [
    { ...base, job: 'g1', tier: 'gold', gpus: 1, status: 'completed', node: 'B', submittedAt: 0, awardedAt: 0, startedAt: 0, endedAt: HOUR, gpuHours: 1, paid: 2 * CREDIT, listCost: 4 * CREDIT, messages: 10, bytes: 1000, bids: 3 },
    { ...base, job: 's1', tier: 'silver', gpus: 2, status: 'completed', node: 'A', submittedAt: 0, awardedAt: 30 * MIN, startedAt: 2 * HOUR, endedAt: 3 * HOUR, gpuHours: 2, paid: 2 * CREDIT, listCost: 3 * CREDIT, slaMiss: true, messages: 20, bytes: 3000, bids: 5 },
    { ...base, job: 'b1', tier: 'bronze', gpus: 1, status: 'unserved', submittedAt: HOUR, endedAt: HOUR, attempts: 0, messages: 6, bytes: 200, bids: 0 }
  ]
  const run: StrategyRun = {
    strategy: 'hand',
    jobs,
    nodes: [
      { node: 'A', offeredGpuHours: 4, soldGpuHours: 2, ownerGpuHours: 4, revenue: 2 * CREDIT },
      { node: 'B', offeredGpuHours: 8, soldGpuHours: 1, ownerGpuHours: 0, revenue: 2 * CREDIT }
    ]
  }
  return { w, run }
}

describe('simulations/report: nearest-rank percentiles', () => {
  it('1, 2, 3 and 100 values, and the edges of the rank', () => {
    assert.deepEqual([0, 50, 95, 99, 100].map((p) => nearestRank([7], p)), [7, 7, 7, 7, 7])
    assert.deepEqual([0, 50, 51, 95, 100].map((p) => nearestRank([10, 20], p)), [10, 10, 20, 20, 20], 'p50 of 2 is rank ⌈1⌉ = 1; just past it, rank 2')
    assert.deepEqual([50, 95, 99].map((p) => nearestRank([1, 2, 3], p)), [2, 3, 3], 'p50 of 3 is rank ⌈1.5⌉ = 2')
    const hundred = Array.from({ length: 100 }, (_, i) => i + 1)
    assert.deepEqual([0, 1, 50, 50.5, 95, 99, 99.01, 100].map((p) => nearestRank(hundred, p)), [1, 1, 50, 51, 95, 99, 100, 100])
    assert.equal(nearestRank([], 50), null)
    assert.throws(() => nearestRank([1], 100.5), RangeError)
    assert.throws(() => nearestRank([1], -1), RangeError)
    assert.deepEqual(percentiles([3, 1, 2]), { n: 3, p50: 2, p95: 3, p99: 3, max: 3 }, 'unsorted input is sorted first')
  })
})

describe('simulations/report: metrics of a hand-made run', () => {
  it('utilization, cost, revenue, waits by tier, awards and per-job counts', () => {
    const { w, run } = handRun()
    const m = strategyMetrics(w, run)
    assert.equal(m.utilizationOffered, 3 / 12, 'sold 3 of 12 offered GPU-hours')
    assert.equal(m.utilizationFleet, (4 + 3) / 16, 'owners 4 + sold 3 of 16')
    assert.equal(m.costPerGpuHour, 4 * CREDIT / 3)
    assert.equal(m.costVsList, 4 / 7)
    assert.equal(m.revenuePerSoldGpuHour, 4 * CREDIT / 3)
    assert.equal(m.revenuePerOfferedGpuHour, 4 * CREDIT / 12)
    assert.deepEqual([m.completed, m.failed, m.unserved, m.completion], [2, 0, 1, 2 / 3])
    assert.deepEqual(m.wait, { n: 2, p50: 0, p95: 2 * HOUR, p99: 2 * HOUR, max: 2 * HOUR }, 'the unserved job has no wait')
    assert.deepEqual(m.byTier.gold.wait, { n: 1, p50: 0, p95: 0, p99: 0, max: 0 })
    assert.deepEqual(m.byTier.silver.wait.p50, 2 * HOUR)
    assert.deepEqual(m.byTier.bronze.wait, { n: 0, p50: null, p95: null, p99: null, max: null })
    assert.equal(m.byTier.bronze.unserved, 1)
    assert.equal(m.byTier.bronze.costPerGpuHour, null, 'nothing ran: no price')
    assert.equal(m.slaMisses, 1)
    assert.deepEqual([m.timeToAward.n, m.timeToAward.p50, m.timeToAward.p99], [2, 0, 30 * MIN])
    assert.deepEqual([m.bidsPerJob, m.messagesPerJob, m.bytesPerJob], [8 / 3, 12, 1400])
    assert.deepEqual(m.utilizationOverTime, [
      { t: 0, fleet: 0.75, offered: 0.5 }, // owners 2 + g1 on B; offered 2, sold 1
      { t: HOUR, fleet: 0.5, offered: 0 },
      { t: 2 * HOUR, fleet: 0.5, offered: 0.5 }, // s1's 2 GPUs on A, now all 4 offered
      { t: 3 * HOUR, fleet: 0, offered: 0 }
    ])
    assert.equal(m.demandCostVsList, null, 'without list prices')
  })

  it('the demand against list price counts what did not run at list price', () => {
    const { w, run } = handRun()
    const [m] = metrics(w, [run], { listPrice })
    // demand: g1 1 h + s1 2 GPU-h + b1 1 h = 4 T4 GPU-hours at 1.5 = 6 credits; paid 4 + b1 at list 1.5
    assert.equal(m?.demandCostVsList, 5.5 / 6)
  })

  it('a strategy without bids reports none, not zero', () => {
    const { w, run } = handRun()
    const m = strategyMetrics(w, { ...run, jobs: run.jobs.map(({ bids: _bids, ...j }) => j) })
    assert.equal(m.bidsPerJob, null)
  })
})
