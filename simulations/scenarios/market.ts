/**
 * `market`: the headline comparison (issue 10). The Alibaba 2023 trace's fleet and pods — owners' own work
 * packed onto their nodes, 30 % of the pods as outside renters' jobs — run through the gpumesh market and,
 * on the very same workload, the old way (one cloud at list price), a central omniscient matcher,
 * lowest-price-only and random assignment.
 *
 * The trace is a light load (workloads/README: its pods fill 0.27 % of the fleet's GPU-hours), so the
 * scenario takes its busy part — days 112–149, where most pods arrive — with arrivals 150× closer and
 * real durations (owners 6.6 %, renters' demand 18 % of the fleet over 5.9 h). `--jobs M` resamples the
 * renters' jobs to M (their shapes bootstrapped, arriving at the trace's fitted rate); `--nodes N` draws a
 * fleet of N nodes shaped like the trace's.
 */
import { DAY_SEC } from '../../protocol/limits.js'
import { Prng } from '../harness/prng.js'
import { central, lowestPrice, oldWay, randomAssignment } from '../baselines/index.js'
import { drainMsFor, runMarket } from '../market/run-market.js'
import type { Workload } from '../model.js'
import { alibabaWorkload } from '../workloads/alibaba.js'
import { parseJobCsv } from '../workloads/generic-csv.js'
import { resampleJobs } from '../workloads/synthetic.js'
import { buildWorkload } from '../workloads/workload.js'
import { scenarioPrices } from './pricing.js'
import { peerIdOf } from '../harness/ids.js'
import type { NetworkModel } from '../harness/network.js'
import { countryNetwork } from '../network/country-network.js'
import { parseRttTable } from '../network/rtt-table.js'
import type { Scenario, ScenarioData, ScenarioOptions, ScenarioResult } from './scenario.js'
import { strategyMetrics } from '../report/metrics.js'
import { OVERLAY_ASSUMPTIONS, TRAFFIC_NOTE, trafficRow, trafficTable } from './traffic.js'

/** The trace's busy window, trace seconds, and how much closer its arrivals come. */
export const MARKET_WINDOW = Object.freeze({ startS: 112 * DAY_SEC, endS: 149.3 * DAY_SEC })
export const MARKET_TIME_SCALE = 150
export const MARKET_DEFAULTS = Object.freeze({ nodes: 1_213, jobs: 500 })

/** The scenario's workload: the trace's window, its renters' jobs resampled to `jobs` (or a `--trace` CSV's). */
export function marketWorkload (data: ScenarioData, options: ScenarioOptions): { workload: Workload, summary: ReturnType<typeof buildWorkload>['summary'] } {
  const nodes = options.nodes ?? MARKET_DEFAULTS.nodes
  const built = alibabaWorkload({ nodes: data.alibabaNodes, pods: data.alibabaPods }, {
    seed: options.seed,
    window: MARKET_WINDOW,
    timeScale: MARKET_TIME_SCALE,
    scaleDurations: false,
    ...(nodes !== 1_213 ? { fleetSize: nodes } : {})
  })
  let jobs = built.workload.jobs
  if (data.trace !== undefined) jobs = parseJobCsv(data.trace.text, { source: data.trace.source }).jobs
  const count = options.jobs ?? MARKET_DEFAULTS.jobs
  if (count !== jobs.length) jobs = resampleJobs(new Prng(options.seed).fork('market:jobs'), jobs, count)
  const horizonMs = Math.max(built.workload.horizonMs, ...jobs.map((j) => j.submitAt + 1))
  const name = `${data.trace === undefined ? 'alibaba-2023 openb, days 112–149 at 150× arrivals' : data.trace.source}, ${built.workload.fleet.length} nodes, ${jobs.length} jobs`
  const out = buildWorkload({ name, fleet: built.workload.fleet, ownerWork: built.workload.ownerWork, jobs, horizonMs, dropped: built.summary.dropped, censored: built.summary.censored })
  // the drain: the clock runs on after the last arrival until the work placed has ended, in every strategy
  out.workload.drainMs = drainMsFor(out.workload)
  return out
}

/**
 * The RIPE Atlas delays between the nodes' countries (network/country-network.ts). A renter
 * (`peer:renter-<region>`) sits in the country of the first node of its region, a global one in the
 * fleet's most common country.
 */
