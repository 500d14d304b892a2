/**
 * The old way (issue 10, "Baselines"): renters rent on-demand capacity from one cloud at list price, and
 * the owners' idle GPUs earn nothing.
 *
 * The cloud has unlimited capacity of every model in its catalogue (options.cloudModels, default the
 * fleet's own models) in every region, so a job starts the instant it is submitted (wait 0). Its GPU
 * choice rule: the cheapest catalogue model that meets the job's model list (`modelInFamily`) and
 * per-GPU VRAM (nominal GB), ties by model slug; the renter pays that model's list price × GPU-hours.
 * A job no catalogue model fits (or that is submitted at or after the horizon) is unserved. Jobs run
 * on `cloud:<model>`, which is no fleet node, so every node sells 0 GPU-hours and earns 0.
 */
import type { JobOutcome, StrategyRun, Workload } from '../model.js'
import { accounting, type BaselineOptions } from './options.js'
import { nodeOutcomes, notRun, placed } from './outcome.js'

export const OLD_WAY = 'old-way'

export function oldWay (workload: Workload, options: BaselineOptions): StrategyRun {
  const acc = accounting(workload, options)
  const jobs: JobOutcome[] = workload.jobs.map((job) => {
    const model = acc.catalogue.cheapest(job)
    if (model === undefined || job.submitAt >= acc.horizonMs) return notRun(acc, job, Math.min(job.submitAt, acc.horizonMs))
    return placed(acc, job, `cloud:${model.model}`, job.submitAt, model.price, job.submitAt)
  })
  return { strategy: OLD_WAY, jobs, nodes: nodeOutcomes(workload, []) }
}
