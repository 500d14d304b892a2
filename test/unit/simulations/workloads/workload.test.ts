/**
 * simulations/workloads/workload.ts and regions.ts: the Workload builder (checked, sorted, summarised) and
 * the per-node place draw (deterministic by seed and id, overridable, following its weights).
 */
import assert from 'node:assert/strict'
import type { FleetNode, OwnerWork, SimJob } from '../../../../simulations/model.js'
import { DEFAULT_PLACES, PlaceAssigner, type Place } from '../../../../simulations/workloads/regions.js'
import { InvalidFleetDistributionError } from '../../../../simulations/network/geo.js'

const placeAssigner = (places: readonly Place[]): PlaceAssigner => new PlaceAssigner(1, places)
import { buildWorkload, WorkloadError, type WorkloadErrorCode, type WorkloadParts } from '../../../../simulations/workloads/workload.js'

const HOUR = 3_600_000

function node (id: string, gpus: number): FleetNode {
  return { id, model: 'tesla-t4', gpuName: 'Tesla T4', gpus, vramMiB: 15_360, country: 'DE', region: 'eu-central', cpuMilli: 0, memoryMiB: 0 }
}

function job (id: string, submitAt: number, over: Partial<SimJob> = {}): SimJob {
  return { id, submitAt, durationMs: HOUR, gpus: 1, gpuMilli: 1000, models: [], minVramGB: 0, tier: 'silver', residency: 'prefer', ...over }
}

function parts (over: Partial<WorkloadParts> = {}): WorkloadParts {
  return {
    name: 'w',
    fleet: [node('a', 2), node('b', 1)],
    ownerWork: [{ node: 'b', start: HOUR, end: 3 * HOUR, gpus: 1 }, { node: 'a', start: 0, end: 2 * HOUR, gpus: 2 }],
    jobs: [job('j2', 10), job('j1', 10, { tier: 'gold', gpus: 2 }), job('j0', 5, { tier: 'bronze' })],
    horizonMs: 2 * HOUR,
    ...over
  }
}

function refused (p: WorkloadParts, code: WorkloadErrorCode): void {
  assert.throws(() => buildWorkload(p), (e: unknown) => e instanceof WorkloadError && e.code === code)
}

describe('simulations/workloads: the Workload builder', () => {
  it('sorts jobs by submit time then id and owner work by start, and summarises the load', () => {
    const { workload, summary } = buildWorkload(parts({ dropped: { 'cpu-only': 3 }, censored: 1 }))
    assert.deepEqual(workload.jobs.map((j) => j.id), ['j0', 'j1', 'j2'])
    assert.deepEqual(workload.ownerWork.map((w) => w.node), ['a', 'b'])
    assert.equal(summary.gpus, 3)
    assert.deepEqual(summary.gpusByModel, { 'tesla-t4': 3 })
    assert.deepEqual(summary.jobsByTier, { gold: 1, silver: 1, bronze: 1 })
    assert.equal(summary.jobGpuHours, 4)
    assert.equal(summary.ownerGpuHours, 4 + 1, 'b\'s work is cut at the 2 h horizon')
    assert.equal(summary.fleetGpuHours, 6)
    assert.deepEqual(summary.dropped, { 'cpu-only': 3, 'never-scheduled': 0, 'outside-window': 0, 'owner-unplaced': 0 })
    assert.equal(summary.censored, 1)
  })

  it('refuses inconsistent parts with a typed error', () => {
    refused(parts({ fleet: [node('a', 2), node('a', 1)] }), 'DUPLICATE_NODE')
    refused(parts({ fleet: [node('a', 0)], ownerWork: [] }), 'BAD_NODE')
    refused(parts({ jobs: [job('x', 0), job('x', 1)] }), 'DUPLICATE_JOB')
    refused(parts({ jobs: [job('x', 0, { durationMs: 0 })] }), 'BAD_JOB')
    refused(parts({ jobs: [job('x', 0, { gpuMilli: 1001 })] }), 'BAD_JOB')
    refused(parts({ ownerWork: [{ node: 'zz', start: 0, end: 1, gpus: 1 }] }), 'UNKNOWN_NODE')
    refused(parts({ ownerWork: [{ node: 'a', start: 5, end: 5, gpus: 1 }] }), 'BAD_OWNER_WORK')
    const over: OwnerWork[] = [{ node: 'a', start: 0, end: 10, gpus: 2 }, { node: 'a', start: 9, end: 12, gpus: 1 }]
    refused(parts({ ownerWork: over }), 'OVERCOMMIT')
    buildWorkload(parts({ ownerWork: [{ node: 'a', start: 0, end: 10, gpus: 2 }, { node: 'a', start: 10, end: 12, gpus: 2 }] })) // back to back: fits
    refused(parts({ horizonMs: 0 }), 'BAD_HORIZON')
  })
})

describe('simulations/workloads: node places', () => {
  it('draws a place per node id, the same per seed, independent of the other nodes', () => {
    const a = new PlaceAssigner(5)
    const b = new PlaceAssigner(5)
    assert.deepEqual(a.placeOf('openb-node-0001'), b.placeOf('openb-node-0001'))
    const ids = Array.from({ length: 50 }, (_, i) => `n${i}`)
    const seq = ids.map((id) => a.placeOf(id).country).join()
    assert.equal(ids.map((id) => new PlaceAssigner(5).placeOf(id).country).join(), seq)
    assert.notEqual(ids.map((id) => new PlaceAssigner(6).placeOf(id).country).join(), seq)
  })

  it('follows the weights of the distribution, and a caller\'s own', () => {
    const a = new PlaceAssigner('w')
    const counts = new Map<string, number>()
    const n = 20_000
    for (let i = 0; i < n; i++) {
      const p = a.placeOf(`n${i}`)
      counts.set(`${p.country}/${p.region}`, (counts.get(`${p.country}/${p.region}`) ?? 0) + 1)
    }
    const total = DEFAULT_PLACES.reduce((s, p) => s + p.weight, 0)
    for (const p of DEFAULT_PLACES) {
      const share = (counts.get(`${p.country}/${p.region}`) ?? 0) / n
      assert.ok(Math.abs(share - p.weight / total) < 0.01, `${p.country}/${p.region}: ${share} vs ${p.weight / total}`)
    }
    const own = new PlaceAssigner(1, [{ country: 'FI', region: 'eu-north', weight: 3 }])
    assert.deepEqual(own.placeOf('x'), { country: 'FI', region: 'eu-north' })
    const refused = (places: Parameters<typeof placeAssigner>[0], code: string): void => {
      assert.throws(() => placeAssigner(places), (e: unknown) => e instanceof InvalidFleetDistributionError && e.code === code)
    }
    refused([], 'EMPTY')
    refused([{ country: 'FI', region: 'eu-north', weight: 0 }], 'WEIGHT')
    refused([{ country: 'fin', region: 'eu-north', weight: 1 }], 'COUNTRY')
    refused([{ country: 'FI', region: 'eu-west', weight: 1 }], 'REGION')
  })
})
