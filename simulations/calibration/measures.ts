/**
 * What calibration measures, on either side (the real daemons, calibration/real-run.ts; the model,
 * model-run.ts), and the comparison of the two: one row per measure with both values and their
 * ratio, and whether the model is within the tolerance on the measures the issue names (time to
 * award and bids per job within 25 %).
 */

/** One side's numbers. Times in ms; undefined where that side could not measure it. */
export interface CalibrationMeasures {
  jobs: number
  /** Jobs awarded at least once. */
  awarded: number
  /** Jobs that ended settled. */
  settled: number
  /** Time from publish to the first award, mean over awarded jobs, and its median and 90th percentile. */
  timeToAwardMs: number
  timeToAwardP50Ms: number
  timeToAwardP90Ms: number
  /** Bids sent per job (all rounds), mean. */
  bidsPerJob: number
  /** Auction rounds opened per job beyond the first (re-auctions), mean. */
  reauctionsPerJob: number
  /** Signed market messages sent per job (gossip publishes and exec-stream messages), mean. */
  messagesPerJob: number
  /** The same by kind. */
  messagesPerJobByKind: Record<string, number>
  /** Gossip deliveries per job: each node that received each gossip message once. */
  gossipDeliveriesPerJob: number
  /** One gossip delivery's delay, publish to receipt, mean over deliveries. */
  gossipDelayMs: number
  /** A `providers` DHT lookup from a buyer: to the first provider, and to the lookup's end (mean over lookups). */
  discoveryFirstMs: number | undefined
  discoveryMs: number | undefined
}

/** The network both sides ran on. */
export interface CalibrationNetwork {
  /** The memory transport's latency, the model's one-way delay per hop, ms. */
  latencyMs: number
  /** Mean gossip hops from a publisher to a subscriber, measured on the real mesh. */
  gossipHops: number
  /** The share of publisher–subscriber pairs at 1, 2, 3… hops (index 0 = 1 hop). */
  hopShares: number[]
  /** Pairs neither flood nor mesh reached when the jobs began (left out of the hops). */
  unreachedPairs: number
}

export interface CalibrationRow {
  measure: string
  unit: string
  model: number | undefined
  real: number | undefined
  /** model ÷ real (undefined when either is missing or real is 0). */
  ratio: number | undefined
  /** Within the tolerance, for the measures the check covers; undefined for the others (shown only). */
  within?: boolean
}

export interface CalibrationComparison {
  rows: CalibrationRow[]
  /** The tolerance checked: |model − real| ≤ tolerance × real. */
  tolerance: number
  /** Every checked measure within the tolerance. */
  ok: boolean
}

/** The tolerance: the model within 25 % of the real run. */
export const CALIBRATION_TOLERANCE = 0.25

/** The measures the check covers (issue 10: time to award and bids per job). */
export const CHECKED_MEASURES: ReadonlySet<string> = new Set(['time to award', 'bids per job'])

/** Whether `model` is within `tolerance` of `real` (relative to real; both 0 is within). */
export function withinTolerance (model: number, real: number, tolerance: number = CALIBRATION_TOLERANCE): boolean {
  if (real === 0) return model === 0
  return Math.abs(model - real) <= tolerance * Math.abs(real)
}

/** The side-by-side table of `model` and `real`, with the checked measures judged. */
export function compareMeasures (model: CalibrationMeasures, real: CalibrationMeasures, tolerance: number = CALIBRATION_TOLERANCE): CalibrationComparison {
  const row = (measure: string, unit: string, m: number | undefined, r: number | undefined): CalibrationRow => {
    const ratio = m === undefined || r === undefined || r === 0 ? undefined : m / r
    const checked = CHECKED_MEASURES.has(measure)
    return { measure, unit, model: m, real: r, ratio, ...(checked ? { within: m !== undefined && r !== undefined && withinTolerance(m, r, tolerance) } : {}) }
  }
  const rows = [
    row('time to award', 'ms', model.timeToAwardMs, real.timeToAwardMs),
    row('time to award p50', 'ms', model.timeToAwardP50Ms, real.timeToAwardP50Ms),
    row('time to award p90', 'ms', model.timeToAwardP90Ms, real.timeToAwardP90Ms),
    row('bids per job', 'bids', model.bidsPerJob, real.bidsPerJob),
    row('re-auctions per job', 'rounds', model.reauctionsPerJob, real.reauctionsPerJob),
    row('messages per job', 'messages', model.messagesPerJob, real.messagesPerJob),
    row('gossip deliveries per job', 'deliveries', model.gossipDeliveriesPerJob, real.gossipDeliveriesPerJob),
    row('gossip delivery delay', 'ms', model.gossipDelayMs, real.gossipDelayMs),
    row('discovery, first provider', 'ms', model.discoveryFirstMs, real.discoveryFirstMs),
    row('discovery, whole lookup', 'ms', model.discoveryMs, real.discoveryMs),
    row('jobs awarded', 'jobs', model.awarded, real.awarded),
    row('jobs settled', 'jobs', model.settled, real.settled)
  ]
  return { rows, tolerance, ok: rows.every((r) => r.within !== false) }
}

/** The mean of `xs` (0 for none). */
export function mean (xs: readonly number[]): number {
  return xs.length === 0 ? 0 : xs.reduce((a, b) => a + b, 0) / xs.length
}

/** The `q` quantile of `xs` (nearest rank; 0 for none). */
export function quantile (xs: readonly number[], q: number): number {
  if (xs.length === 0) return 0
  const sorted = [...xs].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))] as number
}

/** Per-job means of counts by kind. */
export function perJob (counts: Readonly<Record<string, number>>, jobs: number): Record<string, number> {
  const out: Record<string, number> = {}
  for (const k of Object.keys(counts).sort()) out[k] = jobs === 0 ? 0 : (counts[k] as number) / jobs
  return out
}
