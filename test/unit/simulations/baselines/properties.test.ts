/**
 * The baselines on random small workloads (fast-check, seeded): no strategy over-commits a node (every
 * placement re-added to a fresh capacity timeline with the owners' work), money paid equals money earned,
 * and the central matcher does at least as well as lowest-price and random on cost and utilization.
 * Random assignment is uniform over the free nodes and replays per seed.
 */
import assert from 'node:assert/strict'
import fc from 'fast-check'
import { central } from '../../../../simulations/baselines/central.js'
import { lowestPrice } from '../../../../simulations/baselines/lowest-price.js'
import { randomAssignment } from '../../../../simulations/baselines/random.js'
import { FleetCapacity } from '../../../../simulations/capacity.js'
import { ListCatalogue } from '../../../../simulations/baselines/outcome.js'
import { Prng } from '../../../../simulations/harness/prng.js'
import type { FleetNode, SimJob, StrategyRun, Workload } from '../../../../simulations/model.js'
import { A100, CREDIT, HOUR, MIN, T4, job, listPrice, node, workload } from './fixtures.js'

const arbWorkload: fc.Arbitrary<{ w: Workload, floors: number[] }> = fc.record({
  nodes: fc.array(fc.record({ a100: fc.boolean(), gpus: fc.integer({ min: 1, max: 4 }), eu: fc.boolean(), floor: fc.integer({ min: 1, max: 5 }) }), { minLength: 1, maxLength: 4 }),
  owner: fc.array(fc.record({ node: fc.nat(), start: fc.integer({ min: 0, max: 20 }), len: fc.integer({ min: 1, max: 8 }), gpus: fc.integer({ min: 1, max: 4 }) }), { maxLength: 6 }),
  jobs: fc.array(fc.record({
    at: fc.integer({ min: 0, max: 40 }), len: fc.integer({ min: 1, max: 16 }), gpus: fc.integer({ min: 1, max: 3 }),
    tier: fc.constantFrom('gold' as const, 'silver' as const, 'bronze' as const), a100: fc.boolean(), strict: fc.boolean(), cap: fc.option(fc.integer({ min: 1, max: 5 }))
  }), { minLength: 1, maxLength: 12 })
}).map(({ nodes, owner, jobs }) => {
  const fleet = nodes.map((n, i) => node(`n${i}`, n.a100 ? A100 : T4, n.gpus, n.eu ? 'eu-west' : 'na-east'))
  const cap = new FleetCapacity(fleet)
  const ownerWork = []
  for (const o of owner) {
    const n = fleet[o.node % fleet.length]!
    const start = o.start * 15 * MIN
    const end = start + o.len * 15 * MIN
    const gpus = Math.min(o.gpus, cap.timeline(n.id).free(start, end))
    if (gpus === 0) continue
    cap.timeline(n.id).add(start, end, gpus)
    ownerWork.push({ node: n.id, start, end, gpus })
  }
  ownerWork.sort((a, b) => a.start - b.start)
  const simJobs: SimJob[] = jobs.map((j, i) => job(`j${String(i).padStart(2, '0')}`, j.at * 5 * MIN, j.len * 15 * MIN, {
    gpus: j.gpus, tier: j.tier, models: j.a100 ? ['a100'] : [], residency: j.strict ? 'strict' : 'prefer', region: 'eu',
    ...(j.cap !== null ? { maxPrice: j.cap * CREDIT } : {})
  }))
  return { w: workload(fleet, simJobs, ownerWork, 12 * HOUR), floors: nodes.map((n) => n.floor * CREDIT) }
})

/** `jobs` jobs over 8 h on `nodes` nodes (T4 or A100, 1–4 GPUs, eu or na), floors 0.2–1.4 credits (below list). */
function seededWorkload (seed: number, jobs: number, nodes: number): { w: Workload, floorOf: (n: FleetNode) => number } {
  const p = new Prng(seed)
  const fleet = Array.from({ length: nodes }, (_, i) => node(`n${i}`, p.chance(0.3) ? A100 : T4, p.int(1, 4), p.chance(0.5) ? 'eu-west' : 'na-east'))
  const floors = fleet.map(() => p.int(1, 7) * 0.2 * CREDIT)
  const simJobs = Array.from({ length: jobs }, (_, i) => job(`j${String(i).padStart(3, '0')}`, p.int(0, 96) * 5 * MIN, p.int(1, 16) * 15 * MIN, {
    gpus: p.int(1, 3), tier: p.pick(['gold', 'silver', 'bronze'] as const), models: p.chance(0.2) ? ['a100'] : [], residency: p.chance(0.3) ? 'strict' : 'prefer', region: 'eu'
  }))
  return { w: workload(fleet, simJobs, [], 12 * HOUR), floorOf: (n) => floors[Number(n.id.slice(1))]! }
}

function assertNoOvercommit (w: Workload, run: StrategyRun): void {
  const cap = new FleetCapacity(w.fleet)
  for (const o of w.ownerWork) cap.timeline(o.node).add(o.start, o.end, o.gpus)
  const jobs = new Map(w.jobs.map((j) => [j.id, j]))
  for (const o of run.jobs) {
    if (o.startedAt === undefined || o.gpuHours === 0) continue
    const j = jobs.get(o.job)!
    cap.timeline(o.node!).add(o.startedAt, Math.min(o.startedAt + j.durationMs, w.horizonMs), j.gpus) // throws CapacityError on over-commit
  }
}

