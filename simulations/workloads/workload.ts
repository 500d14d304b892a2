/**
 * Puts a workload together (simulations/model.ts `Workload`): fleet, the owners' own work, the renters'
 * jobs and the horizon, checked and sorted, with a load summary that says what the loaders kept and what
 * they dropped and why — so a report built on it can state its inputs.
 */
import { FleetCapacity } from '../capacity.js'
import type { FleetNode, OwnerWork, SimJob, Tier, Workload } from '../model.js'

/** Why a loader left a trace row out. */
export type DropReason =
  /** A pod that asks for no GPU (CPU-only work): not part of a GPU market. */
  | 'cpu-only'
  /** A pod the trace never scheduled (no start, so no duration). */
  | 'never-scheduled'
  /** Outside the chosen time window. */
  | 'outside-window'
  /** Owner work no node of the fleet had room for when it ran (whole GPUs: the trace shares GPUs). */
  | 'owner-unplaced'

export const DROP_REASONS: readonly DropReason[] = ['cpu-only', 'never-scheduled', 'outside-window', 'owner-unplaced']

export interface LoadSummary {
  nodes: number
  gpus: number
  /** GPUs per model slug. */
  gpusByModel: Record<string, number>
  jobs: number
  jobsByTier: Record<Tier, number>
  /** GPU-hours the renters' jobs ask for (whole GPUs × duration). */
  jobGpuHours: number
  ownerWork: number
  /** GPU-hours of the owners' own work inside the horizon. */
  ownerGpuHours: number
  /** The fleet's GPU-hours over the horizon. */
  fleetGpuHours: number
  horizonMs: number
  /** Rows left out, by reason (every reason present, 0 when none). */
  dropped: Record<DropReason, number>
  /** Kept jobs whose duration the trace's end cut short (still running when the trace stopped): a lower bound. */
  censored: number
}

export interface BuiltWorkload {
  workload: Workload
  summary: LoadSummary
}

export type WorkloadErrorCode =
  | 'DUPLICATE_NODE'
  | 'DUPLICATE_JOB'
  | 'UNKNOWN_NODE'
  | 'BAD_NODE'
  | 'BAD_JOB'
  | 'BAD_OWNER_WORK'
  | 'BAD_HORIZON'
  /** Owner work would use more GPUs than its node has. */
  | 'OVERCOMMIT'

/** The parts do not make a consistent workload. */
export class WorkloadError extends Error {
  constructor (readonly code: WorkloadErrorCode, detail: string) {
    super(`workload: ${detail}`)
    this.name = 'WorkloadError'
  }
}

export interface WorkloadParts {
  name: string
  fleet: FleetNode[]
  ownerWork: OwnerWork[]
  jobs: SimJob[]
  horizonMs: number
  dropped?: Partial<Record<DropReason, number>>
  censored?: number
}

/** Checks and sorts the parts, and summarises the load. Throws WorkloadError on an inconsistency. */
export function buildWorkload (parts: WorkloadParts): BuiltWorkload {
  const { name, fleet, horizonMs } = parts
  if (!(Number.isFinite(horizonMs) && horizonMs > 0)) throw new WorkloadError('BAD_HORIZON', `horizon must be > 0 ms, got ${horizonMs}`)
  const gpusByModel: Record<string, number> = {}
  const ids = new Set<string>()
  let gpus = 0
  for (const n of fleet) {
    if (ids.has(n.id)) throw new WorkloadError('DUPLICATE_NODE', `node ${n.id} appears twice`)
    if (!(Number.isInteger(n.gpus) && n.gpus >= 1)) throw new WorkloadError('BAD_NODE', `node ${n.id}: GPU count must be a whole number ≥ 1, got ${n.gpus}`)
    ids.add(n.id)
    gpus += n.gpus
    gpusByModel[n.model] = (gpusByModel[n.model] ?? 0) + n.gpus
  }
  const capacity = new FleetCapacity(fleet)
  const ownerWork = [...parts.ownerWork].sort((a, b) => a.start - b.start || cmp(a.node, b.node) || a.end - b.end)
  let ownerGpuHours = 0
  for (const w of ownerWork) {
    if (!ids.has(w.node)) throw new WorkloadError('UNKNOWN_NODE', `owner work on unknown node ${w.node}`)
    if (!(w.end > w.start && Number.isInteger(w.gpus) && w.gpus >= 1)) throw new WorkloadError('BAD_OWNER_WORK', `owner work on ${w.node}: needs start < end and ≥ 1 whole GPU, got [${w.start}, ${w.end}) × ${w.gpus}`)
    const t = capacity.timeline(w.node)
    const free = t.free(w.start, w.end)
    if (w.gpus > free) throw new WorkloadError('OVERCOMMIT', `owner work ${w.source ?? ''} on ${w.node}: ${w.gpus} GPU(s) over [${w.start}, ${w.end}), ${free} free`)
    t.add(w.start, w.end, w.gpus)
    ownerGpuHours += w.gpus * Math.max(0, Math.min(w.end, horizonMs) - Math.max(w.start, 0)) / 3_600_000
  }
  const jobs = [...parts.jobs].sort((a, b) => a.submitAt - b.submitAt || cmp(a.id, b.id))
  const jobIds = new Set<string>()
  const jobsByTier: Record<Tier, number> = { gold: 0, silver: 0, bronze: 0 }
  let jobGpuHours = 0
  for (const j of jobs) {
    if (jobIds.has(j.id)) throw new WorkloadError('DUPLICATE_JOB', `job ${j.id} appears twice`)
    jobIds.add(j.id)
    if (!(j.durationMs > 0 && Number.isInteger(j.gpus) && j.gpus >= 1 && j.gpuMilli > 0 && j.gpuMilli <= 1000 && Number.isFinite(j.submitAt))) {
      throw new WorkloadError('BAD_JOB', `job ${j.id}: needs duration > 0, ≥ 1 whole GPU, a share in (0, 1000] and a finite submit time`)
    }
    jobsByTier[j.tier]++
    jobGpuHours += j.gpus * j.durationMs / 3_600_000
  }
  const dropped = Object.fromEntries(DROP_REASONS.map((r) => [r, parts.dropped?.[r] ?? 0])) as Record<DropReason, number>
  return {
    workload: { name, fleet: [...fleet], ownerWork, jobs, horizonMs },
    summary: {
      nodes: fleet.length,
      gpus,
      gpusByModel,
      jobs: jobs.length,
      jobsByTier,
      jobGpuHours,
      ownerWork: ownerWork.length,
      ownerGpuHours,
      fleetGpuHours: gpus * horizonMs / 3_600_000,
      horizonMs,
      dropped,
      censored: parts.censored ?? 0
    }
  }
}

/** Code-unit order (no locale: the same on every machine). */
export function cmp (a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0
}
