/**
 * The drain (model.ts `drainMs`, run-market.ts): after the horizon no job arrives, but the clock runs on
 * so that work placed before it ends — in the market run and in the baselines alike. A case small enough
 * to compute by hand: one 1-GPU node, one 2-hour job at t = 0, a 1-hour horizon.
 */
import assert from 'node:assert/strict'
import type { FleetNode, SimJob, Workload } from '../../../../simulations/model.js'
import { runEndMs } from '../../../../simulations/model.js'
import { drainMsFor, runMarket } from '../../../../simulations/market/run-market.js'
import { central } from '../../../../simulations/baselines/index.js'
import { strategyMetrics } from '../../../../simulations/report/metrics.js'

const MIN = 60_000
const HOUR = 60 * MIN
const credits = (c: number): number => Math.round(c * 1_000_000)
const NODE: FleetNode = { id: 'h100', model: 'nvidia-h100-80gb-hbm3', gpuName: 'NVIDIA H100 80GB HBM3', gpus: 1, vramMiB: 81_559, country: 'DE', region: 'eu-west', cpuMilli: 64_000, memoryMiB: 512_000 }
const job = (id: string, over: Partial<SimJob> = {}): SimJob =>
  ({ id, submitAt: 0, durationMs: 2 * HOUR, gpus: 1, gpuMilli: 1000, models: [], minVramGB: 0, tier: 'silver', residency: 'prefer', ...over })
const workload = (jobs: SimJob[], drainMs?: number): Workload =>
  ({ name: 'drain', fleet: [NODE], ownerWork: [], jobs, horizonMs: HOUR, ...(drainMs !== undefined ? { drainMs } : {}) })
const options = { floorOf: () => credits(2), capOf: () => credits(4) }
const baseline = { listPrice: () => credits(4), floorOf: () => credits(2), capOf: () => credits(4) }

describe('simulations: the drain phase', () => {
  it('drainMsFor: the latest end past the horizon (submit + start delay + runtime) plus two leases and the bid window, in whole minutes', () => {
    // silver: a 30-minute start delay; 0 + 30 min + 2 h − 1 h = 90 min, + 2 × 10 min (leases) + 2 s (bid window) → 111 min
    assert.equal(drainMsFor(workload([job('a')])), 111 * MIN)
    // nothing runs past the horizon: no drain
    assert.equal(drainMsFor(workload([job('a', { durationMs: 30 * MIN })])), 0)
    // a job submitted at the horizon is never submitted, so it needs no drain
    assert.equal(drainMsFor(workload([job('a', { submitAt: HOUR, durationMs: 10 * HOUR })])), 0)
    assert.equal(runEndMs(workload([], 5 * MIN)), HOUR + 5 * MIN)
    assert.equal(runEndMs(workload([])), HOUR)
  })

  it('without a drain the horizon cuts the running job (open at the end); with it the job completes and nothing is left open', () => {
    const cut = runMarket(workload([job('a')]), options)
    assert.equal(cut.run.jobs[0]?.status, 'failed')
    assert.equal(cut.stats.openAtHorizon, 1)
    assert.equal(cut.stats.endedAtMs, HOUR)

    const w = workload([job('a')], drainMsFor(workload([job('a')])))
    const { run, stats } = runMarket(w, options)
    const j = run.jobs[0]
    assert.equal(j?.status, 'completed')
    assert.equal(stats.openAtHorizon, 0)
    assert.equal(stats.ledgerMismatches, 0)
    assert.equal(stats.endedAtMs, HOUR + 111 * MIN)
    assert.ok(Math.abs((j?.gpuHours ?? 0) - 2) < 1e-9, `${j?.gpuHours} GPU-hours`)
    assert.equal(j?.paid, 2 * credits(2))
    assert.ok((j?.endedAt ?? Infinity) <= runEndMs(w))
    // the node offered its GPU over the horizon and the drain: 1 GPU × (60 + 111) min
    assert.ok(Math.abs((run.nodes[0]?.offeredGpuHours ?? 0) - 171 / 60) < 1e-9)
    assert.ok((run.nodes[0]?.soldGpuHours ?? 0) <= (run.nodes[0]?.offeredGpuHours ?? 0))
  })

  it('the baselines cut placed work at the same instant: the central matcher completes the job with the drain, fails it without', () => {
    const without = central(workload([job('a')]), baseline).jobs[0]
    assert.equal(without?.status, 'failed')
    assert.ok(Math.abs((without?.gpuHours ?? 0) - 1) < 1e-9)
    const w = workload([job('a')], drainMsFor(workload([job('a')])))
    const r = central(w, baseline)
    assert.equal(r.jobs[0]?.status, 'completed')
    assert.ok(Math.abs((r.jobs[0]?.gpuHours ?? 0) - 2) < 1e-9)
    assert.ok(Math.abs((r.nodes[0]?.offeredGpuHours ?? 0) - 171 / 60) < 1e-9)
    // the report's whole-run GPU-hours cover the drain too; its headline, the 1-hour horizon: the job's first hour
    const m = strategyMetrics(w, r)
    assert.ok(Math.abs(m.wholeRun.fleetGpuHours - 171 / 60) < 1e-9)
    assert.deepEqual([m.fleetGpuHours, m.soldGpuHours, m.utilizationFleet], [1, 1, 1])
    assert.equal(m.utilizationOverTime.length, 3)
  })

  it('a job submitted at the horizon is not run in either, drain or not', () => {
    const w = workload([job('late', { submitAt: HOUR })], 2 * HOUR)
    assert.equal(runMarket(w, options).run.jobs[0]?.status, 'unserved')
    assert.equal(central(w, baseline).jobs[0]?.status, 'unserved')
  })
})