function totals (run: StrategyRun): { paid: number, hours: number, revenue: number, sold: number } {
  return {
    paid: run.jobs.reduce((s, j) => s + j.paid, 0),
    hours: run.jobs.reduce((s, j) => s + j.gpuHours, 0),
    revenue: run.nodes.reduce((s, n) => s + n.revenue, 0),
    sold: run.nodes.reduce((s, n) => s + n.soldGpuHours, 0)
  }
}

describe('simulations/baselines: properties on random small workloads', () => {
  it('never over-commit a node; money paid is money earned; sold never exceeds offered', () => {
    fc.assert(fc.property(arbWorkload, fc.integer(), ({ w, floors }, seed) => {
      const floorOf = (n: { id: string }): number => floors[Number(n.id.slice(1))]!
      const noShows = new Set([w.fleet[0]!.id])
      for (const run of [central(w, { listPrice, floorOf }), lowestPrice(w, { listPrice, floorOf, failures: { noShows } }), randomAssignment(w, { listPrice, floorOf, seed })]) {
        assertNoOvercommit(w, run)
        const t = totals(run)
        assert.equal(t.paid, t.revenue, `${run.strategy}: paid = earned`)
        assert.ok(Math.abs(t.hours - t.sold) < 1e-9, `${run.strategy}: GPU-hours run = sold`)
        for (const n of run.nodes) assert.ok(n.soldGpuHours <= n.offeredGpuHours + 1e-9, `${run.strategy}: ${n.node} sold more than it offered`)
        assert.equal(run.jobs.length, w.jobs.length, 'every job has exactly one outcome')
        assert.equal(new Set(run.jobs.map((j) => j.job)).size, w.jobs.length)
      }
    }), { seed: 10, numRuns: 300 })
  })

  // Per workload this does not hold: the matcher is greedy in submit order, and on a 2-job case a
  // flexible job can take the one node a strict job needed while random luck avoids it (found by fast-check:
  // two 1-GPU nodes in eu and na, a `prefer` and a `strict eu` gold job at t = 0). Summed over seeded
  // workloads with floors below list price, it is what the bound is for.
  it('central is at least as good as lowest-price and random on cost and utilization, over 30 seeded workloads', () => {
    const sum = { central: { sold: 0, cost: 0 }, 'lowest-price': { sold: 0, cost: 0 }, random: { sold: 0, cost: 0 } }
    for (let seed = 1; seed <= 30; seed++) {
      const { w, floorOf } = seededWorkload(seed, 60, 5)
      const catalogue = new ListCatalogue(w.fleet, listPrice)
      const byId = new Map(w.jobs.map((j) => [j.id, j]))
      for (const run of [central(w, { listPrice, floorOf }), lowestPrice(w, { listPrice, floorOf }), randomAssignment(w, { listPrice, floorOf, seed })]) {
        const s = sum[run.strategy as keyof typeof sum]
        for (const o of run.jobs) {
          const j = byId.get(o.job)!
          s.sold += o.gpuHours
          // what the renter pays for the demand: the market's price for what ran, list price for the rest
          s.cost += o.paid + catalogue.cost(j, j.gpus * j.durationMs / HOUR - o.gpuHours)
        }
      }
    }
    for (const other of ['lowest-price', 'random'] as const) {
      assert.ok(sum.central.sold >= sum[other].sold, `${other} sold ${sum[other].sold} GPU-hours, central ${sum.central.sold}`)
      assert.ok(sum.central.cost <= sum[other].cost, `${other}: renters paid ${sum[other].cost}, under central ${sum.central.cost}`)
    }
    assert.ok(sum.central.sold > sum['lowest-price'].sold * 1.05, 'waiting within the start delay serves visibly more than never waiting')
  })

  it('random draws uniformly among the free fitting nodes, and replays per seed', () => {
    const fleet = ['a', 'b', 'c', 'd'].map((id) => node(id, T4, 1, 'eu-west'))
    const jobs = Array.from({ length: 3000 }, (_, i) => job(`j${String(i).padStart(4, '0')}`, i * HOUR, 30 * MIN))
    const w = workload(fleet, jobs, [{ node: 'd', start: 0, end: 4000 * HOUR, gpus: 1 }], 4000 * HOUR)
    const run = randomAssignment(w, { listPrice, floorOf: () => CREDIT, seed: 5 })
    const counts: Record<string, number> = {}
    for (const o of run.jobs) counts[o.node ?? 'none'] = (counts[o.node ?? 'none'] ?? 0) + 1
    assert.equal(counts.d, undefined, 'd is busy with its owner\'s work the whole time')
    for (const id of ['a', 'b', 'c']) assert.ok(counts[id]! > 900 && counts[id]! < 1100, `${id}: ${counts[id]} of 3000 (expected ~1000)`)
    assert.deepEqual(randomAssignment(w, { listPrice, floorOf: () => CREDIT, seed: 5 }), run)
    assert.notDeepEqual(randomAssignment(w, { listPrice, floorOf: () => CREDIT, seed: 6 }).jobs.map((o) => o.node), run.jobs.map((o) => o.node))
  })
})
