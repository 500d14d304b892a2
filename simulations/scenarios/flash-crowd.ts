/**
 * `flash-crowd`: the market workload plus a burst of arrivals (issue 10) — FLASH_CROWD_BURST.factor × the
 * renters' arrival rate for FLASH_CROWD_BURST.durationMs, starting FLASH_CROWD_BURST.atShare of the way
 * into the renters' arrivals (the renters' `--jobs` spread over the market's 6-hour window first, so the
 * base rate is jobs / window and the burst grows with `--jobs`); the burst's jobs copy the shapes of the renters' own (a bootstrap, seeded)
 * and arrive by a Poisson process (workloads/synthetic.ts `flashCrowd`). gpumesh and the central
 * omniscient matcher run on the same workload; the report compares wait by tier for jobs submitted during
 * the burst and outside it, SLA misses and unserved jobs.
 */
import { Prng } from '../harness/prng.js'
import { central } from '../baselines/index.js'
import { drainMsFor, runMarket } from '../market/run-market.js'
import type { JobOutcome, SimJob, StrategyRun, Tier, Workload } from '../model.js'
import { percentiles, strategyMetrics, waits } from '../report/metrics.js'
import { round } from '../report/report.js'
import { TIERS } from '../baselines/fit.js'
import { fittedRatePerHour, flashCrowd, poissonArrivals, resampleJobs } from '../workloads/synthetic.js'
import { HOUR_MS } from '../../protocol/limits.js'
import { buildWorkload } from '../workloads/workload.js'
import { marketWorkload, measuredNetwork } from './market.js'
import { scenarioPrices } from './pricing.js'
import type { Scenario, ScenarioData, ScenarioOptions, ScenarioResult } from './scenario.js'
import { OVERLAY_ASSUMPTIONS, trafficRow, trafficSection } from './traffic.js'

/** 300 nodes, 100 renter jobs (and the burst's ≈ 50): see the README for what it takes here. At 600 × 200 (+ 98) it took 112 s of CPU. */
export const FLASH_CROWD_DEFAULTS = Object.freeze({ nodes: 300, jobs: 100 })
/** The burst: `factor` × the base rate for `durationMs`, from `atShare` of the base arrivals' span. */
export const FLASH_CROWD_BURST = Object.freeze({ factor: 10, durationMs: 20 * 60_000, atShare: 0.3 })

export interface BurstWindow { fromMs: number, untilMs: number, ratePerHour: number, jobs: number }

/**
 * The market workload with its renters' `--jobs` spread over the market's window (a Poisson process at
 * jobs / window, their shapes kept), so the burst's size follows `--jobs`; then the burst's jobs merged in
 * (ids `burst-…`). Returns where the burst lies.
 */
export function flashCrowdWorkload (data: ScenarioData, options: ScenarioOptions): { built: ReturnType<typeof marketWorkload>, burst: BurstWindow } {
  const base = marketWorkload(data, { ...options, nodes: options.nodes ?? FLASH_CROWD_DEFAULTS.nodes, jobs: options.jobs ?? FLASH_CROWD_DEFAULTS.jobs })
  const prng = new Prng(options.seed).fork('flash-crowd')
  const shaped = base.workload.jobs
  const first = shaped[0]?.submitAt ?? 0
  const baseRate = Math.max(shaped.length, 1) * HOUR_MS / base.workload.horizonMs
  const retimed = poissonArrivals(prng.fork('base-arrivals'), baseRate, { count: shaped.length, startMs: first })
  const jobs: SimJob[] = shaped.map((j, i) => ({ ...j, submitAt: retimed[i] as number }))
  const lastAt = jobs.at(-1)?.submitAt ?? 0
  const rate = jobs.length > 1 && lastAt > first ? fittedRatePerHour(jobs) : baseRate
  const fromMs = Math.round(first + FLASH_CROWD_BURST.atShare * (lastAt - first))
  const ratePerHour = FLASH_CROWD_BURST.factor * rate
  const times = flashCrowd(prng.fork('arrivals'), { atMs: fromMs, durationMs: FLASH_CROWD_BURST.durationMs, ratePerHour })
  const shapes = times.length === 0 ? [] : resampleJobs(prng.fork('shapes'), jobs, times.length, { idPrefix: 'burst-' })
  const burstJobs: SimJob[] = shapes.map((j, i) => ({ ...j, submitAt: times[i] as number, source: `flash-crowd:${j.source ?? ''}` }))
  const w = base.workload
  const all = [...jobs, ...burstJobs]
  const horizonMs = Math.max(w.horizonMs, ...all.map((j) => j.submitAt + 1))
  const built = buildWorkload({ name: `${w.name} + a flash crowd of ${burstJobs.length} jobs (${FLASH_CROWD_BURST.factor}× for ${FLASH_CROWD_BURST.durationMs / 60_000} min)`, fleet: w.fleet, ownerWork: w.ownerWork, jobs: all, horizonMs, dropped: base.summary.dropped, censored: base.summary.censored })
  built.workload.drainMs = drainMsFor(built.workload)
  return { built, burst: { fromMs, untilMs: fromMs + FLASH_CROWD_BURST.durationMs, ratePerHour: round(ratePerHour, 3) as number, jobs: burstJobs.length } }
}

interface WindowTier { jobs: number, started: number, unserved: number, slaMisses: number, waitMsP50: number | null, waitMsP95: number | null }

