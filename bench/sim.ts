/**
 * npm run bench:sim — what a simulation costs (issue 10, "Numbers"): wall time, CPU time and peak RSS of
 * the `market` scenario's workload run by each strategy, at growing sizes, each size in its own child
 * process (so peak RSS is that run's own). Target: 10,000 nodes × 100,000 jobs in ≤ 120 s and ≤ 4 GB on
 * this 2-core machine. It prints numbers and ratios and never fails on a target.
 *
 * The gpumesh strategy (the real agents on the harness) costs far more per job than the baselines (which
 * send no messages): each job's request and each of its bids reach every node, so its cost per job grows
 * with the fleet. It runs at two job counts per fleet size (BENCH_SIM_MARKET); the two give the run's fixed
 * part (the owners' holds and the agents' ticks over the horizon) and the marginal CPU per job, and the
 * table projects 10,000 and 100,000 jobs from them — labelled projected, never measured.
 *
 * Env: BENCH_SIM_SIZES (baselines, `nodes x jobs`, comma-separated; default
 * 1000x10000,10000x10000,10000x100000), BENCH_SIM_MARKET (gpumesh, two job counts per fleet size; default
 * 1000x100,1000x200,10000x10,10000x20), BENCH_SIM_REPEAT (runs of each gpumesh size, the median kept;
 * default 1), BENCH_SIM_STRATEGIES (default central,lowest-price,random,old-way), BENCH_SEED (1),
 * BENCH_SIM_DELIVERY (the bus's gossip delivery for gpumesh: default `sequential`, the scenarios' delivery;
 * `keyed-interested` hashes delays per message and receiver and visits only the receivers that may act,
 * harness/keyed-delivery.ts — measured slower today, README "Numbers", so not the default).
 */
import { execFileSync } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { central, lowestPrice, oldWay, randomAssignment } from '../simulations/baselines/index.js'
import type { Delivery } from '../simulations/harness/keyed-delivery.js'
import { runMarket } from '../simulations/market/run-market.js'
import { marketWorkload, measuredNetwork } from '../simulations/scenarios/market.js'
import { scenarioPrices } from '../simulations/scenarios/pricing.js'
import type { ScenarioData } from '../simulations/scenarios/scenario.js'
import { pct, printTable } from './stats.js'
import { fitPerJob, projectRun } from './sim-projection.js'

const TARGET_MS = 120_000
const TARGET_RSS = 4 * 1024 ** 3
const SEED = Number(process.env.BENCH_SEED ?? 1)
/** The bus's gossip delivery for the gpumesh strategy (harness/keyed-delivery.ts); `sequential` is what the scenarios run. */
const DELIVERY = (process.env.BENCH_SIM_DELIVERY ?? 'sequential') as Delivery

function data (): ScenarioData {
  const d = new URL('../../simulations/data/', import.meta.url)
  const text = (p: string): string => readFileSync(new URL(p, d), 'utf8')
  return {
    alibabaNodes: text('traces/alibaba-gpu-2023/openb_node_list_gpu_node.csv'),
    alibabaPods: text('traces/alibaba-gpu-2023/openb_pod_list_default.csv'),
    prices: text('prices/gpu_prices_snapshot.csv'),
    rtt: text('latency/ripe_atlas_country_rtt_stat.csv')
  }
}

interface ChildResult { strategy: string, nodes: number, jobs: number, buildMs: number, runMs: number, cpuMs: number, peakRss: number, completed: number }

/** In the child: build the workload, run one strategy, print the measurements as JSON. */
function child (strategy: string, nodes: number, jobs: number): void {
  const t0 = performance.now()
  const d = data()
  const { workload } = marketWorkload(d, { seed: SEED, nodes, jobs })
  const prices = scenarioPrices(d.prices, workload.fleet, SEED)
  const baseline = { listPrice: prices.listPrice, floorOf: prices.floorOf, capOf: prices.capOf }
  const t1 = performance.now()
  const cpu0 = process.cpuUsage()
  const run = strategy === 'gpumesh'
    ? runMarket(workload, { seed: SEED, floorOf: prices.floorOf, capOf: (j) => prices.capOf(j) ?? 0, network: measuredNetwork(d.rtt as string, workload), delivery: DELIVERY }).run
    : strategy === 'central'
      ? central(workload, baseline)
      : strategy === 'lowest-price'
        ? lowestPrice(workload, baseline)
        : strategy === 'random'
          ? randomAssignment(workload, { ...baseline, seed: SEED })
          : oldWay(workload, baseline)
  const cpu = process.cpuUsage(cpu0)
  const result: ChildResult = {
    strategy,
    nodes: workload.fleet.length,
    jobs: workload.jobs.length,
    buildMs: Math.round(t1 - t0),
    runMs: Math.round(performance.now() - t1),
    cpuMs: Math.round((cpu.user + cpu.system) / 1000),
    peakRss: process.resourceUsage().maxRSS * 1024,
    completed: run.jobs.filter((j) => j.status === 'completed').length
  }
  process.stdout.write(`${JSON.stringify(result)}\n`)
}

function sizes (env: string | undefined, fallback: string): Array<[number, number]> {
  return (env ?? fallback).split(',').map((s) => s.trim().split('x').map(Number) as [number, number])
}

