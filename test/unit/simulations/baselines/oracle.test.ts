/**
 * The fast paths of the matchers (the fleet index, free-instant bounds, the segment tree: free-hints.ts)
 * against a brute-force oracle that checks every node of the fleet exactly, on random workloads: the
 * central matcher and lowest-price must decide exactly as the oracle does.
 */
import assert from 'node:assert/strict'
import fc from 'fast-check'
import { central } from '../../../../simulations/baselines/central.js'
import { capOf, nodeFits, tierRank } from '../../../../simulations/baselines/fit.js'
import { lowestPrice } from '../../../../simulations/baselines/lowest-price.js'
import { FleetCapacity } from '../../../../simulations/capacity.js'
import type { FleetNode, SimJob, Workload } from '../../../../simulations/model.js'
import { A100, CREDIT, HOUR, MIN, T4, job, listPrice, node, workload } from './fixtures.js'

const DELAY = { gold: 5 * MIN, silver: 30 * MIN, bronze: 6 * HOUR }

function order (jobs: readonly SimJob[]): SimJob[] {
  return [...jobs].sort((a, b) => a.submitAt - b.submitAt || tierRank(a.tier) - tierRank(b.tier) || (a.id < b.id ? -1 : 1))
}

/** Every node, exactly: [node, start] per job, or undefined. `wait`: central (within the delay) or lowest-price (now only). */
function oracle (w: Workload, floorOf: (n: FleetNode) => number, wait: boolean): Map<string, [string, number] | undefined> {
  const cap = new FleetCapacity(w.fleet)
  for (const o of w.ownerWork) cap.timeline(o.node).add(o.start, o.end, o.gpus)
  const out = new Map<string, [string, number] | undefined>()
  for (const j of order(w.jobs)) {
    const latest = wait ? Math.min(j.submitAt + DELAY[j.tier], w.horizonMs - 1) : j.submitAt
    let best: { n: FleetNode, start: number } | undefined
    for (const n of w.fleet) {
      if (!nodeFits(j, n) || floorOf(n) > capOf(j)) continue
      const start = cap.timeline(n.id).earliestStart(j.gpus, j.submitAt, j.durationMs, latest)
      if (start === undefined || start > latest) continue
      const better = best === undefined || floorOf(n) < floorOf(best.n) ||
        (floorOf(n) === floorOf(best.n) && (start < best.start || (start === best.start && n.id < best.n.id)))
      if (better) best = { n, start }
    }
    if (best !== undefined) cap.timeline(best.n.id).add(best.start, best.start + j.durationMs, j.gpus)
    out.set(j.id, best === undefined ? undefined : [best.n.id, best.start])
  }
  return out
}

const arb = fc.record({
  nodes: fc.array(fc.record({ a100: fc.boolean(), gpus: fc.integer({ min: 1, max: 4 }), eu: fc.boolean(), floor: fc.integer({ min: 1, max: 3 }) }), { minLength: 1, maxLength: 8 }),
  owner: fc.array(fc.record({ node: fc.nat(), start: fc.integer({ min: 0, max: 40 }), len: fc.integer({ min: 1, max: 12 }), gpus: fc.integer({ min: 1, max: 4 }) }), { maxLength: 12 }),
  jobs: fc.array(fc.record({
    at: fc.integer({ min: 0, max: 60 }), len: fc.integer({ min: 1, max: 30 }), gpus: fc.integer({ min: 1, max: 4 }),
    tier: fc.constantFrom('gold' as const, 'silver' as const, 'bronze' as const), a100: fc.boolean(), strict: fc.boolean()
  }), { minLength: 1, maxLength: 30 })
}).map(({ nodes, owner, jobs }) => {
  const fleet = nodes.map((n, i) => node(`n${i}`, n.a100 ? A100 : T4, n.gpus, n.eu ? 'eu-west' : 'na-east'))
  const cap = new FleetCapacity(fleet)
  const ownerWork = []
  for (const o of owner) {
    const n = fleet[o.node % fleet.length]!
    const start = o.start * 5 * MIN
    const end = start + o.len * 5 * MIN
    const gpus = Math.min(o.gpus, cap.timeline(n.id).free(start, end))
    if (gpus === 0) continue
    cap.timeline(n.id).add(start, end, gpus)
    ownerWork.push({ node: n.id, start, end, gpus })
  }
  ownerWork.sort((a, b) => a.start - b.start)
  const simJobs = jobs.map((j, i) => job(`j${String(i).padStart(2, '0')}`, j.at * 3 * MIN, j.len * 5 * MIN, {
    gpus: j.gpus, tier: j.tier, models: j.a100 ? ['a100'] : [], residency: j.strict ? 'strict' : 'prefer', region: 'eu'
  }))
  const floors = nodes.map((n) => n.floor * CREDIT)
  return { w: workload(fleet, simJobs, ownerWork, 6 * HOUR), floorOf: (n: FleetNode) => floors[Number(n.id.slice(1))]! }
})

describe('simulations/baselines: the fast matchers decide as a brute-force oracle', () => {
  it('central', () => {
    fc.assert(fc.property(arb, ({ w, floorOf }) => {
      const expected = oracle(w, floorOf, true)
      for (const o of central(w, { listPrice, floorOf }).jobs) {
        assert.deepEqual(o.startedAt === undefined ? undefined : [o.node, o.startedAt], expected.get(o.job), o.job)
      }
    }), { seed: 21, numRuns: 400 })
  })

  it('lowest-price', () => {
    fc.assert(fc.property(arb, ({ w, floorOf }) => {
      const expected = oracle(w, floorOf, false)
      for (const o of lowestPrice(w, { listPrice, floorOf }).jobs) {
        assert.deepEqual(o.startedAt === undefined ? undefined : [o.node, o.startedAt], expected.get(o.job), o.job)
      }
    }), { seed: 22, numRuns: 400 })
  })
})