/** Wait, SLA misses and unserved by tier for the jobs submitted inside `[from, until)` or outside it. */
export function burstBreakdown (run: StrategyRun, burst: Pick<BurstWindow, 'fromMs' | 'untilMs'>): Record<'during' | 'outside', Record<Tier | 'all', WindowTier>> {
  const side = (inside: boolean): Record<Tier | 'all', WindowTier> => {
    const chosen = run.jobs.filter((j) => (j.submittedAt >= burst.fromMs && j.submittedAt < burst.untilMs) === inside)
    const of = (jobs: readonly JobOutcome[]): WindowTier => {
      const p = percentiles(waits(jobs))
      return { jobs: jobs.length, started: p.n, unserved: jobs.filter((j) => j.status === 'unserved').length, slaMisses: jobs.filter((j) => j.slaMiss).length, waitMsP50: round(p.p50, 0), waitMsP95: round(p.p95, 0) }
    }
    const out = { all: of(chosen) } as Record<Tier | 'all', WindowTier>
    for (const tier of TIERS) out[tier] = of(chosen.filter((j) => j.tier === tier))
    return out
  }
  return { during: side(true), outside: side(false) }
}

function breakdownTable (rows: Array<{ strategy: string, b: ReturnType<typeof burstBreakdown> }>): string {
  const min = (ms: number | null): string => (ms === null ? '–' : (ms / 60_000).toFixed(1))
  const lines = ['| strategy | submitted | tier | jobs | unserved | SLA misses | wait p50 / p95 min |', '|---|---|---|---:|---:|---:|---:|']
  for (const { strategy, b } of rows) {
    for (const when of ['during', 'outside'] as const) {
      for (const tier of [...TIERS, 'all'] as const) {
        const t = b[when][tier]
        if (t.jobs === 0) continue
        lines.push(`| ${strategy} | ${when} the burst | ${tier} | ${t.jobs} | ${t.unserved} | ${t.slaMisses} | ${min(t.waitMsP50)} / ${min(t.waitMsP95)} |`)
      }
    }
  }
  return `${lines.join('\n')}\n`
}

export const flashCrowdScenario: Scenario = {
  name: 'flash-crowd',
  summary: `the market workload plus ${FLASH_CROWD_BURST.factor}× the renters' arrival rate for ${FLASH_CROWD_BURST.durationMs / 60_000} min: wait by tier during and outside the burst, gpumesh against the central matcher`,
  defaults: FLASH_CROWD_DEFAULTS,
  run (data: ScenarioData, options: ScenarioOptions): ScenarioResult {
    options.onProgress?.('workload', 0, 1)
    const { built, burst } = flashCrowdWorkload(data, options)
    const workload: Workload = built.workload
    options.onProgress?.('workload', 1, 1)
    const prices = scenarioPrices(data.prices, workload.fleet, options.seed)
    const gpumesh = runMarket(workload, {
      seed: options.seed,
      ...(data.rtt !== undefined ? { network: measuredNetwork(data.rtt, workload) } : {}),
      mesh: true,
      discovery: true,
      floorOf: prices.floorOf,
      capOf: (job) => prices.capOf(job) ?? 0,
      ...(options.onProgress !== undefined ? { onProgress: (done: number, total: number) => options.onProgress?.('gpumesh', done, total), progressEvery: 50 } : {})
    })
    options.onProgress?.('baselines', 0, 1)
    const centralRun = central(workload, { listPrice: prices.listPrice, floorOf: prices.floorOf, capOf: prices.capOf })
    options.onProgress?.('baselines', 1, 1)
    const breakdown = [{ strategy: 'gpumesh', b: burstBreakdown(gpumesh.run, burst) }, { strategy: 'central', b: burstBreakdown(centralRun, burst) }]
    const traffic = trafficRow(workload.fleet.length, workload.jobs.length, gpumesh.stats, strategyMetrics(workload, gpumesh.run).timeToAward)
    return {
      scenario: 'flash-crowd',
      seed: options.seed,
      nodes: workload.fleet.length,
      jobs: workload.jobs.length,
      workload,
      summary: built.summary,
      runs: [gpumesh.run, centralRun],
      market: gpumesh.stats,
      listPrice: prices.listPrice,
      sections: [
        {
          key: 'flash-crowd',
          title: 'The flash crowd',
          json: { burst, byWindow: Object.fromEntries(breakdown.map((r) => [r.strategy, r.b])) },
          markdown: [
            `${burst.jobs} extra jobs arrived between ${(burst.fromMs / 60_000).toFixed(1)} and ${(burst.untilMs / 60_000).toFixed(1)} min (${burst.ratePerHour.toFixed(1)} jobs/h, ${FLASH_CROWD_BURST.factor}× the renters' rate). Wait, SLA misses and unserved jobs by when a job was submitted:`, '',
            breakdownTable(breakdown).trimEnd()
          ]
        },
        trafficSection(traffic)
      ],
      assumptions: [
        'Fleet, owners\' work, renters\' jobs, places and prices: as the market scenario.',
        `Renters: the market scenario's jobs (shapes from the trace) arriving by a Poisson process spread over its ${(workload.horizonMs / HOUR_MS).toFixed(1)}-hour window.`,
        `Burst: ${FLASH_CROWD_BURST.factor}× the renters' fitted arrival rate for ${FLASH_CROWD_BURST.durationMs / 60_000} min from ${FLASH_CROWD_BURST.atShare * 100} % of their arrival span, Poisson arrivals, shapes bootstrapped from the renters' jobs.`,
        ...OVERLAY_ASSUMPTIONS
      ]
    }
  }
}
