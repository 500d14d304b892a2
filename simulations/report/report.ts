/**
 * The run's report (issue 10, "Report"): `report.json` as an object with a fixed key order and rounded
 * numbers, so the same run gives the same bytes, and `report.md`, the headline tables and one sentence per
 * claim saying plainly whether this run supports it.
 *
 * Rounding (JSON): ratios (utilization, cost against list price, completion, the utilization series) to 4
 * decimals; GPU-hours to 3; micro-credits (paid, revenue, prices per GPU-hour) and milliseconds (waits,
 * time to award, series times) to whole numbers; per-job counts (bids, messages, bytes) to 3 decimals.
 * Strategies keep the order they were given in; a metric with nothing to measure is null.
 */
import type { Tier, Workload } from '../model.js'
import { TIERS } from '../baselines/fit.js'
import type { Percentiles, StrategyMetrics, TierMetrics } from './metrics.js'
import { faultsJson, faultsMarkdown, judgeFault, type FaultMetrics } from './faults.js'

export const REPORT_FORMAT = 'gpumesh-sim-report/1'

/** `x` rounded to `digits` decimals (−0 as 0); null stays null. */
export function round (x: number | null, digits: number): number | null {
  if (x === null) return null
  const f = 10 ** digits
  const r = Math.round(x * f) / f
  return r === 0 ? 0 : r
}

const ratio = (x: number | null): number | null => round(x, 4)
const hours = (x: number | null): number | null => round(x, 3)
const whole = (x: number | null): number | null => round(x, 0)

function pct (p: Percentiles): { n: number, p50: number | null, p95: number | null, p99: number | null, max: number | null } {
  return { n: p.n, p50: whole(p.p50), p95: whole(p.p95), p99: whole(p.p99), max: whole(p.max) }
}

function tierJson (t: TierMetrics): Record<string, unknown> {
  return {
    jobs: t.jobs,
    completed: t.completed,
    failed: t.failed,
    unserved: t.unserved,
    slaMisses: t.slaMisses,
    gpuHours: hours(t.gpuHours),
    paid: whole(t.paid),
    costPerGpuHour: whole(t.costPerGpuHour),
    costVsList: ratio(t.costVsList),
    waitMs: pct(t.wait)
  }
}

export type Verdict = 'supported' | 'not supported' | 'not measured'

export interface Claim {
  id: string
  claim: string
  subject: string
  verdict: Verdict
  detail: string
}

export interface ReportOptions {
  /** The strategy the claims are judged on (default `gpumesh` when present, else `central`). */
  subject?: string
  /** Extra fields put under `run` as given (the scenario, seed, sizes); keep them plain and deterministic. */
  run?: Record<string, string | number | boolean>
  /** The fault runs (faults.ts `faultMetrics`): a `faults` section, and a claim per expectation. */
  faults?: readonly FaultMetrics[]
  /** A scenario's own sections (e.g. the adversaries'), under `sections` by key. */
  sections?: readonly ReportSection[]
}

/**
 * A section only one scenario has (the adversaries' award shares, the spam's traffic): its JSON under
 * `sections[key]` in report.json — plain and already rounded by the scenario, so it stays
 * deterministic — and its lines under `## title` in report.md.
 */
export interface ReportSection { key: string, title: string, json: Record<string, unknown>, markdown: string[] }

export interface Report {
  format: string
  run: Record<string, string | number | boolean>
  /** `horizonMs`: the arrival horizon, the headline utilization's window; `drainMs`: the drain after it (the whole run is both). */
  workload: { name: string, nodes: number, gpus: number, jobs: number, ownerWork: number, horizonMs: number, drainMs: number }
  strategies: Array<Record<string, unknown>>
  /** Present only when the scenario ran faults (before `claims`). */
  faults?: Array<Record<string, unknown>>
  /** Present only when the scenario has sections of its own (ReportSection). */
  sections?: Record<string, Record<string, unknown>>
  claims: Claim[]
}

