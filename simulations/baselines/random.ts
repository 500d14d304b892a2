/**
 * Random assignment (issue 10, "Baselines"): per job, at its submit instant, a node drawn uniformly from
 * the fitting nodes within its cap that are free now (no waiting), from a seeded stream (`seed`, forked
 * as `random`), under the same failure model as lowest-price (spot-market.ts).
 *
 * The draw is a lazy Fisher–Yates shuffle of the job's candidates: draw one, keep it if usable, else
 * draw from the rest — uniform over the usable nodes, without testing every candidate when many are free.
 */
import { Prng, type Seed } from '../harness/prng.js'
import type { FleetNode, StrategyRun, Workload } from '../model.js'
import { spotMarket, type SpotMarketOptions } from './spot-market.js'

export const RANDOM = 'random'

export interface RandomOptions extends SpotMarketOptions {
  seed: Seed
}

export function randomAssignment (workload: Workload, options: RandomOptions): StrategyRun {
  const prng = new Prng(options.seed).fork(RANDOM)
  return spotMarket(RANDOM, workload, options, (_job, all, usable) => {
    const candidates = all()
    const swapped = new Map<number, number>()
    const at = (i: number): number => swapped.get(i) ?? i
    for (let left = candidates.length; left > 0; left--) {
      const k = prng.int(0, left - 1)
      const pick = at(k)
      swapped.set(k, at(left - 1))
      const node = candidates[pick] as FleetNode
      if (usable(node)) return node
    }
    return undefined
  })
}
