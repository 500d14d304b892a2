/**
 * Small hand-made workloads for the baseline and report tests: nodes, owner work and jobs written out in
 * full, so each expected outcome can be worked out by hand.
 */
import type { FleetNode, OwnerWork, SimJob, Workload } from '../../../../simulations/model.js'

export const MIN = 60_000
export const HOUR = 3_600_000
/** One credit, in micros. */
export const CREDIT = 1_000_000

export const T4 = { model: 'nvidia-tesla-t4', gpuName: 'Tesla T4', vramMiB: 15_360 }
export const A100 = { model: 'nvidia-a100-sxm4-80gb', gpuName: 'NVIDIA A100-SXM4-80GB', vramMiB: 81_920 }

export function node (id: string, gpu: typeof T4, gpus: number, region: string): FleetNode {
  return { id, ...gpu, gpus, country: region.startsWith('eu') ? 'DE' : 'US', region, cpuMilli: 32_000, memoryMiB: 128_000 }
}

export function job (id: string, submitAt: number, durationMs: number, spec: Partial<SimJob> = {}): SimJob {
  return { id, submitAt, durationMs, gpus: 1, gpuMilli: 1000, models: [], minVramGB: 0, tier: 'silver', residency: 'prefer', ...spec }
}

export function workload (fleet: FleetNode[], jobs: SimJob[], ownerWork: OwnerWork[] = [], horizonMs = 24 * HOUR): Workload {
  const sorted = [...jobs].sort((a, b) => a.submitAt - b.submitAt || (a.id < b.id ? -1 : 1))
  return { name: 'hand-made', fleet, ownerWork, jobs: sorted, horizonMs }
}

/** Floors by node id, micros per GPU-hour. */
export function floors (byId: Record<string, number>): (n: FleetNode) => number {
  return (n) => {
    const f = byId[n.id]
    if (f === undefined) throw new Error(`no floor for ${n.id}`)
    return f
  }
}

/** List prices: T4 1.5 credits, A100 4 credits per GPU-hour. */
export function listPrice (model: string): number | undefined {
  return model === T4.model ? 1.5 * CREDIT : model === A100.model ? 4 * CREDIT : undefined
}

/**
 * The shared hand case. A: 1 T4 in eu-west at 1 credit, busy with its owner's work over [0, 1 h);
 * B: 2 T4 in eu-west at 2 credits; C: 1 A100 in na-east at 3 credits. Jobs, all 1 GPU unless said:
 *   j1 silver t=0 1 h · j2 bronze t=0 2 h · j3 gold t=0 1 h, A100 only ·
 *   j4 gold t=10 min 1 h, 2 GPUs · j5 silver t=0 30 min, strict na, cap 2 credits
 */
export function handCase (): Workload {
  return workload(
    [node('A', T4, 1, 'eu-west'), node('B', T4, 2, 'eu-west'), node('C', A100, 1, 'na-east')],
    [
      job('j1', 0, HOUR),
      job('j2', 0, 2 * HOUR, { tier: 'bronze' }),
      job('j3', 0, HOUR, { tier: 'gold', models: ['a100'] }),
      job('j4', 10 * MIN, HOUR, { tier: 'gold', gpus: 2 }),
      job('j5', 0, 30 * MIN, { region: 'na', residency: 'strict', maxPrice: 2 * CREDIT })
    ],
    [{ node: 'A', start: 0, end: HOUR, gpus: 1 }]
  )
}

export const handFloors = floors({ A: 1 * CREDIT, B: 2 * CREDIT, C: 3 * CREDIT })
