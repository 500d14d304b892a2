/**
 * The report's charts as vega-lite 5 specs: plain JSON objects with their data inline, built from the
 * rounded report (and, for the wait CDF, the jobs' outcomes), so the same run gives the same specs. The
 * CLI renders them (cli/sim-charts.ts: vega → SVG, resvg → PNG); nothing here draws.
 *
 * - utilization-over-time: fleet utilization per hour, a line per strategy;
 * - cost-by-tier: renter cost per GPU-hour, credits, by strategy and tier;
 * - wait-cdf: share of each tier's jobs started within a wait (unserved jobs never arrive, so a curve
 *   tops out at the share served), one panel per strategy;
 * - messages-per-job: messages per job against the number of nodes, from a series the caller measured;
 * - revenue-per-idle-hour: owners' revenue per GPU-hour sold and per GPU-hour offered, credits.
 */
import { TIERS } from '../baselines/fit.js'
import type { StrategyRun } from '../model.js'
import { round, type Report } from './report.js'
import { waits } from './metrics.js'

export type VegaLiteSpec = Record<string, unknown>

/** The font every chart names; the renderer loads it (see cli/sim-charts.ts). */
export const CHART_FONT = 'DejaVu Sans'

/** Points per wait-CDF curve at most (quantiles of the tier's jobs). */
export const CDF_POINTS = 101

export interface MessagesPoint {
  /** Nodes in the run. */
  n: number
  messagesPerJob: number
  /** The series (e.g. `gossip`, `dht`), one line each; default `messages`. */
  series?: string
}

export interface ChartInput {
  report: Report
  runs: readonly StrategyRun[]
  messagesVsN?: readonly MessagesPoint[]
}

function base (title: string, values: unknown[]): VegaLiteSpec {
  return {
    $schema: 'https://vega.github.io/schema/vega-lite/v5.json',
    title,
    background: 'white',
    width: 560,
    height: 300,
    config: { font: CHART_FONT, view: { stroke: null } },
    data: { values }
  }
}

interface StrategyJson {
  strategy: string
  utilizationOverTime: Array<[number, number, number | null]>
  tiers: Record<string, { costPerGpuHour: number | null }>
  revenue: { perSoldGpuHour: number | null, perOfferedGpuHour: number | null }
}

function strategies (report: Report): StrategyJson[] {
  return report.strategies as unknown as StrategyJson[]
}

/**
 * Fleet utilization per strategy over the whole run, with a dashed rule at the arrival horizon: the
 * report's headline utilization is the part left of it; right of it is the drain (placed work ending).
 */
export function utilizationChart (report: Report): VegaLiteSpec {
  const values = strategies(report).flatMap((s) => s.utilizationOverTime.map(([t, fleet]) => ({ strategy: s.strategy, hour: round(t / 3_600_000, 3), utilization: fleet })))
  const horizon = { hour: round(report.workload.horizonMs / 3_600_000, 3), label: 'arrival horizon' }
  return {
    ...base('Fleet utilization over time (owners\' work + sold)', values),
    layer: [
      {
        mark: { type: 'line', interpolate: 'step-after' },
        encoding: {
          x: { field: 'hour', type: 'quantitative', title: 'hour of the run' },
          y: { field: 'utilization', type: 'quantitative', title: 'GPUs busy', axis: { format: '%' }, scale: { domain: [0, 1] } },
          color: { field: 'strategy', type: 'nominal', title: 'strategy' }
        }
      },
      {
        data: { values: [horizon] },
        mark: { type: 'rule', strokeDash: [4, 4], color: '#555' },
        encoding: { x: { field: 'hour', type: 'quantitative' } }
      },
      {
        data: { values: [horizon] },
        mark: { type: 'text', align: 'right', baseline: 'top', dx: -4, dy: 4, color: '#555' },
        encoding: { x: { field: 'hour', type: 'quantitative' }, y: { datum: 1 }, text: { field: 'label' } }
      }
    ]
  }
}

export function costByTierChart (report: Report): VegaLiteSpec {
  const values = strategies(report).flatMap((s) => TIERS.flatMap((tier) => {
    const c = s.tiers[tier]?.costPerGpuHour ?? null
    return c === null ? [] : [{ strategy: s.strategy, tier, credits: round(c / 1_000_000, 4) }]
  }))
  return {
    ...base('Renter cost per GPU-hour by strategy and tier', values),
    mark: 'bar',
    encoding: {
      x: { field: 'strategy', type: 'nominal', title: 'strategy', sort: null, axis: { labelAngle: 0 } },
      xOffset: { field: 'tier', type: 'nominal', sort: [...TIERS] },
      y: { field: 'credits', type: 'quantitative', title: 'credits per GPU-hour' },
      color: { field: 'tier', type: 'nominal', title: 'tier', sort: [...TIERS] }
    }
  }
}

