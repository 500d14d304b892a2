/**
 * simulations/market/churn.ts through runMarket: a provider that leaves mid-job crashes (the job is
 * re-auctioned and completes elsewhere, the lost attempt's GPU-hours counted), rejoins at its join and
 * takes the next job; a schedule's fractional times are rounded to the harness's whole ms; a schedule
 * naming a node the run does not have is refused.
 */
import assert from 'node:assert/strict'
import type { FleetNode, SimJob, Workload } from '../../../../simulations/model.js'
import { runMarket } from '../../../../simulations/market/run-market.js'
import { ChurnNodeError } from '../../../../simulations/market/churn.js'
import type { ChurnSchedule } from '../../../../simulations/network/churn.js'

const MIN = 60_000
const HOUR = 60 * MIN
const credits = (c: number): number => Math.round(c * 1_000_000)
const node = (id: string): FleetNode => ({ id, model: 'tesla-t4', gpuName: 'Tesla T4', gpus: 1, vramMiB: 15_360, country: 'DE', region: 'eu-west', cpuMilli: 64_000, memoryMiB: 512_000 })
const job = (id: string, submitAt: number, durationMs: number): SimJob => ({ id, submitAt, durationMs, gpus: 1, gpuMilli: 1000, models: [], minVramGB: 0, tier: 'silver', residency: 'prefer' })
const FLOORS: Record<string, number> = { cheap: credits(0.3), dear: credits(0.5) }
const options = { floorOf: (n: FleetNode) => FLOORS[n.id] as number, capOf: () => credits(4) }

function workload (jobs: SimJob[]): Workload {
  return { name: 'churn by hand', fleet: [node('cheap'), node('dear')], ownerWork: [], jobs, horizonMs: 6 * HOUR }
}

describe('simulations/market: churn through crash and restart', function () {
  this.timeout(30_000)
  it('re-auctions the job of a node that leaves (at a fractional time), and gives it the next job once it rejoins', () => {
    // the second job names a region, so another renter submits it: the renter cheap crashed on holds it back (standing.ts)
    const w = workload([job('first', 0, 30 * MIN), { ...job('second', 50 * MIN, 20 * MIN), region: 'eu-west' }])
    const churn: ChurnSchedule = { horizonMs: w.horizonMs, nodes: [{ node: 'cheap', churny: true, offline: [{ from: 10 * MIN + 0.37, until: 40 * MIN + 0.81 }] }, { node: 'dear', churny: false, offline: [] }] }
    const { run, stats } = runMarket(w, { ...options, churn })
    const [first, second] = run.jobs
    assert.equal(first?.status, 'completed')
    assert.equal(first?.attempts, 2)
    assert.equal(first?.node, 'dear', 'finished on the other node')
    // it started on cheap within seconds of its submission and ran there until the crash at 10 min
    assert.ok((first?.lostGpuHours ?? 0) > 9 / 60 && (first?.lostGpuHours ?? 0) <= 10 / 60, `lost ${first?.lostGpuHours} GPU-h`)
    assert.equal(second?.status, 'completed')
    assert.equal(second?.node, 'cheap', 'the rejoined node bid and won')
    assert.equal(second?.lostGpuHours, 0)
    assert.equal(stats.ledgerMismatches, 0)
  })

  it('crashes a node offline at t = 0 before the run starts, and refuses an unknown node', () => {
    const w = workload([job('only', MIN, 10 * MIN)])
    const down: ChurnSchedule = { horizonMs: w.horizonMs, nodes: [{ node: 'cheap', churny: true, offline: [{ from: 0, until: HOUR }] }] }
    assert.equal(runMarket(w, { ...options, churn: down }).run.jobs[0]?.node, 'dear')
    const stranger: ChurnSchedule = { horizonMs: w.horizonMs, nodes: [{ node: 'nobody', churny: true, offline: [{ from: MIN, until: HOUR }] }] }
    assert.throws(() => runMarket(w, { ...options, churn: stranger }), (e: unknown) => e instanceof ChurnNodeError && e.code === 'UNKNOWN_CHURN_NODE' && e.node === 'nobody')
  })
})
