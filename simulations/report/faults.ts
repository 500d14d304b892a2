/**
 * The report's faults section (issue 10, "honest job completion under faults"): one entry per named
 * fault run, every one measured by the same metrics, so churn, a partition, no-shows or bid spam read
 * alike. A scenario names which strategy run carried the fault (`strategy`), optionally the same
 * strategy on the same workload without it (`without`) and a bound (`bound`, e.g. the central matcher
 * that knew the fault in advance), and optionally phases by submission time (before / during / after a
 * partition window, a churn burst).
 *
 * Per run (and per phase, over the jobs submitted in it):
 * - completion: completed / jobs (the honest renters' jobs the scenario submitted);
 * - failed, unserved; of the failed, those still running when the run's horizon ended (`atHorizon`:
 *   cut by the horizon, not by the fault);
 * - re-auctioned: jobs awarded more than once (`attempts > 1`), and the attempts over all jobs;
 * - lost GPU-hours: GPU-hours run by attempts that ended without completing the job — a job's
 *   `lostGpuHours` where the strategy reports it, else every GPU-hour of a job that failed before the
 *   horizon and, of one that completed, what ran beyond its own GPUs × duration;
 * - wait p50 / p95 / p99 by tier (over the jobs that started).
 *
 * Each `expect` gives a claim with a verdict: supported when the run's (or a phase's) completion is at
 * least `minCompletion` — or, with `relative`, at least that share of the `without` run's completion
 * over the same jobs.
 */
import { TIERS } from '../baselines/fit.js'
import type { JobOutcome, StrategyRun, Tier, Workload } from '../model.js'
import { percentiles, type Percentiles } from './metrics.js'

const HOUR_MS = 3_600_000

/** A span of submission times, ms since the run's start: jobs with fromMs ≤ submitAt < untilMs. */
export interface FaultPhase { name: string, fromMs: number, untilMs: number }

/** A claim the fault run is judged on. */
export interface FaultExpectation {
  /** The claim's id in report.json (`churn-completion`). */
  id: string
  /** One sentence, e.g. `the market recovers after the partition`. */
  claim: string
  /** The phase it is judged on (the whole run when absent). */
  phase?: string
  /** Completion at least this (0…1), or with `relative` this share of the `without` run's. */
  minCompletion: number
  relative?: boolean
}

/** What a scenario says about one fault run. */
export interface FaultSpec {
  /** Short name (`churn`, `partition`, `no-shows`). */
  name: string
  /** What the fault was, one sentence with its parameters. */
  fault: string
  /** The strategy run that carried the fault (a strategy name in the same report). */
  strategy: string
  /** The same strategy on the same workload without the fault. */
  without?: string
  /** A bound to compare with (e.g. `central`, told the fault in advance). */
  bound?: string
  phases?: FaultPhase[]
  expect?: FaultExpectation[]
}

export interface FaultCounts {
  jobs: number
  completed: number
  failed: number
  /** Failed jobs still running when the horizon ended the run. */
  atHorizon: number
  unserved: number
  completion: number | null
  reauctioned: number
  attempts: number
  lostGpuHours: number
}

export interface FaultRunMetrics {
  strategy: string
  counts: FaultCounts
  waitByTier: Record<Tier, Percentiles>
  phases: Array<{ name: string, counts: FaultCounts }>
}

export interface FaultMetrics {
  spec: FaultSpec
  run: FaultRunMetrics
  without?: FaultRunMetrics
  bound?: FaultRunMetrics
}

/** A fault spec names a strategy the report has no run of, or a phase it does not define. */
export class FaultSpecError extends Error {
  readonly code: 'UNKNOWN_STRATEGY' | 'UNKNOWN_PHASE' | 'BAD_PHASE'
  constructor (code: FaultSpecError['code'], message: string) {
    super(message)
    this.name = 'FaultSpecError'
    this.code = code
  }
}

/** GPU-hours a job's attempts ran without completing it (see the module's comment); `horizonMs` ends the run. */
export function lostGpuHours (outcome: JobOutcome, neededGpuHours: number, horizonMs: number): number {
  if (outcome.lostGpuHours !== undefined) return outcome.lostGpuHours
  if (outcome.status === 'completed') return Math.max(0, outcome.gpuHours - neededGpuHours)
  return outcome.endedAt >= horizonMs ? 0 : outcome.gpuHours
}

function counts (jobs: readonly JobOutcome[], needed: ReadonlyMap<string, number>, horizonMs: number): FaultCounts {
  let completed = 0
  let failed = 0
  let atHorizon = 0
  let unserved = 0
  let reauctioned = 0
  let attempts = 0
  let lost = 0
  for (const j of jobs) {
    if (j.status === 'completed') completed++
    else if (j.status === 'failed') {
      failed++
      if (j.endedAt >= horizonMs) atHorizon++
    } else unserved++
    if (j.attempts > 1) reauctioned++
    attempts += j.attempts
    lost += lostGpuHours(j, needed.get(j.job) ?? 0, horizonMs)
  }
  return { jobs: jobs.length, completed, failed, atHorizon, unserved, completion: jobs.length > 0 ? completed / jobs.length : null, reauctioned, attempts, lostGpuHours: lost }
}

