/**
 * simulations/market: a workload through the real market agents on the harness. Small workloads
 * whose outcome can be worked out by hand: who runs what, when (around the owners' own work), at
 * what price; and the run's books: every job ends in one state, money paid = money earned, GPU-hours
 * sold never exceed those offered, the same seed gives the same outcomes.
 */
import assert from 'node:assert/strict'
import type { FleetNode, OwnerWork, SimJob, Workload } from '../../../../simulations/model.js'
import { runMarket } from '../../../../simulations/market/run-market.js'
import { maxRuntimeSec } from '../../../../simulations/market/job-spec.js'
import { ownerHolds } from '../../../../simulations/market/owner-holds.js'
import { CapacityError } from '../../../../simulations/capacity.js'

const MIN = 60_000
const HOUR = 60 * MIN
const credits = (c: number): number => Math.round(c * 1_000_000)

const node = (id: string, gpuName: string, vramMiB: number, gpus: number, region = 'eu-west'): FleetNode =>
  ({ id, model: gpuName.toLowerCase().replace(/[^a-z0-9]+/g, '-'), gpuName, gpus, vramMiB, country: 'DE', region, cpuMilli: 64_000, memoryMiB: 512_000 })
const job = (id: string, over: Partial<SimJob>): SimJob =>
  ({ id, submitAt: 0, durationMs: 30 * MIN, gpus: 1, gpuMilli: 1000, models: [], minVramGB: 0, tier: 'silver', residency: 'prefer', ...over })

const FLEET = [
  node('h100', 'NVIDIA H100 80GB HBM3', 81_559, 2),
  node('t4', 'Tesla T4', 15_360, 1),
  node('a100', 'NVIDIA A100-SXM4-80GB', 81_920, 4)
]
const FLOORS: Record<string, number> = { h100: credits(2), t4: credits(0.3), a100: credits(1.5) }
const OWNER: OwnerWork[] = [{ node: 'a100', start: 0, end: 2 * HOUR, gpus: 4, source: 'own' }]

function workload (jobs: SimJob[], ownerWork = OWNER): Workload {
  return { name: 'hand-made', fleet: FLEET, ownerWork, jobs, horizonMs: 12 * HOUR }
}

const options = { floorOf: (n: FleetNode) => FLOORS[n.id] as number, capOf: () => credits(4) }

