/**
 * The baselines' options: plain data and pure functions, so one scenario drives every strategy alike.
 */
import { runEndMs, type FleetNode, type SimJob, type Tier, type Workload } from '../model.js'
import type { FloorOf, ListPrice } from './fit.js'
import { BaselineInputError, BaselineOptionError, ListCatalogue, startDelays, type Accounting } from './outcome.js'

export interface BaselineOptions {
  /** List price per GPU model slug, micros per GPU-hour (the old way's price, and every strategy's `listCost`). */
  listPrice: ListPrice
  /** Start delays by tier, ms (defaults: DEFAULT_MAX_START_DELAY_MS). */
  maxStartDelayMs?: Partial<Record<Tier, number>>
  /** The cap of a job without its own `maxPrice` (none when this is absent or answers undefined). */
  capOf?: (job: SimJob) => number | undefined
  /** The cloud's GPU models; default: every (model, VRAM) of the fleet. */
  cloudModels?: ReadonlyArray<{ model: string, vramMiB: number }>
}

/** Options of the strategies that place jobs on the fleet. */
export interface FleetBaselineOptions extends BaselineOptions {
  /** A node's ask, micros per GPU-hour (its owner's floor): what a renter pays there. */
  floorOf: FloorOf
}

export function accounting (workload: Workload, options: BaselineOptions): Accounting {
  if (!(workload.horizonMs > 0)) throw new BaselineOptionError(`the workload's horizon must be > 0 ms, got ${workload.horizonMs}`)
  const ids = new Set<string>()
  for (const job of workload.jobs) {
    if (ids.has(job.id)) throw new BaselineInputError(job.id, 'the id appears twice in the workload')
    ids.add(job.id)
    if (!(job.durationMs >= 1)) throw new BaselineInputError(job.id, `duration must be ≥ 1 ms, got ${job.durationMs}`)
    if (!Number.isInteger(job.gpus) || job.gpus < 1) throw new BaselineInputError(job.id, `GPUs must be a whole number ≥ 1, got ${job.gpus}`)
  }
  const models: ReadonlyArray<{ model: string, vramMiB: number }> = options.cloudModels ?? workload.fleet.map((n: FleetNode) => ({ model: n.model, vramMiB: n.vramMiB }))
  if (!(workload.drainMs === undefined || (Number.isFinite(workload.drainMs) && workload.drainMs >= 0))) throw new BaselineOptionError(`the workload's drain must be ≥ 0 ms, got ${String(workload.drainMs)}`)
  return { horizonMs: workload.horizonMs, endMs: runEndMs(workload), delays: startDelays(options.maxStartDelayMs), catalogue: new ListCatalogue(models, options.listPrice) }
}