function runMetrics (run: StrategyRun, spec: FaultSpec, needed: ReadonlyMap<string, number>, horizonMs: number): FaultRunMetrics {
  const waitByTier = {} as Record<Tier, Percentiles>
  for (const tier of TIERS) {
    const w: number[] = []
    for (const j of run.jobs) if (j.tier === tier && j.startedAt !== undefined) w.push(j.startedAt - j.submittedAt)
    waitByTier[tier] = percentiles(w)
  }
  const phases = (spec.phases ?? []).map((p) => ({ name: p.name, counts: counts(run.jobs.filter((j) => j.submittedAt >= p.fromMs && j.submittedAt < p.untilMs), needed, horizonMs) }))
  return { strategy: run.strategy, counts: counts(run.jobs, needed, horizonMs), waitByTier, phases }
}

/** The faults section's numbers for each spec, from the runs of the same workload. */
export function faultMetrics (workload: Workload, runs: readonly StrategyRun[], specs: readonly FaultSpec[]): FaultMetrics[] {
  const needed = new Map(workload.jobs.map((j) => [j.id, j.gpus * j.durationMs / HOUR_MS]))
  const find = (name: string, spec: FaultSpec): StrategyRun => {
    const r = runs.find((x) => x.strategy === name)
    if (r === undefined) throw new FaultSpecError('UNKNOWN_STRATEGY', `fault ${spec.name}: no strategy run named ${JSON.stringify(name)} (runs: ${runs.map((x) => x.strategy).join(', ')})`)
    return r
  }
  return specs.map((spec) => {
    for (const p of spec.phases ?? []) {
      if (!(Number.isFinite(p.fromMs) && Number.isFinite(p.untilMs) && p.fromMs <= p.untilMs)) throw new FaultSpecError('BAD_PHASE', `fault ${spec.name}: phase ${p.name} must be finite and end (${p.untilMs}) no earlier than it starts (${p.fromMs})`)
    }
    for (const e of spec.expect ?? []) {
      if (e.phase !== undefined && !(spec.phases ?? []).some((p) => p.name === e.phase)) throw new FaultSpecError('UNKNOWN_PHASE', `fault ${spec.name}: expectation on an unknown phase ${JSON.stringify(e.phase)}`)
    }
    const h = workload.horizonMs
    const m: FaultMetrics = { spec, run: runMetrics(find(spec.strategy, spec), spec, needed, h) }
    if (spec.without !== undefined) m.without = runMetrics(find(spec.without, spec), spec, needed, h)
    if (spec.bound !== undefined) m.bound = runMetrics(find(spec.bound, spec), spec, needed, h)
    return m
  })
}

const percent = (x: number | null): string => (x === null ? 'n/a' : `${(x * 100).toFixed(1)} %`)

function phaseCounts (r: FaultRunMetrics | undefined, phase: string | undefined): FaultCounts | undefined {
  if (r === undefined) return undefined
  return phase === undefined ? r.counts : r.phases.find((p) => p.name === phase)?.counts
}

/** The expectation's verdict and the sentence with its numbers. */
export function judgeFault (m: FaultMetrics, e: FaultExpectation): { verdict: 'supported' | 'not supported' | 'not measured', detail: string } {
  const where = e.phase === undefined ? '' : ` of the jobs submitted ${e.phase}`
  const got = phaseCounts(m.run, e.phase)
  if (got === undefined || got.completion === null) return { verdict: 'not measured', detail: `no jobs${where} under ${m.spec.strategy}` }
  const base = `${m.spec.strategy} completed ${percent(got.completion)}${where} (${got.completed} of ${got.jobs}) under ${m.spec.name}`
  if (e.relative === true) {
    const ref = phaseCounts(m.without, e.phase)
    if (ref === undefined || ref.completion === null || ref.completion === 0) return { verdict: 'not measured', detail: `${base}; no run without the fault to compare with` }
    const share = got.completion / ref.completion
    return {
      verdict: share >= e.minCompletion ? 'supported' : 'not supported',
      detail: `${base}, ${percent(share)} of the ${percent(ref.completion)} ${m.spec.without ?? ''} completed without it (supported: at least ${percent(e.minCompletion)})`
    }
  }
  return { verdict: got.completion >= e.minCompletion ? 'supported' : 'not supported', detail: `${base} (supported: at least ${percent(e.minCompletion)})` }
}