function measure (strategy: string, nodes: number, jobs: number): ChildResult | string {
  const self = fileURLToPath(import.meta.url)
  const polyfill = fileURLToPath(new URL('../node/polyfill.js', import.meta.url))
  try {
    const out = execFileSync(process.execPath, ['--max-old-space-size=6144', '--import', polyfill, self, 'child', strategy, String(nodes), String(jobs)], { encoding: 'utf8', maxBuffer: 1 << 20, timeout: 1_800_000 })
    return JSON.parse(out.trim().split('\n').at(-1) as string) as ChildResult
  } catch (err) {
    return `failed: ${(err as Error).message.split('\n')[0] ?? ''}`
  }
}

const mib = (bytes: number): string => `${Math.round(bytes / 1_048_576)} MiB`
const secs = (ms: number): string => `${(ms / 1000).toFixed(1)}`
const perJob = (ms: number): string => ms < 1 ? `${(ms * 1000).toFixed(0)} µs` : `${ms.toFixed(1)} ms`
const ratio = (ms: number, rss: number): string => `${(ms / TARGET_MS).toFixed(2)}× / ${(rss / TARGET_RSS).toFixed(2)}×`

/** `n` runs of one size; the median of each measure (by CPU time for the run kept whole). */
function repeated (strategy: string, nodes: number, jobs: number, n: number): ChildResult | string {
  const runs: ChildResult[] = []
  for (let i = 0; i < n; i++) {
    const r = measure(strategy, nodes, jobs)
    if (typeof r === 'string') return r
    runs.push(r)
  }
  const first = runs[0] as ChildResult
  return { ...first, buildMs: pct(runs.map((r) => r.buildMs), 50), runMs: pct(runs.map((r) => r.runMs), 50), cpuMs: pct(runs.map((r) => r.cpuMs), 50), peakRss: pct(runs.map((r) => r.peakRss), 50) }
}

function main (): void {
  const strategies = (process.env.BENCH_SIM_STRATEGIES ?? 'central,lowest-price,random,old-way').split(',').map((s) => s.trim())
  const repeat = Math.max(1, Number(process.env.BENCH_SIM_REPEAT ?? 1))
  const rows: string[][] = []
  const measured: ChildResult[] = []
  const row = (r: ChildResult | string, strategy: string, nodes: number, jobs: number): void => {
    if (typeof r === 'string') { rows.push([strategy, `${nodes} × ${jobs}`, r, '', '', '', '', '']); return }
    measured.push(r)
    rows.push([r.strategy, `${r.nodes} × ${r.jobs}`, secs(r.buildMs), secs(r.runMs), secs(r.cpuMs), mib(r.peakRss), perJob(r.runMs / Math.max(1, r.jobs)), ratio(r.buildMs + r.runMs, r.peakRss)])
    process.stderr.write(`${r.strategy} ${r.nodes}×${r.jobs}: ${secs(r.runMs)} s, ${mib(r.peakRss)}, ${r.completed} completed\n`)
  }
  for (const [nodes, jobs] of sizes(process.env.BENCH_SIM_MARKET, '1000x100,1000x200,10000x10,10000x20')) row(repeated('gpumesh', nodes, jobs, repeat), 'gpumesh', nodes, jobs)
  for (const [nodes, jobs] of sizes(process.env.BENCH_SIM_SIZES, '1000x10000,10000x10000,10000x100000')) {
    for (const s of strategies) row(measure(s, nodes, jobs), s, nodes, jobs)
  }
  printTable(`bench:sim — the market scenario's workload per strategy, measured (each size in its own process${repeat > 1 ? `, gpumesh the median of ${repeat}` : ''}; gpumesh on the ${DELIVERY} delivery)`,
    ['nodes × jobs', 'build s', 'run s', 'CPU s', 'peak RSS', 'run per job', 'vs target (time / RSS)'], rows.map((r) => ({ label: r[0] as string, cells: r.slice(1) })))

  // gpumesh: the fixed part and the marginal cost per job at each fleet size, and what they project
  const projected: string[][] = []
  const gpumesh = measured.filter((r) => r.strategy === 'gpumesh')
  for (const nodes of [...new Set(gpumesh.map((r) => r.nodes))]) {
    const fit = fitPerJob(gpumesh.filter((r) => r.nodes === nodes).map((r) => ({ jobs: r.jobs, cpuMs: r.cpuMs, peakRss: r.peakRss })))
    if (fit === undefined) continue
    for (const jobs of [10_000, 100_000]) {
      const p = projectRun(fit, jobs)
      projected.push([`${nodes} × ${jobs}`, `${(fit.fixedCpuMs / 1000).toFixed(1)} s`, perJob(fit.cpuMsPerJob), `${(fit.rssPerJob / 1024).toFixed(0)} KiB`, `${(p.cpuMs / 1000).toFixed(0)} s`, mib(p.peakRss), ratio(p.cpuMs, p.peakRss)])
    }
  }
  if (projected.length > 0) {
    printTable('bench:sim — gpumesh PROJECTED from the two job counts at each fleet size (fixed part + marginal CPU per job × jobs; not measured)',
      ['fixed CPU', 'CPU per job', 'RSS per job', 'projected CPU', 'projected RSS', 'vs target (time / RSS)'], projected.map((r) => ({ label: r[0] as string, cells: r.slice(1) })))
  }
  process.stdout.write(`target: 10,000 nodes × 100,000 jobs in ≤ ${TARGET_MS / 1000} s and ≤ ${TARGET_RSS / 1024 ** 3} GB (peak RSS is the child's own; the simulation is single-threaded, so its wall time is its CPU time on an idle core)\n`)
}

if (process.argv[2] === 'child') child(process.argv[3] as string, Number(process.argv[4]), Number(process.argv[5]))
else main()
