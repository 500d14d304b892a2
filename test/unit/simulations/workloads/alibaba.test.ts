/**
 * simulations/workloads/alibaba.ts on the real trace files (simulations/data/): the counts the trace's
 * README gives, GPUs per model, the drop counts, determinism per seed, the window and compression, and the
 * first-fit packer never over-committing a node (a property test against a brute-force check).
 */
import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import fc from 'fast-check'
import { alibabaWorkload, packOwnerWork, parseAlibabaNodes, parseAlibabaPods, type UnplacedWork } from '../../../../simulations/workloads/alibaba.js'
import { CsvValueError } from '../../../../simulations/workloads/csv.js'
import type { FleetNode } from '../../../../simulations/model.js'

const DATA = fileURLToPath(new URL('../../../../../simulations/data/traces/alibaba-gpu-2023/', import.meta.url))
const NODES = readFileSync(DATA + 'openb_node_list_gpu_node.csv', 'utf8')
const PODS = readFileSync(DATA + 'openb_pod_list_default.csv', 'utf8')
const texts = { nodes: NODES, pods: PODS }

describe('simulations/workloads: Alibaba 2023 trace', function () {
  this.timeout(20_000)

  it('loads 1,213 nodes with 6,212 GPUs, per model as the trace counts them', () => {
    const fleet = parseAlibabaNodes(NODES, { seed: 1 })
    assert.equal(fleet.length, 1213)
    assert.equal(fleet.reduce((s, n) => s + n.gpus, 0), 6212)
    const byModel: Record<string, number> = {}
    for (const n of fleet) byModel[n.model] = (byModel[n.model] ?? 0) + n.gpus
    assert.deepEqual(byModel, {
      'tesla-p100-pcie-16gb': 265,
      'tesla-t4': 842,
      'tesla-v100-sxm2-16gb': 195,
      'tesla-v100-sxm2-32gb': 204,
      'nvidia-a10': 2,
      'nvidia-a100-sxm4-40gb': 4392, // G2 (assumed)
      'nvidia-a100-sxm4-80gb': 312 // G3 (assumed)
    })
    const t4 = fleet.find((n) => n.model === 'tesla-t4')
    assert.equal(t4?.gpuName, 'Tesla T4')
    assert.equal(t4?.vramMiB, 15_360)
    assert.ok(fleet.every((n) => /^[A-Z]{2}$/.test(n.country) && n.region !== ''))
  })

  it('reads 8,152 pods: 1,088 CPU-only and 861 never-scheduled GPU pods dropped, 6,203 kept', () => {
    const p = parseAlibabaPods(PODS)
    assert.equal(p.pods.length + p.dropped['cpu-only'] + p.dropped['never-scheduled'], 8152)
    assert.equal(p.dropped['cpu-only'], 1088)
    assert.equal(p.dropped['never-scheduled'], 861)
    assert.equal(p.pods.length, 6203)
    assert.equal(p.endS, 12_902_960)
    assert.deepEqual(countBy(p.pods.map((x) => x.gpus)), { 1: 6129, 2: 15, 4: 15, 8: 44 })
    // QoS → tier: LS 3,590 + Guaranteed 6 → gold, Burstable 97 → silver, BE 2,510 → bronze.
    assert.deepEqual(countBy(p.pods.map((x) => x.tier)), { gold: 3596, silver: 97, bronze: 2510 })
    const gpuHours = p.pods.reduce((s, x) => s + x.gpus * (x.deletion - x.scheduled) / 3600, 0)
    assert.ok(Math.abs(gpuHours - 59_612.2) < 0.1, `GPU-hours asked ${gpuHours}`)
    assert.ok(p.pods.every((x) => x.deletion > x.scheduled && x.gpuMilli > 0 && x.gpuMilli <= 1000))
  })

  it('splits the kept pods into owners\' work and renters\' jobs, all accounted for, the same per seed', () => {
    const a = alibabaWorkload(texts, { seed: 7, renterFraction: 0.3 })
    const b = alibabaWorkload(texts, { seed: 7, renterFraction: 0.3 })
    const c = alibabaWorkload(texts, { seed: 8, renterFraction: 0.3 })
    assert.deepEqual(a, b, 'same seed, same workload')
    assert.notDeepEqual(a.workload.jobs.map((j) => j.id), c.workload.jobs.map((j) => j.id), 'another seed, another split')
    const s = a.summary
    assert.equal(s.jobs + s.ownerWork + s.dropped['owner-unplaced'] + s.dropped['outside-window'], 6203)
    assert.equal(s.dropped['cpu-only'] + s.dropped['never-scheduled'], 1949)
    assert.ok(Math.abs(s.jobs / 6203 - 0.3) < 0.03, `about 30% renters, got ${s.jobs}`)
    assert.equal(s.nodes, 1213)
    assert.equal(s.gpus, 6212)
    assert.equal(s.horizonMs, 12_902_960_000)
    const ids = a.workload.jobs.map((j) => j.id)
    assert.deepEqual(ids, [...a.workload.jobs].sort((x, y) => x.submitAt - y.submitAt || (x.id < y.id ? -1 : 1)).map((j) => j.id), 'jobs sorted by submit time')
    const pods = new Map(parseAlibabaPods(PODS).pods.map((p) => [p.name, p]))
    for (const job of a.workload.jobs) {
      const pod = pods.get(job.id)
      assert.ok(pod !== undefined)
      assert.equal(job.submitAt, pod.creation * 1000)
      assert.equal(job.durationMs, (pod.deletion - pod.scheduled) * 1000)
      assert.equal(job.gpus, pod.gpus)
      assert.equal(job.gpuMilli, pod.gpuMilli)
      assert.equal(job.tier, pod.tier)
    }
    const shared = a.workload.jobs.find((j) => j.gpuMilli < 1000 && j.tier === 'gold')
    assert.ok(shared !== undefined && shared.gpus === 1, 'a GPU-sharing LS pod is a gold job on one GPU')
    // Fractions at the edges.
    assert.equal(alibabaWorkload(texts, { seed: 1, renterFraction: 0 }).summary.jobs, 0)
    const all = alibabaWorkload(texts, { seed: 1, renterFraction: 1 }).summary
    assert.equal(all.jobs, 6203)
    assert.equal(all.ownerWork, 0)
    assert.throws(() => alibabaWorkload(texts, { seed: 1, renterFraction: 1.01 }), RangeError)
  })

  it('keeps a window and compresses it: submit times shift and shrink, the horizon is the window', () => {
    const day = 86_400
    const startS = 112 * day
    const endS = 119 * day
    const w = alibabaWorkload(texts, { seed: 3, window: { startS, endS }, timeScale: 7 })
    assert.equal(w.summary.horizonMs, 86_400_000, 'a week compressed 7× is one day')
    assert.ok(w.summary.jobs > 0)
    assert.ok(w.summary.dropped['outside-window'] > 0)
    const full = alibabaWorkload(texts, { seed: 3 })
    for (const j of w.workload.jobs) {
      assert.ok(j.submitAt >= 0 && j.submitAt < w.summary.horizonMs)
      const orig = full.workload.jobs.find((x) => x.id === j.id)
      assert.ok(orig !== undefined, 'same seed: the same pods are renters whatever the window')
      assert.equal(j.submitAt, Math.round((orig.submitAt / 1000 - startS) * 1000 / 7))
      assert.equal(j.durationMs, Math.max(1, Math.round(orig.durationMs / 7)))
    }
    for (const o of w.workload.ownerWork) assert.ok(o.start >= 0 && o.end <= w.summary.horizonMs)
    // Arrivals compressed, durations real: the same jobs, 7× the load.
    const dense = alibabaWorkload(texts, { seed: 3, window: { startS, endS }, timeScale: 7, scaleDurations: false })
    assert.equal(dense.summary.jobs, w.summary.jobs)
    assert.ok(dense.summary.jobGpuHours > 6.5 * w.summary.jobGpuHours)
  })

  it('runs on a bigger or smaller fleet shaped like the trace\'s, the owners\' work scaled with it', () => {
    const a = alibabaWorkload(texts, { seed: 4, fleetSize: 5000 })
    assert.deepEqual(alibabaWorkload(texts, { seed: 4, fleetSize: 5000 }).workload.fleet, a.workload.fleet)
    assert.equal(a.summary.nodes, 5000)
    assert.equal(a.workload.fleet[0]?.id, 'n000000')
    const share = (a.summary.gpusByModel['nvidia-a100-sxm4-40gb'] ?? 0) / a.summary.gpus
    assert.ok(Math.abs(share - 4392 / 6212) < 0.03, `G2 share of GPUs ${share}`)
    const trace = alibabaWorkload(texts, { seed: 4 })
    // the owners' load per node stays the trace's: 5,000 / 1,213 = 4.12 copies of each owned pod on average
    const ratio = 5000 / 1213
    assert.ok(Math.abs(a.summary.ownerWork / trace.summary.ownerWork - ratio) < 0.05, `${a.summary.ownerWork} vs ${trace.summary.ownerWork}`)
    assert.ok(Math.abs(a.summary.ownerGpuHours / a.summary.fleetGpuHours - trace.summary.ownerGpuHours / trace.summary.fleetGpuHours) < 0.0005)
    assert.equal(a.summary.dropped['owner-unplaced'], 0)
    assert.ok(a.workload.ownerWork.every((w) => w.node.startsWith('n')))
    assert.equal(alibabaWorkload(texts, { seed: 4, fleetSize: 1 }).summary.nodes, 1)
    // a smaller fleet keeps about its share of the owners' pods, not all of them
    const small = alibabaWorkload(texts, { seed: 4, fleetSize: 121 })
    assert.ok(Math.abs(small.summary.ownerWork / trace.summary.ownerWork - 121 / 1213) < 0.02, `${small.summary.ownerWork}`)
  })

  it('refuses an unknown model or QoS with the line and column', () => {
    const badNode = 'sn,cpu_milli,memory_mib,gpu,model\nn1,1,1,2,T4\nn2,1,1,2,X9\n'
    assert.throws(() => parseAlibabaNodes(badNode, { seed: 1 }), (e: unknown) => e instanceof CsvValueError && e.code === 'BAD_VALUE' && e.line === 3 && e.column === 'model')
    const header = 'name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,scheduled_time\n'
    assert.throws(() => parseAlibabaPods(header + 'p,1,1,1,1000,,XX,Running,0,10,0\n'), (e: unknown) => e instanceof CsvValueError && e.code === 'BAD_VALUE' && e.line === 2 && e.column === 'qos')
    assert.throws(() => parseAlibabaPods(header + 'p,1,1,1,1000,T4|Z,LS,Running,0,10,0\n'), (e: unknown) => e instanceof CsvValueError && e.column === 'gpu_spec')
    const spec = parseAlibabaPods(header + 'p,1,1,1,1000,V100M16|V100M32,LS,Running,0,10,0\n')
    assert.deepEqual(spec.pods[0]?.models, ['tesla-v100-sxm2-16gb', 'tesla-v100-sxm2-32gb'])
    assert.throws(() => parseAlibabaPods(header + 'p,1,1,1,1000,,LS,Running,0,10,10\n'), (e: unknown) => e instanceof CsvValueError && e.code === 'OUT_OF_RANGE' && e.column === 'deletion_time')
    // The multigpu50 variant has no QoS or times: a clear missing-column error, not a guess.
    const multi = readFileSync(DATA + 'openb_pod_list_multigpu50.csv', 'utf8')
    assert.throws(() => parseAlibabaPods(multi), (e: unknown) => e instanceof CsvValueError && e.code === 'MISSING_COLUMN' && e.column === 'gpu_spec')
  })

  it('first-fit packing places work on the first node with room and never over-commits one', () => {
    const fleet: FleetNode[] = [node('a', 2, 'm1'), node('b', 4, 'm2')]
    const r = packOwnerWork(fleet, [
      { start: 0, end: 10, gpus: 2, models: [] },
      { start: 5, end: 15, gpus: 1, models: [] }, // a is full over [5, 10): b
      { start: 10, end: 20, gpus: 2, models: [] }, // a free again exactly at 10
      { start: 0, end: 5, gpus: 1, models: ['m1'] }, // only a, full: unplaced
      { start: 0, end: 5, gpus: 5, models: [] } // bigger than any node
    ].map((w, i) => ({ ...w, source: `w${i}` })))
    assert.deepEqual(r.placed.map((p) => `${p.source}@${p.node}`).sort(), ['w0@a', 'w1@b', 'w2@a'])
    assert.equal(r.unplaced, 2)

    const work = fc.record({ start: fc.integer({ min: 0, max: 100 }), len: fc.integer({ min: 0, max: 40 }), gpus: fc.integer({ min: 0, max: 5 }), model: fc.constantFrom('', 'm1', 'm2') })
    fc.assert(fc.property(fc.array(work, { maxLength: 60 }), fc.array(fc.integer({ min: 1, max: 4 }), { minLength: 1, maxLength: 5 }), (ws, sizes) => {
      const nodes = sizes.map((g, i) => node(`n${i}`, g, i % 2 === 0 ? 'm1' : 'm2'))
      const input: UnplacedWork[] = ws.map((w, i) => ({ start: w.start, end: w.start + w.len, gpus: w.gpus, models: w.model === '' ? [] : [w.model], source: `w${String(i).padStart(3, '0')}` }))
      const { placed, unplaced } = packOwnerWork(nodes, input)
      assert.equal(placed.length + unplaced, input.length, 'every piece placed or counted')
      // Brute force: GPUs in use per node per time unit never exceed the node's count; models respected.
      for (const n of nodes) {
        const use = new Array<number>(200).fill(0)
        for (const p of placed.filter((x) => x.node === n.id)) {
          const src = input.find((x) => x.source === p.source) as UnplacedWork
          assert.ok(src.models.length === 0 || src.models.includes(n.model))
          for (let t = p.start; t < p.end; t++) use[t] = (use[t] as number) + p.gpus
        }
        assert.ok(use.every((u) => u <= n.gpus), `node ${n.id} over-committed`)
      }
    }), { seed: 42, numRuns: 200 })
  })
})

function node (id: string, gpus: number, model: string): FleetNode {
  return { id, model, gpuName: model, gpus, vramMiB: 16_384, country: 'DE', region: 'eu-central', cpuMilli: 0, memoryMiB: 0 }
}

function countBy<T extends string | number> (xs: readonly T[]): Partial<Record<T, number>> {
  const out: Partial<Record<T, number>> = {}
  for (const x of xs) out[x] = (out[x] ?? 0) + 1
  return out
}