const ratio4 = (x: number | null): number | null => (x === null ? null : Math.round(x * 10_000) / 10_000)
const hours3 = (x: number): number => Math.round(x * 1_000) / 1_000 || 0
const wholeOrNull = (x: number | null): number | null => (x === null ? null : Math.round(x))

function countsJson (c: FaultCounts): Record<string, unknown> {
  return { jobs: c.jobs, completed: c.completed, failed: c.failed, atHorizon: c.atHorizon, unserved: c.unserved, completion: ratio4(c.completion), reauctioned: c.reauctioned, attempts: c.attempts, lostGpuHours: hours3(c.lostGpuHours) }
}

function runJson (role: string, r: FaultRunMetrics): Record<string, unknown> {
  const waitMs: Record<string, unknown> = {}
  for (const tier of TIERS) {
    const p = r.waitByTier[tier]
    waitMs[tier] = { n: p.n, p50: wholeOrNull(p.p50), p95: wholeOrNull(p.p95), p99: wholeOrNull(p.p99), max: wholeOrNull(p.max) }
  }
  return { role, strategy: r.strategy, ...countsJson(r.counts), waitMs, phases: r.phases.map((p) => ({ name: p.name, ...countsJson(p.counts) })) }
}

function roles (m: FaultMetrics): Array<[string, FaultRunMetrics]> {
  const out: Array<[string, FaultRunMetrics]> = [['fault', m.run]]
  if (m.without !== undefined) out.push(['without', m.without])
  if (m.bound !== undefined) out.push(['bound', m.bound])
  return out
}

/** report.json's `faults`: one entry per fault run, keys in a fixed order, numbers rounded like the rest. */
export function faultsJson (faults: readonly FaultMetrics[]): Array<Record<string, unknown>> {
  return faults.map((m) => ({
    name: m.spec.name,
    fault: m.spec.fault,
    phases: (m.spec.phases ?? []).map((p) => ({ name: p.name, fromMs: Math.round(p.fromMs), untilMs: Math.round(p.untilMs) })),
    runs: roles(m).map(([role, r]) => runJson(role, r))
  }))
}

const minutes = (ms: number | null): string => (ms === null ? '–' : (ms / 60_000).toFixed(1))
const waitCell = (p: Percentiles): string => (p.n === 0 ? '–' : `${minutes(p.p50)} / ${minutes(p.p95)} / ${minutes(p.p99)}`)
const ROLE_LABEL: Record<string, string> = { fault: 'under the fault', without: 'without it', bound: 'bound' }

/** report.md's faults section: per fault run, a table of its runs and one of its phases. */
export function faultsMarkdown (faults: readonly FaultMetrics[]): string[] {
  if (faults.length === 0) return []
  const lines: string[] = ['## Faults', '']
  lines.push('Completion = completed / jobs; failed (at horizon) = of the failed, those still running when the run ended; re-auctioned = jobs awarded more than once; lost GPU-h = GPU-hours run by attempts that ended without completing the job; waits in minutes (p50 / p95 / p99 of the jobs that started).', '')
  for (const m of faults) {
    lines.push(`### ${m.spec.name}`, '', `${m.spec.fault}`, '')
    lines.push('| run | strategy | jobs | completion | failed (at horizon) | unserved | re-auctioned | attempts | lost GPU-h | wait gold | wait silver | wait bronze |')
    lines.push('|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|')
    for (const [role, r] of roles(m)) {
      const c = r.counts
      lines.push(`| ${ROLE_LABEL[role] ?? role} | ${r.strategy} | ${c.jobs} | ${percent(c.completion)} | ${c.failed} (${c.atHorizon}) | ${c.unserved} | ${c.reauctioned} | ${c.attempts} | ${hours3(c.lostGpuHours).toFixed(3)} | ${waitCell(r.waitByTier.gold)} | ${waitCell(r.waitByTier.silver)} | ${waitCell(r.waitByTier.bronze)} |`)
    }
    const phases = m.spec.phases ?? []
    if (phases.length > 0) {
      lines.push('', 'By the time jobs were submitted:', '')
      lines.push('| phase | submitted in (h) | run | jobs | completion | failed (at horizon) | unserved | re-auctioned | lost GPU-h |')
      lines.push('|---|---|---|---:|---:|---:|---:|---:|---:|')
      for (const p of phases) {
        for (const [role, r] of roles(m)) {
          const c = r.phases.find((x) => x.name === p.name)?.counts
          if (c === undefined) continue
          lines.push(`| ${p.name} | ${(p.fromMs / HOUR_MS).toFixed(2)}–${(p.untilMs / HOUR_MS).toFixed(2)} | ${ROLE_LABEL[role] ?? role} (${r.strategy}) | ${c.jobs} | ${percent(c.completion)} | ${c.failed} (${c.atHorizon}) | ${c.unserved} | ${c.reauctioned} | ${hours3(c.lostGpuHours).toFixed(3)} |`)
        }
      }
    }
    lines.push('')
  }
  return lines
}
