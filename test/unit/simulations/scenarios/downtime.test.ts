/**
 * simulations/scenarios/downtime.ts: a node's downtime becomes a hold of all its GPUs for the baselines,
 * the owners' own work inside it is cut out (so the holds fit), and node accounts stay on the real
 * workload.
 */
import assert from 'node:assert/strict'
import { central } from '../../../../simulations/baselines/central.js'
import { withDowntime, withNodeOutcomes } from '../../../../simulations/scenarios/downtime.js'
import type { ChurnSchedule } from '../../../../simulations/network/churn.js'
import { HOUR, T4, handFloors, job, listPrice, node, workload } from '../baselines/fixtures.js'

describe('simulations/scenarios: downtime for the baselines', () => {
  const w = workload([node('A', T4, 2, 'eu-west'), node('B', T4, 1, 'eu-west')], [job('j1', 0, HOUR)], [
    { node: 'A', start: 0, end: 3 * HOUR, gpus: 1 },
    { node: 'A', start: 5 * HOUR, end: 6 * HOUR, gpus: 2 },
    { node: 'B', start: 0, end: HOUR, gpus: 1 }
  ])
  const schedule: ChurnSchedule = { horizonMs: w.horizonMs, nodes: [{ node: 'A', churny: true, offline: [{ from: HOUR, until: 2 * HOUR }, { from: 6 * HOUR, until: 7 * HOUR }] }, { node: 'B', churny: false, offline: [] }] }

  it('holds every GPU of a node over its downtime and cuts the owners\' work out of it (touching ends kept apart)', () => {
    const d = withDowntime(w, schedule)
    const a = d.ownerWork.filter((x) => x.node === 'A').map((x) => [x.start / HOUR, x.end / HOUR, x.gpus, x.source ?? ''])
    assert.deepEqual(a, [[0, 1, 1, ''], [1, 2, 2, 'downtime'], [2, 3, 1, ''], [5, 6, 2, ''], [6, 7, 2, 'downtime']])
    assert.deepEqual(d.ownerWork.filter((x) => x.node === 'B'), w.ownerWork.filter((x) => x.node === 'B'), 'a node that never goes down keeps its work')
    assert.deepEqual(d.jobs, w.jobs)
    const starts = d.ownerWork.map((x) => x.start)
    assert.deepEqual(starts, [...starts].sort((p, q) => p - q), 'sorted by start')
  })

  it('keeps the central matcher off a node while it is down, and accounts nodes on the real workload', () => {
    const busy = workload([node('A', T4, 1, 'eu-west'), node('B', T4, 1, 'eu-west')], [job('j1', 0, HOUR)], [])
    const down: ChurnSchedule = { horizonMs: busy.horizonMs, nodes: [{ node: 'A', churny: true, offline: [{ from: 0, until: HOUR }] }] }
    const options = { listPrice, floorOf: handFloors }
    // A is cheaper (1 credit against B's 2) but down for the job's whole hour: the oracle uses B
    assert.equal(central(busy, options).jobs[0]?.node, 'A')
    const run = withNodeOutcomes(central(withDowntime(busy, down), options), busy)
    assert.equal(run.jobs[0]?.node, 'B')
    assert.equal(run.nodes.find((n) => n.node === 'A')?.offeredGpuHours, 24, 'downtime is lost supply, not owners\' work: A still offered its 24 GPU-hours')
    assert.equal(run.strategy, 'central')
  })
})
