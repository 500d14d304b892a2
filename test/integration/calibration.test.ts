import assert from 'node:assert/strict'
import { calibrate, type CalibrationResult } from '../../calibration/calibrate.js'
import { compareMeasures, runCalibrationModel } from '../../simulations/calibration/index.js'

/**
 * Issue 10, "Calibration": the model's time to award and bids per job within 25 % of the real stack
 * (20 real daemons in this process, memory transport) on the same 20-node workload; and the same
 * check fails when the model is mis-set (latency × 3, or 4 gossip hops), so it can fail.
 *
 * Opt-in (GPUMESH_CALIBRATION=1): the real side takes minutes on this machine (the providers' DHT
 * announcements alone), too long for `npm test`.
 */
const suite = process.env.GPUMESH_CALIBRATION === '1' ? describe : describe.skip

suite('calibration: the model against 20 real daemons', function () {
  // on a loaded machine: joins in turn (≤ 60 s each), then ANNOUNCE_TIMEOUT_MS (10 min), discovery and the market
  // (21 minutes at load 9–16 here at 0 ms)
  this.timeout(2_100_000)
  let result: CalibrationResult

  before(async () => {
    result = await calibrate({ seed: 1 })
  })

  const table = (): string => result.comparison.rows.map((r) => `${r.measure}: model ${r.model}, real ${r.real}`).join('\n')

  it('runs every real job to an end, on a mesh whose hops it measured', () => {
    assert.deepEqual(result.stuck, [])
    assert.equal(result.real.jobs, 24)
    assert.ok(result.network.gossipHops >= 1, JSON.stringify(result.network))
  })

  it('the model\'s time to award and bids per job are within 25 % of the real run', () => {
    const rows = new Map(result.comparison.rows.map((r) => [r.measure, r]))
    assert.equal(rows.get('time to award')?.within, true, table())
    assert.equal(rows.get('bids per job')?.within, true, table())
    assert.equal(result.comparison.ok, true, table())
  })

  it('a mis-set model is outside 25 %: latency × 3, and 4 gossip hops', () => {
    for (const network of [
      { latencyMs: result.modelNetwork.latencyMs * 3, gossipHops: result.modelNetwork.gossipHops },
      { latencyMs: result.modelNetwork.latencyMs, gossipHops: 4 }
    ]) {
      const wrong = runCalibrationModel(result.workload, { seed: result.seed, bidWindowMs: result.bidWindowMs, ...network })
      assert.equal(compareMeasures(wrong, result.real).ok, false, `${JSON.stringify(network)}: ${JSON.stringify(compareMeasures(wrong, result.real).rows.slice(0, 4))}`)
    }
  })
})
