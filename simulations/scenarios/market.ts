/**
 * `market`: the headline comparison (issue 10). The Alibaba 2023 trace's fleet and pods — owners' own work
 * packed onto their nodes, 30 % of the pods as outside renters' jobs — run through the gpumesh market and,
 * on the very same workload, the old way (one cloud at list price), a central omniscient matcher,
 * lowest-price-only and random assignment. The workload, network and prices: market-setup.ts.
 */
import { central, lowestPrice, oldWay, randomAssignment } from '../baselines/index.js'
import { MARKET_ASSUMPTIONS, MARKET_DEFAULTS, prepareMarket, runGpumesh, marketResult } from './market-setup.js'
import type { Scenario, ScenarioData, ScenarioOptions, ScenarioResult } from './scenario.js'
import { strategyMetrics } from '../report/metrics.js'
import { OVERLAY_ASSUMPTIONS, trafficRow, trafficSection } from './traffic.js'

export { MARKET_DEFAULTS, MARKET_TIME_SCALE, MARKET_WINDOW, marketWorkload, measuredNetwork } from './market-setup.js'

export const market: Scenario = {
  name: 'market',
  summary: 'the Alibaba 2023 trace on its fleet: gpumesh against the old way, a central matcher, lowest-price-only and random',
  defaults: MARKET_DEFAULTS,
  run (data: ScenarioData, options: ScenarioOptions): ScenarioResult {
    const setup = prepareMarket(data, options)
    const { workload, baseline } = setup
    const gpumesh = runGpumesh(setup, options, { phase: 'gpumesh' })
    options.onProgress?.('baselines', 0, 4)
    const runs = [gpumesh.run, oldWay(workload, baseline), central(workload, baseline), lowestPrice(workload, baseline), randomAssignment(workload, { ...baseline, seed: options.seed })]
    options.onProgress?.('baselines', 4, 4)
    const traffic = trafficRow(workload.fleet.length, workload.jobs.length, gpumesh.stats, strategyMetrics(workload, gpumesh.run).timeToAward)
    return {
      ...marketResult('market', setup, options, runs, gpumesh.stats),
      sections: [trafficSection(traffic)],
      assumptions: [
        ...MARKET_ASSUMPTIONS,
        ...OVERLAY_ASSUMPTIONS,
        `Drain: after the last arrival the clock runs ${(workload.drainMs ?? 0) / 3_600_000 > 0 ? `${((workload.drainMs ?? 0) / 3_600_000).toFixed(1)} h more` : 'no longer'} (the longest job past the horizon, two leases and the bid window) so placed work can end, in every strategy; the headline utilization is inside the arrival horizon, the whole run's (the horizon and the drain) beside it.`
      ]
    }
  }
}
