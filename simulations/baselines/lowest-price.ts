/**
 * Lowest-price-only auction (issue 10, "Baselines"): the decentralized auction with the rule "the lowest
 * ask wins" and no reliability weighting — per job, at its submit instant, the cheapest fitting node that
 * is free now (ties by node id), no waiting. With `failures.noShows` the cheap no-shows keep winning and
 * vanishing (spot-market.ts has the failure model), which is what a reliability-weighted award avoids.
 */
import type { FleetNode, StrategyRun, Workload } from '../model.js'
import { byAsk } from './fit.js'
import { spotMarket, type SpotMarketOptions } from './spot-market.js'

export const LOWEST_PRICE = 'lowest-price'

export function lowestPrice (workload: Workload, options: SpotMarketOptions): StrategyRun {
  return spotMarket(LOWEST_PRICE, workload, options, (_job, _candidates, usable, scanFree) => {
    let chosen: FleetNode | undefined
    scanFree((node) => {
      if (chosen !== undefined && byAsk(node, chosen, options.floorOf) > 0) return false
      if (!usable(node)) return true
      chosen = node // the group's cheapest usable node, and cheaper than any other group's so far
      return false
    })
    return chosen
  })
}