export function waitCdfChart (runs: readonly StrategyRun[]): VegaLiteSpec {
  const values: unknown[] = []
  for (const run of runs) {
    for (const tier of TIERS) {
      const jobs = run.jobs.filter((j) => j.tier === tier)
      const sorted = waits(jobs).sort((a, b) => a - b)
      if (sorted.length === 0) continue
      values.push({ strategy: run.strategy, tier, minutes: 0, share: 0 }) // every curve starts at none started
      const seen = new Set<number>()
      for (let q = 0; q < CDF_POINTS; q++) {
        const rank = Math.max(1, Math.ceil((q / (CDF_POINTS - 1)) * sorted.length))
        if (seen.has(rank)) continue
        seen.add(rank)
        values.push({ strategy: run.strategy, tier, minutes: round((sorted[rank - 1] as number) / 60_000, 3), share: round(rank / jobs.length, 4) })
      }
    }
  }
  const b = base('Wait for a start, by tier (share of the tier\'s jobs started within it)', values)
  return {
    $schema: b.$schema,
    title: b.title,
    background: b.background,
    config: b.config,
    data: b.data,
    facet: { column: { field: 'strategy', type: 'nominal', title: null, sort: runs.map((r) => r.strategy) } },
    spec: {
      width: 220,
      height: 220,
      mark: { type: 'line', interpolate: 'step-after', point: { filled: true, size: 8 } },
      encoding: {
        x: { field: 'minutes', type: 'quantitative', title: 'wait, minutes' },
        y: { field: 'share', type: 'quantitative', title: 'jobs started', axis: { format: '%' }, scale: { domain: [0, 1] } },
        color: { field: 'tier', type: 'nominal', title: 'tier', sort: [...TIERS] }
      }
    }
  }
}

export function messagesChart (points: readonly MessagesPoint[]): VegaLiteSpec {
  // a log axis has no 0: a series' zero (nothing sent) is left out rather than drawn at an invented floor
  const values = [...points].filter((p) => p.messagesPerJob > 0).map((p) => ({ n: p.n, messagesPerJob: round(p.messagesPerJob, 3), series: p.series ?? 'messages' }))
  return {
    ...base('Messages per job against the number of nodes', values),
    mark: { type: 'line', point: true },
    encoding: {
      x: { field: 'n', type: 'quantitative', title: 'nodes', scale: { type: 'log' } },
      // log: wire copies run to N × D per gossip message, thousands of times the DHT's few per lookup
      y: { field: 'messagesPerJob', type: 'quantitative', title: 'messages per job (log)', scale: { type: 'log' } },
      color: { field: 'series', type: 'nominal', title: 'series' }
    }
  }
}

export function revenueChart (report: Report): VegaLiteSpec {
  const values = strategies(report).flatMap((s) => [
    { strategy: s.strategy, per: 'GPU-hour sold', credits: s.revenue.perSoldGpuHour === null ? 0 : round(s.revenue.perSoldGpuHour / 1_000_000, 4) },
    { strategy: s.strategy, per: 'GPU-hour offered', credits: s.revenue.perOfferedGpuHour === null ? 0 : round(s.revenue.perOfferedGpuHour / 1_000_000, 4) }
  ])
  return {
    ...base('Owners\' revenue per idle GPU-hour', values),
    mark: 'bar',
    encoding: {
      x: { field: 'strategy', type: 'nominal', title: 'strategy', sort: null, axis: { labelAngle: 0 } },
      xOffset: { field: 'per', type: 'nominal', sort: ['GPU-hour sold', 'GPU-hour offered'] },
      y: { field: 'credits', type: 'quantitative', title: 'credits' },
      color: { field: 'per', type: 'nominal', title: 'per', sort: ['GPU-hour sold', 'GPU-hour offered'] }
    }
  }
}

/** Every chart by file name (without extension); messages-per-job only when a series is given. */
export function charts (input: ChartInput): Record<string, VegaLiteSpec> {
  const out: Record<string, VegaLiteSpec> = {
    'utilization-over-time': utilizationChart(input.report),
    'cost-by-tier': costByTierChart(input.report),
    'wait-cdf': waitCdfChart(input.runs)
  }
  if (input.messagesVsN !== undefined && input.messagesVsN.length > 0) out['messages-per-job'] = messagesChart(input.messagesVsN)
  out['revenue-per-idle-hour'] = revenueChart(input.report)
  return out
}