export function measuredNetwork (rttCsv: string, workload: Workload): (prng: Prng) => NetworkModel {
  const table = parseRttTable(rttCsv)
  const byPeer = new Map<string, string>()
  const byRegion = new Map<string, string>()
  const counts = new Map<string, number>()
  for (const n of workload.fleet) {
    byPeer.set(peerIdOf(n.id), n.country)
    if (!byRegion.has(n.region)) byRegion.set(n.region, n.country)
    counts.set(n.country, (counts.get(n.country) ?? 0) + 1)
  }
  let common = 'US'
  for (const [c, k] of counts) if (k > (counts.get(common) ?? 0)) common = c
  const countryOf = (peer: string): string => {
    const known = byPeer.get(peer)
    if (known !== undefined) return known
    const region = peer.startsWith('peer:renter-') ? peer.slice('peer:renter-'.length) : undefined
    return (region === undefined ? undefined : byRegion.get(region)) ?? common
  }
  return (prng) => countryNetwork(table, countryOf, prng)
}

export const market: Scenario = {
  name: 'market',
  summary: 'the Alibaba 2023 trace on its fleet: gpumesh against the old way, a central matcher, lowest-price-only and random',
  defaults: MARKET_DEFAULTS,
  run (data: ScenarioData, options: ScenarioOptions): ScenarioResult {
    options.onProgress?.('workload', 0, 1)
    const { workload, summary } = marketWorkload(data, options)
    options.onProgress?.('workload', 1, 1)
    const prices = scenarioPrices(data.prices, workload.fleet, options.seed)
    const capOf = (job: Workload['jobs'][number]): number => prices.capOf(job) ?? 0
    const gpumesh = runMarket(workload, {
      seed: options.seed,
      ...(data.rtt !== undefined ? { network: measuredNetwork(data.rtt, workload) } : {}),
      mesh: true,
      discovery: true,
      floorOf: prices.floorOf,
      capOf,
      ...(options.onProgress !== undefined ? { onProgress: (done: number, total: number) => options.onProgress?.('gpumesh', done, total), progressEvery: 50 } : {})
    })
    const baseline = { listPrice: prices.listPrice, floorOf: prices.floorOf, capOf: prices.capOf }
    options.onProgress?.('baselines', 0, 4)
    const runs = [gpumesh.run, oldWay(workload, baseline), central(workload, baseline), lowestPrice(workload, baseline), randomAssignment(workload, { ...baseline, seed: options.seed })]
    options.onProgress?.('baselines', 4, 4)
    const traffic = trafficRow(workload.fleet.length, workload.jobs.length, gpumesh.stats, strategyMetrics(workload, gpumesh.run).timeToAward)
    return {
      scenario: 'market',
      seed: options.seed,
      nodes: workload.fleet.length,
      jobs: workload.jobs.length,
      workload,
      summary,
      runs,
      market: gpumesh.stats,
      listPrice: prices.listPrice,
      details: { traffic },
      markdown: `## Traffic (gpumesh)\n\n${trafficTable([traffic])}\n${TRAFFIC_NOTE}\n`,
      assumptions: [
        'Fleet and pods: Alibaba GPU cluster trace 2023 (openb, Weng et al., USENIX ATC 2023); G1–G3 taken as A100s (simulations/workloads/README.md).',
        'Load: days 112–149 of the trace with arrivals 150× closer and real durations; 30 % of the pods are outside renters, the rest the owners\' own work.',
        'Places: nodes drawn over countries from an assumed GPU fleet distribution (simulations/network/geo.ts); one-way delays drawn from the RIPE Atlas inter-country RTT table (simulations/network/).',
        'Prices: list = the snapshot\'s on-demand median per model; a renter\'s cap = the cheapest fitting list price; an owner\'s floor = 40–70 % of its model\'s list price.',
        'gpumesh runs with a 10-minute lease and hourly billing (simulations/market/run-market.ts SIM_MARKET_PARAMS); every other market parameter is the daemon\'s default.',
        ...OVERLAY_ASSUMPTIONS,
        `Drain: after the last arrival the clock runs ${(workload.drainMs ?? 0) / 3_600_000 > 0 ? `${((workload.drainMs ?? 0) / 3_600_000).toFixed(1)} h more` : 'no longer'} (the longest job past the horizon, two leases and the bid window) so placed work can end, in every strategy; utilization is over the horizon and the drain.`
      ]
    }
  }
}