function strategyJson (m: StrategyMetrics): Record<string, unknown> {
  const tiers: Record<string, unknown> = {}
  for (const tier of TIERS) tiers[tier] = tierJson(m.byTier[tier])
  return {
    strategy: m.strategy,
    jobs: { total: m.jobs, completed: m.completed, failed: m.failed, unserved: m.unserved },
    completion: ratio(m.completion),
    cost: { paid: whole(m.paid), gpuHours: hours(m.gpuHours), perGpuHour: whole(m.costPerGpuHour), vsList: ratio(m.costVsList), demandVsList: ratio(m.demandCostVsList) },
    // inside the arrival horizon (the headline); the whole run (horizon and drain) beside it
    utilization: { offered: ratio(m.utilizationOffered), fleet: ratio(m.utilizationFleet), wholeRun: { offered: ratio(m.wholeRun.offered), fleet: ratio(m.wholeRun.fleet) } },
    gpuHours: {
      offered: hours(m.offeredGpuHours),
      sold: hours(m.soldGpuHours),
      owner: hours(m.ownerGpuHours),
      fleet: hours(m.fleetGpuHours),
      wholeRun: { offered: hours(m.wholeRun.offeredGpuHours), sold: hours(m.wholeRun.soldGpuHours), owner: hours(m.wholeRun.ownerGpuHours), fleet: hours(m.wholeRun.fleetGpuHours) }
    },
    revenue: { total: whole(m.revenue), perSoldGpuHour: whole(m.revenuePerSoldGpuHour), perOfferedGpuHour: whole(m.revenuePerOfferedGpuHour) },
    slaMisses: m.slaMisses,
    preemptions: m.preemptions,
    waitMs: pct(m.wait),
    timeToAwardMs: pct(m.timeToAward),
    perJob: { bids: round(m.bidsPerJob, 3), messages: round(m.messagesPerJob, 3), bytes: round(m.bytesPerJob, 3) },
    tiers,
    utilizationOverTime: m.utilizationOverTime.map((p) => [whole(p.t), ratio(p.fleet), ratio(p.offered)])
  }
}

const percent = (x: number | null): string => (x === null ? 'n/a' : `${(x * 100).toFixed(1)} %`)
const credits = (micros: number | null): string => (micros === null ? 'n/a' : (micros / 1_000_000).toFixed(3))

