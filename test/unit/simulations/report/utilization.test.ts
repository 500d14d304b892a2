/**
 * simulations/report/utilization.ts on a hand-made run with a drain (every number worked out in the
 * comments): the headline inside the arrival horizon — a job straddling it, one ending exactly at it, one
 * starting at it, zero-length work, the cloud — the whole run beside it, and the series, whose bucket the
 * horizon falls in is split there so the buckets before it add up to the headline.
 */
import assert from 'node:assert/strict'
import { central } from '../../../../simulations/baselines/central.js'
import { lowestPrice } from '../../../../simulations/baselines/lowest-price.js'
import { oldWay } from '../../../../simulations/baselines/old-way.js'
import { randomAssignment } from '../../../../simulations/baselines/random.js'
import type { JobOutcome, StrategyRun, Workload } from '../../../../simulations/model.js'
import { strategyMetrics } from '../../../../simulations/report/metrics.js'
import { horizonAccount, utilizationOverTime, wholeRunAccount, windowAccount } from '../../../../simulations/report/utilization.js'
import { HOUR, T4, handCase, handFloors, listPrice, node, workload } from '../baselines/fixtures.js'

const base = { tier: 'silver' as const, status: 'completed' as const, submittedAt: 0, endedAt: 0, paid: 0, listCost: 0, preemptions: 0, attempts: 1, slaMiss: false, messages: 0, bytes: 0 }
const ran = (job: string, nodeId: string, startedAt: number, gpuHours: number, gpus = 1): JobOutcome => ({ ...base, job, gpus, node: nodeId, startedAt, endedAt: startedAt + gpuHours / gpus * HOUR, gpuHours })

/**
 * A: 2 GPUs, its owner busy on 1 over [1 h, 5 h) (straddles the horizon); B: 1 GPU, a zero-length owner task
 * at 4 h. Horizon 4 h, drain 2 h (the run ends at 6 h). Jobs, 1 GPU each:
 *   d on A [0, 1 h) · s on A [3 h, 5 h) straddles · e on B [2 h, 4 h) ends at the horizon ·
 *   h on B [4 h, 5 h) starts at it · z on A, zero GPU-hours · c on the cloud, 1 GPU-hour · u unserved.
 */
function drained (): { w: Workload, run: StrategyRun } {
  const w: Workload = {
    ...workload([node('A', T4, 2, 'eu-west'), node('B', T4, 1, 'eu-west')], [],
      [{ node: 'A', start: HOUR, end: 5 * HOUR, gpus: 1 }, { node: 'B', start: 4 * HOUR, end: 4 * HOUR, gpus: 1 }], 4 * HOUR),
    drainMs: 2 * HOUR
  }
  const jobs: JobOutcome[] = [
    ran('d', 'A', 0, 1), ran('s', 'A', 3 * HOUR, 2), ran('e', 'B', 2 * HOUR, 2), ran('h', 'B', 4 * HOUR, 1),
    ran('z', 'A', 0, 0), ran('c', 'cloud:nvidia-tesla-t4', 0, 1),
    { ...base, job: 'u', gpus: 1, status: 'unserved', gpuHours: 0, attempts: 0 }
  ]
  // the strategy's node lines over the whole run [0, 6 h): A 2 × 6 − 4 owner = 8 offered, d 1 + s 2 sold; B 6 offered, e 2 + h 1 sold
  const nodes = [
    { node: 'A', offeredGpuHours: 8, soldGpuHours: 3, ownerGpuHours: 4, revenue: 0 },
    { node: 'B', offeredGpuHours: 6, soldGpuHours: 3, ownerGpuHours: 0, revenue: 0 }
  ]
  return { w, run: { strategy: 'hand', jobs, nodes } }
}