describe('simulations: the market strategy', () => {
  it('runs each job on the node a user would expect, around the owners\' own work', () => {
    const w = workload([
      job('cheap', { submitAt: 0, gpus: 1 }), // the T4 is the cheapest fit
      job('big', { submitAt: MIN, gpus: 2, minVramGB: 40 }), // A100s held by the owner: the H100s
      job('a100-now', { submitAt: 2 * MIN, gpus: 4, models: ['a100'], tier: 'silver' }), // held for 2 h, a 15 min start delay: never placed
      job('a100-later', { submitAt: 3 * MIN, gpus: 4, models: ['a100'], tier: 'bronze' }) // a 4 h start delay: starts when the owner's work ends
    ])
    const { run, stats } = runMarket(w, options)
    const by = new Map(run.jobs.map((j) => [j.job, j]))
    assert.equal(by.get('cheap')?.node, 't4')
    assert.equal(by.get('cheap')?.status, 'completed')
    assert.equal(by.get('big')?.node, 'h100')
    assert.equal(by.get('big')?.status, 'completed')
    assert.equal(by.get('a100-now')?.status, 'unserved')
    assert.equal(by.get('a100-now')?.slaMiss, true)
    const later = by.get('a100-later')
    assert.equal(later?.status, 'completed')
    assert.equal(later?.node, 'a100')
    assert.ok((later?.startedAt ?? 0) >= 2 * HOUR, `started at ${later?.startedAt}`)
    assert.ok((later?.startedAt ?? 0) < 2 * HOUR + MIN)
    // first price: the T4 asks its floor; 30 min on 1 GPU = half an hour's floor
    assert.equal(by.get('cheap')?.paid, credits(0.3) / 2)
    assert.ok(Math.abs((by.get('cheap')?.gpuHours ?? 0) - 0.5) < 1e-9)
    assert.equal(by.get('cheap')?.listCost, credits(4) / 2)
    assert.equal(stats.ledgerMismatches, 0)
    assert.ok(stats.messages > 0 && stats.bidsPerJob > 0)
    assert.ok(run.jobs.every((j) => j.messages > 0), 'every submitted job sent messages')
  })

  it('keeps the books: money paid = money earned, sold ≤ offered, one outcome per job; same seed, same outcomes', () => {
    const jobs: SimJob[] = []
    for (let i = 0; i < 30; i++) jobs.push(job(`j${i}`, { submitAt: i * 7 * MIN, durationMs: (20 + (i * 13) % 70) * MIN, gpus: 1 + (i % 3), tier: (['gold', 'silver', 'bronze'] as const)[i % 3] }))
    const w = workload(jobs)
    const a = runMarket(w, { ...options, seed: 3 })
    const b = runMarket(w, { ...options, seed: 3 })
    assert.deepEqual(a.run, b.run)
    assert.equal(a.run.jobs.length, 30)
    assert.equal(new Set(a.run.jobs.map((j) => j.job)).size, 30)
    const paid = a.run.jobs.reduce((s, j) => s + j.paid, 0)
    const earned = a.run.nodes.reduce((s, n) => s + n.revenue, 0)
    assert.equal(paid, earned)
    assert.ok(paid > 0)
    for (const n of a.run.nodes) assert.ok(n.soldGpuHours <= n.offeredGpuHours + 1e-9, `${n.node} sold ${n.soldGpuHours} of ${n.offeredGpuHours}`)
    const a100 = a.run.nodes.find((n) => n.node === 'a100')
    assert.equal(a100?.ownerGpuHours, 8)
    assert.equal(a100?.offeredGpuHours, 4 * 12 - 8)
    assert.equal(a.stats.ledgerMismatches, 0)
  })

  it('a no-show node wins and vanishes; the job still completes elsewhere', () => {
    const w = { ...workload([job('j', { gpus: 1, tier: 'silver' })], []) }
    const { run } = runMarket(w, { ...options, noShows: new Set(['t4']) })
    const j = run.jobs[0]
    assert.equal(j?.status, 'completed')
    assert.notEqual(j?.node, 't4')
    assert.ok((j?.attempts ?? 0) >= 2)
  })
})

describe('simulations: owner holds and job specs', () => {
  it('gives owner work the lowest GPUs free over its whole interval, and refuses work that does not fit', () => {
    const holds = ownerHolds(FLEET, [
      { node: 'a100', start: 0, end: 10, gpus: 2 },
      { node: 'a100', start: 5, end: 20, gpus: 2 },
      { node: 'a100', start: 10, end: 30, gpus: 2 } // GPUs 0, 1 are free again at 10 exactly
    ])
    assert.deepEqual(holds.get('a100')?.map((x) => x.gpus), [['GPU-a100-0', 'GPU-a100-1'], ['GPU-a100-2', 'GPU-a100-3'], ['GPU-a100-0', 'GPU-a100-1']])
    assert.throws(() => ownerHolds(FLEET, [{ node: 't4', start: 0, end: 10, gpus: 2 }]), CapacityError)
    assert.throws(() => ownerHolds(FLEET, [{ node: 'nope', start: 0, end: 10, gpus: 1 }]), RangeError)
  })

  it('asks for a little more runtime than the job runs, in whole minutes, within the protocol\'s bound', () => {
    assert.equal(maxRuntimeSec(30 * MIN), 33 * 60)
    assert.equal(maxRuntimeSec(1), 60)
    assert.equal(maxRuntimeSec(10 * MIN), 11 * 60)
    assert.equal(maxRuntimeSec(365 * 24 * HOUR), 30 * 24 * 3600)
  })
})