/** The claims of issue 10 on `subject`, each with a verdict and its numbers. */
export function judgeClaims (metrics: readonly StrategyMetrics[], subjectName?: string): Claim[] {
  const find = (name: string): StrategyMetrics | undefined => metrics.find((m) => m.strategy === name)
  const subjectId = subjectName ?? (find('gpumesh') !== undefined ? 'gpumesh' : 'central')
  const s = find(subjectId)
  const old = find('old-way')
  const central = find('central')
  const claims: Claim[] = []
  const add = (id: string, claim: string, verdict: Verdict, detail: string): void => { claims.push({ id, claim, subject: subjectId, verdict, detail }) }
  if (s === undefined) {
    add('subject', `a run of ${subjectId}`, 'not measured', `no ${subjectId} run in this report, so no claim about it is judged`)
    return claims
  }
  const note = subjectId === 'gpumesh' ? '' : ` (judged on ${subjectId}, not on the gpumesh market: no gpumesh run in this report)`
  // renters pay less than list price
  if (s.costVsList === null) add('renter-cost', 'renters pay less than list price', 'not measured', `no job ran under ${subjectId}${note}`)
  else {
    const demand = s.demandCostVsList === null ? '' : `; counting the unserved demand at list price, ${percent(s.demandCostVsList)}`
    const ok = s.costVsList < 1 && (s.demandCostVsList === null || s.demandCostVsList < 1)
    add('renter-cost', 'renters pay less than list price', ok ? 'supported' : 'not supported',
      `renters paid ${percent(s.costVsList)} of list price for the GPU-hours that ran${demand}; ${s.unserved} of ${s.jobs} jobs were not served${note}`)
  }
  // idle GPUs earn
  if (s.revenuePerOfferedGpuHour === null) add('idle-earn', 'idle GPUs earn', 'not measured', `nothing was offered${note}`)
  else {
    add('idle-earn', 'idle GPUs earn', s.revenue > 0 ? 'supported' : 'not supported',
      `owners earned ${credits(s.revenuePerSoldGpuHour)} credits per GPU-hour sold and ${credits(s.revenuePerOfferedGpuHour)} per GPU-hour offered, selling ${percent(s.utilizationOffered)} of their idle GPU-hours inside the arrival horizon (${percent(s.wholeRun.offered)} over the whole run with the drain); the old way earns them 0${note}`)
  }
  // utilization rises
  if (old === undefined || s.utilizationFleet === null || old.utilizationFleet === null) add('utilization', 'fleet utilization rises', 'not measured', 'no old-way run to compare with')
  else {
    add('utilization', 'fleet utilization rises', s.utilizationFleet > old.utilizationFleet ? 'supported' : 'not supported',
      `inside the arrival horizon the fleet was busy ${percent(s.utilizationFleet)} of its GPU-hours, against ${percent(old.utilizationFleet)} (owners' own work only) the old way (over the whole run with the drain: ${percent(s.wholeRun.fleet)} against ${percent(old.wholeRun.fleet)})${note}`)
  }
  // preemptible tiers save more
  const bronze = s.byTier.bronze.costPerGpuHour
  const dearer = (['gold', 'silver'] as Tier[]).map((t) => s.byTier[t].costPerGpuHour).filter((c): c is number => c !== null)
  if (bronze === null || dearer.length === 0) add('bronze-saves', 'preemptible (bronze) work costs less', 'not measured', `bronze or the other tiers had no GPU-hours run${note}`)
  else {
    const ok = dearer.every((c) => bronze < c)
    add('bronze-saves', 'preemptible (bronze) work costs less', ok ? 'supported' : 'not supported',
      `bronze paid ${credits(bronze)} credits per GPU-hour, gold ${credits(s.byTier.gold.costPerGpuHour)}, silver ${credits(s.byTier.silver.costPerGpuHour)}${ok ? '' : ': the price follows the node chosen, not the tier'}${subjectId === 'gpumesh' ? '' : `; ${subjectId} charges a node's floor whatever the tier, so any difference comes from where the jobs were placed`}${note}`)
  }
  // approaches the central bound
  if (central === undefined || subjectId === 'central') add('central-bound', 'the market approaches the central matcher', 'not measured', subjectId === 'central' ? 'the subject is the central matcher itself; no gpumesh run in this report' : 'no central run to compare with')
  else if (s.utilizationOffered === null || central.utilizationOffered === null || s.costPerGpuHour === null || central.costPerGpuHour === null) add('central-bound', 'the market approaches the central matcher', 'not measured', 'a strategy sold nothing')
  else {
    const u = s.utilizationOffered / Math.max(central.utilizationOffered, Number.MIN_VALUE)
    const c = s.costPerGpuHour / central.costPerGpuHour
    add('central-bound', 'the market approaches the central matcher', u >= 0.9 && c <= 1.1 ? 'supported' : 'not supported',
      `${subjectId} sold ${percent(u)} of what the central matcher sold inside the arrival horizon and charged ${percent(c)} of its price per GPU-hour (supported: at least 90 % and at most 110 %)`)
  }
  return claims
}

/** One claim per fault expectation, judged on the fault run's strategy. */
export function faultClaims (faults: readonly FaultMetrics[]): Claim[] {
  const claims: Claim[] = []
  for (const m of faults) {
    for (const e of m.spec.expect ?? []) claims.push({ id: e.id, claim: e.claim, subject: m.spec.strategy, ...judgeFault(m, e) })
  }
  return claims
}

export function buildReport (workload: Workload, metrics: readonly StrategyMetrics[], options: ReportOptions = {}): Report {
  const faults = options.faults ?? []
  const claims = [...judgeClaims(metrics, options.subject), ...faultClaims(faults)]
  return {
    format: REPORT_FORMAT,
    run: { ...options.run },
    workload: {
      name: workload.name,
      nodes: workload.fleet.length,
      gpus: workload.fleet.reduce((s, n) => s + n.gpus, 0),
      jobs: workload.jobs.length,
      ownerWork: workload.ownerWork.length,
      horizonMs: workload.horizonMs,
      drainMs: workload.drainMs ?? 0
    },
    strategies: metrics.map(strategyJson),
    ...(faults.length > 0 ? { faults: faultsJson(faults) } : {}),
    ...(options.sections !== undefined && options.sections.length > 0 ? { sections: Object.fromEntries(options.sections.map((x) => [x.key, x.json])) } : {}),
    claims
  }
}

/** report.json's text: two-space indent, a final newline. */
export function reportJson (report: Report): string {
  return `${JSON.stringify(report, null, 2)}\n`
}

const hoursText = (ms: number): string => `${(ms / 3_600_000).toFixed(1)} h`
const minutes = (ms: number | null): string => (ms === null ? '–' : (ms / 60_000).toFixed(1))
const waitCell = (p: Percentiles): string => (p.n === 0 ? '–' : `${minutes(p.p50)} / ${minutes(p.p95)} / ${minutes(p.p99)}`)

/** report.md's text: the headline table, the table by tier, the faults (when given), and the claims. */
export function reportMarkdown (workload: Workload, metrics: readonly StrategyMetrics[], report: Report, faults: readonly FaultMetrics[] = [], sections: readonly ReportSection[] = []): string {
  const lines: string[] = []
  lines.push(`# gpumesh sim: ${workload.name}`, '')
  lines.push(`${report.workload.nodes} nodes (${report.workload.gpus} GPUs), ${report.workload.jobs} renter jobs, ${report.workload.ownerWork} owner tasks, horizon ${hoursText(workload.horizonMs)}.`, '')
  lines.push('## Headline', '')
  const drain = (workload.drainMs ?? 0) > 0 ? ` and the ${hoursText(workload.drainMs ?? 0)} drain` : ''
  lines.push(`Cost in credits per GPU-hour run; waits in minutes (p50 / p95 / p99 of the jobs that started); utilization of the owners' offered (idle) GPU-hours and of the whole fleet (owners' work + sold) inside the arrival horizon (${hoursText(workload.horizonMs)}), and beside them the same over the whole run (the horizon${drain}).`, '')
  lines.push('| strategy | cost / GPU-h | vs list | demand vs list | util. offered | util. fleet | util. whole run offered / fleet | revenue / sold GPU-h | unserved | completed | wait gold | wait silver | wait bronze |')
  lines.push('|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|')
  for (const m of metrics) {
    lines.push(`| ${m.strategy} | ${credits(m.costPerGpuHour)} | ${percent(m.costVsList)} | ${percent(m.demandCostVsList)} | ${percent(m.utilizationOffered)} | ${percent(m.utilizationFleet)} | ${percent(m.wholeRun.offered)} / ${percent(m.wholeRun.fleet)} | ${credits(m.revenuePerSoldGpuHour)} | ${m.unserved} | ${percent(m.completion)} | ${waitCell(m.byTier.gold.wait)} | ${waitCell(m.byTier.silver.wait)} | ${waitCell(m.byTier.bronze.wait)} |`)
  }
  lines.push('', '## By tier', '')
  lines.push('| strategy | tier | jobs | cost / GPU-h | vs list | wait p50 / p95 / p99 | unserved | SLA misses |')
  lines.push('|---|---|---:|---:|---:|---:|---:|---:|')
  for (const m of metrics) {
    for (const tier of TIERS) {
      const t = m.byTier[tier]
      lines.push(`| ${m.strategy} | ${tier} | ${t.jobs} | ${credits(t.costPerGpuHour)} | ${percent(t.costVsList)} | ${waitCell(t.wait)} | ${t.unserved} | ${t.slaMisses} |`)
    }
  }
  const faultLines = faultsMarkdown(faults)
  if (faultLines.length > 0) lines.push('', ...faultLines.slice(0, -1))
  for (const x of sections) lines.push('', `## ${x.title}`, '', ...x.markdown)
  lines.push('', '## Claims', '')
  for (const c of report.claims) lines.push(`- **${c.claim}** — ${c.verdict}: ${c.detail}.`)
  lines.push('')
  return lines.join('\n')
}