describe('simulations/report: utilization inside the horizon and over the whole run', () => {
  it('clips owners\' work and sold windows to the horizon: straddling, ending at it, starting at it, zero-length, the cloud', () => {
    const { w, run } = drained()
    // fleet 3 GPUs × 4 h = 12; owners: A's [1 h, 4 h) = 3, B's zero-length task 0; offered 9
    // sold: d 1 + s's first hour 1 + e 2 (ends exactly at 4 h) + h 0 (starts at 4 h) + z 0 + the cloud 0 = 4
    assert.deepEqual(horizonAccount(w, run), { untilMs: 4 * HOUR, fleetGpuHours: 12, ownerGpuHours: 3, offeredGpuHours: 9, soldGpuHours: 4, offered: 4 / 9, fleet: 7 / 12 })
    assert.deepEqual(wholeRunAccount(w, run), { untilMs: 6 * HOUR, fleetGpuHours: 18, ownerGpuHours: 4, offeredGpuHours: 14, soldGpuHours: 6, offered: 6 / 14, fleet: 10 / 18 })
    const m = strategyMetrics(w, run)
    assert.deepEqual([m.offeredGpuHours, m.soldGpuHours, m.ownerGpuHours, m.fleetGpuHours, m.utilizationOffered, m.utilizationFleet], [9, 4, 3, 12, 4 / 9, 7 / 12], 'the headline is the horizon\'s')
    assert.equal(m.wholeRun.fleet, 10 / 18)
  })

  it('one millisecond either side of the horizon, and an empty window', () => {
    const { w, run } = drained()
    // e ends at 4 h: a window 1 ms shorter loses e's, s's and A's owner's last ms; 1 ms longer gains s's, h's and A's owner's
    const ms = 1 / HOUR
    const before = windowAccount(w, run, 4 * HOUR - 1)
    const after = windowAccount(w, run, 4 * HOUR + 1)
    assert.ok(Math.abs(before.soldGpuHours - (4 - 2 * ms)) < 1e-12, `${before.soldGpuHours}`)
    assert.ok(Math.abs(after.soldGpuHours - (4 + 2 * ms)) < 1e-12, `${after.soldGpuHours}`)
    assert.ok(Math.abs(after.ownerGpuHours - (3 + ms)) < 1e-12)
    const none = windowAccount(w, run, 0)
    assert.deepEqual(none, { untilMs: 0, fleetGpuHours: 0, ownerGpuHours: 0, offeredGpuHours: 0, soldGpuHours: 0, offered: null, fleet: null })
    assert.throws(() => windowAccount(w, run, -1), RangeError)
    assert.equal(horizonAccount({ ...w, horizonMs: 0 }, run).fleet, null, 'a zero-length horizon has no share')
  })

  it('the series splits the bucket the horizon falls in, so the buckets before it add up to the headline', () => {
    const { w, run } = drained()
    const H = HOUR
    // 1.5 h buckets: [0, 1.5) [1.5, 3) [3, 4) [4, 4.5) [4.5, 6)
    //   [0, 1.5):   cap 4.5, owner 0.5, sold d 1            → fleet 1.5 / 4.5, offered 1 / 4
    //   [1.5, 3):   cap 4.5, owner 1.5, sold e 1            → 2.5 / 4.5, offered 1 / 3
    //   [3, 4):     cap 3,   owner 1,   sold s 1 + e 1      → 1, offered 1
    //   [4, 4.5):   cap 1.5, owner 0.5, sold s 0.5 + h 0.5  → 1, offered 1
    //   [4.5, 6):   cap 4.5, owner 0.5, sold s 0.5 + h 0.5  → 1.5 / 4.5, offered 1 / 4
    const series = utilizationOverTime(w, run, 1.5 * H)
    assert.deepEqual(series, [
      { t: 0, fleet: 1.5 / 4.5, offered: 1 / 4 },
      { t: 1.5 * H, fleet: 2.5 / 4.5, offered: 1 / 3 },
      { t: 3 * H, fleet: 1, offered: 1 },
      { t: 4 * H, fleet: 1, offered: 1 },
      { t: 4.5 * H, fleet: 1.5 / 4.5, offered: 1 / 4 }
    ])
    const spans = [1.5, 1.5, 1, 0.5, 1.5]
    const busy = series.slice(0, 3).reduce((s, p, i) => s + p.fleet * 3 * (spans[i] as number), 0)
    assert.ok(Math.abs(busy - (3 + 4)) < 1e-9, 'owners 3 + sold 4 before the horizon')
    // at a bucket edge, nothing is split: 1 h buckets over 6 h are six points
    assert.deepEqual(utilizationOverTime(w, run).map((p) => p.t / H), [0, 1, 2, 3, 4, 5])
    assert.deepEqual(utilizationOverTime({ ...w, drainMs: 0 }, run, 3 * H).map((p) => p.t / H), [0, 3], 'the horizon at the run\'s end splits nothing')
  })

  it('every baseline with a drain: sold within offered inside the horizon, and no more than over the whole run', () => {
    const w: Workload = { ...handCase(), horizonMs: 1.5 * HOUR, drainMs: 3 * HOUR }
    const opts = { listPrice, floorOf: handFloors }
    for (const run of [oldWay(w, opts), central(w, opts), lowestPrice(w, opts), randomAssignment(w, { ...opts, seed: 3 })]) {
      const h = horizonAccount(w, run)
      const whole = wholeRunAccount(w, run)
      assert.ok(h.soldGpuHours <= h.offeredGpuHours + 1e-9, `${run.strategy}: sold ${h.soldGpuHours} of ${h.offeredGpuHours} inside the horizon`)
      assert.ok(h.soldGpuHours <= whole.soldGpuHours + 1e-9 && h.ownerGpuHours <= whole.ownerGpuHours + 1e-9, run.strategy)
      // A's owner works [0, 1 h) inside the 1.5 h horizon: 1 of 4 GPUs × 1.5 h = 6 fleet GPU-hours
      assert.deepEqual([h.fleetGpuHours, h.ownerGpuHours, h.offeredGpuHours], [6, 1, 5], run.strategy)
    }
    // the old way rents the cloud and sells nothing on the fleet; the central matcher places on it from t = 0
    assert.equal(horizonAccount(w, oldWay(w, opts)).soldGpuHours, 0)
    assert.ok(horizonAccount(w, central(w, opts)).soldGpuHours > 0)
  })
})
