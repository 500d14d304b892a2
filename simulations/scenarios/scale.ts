/**
 * `scale`: messages and time to award as the network grows (issue 10). The `market` scenario's workload
 * shape — a fleet drawn like the Alibaba 2023 trace's, its owners' work, the same renters' jobs (the
 * same `--jobs` resampled from the trace with the same seed, so every size sees the same jobs) — run
 * through the gpumesh market at each size of a ladder (SCALE_LADDER up to `--nodes`, and `--nodes`
 * itself), with the gossipsub mesh model and the Kademlia model on. Per size it reports application
 * messages and wire copies per job, bytes per job, bids per job, time to award p50/p95, and the `providers`
 * lookup's latency and messages; the messages-per-job chart draws them against N.
 *
 * Only gpumesh runs: the baselines have no protocol to measure. The report's strategy tables are the
 * largest size's run.
 */
import { drainMsFor, runMarket, type MarketRun } from '../market/run-market.js'
import { strategyMetrics } from '../report/metrics.js'
import type { MessagesPoint } from '../report/charts.js'
import { marketWorkload, measuredNetwork } from './market.js'
import { scenarioPrices } from './pricing.js'
import type { Scenario, ScenarioData, ScenarioOptions, ScenarioResult } from './scenario.js'
import { OVERLAY_ASSUMPTIONS, TRAFFIC_NOTE, trafficRow, trafficTable, type TrafficRow } from './traffic.js'

/** The sizes run below the top one (`--nodes`, default SCALE_DEFAULTS.nodes). */
export const SCALE_LADDER: readonly number[] = Object.freeze([100, 300, 1_000, 3_000])
/**
 * 100, 300 and 1,000 nodes × 50 jobs: about 1.5 min on this 2-core machine under load (README). A run's
 * cost grows about as N² per job (each of ~N bids reaches ~N subscribers), so `--nodes 3000` takes far longer.
 */
export const SCALE_DEFAULTS = Object.freeze({ nodes: 1_000, jobs: 50 })

/** The sizes a run at top size `top` goes through: the ladder's sizes below it, then `top`. */
export function scaleSizes (top: number): number[] {
  return [...SCALE_LADDER.filter((n) => n < top), top]
}

export const scale: Scenario = {
  name: 'scale',
  summary: 'messages, bytes, bids and time to award per job as N grows (100, 300, 1,000 nodes; --nodes 3000 adds 3,000), gossip on the mesh model, discovery on the DHT model',
  defaults: SCALE_DEFAULTS,
  run (data: ScenarioData, options: ScenarioOptions): ScenarioResult {
    const top = options.nodes ?? SCALE_DEFAULTS.nodes
    const jobs = options.jobs ?? SCALE_DEFAULTS.jobs
    const rows: TrafficRow[] = []
    let last: { run: MarketRun, built: ReturnType<typeof marketWorkload>, prices: ReturnType<typeof scenarioPrices> } | undefined
    const sizes = scaleSizes(top)
    sizes.forEach((n, i) => {
      options.onProgress?.('scale', i, sizes.length)
      const built = marketWorkload(data, { seed: options.seed, nodes: n, jobs })
      const workload = built.workload
      workload.drainMs = drainMsFor(workload)
      const prices = scenarioPrices(data.prices, workload.fleet, options.seed)
      const run = runMarket(workload, {
        seed: options.seed,
        ...(data.rtt !== undefined ? { network: measuredNetwork(data.rtt, workload) } : {}),
        mesh: true,
        discovery: true,
        floorOf: prices.floorOf,
        capOf: (job) => prices.capOf(job) ?? 0
      })
      rows.push(trafficRow(workload.fleet.length, workload.jobs.length, run.stats, strategyMetrics(workload, run.run).timeToAward))
      last = { run, built, prices }
    })
    options.onProgress?.('scale', sizes.length, sizes.length)
    const { run, built, prices } = last as NonNullable<typeof last>
    return {
      scenario: 'scale',
      seed: options.seed,
      nodes: built.workload.fleet.length,
      jobs: built.workload.jobs.length,
      workload: built.workload,
      summary: built.summary,
      runs: [run.run],
      market: run.stats,
      listPrice: prices.listPrice,
      sections: [{ key: 'scale', title: `Scale (gpumesh, ${jobs} jobs at each size)`, json: { sizes: rows }, markdown: [trafficTable(rows), TRAFFIC_NOTE] }],
      messagesVsN: messagesVsN(rows),
      assumptions: [
        `Sizes: ${sizes.join(', ')} nodes, each a fleet drawn like the Alibaba 2023 trace's with its owners' work; the same ${jobs} renter jobs (resampled from the trace's days 112–149 at 150× arrivals) at every size.`,
        'Places and delays: as the market scenario (RIPE Atlas inter-country RTTs).',
        ...OVERLAY_ASSUMPTIONS
      ]
    }
  }
}

/** The chart's series, per job against N: application messages, wire copies (gossip mesh + streams), DHT messages per `providers` lookup. */
export function messagesVsN (rows: readonly TrafficRow[]): MessagesPoint[] {
  const points: MessagesPoint[] = []
  for (const r of rows) {
    points.push({ n: r.nodes, messagesPerJob: r.messagesPerJob, series: 'app messages' })
    if (r.wireMessagesPerJob !== null) points.push({ n: r.nodes, messagesPerJob: r.wireMessagesPerJob, series: 'wire copies' })
    if (r.discovery !== null) points.push({ n: r.nodes, messagesPerJob: r.discovery.messagesPerLookup, series: 'DHT per lookup' })
  }
  return points
}
