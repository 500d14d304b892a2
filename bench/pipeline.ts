/**
 * npm run bench:pipeline — what the market agents cost per job on one core, driven by the scenario
 * harness (simulations/harness/: the agents, their shells, a virtual clock and an in-memory bus; no
 * libp2p, no signatures). Prints numbers and their ratio to the targets (issue 9, "Speed"); it never
 * fails on a target.
 *
 * 1. One whole job lifecycle through both agents: one provider, one requester, jobs one after the
 *    other (bid, award, run, heartbeats, interval payments, receipt, outputs, final payment), for a
 *    1-minute and a 1-hour run; the difference says what the heartbeats and payments of a long run
 *    cost, per status message.
 * 2. The per-job pipeline with BENCH_PROVIDERS (1,000) providers on the job's topic: every provider's
 *    decision (most decline early: the jobs ask for a GPU model a fifth of the fleet has), damping,
 *    the award, the lifecycle; one job at a time. Target ≤ 1 ms per job. Also the share of the time
 *    spent inside the agents' `handle` (the rest is the harness: scheduler, bus, shells).
 * 3. Jobs per second of the loop with BENCH_PROVIDERS providers and BENCH_JOBS (10,000) jobs arriving
 *    every BENCH_ARRIVAL_MS (50 ms) of virtual time, many in flight at once. Target: 100,000 jobs in
 *    the simulator's 120 s, i.e. ≥ 833 jobs/s.
 *
 * Long runs: a 1-hour job sends ~363 statuses and 13 payments, each stepping both agents (the
 * provider's heartbeat deadline, the requester's lease), and they are most of its cost (part 1 prints
 * the share). Bulk stepping would leave the lifecycles' outcome unchanged on a loss-free link: between
 * two deadlines that are not heartbeats (a billing boundary, a payment due, the end of the run, a
 * preemption), a heartbeat only moves the provider's statusSeq/lastStatusAt and the requester's
 * lastSeq/lastHeartbeatAt. A pair of pure steps (provider: k beats to `until`; requester: the last of
 * them received) and an agent event carrying "heartbeats delivered until t" would let the simulator
 * jump deadline to deadline, counting the k messages instead of sending them, and fall back to
 * beat-by-beat stepping on links with loss or a crash scheduled.
 *
 * Where the pipeline's time goes (issue 9 "Speed", after the speed pass of 2026-12-01): a job is ten
 * gossip messages (the request, ~8 bids, the award) to 1,000 subscribers each, i.e. ~10,000 bus
 * deliveries, one network delay drawn per delivery (the seeded jitter: drawing fewer would change
 * every run's latencies), 1,000 job-seen decisions (800 decline at the model), ~200 damping
 * decisions and ~1,600 bids handed to providers still waiting to bid. Measured with --cpu-prof: the
 * bus's delivery loop and publish ~22 %, job-seen decisions ~15 % (an early decline through
 * `handle` is ~0.5 µs, was ~7 µs), damping wakes (and the 8 bids' publishing) ~17 %, the
 * requester ~7 %, GC ~13 %. What the pass
 * removed, each without changing a decision (harness snapshots with the trace, byte for byte, before
 * and after): allocation-free modelInFamily/regionWithin (13 % of the old profile), the job#round key
 * built only when something is pending, no deadline walk while the last wake is ahead, one-pass
 * damping (worse bids not screened), the bus's subscriber list kept between publishes, no lookups
 * at delivery while membership is unchanged, shells not called for kinds they drop (a provider's
 * shell takes bids only while its agent waits to bid: a live kinds Set), deliveries grouped by a
 * small-integer delay. What is left per job is mostly fixed by the model: 10,000 deliveries, each a
 * drawn delay at publish and a counted visit at delivery, and 1,000 job-seen decisions. What would
 * reach ≤ 1 ms: counting a group's deliveries in bulk and visiting only the subscribers that take
 * the kind (an index by kind, kept in delivery order), a jitter that is a pure function of
 * (message, receiver) so a delay is drawn only for those, and heartbeats in bulk (below); none is
 * done.
 *
 * Medians of BENCH_RUNS (5) runs in one process (the first run of each is a warm-up, not counted).
 * Env: BENCH_RUNS, BENCH_PROVIDERS, BENCH_JOBS, BENCH_ARRIVAL_MS, BENCH_PIPELINE_JOBS (100),
 * BENCH_LIFECYCLE_JOBS (200), BENCH_SEED (1), BENCH_ONLY (e.g. `loop`, or `lifecycle,pipeline`: the
 * parts to run; all by default).
 */
import { loadavg } from 'node:os'
import { performance } from 'node:perf_hooks'
import { ProviderAgent } from '../protocol/market/provider-agent.js'
import { RequesterAgent } from '../protocol/market/requester-agent.js'
import { modelSlug } from '../protocol/constants.js'
import { GPU_MODELS, Harness, credits, fixedNetwork, type GpuModel, type JobSpec } from '../simulations/harness/index.js'
import { printTable } from './stats.js'

const num = (name: string, fallback: number): number => {
  const v = Number(process.env[name] ?? fallback)
  return Number.isFinite(v) && v > 0 ? v : fallback
}
const RUNS = num('BENCH_RUNS', 5)
const PROVIDERS = num('BENCH_PROVIDERS', 1_000)
const JOBS = num('BENCH_JOBS', 10_000)
const ARRIVAL_MS = num('BENCH_ARRIVAL_MS', 50)
const PIPELINE_JOBS = num('BENCH_PIPELINE_JOBS', 100)
const LIFECYCLE_JOBS = num('BENCH_LIFECYCLE_JOBS', 200)
const SEED = num('BENCH_SEED', 1)
const ONLY = new Set((process.env.BENCH_ONLY ?? 'lifecycle,pipeline,loop').split(',').map((x) => x.trim()))

const PIPELINE_TARGET_US = 1_000
const JOBS_PER_SEC_TARGET = 100_000 / 120
const MIN = 60_000

/**
 * This process's CPU time (user + system), µs: on a shared machine wall time counts the other
 * processes' load; CPU time counts what the agents and the harness cost (one thread does the work).
 */
const cpuUs = (): number => { const u = process.cpuUsage(); return u.user + u.system }

const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b)
  const m = s.length >> 1
  return s.length % 2 === 1 ? s[m] as number : ((s[m - 1] as number) + (s[m] as number)) / 2
}
const fmt = (n: number, digits = 1): string => n.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits })

// ---------------------------------------------------------------------------------------------
// Time spent inside the agents (for the share; patched only in the runs that ask for it)
// ---------------------------------------------------------------------------------------------

const inside = { ns: 0, calls: 0 }
let timing = false
for (const proto of [ProviderAgent.prototype, RequesterAgent.prototype] as Array<{ handle: (e: never) => unknown }>) {
  const handle = proto.handle
  proto.handle = function (this: unknown, e: never) {
    if (!timing) return handle.call(this, e)
    const t = performance.now()
    try {
      return handle.call(this, e)
    } finally {
      inside.ns += (performance.now() - t) * 1e6
      inside.calls++
    }
  }
}

/** The cost of one pair of performance.now() calls, ns (subtracted from the agents' time). */
function timerCostNs (): number {
  const n = 200_000
  const t = performance.now()
  let sink = 0
  for (let i = 0; i < n; i++) sink += performance.now() - performance.now()
  return ((performance.now() - t) * 1e6) / n + (sink > 0 ? 0 : 0)
}

// ---------------------------------------------------------------------------------------------
// Fleets and jobs
// ---------------------------------------------------------------------------------------------

const MODELS: GpuModel[] = ['h100', 'a100', 'l40s', 'rtx4090', 't4']
const REGIONS = ['eu-west', 'eu-north', 'us-east', 'us-west', 'ap-south']

/** `n` providers: models round-robin (a fifth each), 1–8 GPUs, floors 1–4 credits, five regions. */
function fleet (h: Harness, n: number): void {
  const r = h.prng.fork('fleet')
  for (let i = 0; i < n; i++) {
    h.provider(`p${i}`, { region: REGIONS[i % REGIONS.length] as string, gpus: { [MODELS[i % MODELS.length] as GpuModel]: r.int(1, 8) }, floor: credits(1 + r.int(0, 30) / 10) })
  }
}

/** An H100 job anywhere (gossiped on `global`, where every provider listens): 4 of 5 providers decline at the model. */
const H100_JOB: JobSpec = { gpus: 1, models: [modelSlug(GPU_MODELS.h100.name)], maxPrice: credits(5), bidWindowMs: 2_000 }

// ---------------------------------------------------------------------------------------------
// 1. One job's lifecycle
// ---------------------------------------------------------------------------------------------

interface LifecycleRun { usPerJob: number, statusesPerJob: number, paymentsPerJob: number, settled: number }

function lifecycleRun (durationMs: number, jobs: number): LifecycleRun {
  const h = new Harness({ seed: SEED, trace: false, network: () => fixedNetwork(5) })
  h.provider('p', { region: 'eu-west', gpus: { h100: 1 }, floor: credits(2) })
  const buyer = h.requester('buyer', { region: 'eu-west' })
  const t = cpuUs()
  for (let i = 0; i < jobs; i++) {
    buyer.submit({ ...H100_JOB, maxRuntimeSec: Math.ceil(durationMs / 1000) + 60 }, { durationMs })
    h.runUntilQuiet()
  }
  const us = cpuUs() - t
  const settled = h.recorder.snapshot().jobs.filter((j) => j.status === 'settled').length
  return { usPerJob: us / jobs, statusesPerJob: h.recorder.count('job-status').count / jobs, paymentsPerJob: h.recorder.count('payment').count / jobs, settled }
}

// ---------------------------------------------------------------------------------------------
// 2. The pipeline, one job at a time, with a fleet on the topic
// ---------------------------------------------------------------------------------------------

interface PipelineRun { usPerJob: number, bidsPerJob: number, deliveriesPerJob: number, settled: number, agentShare: number, agentCallsPerJob: number }

function pipelineRun (jobs: number, measureShare: boolean): PipelineRun {
  const h = new Harness({ seed: SEED, trace: false })
  fleet(h, PROVIDERS)
  const buyer = h.requester('buyer', { region: 'eu-west' })
  h.runUntilQuiet()
  inside.ns = 0
  inside.calls = 0
  timing = measureShare
  const t = cpuUs()
  const wall = performance.now()
  for (let i = 0; i < jobs; i++) {
    buyer.submit(H100_JOB, { durationMs: MIN })
    h.runUntilQuiet()
  }
  const ns = (cpuUs() - t) * 1000
  const wallNs = (performance.now() - wall) * 1e6
  timing = false
  const delivered = Object.values(h.recorder.snapshot().delivered).reduce((n, c) => n + c.count, 0)
  const settled = h.recorder.snapshot().jobs.filter((j) => j.status === 'settled').length
  const agentNs = Math.max(0, inside.ns - inside.calls * timerCost)
  return {
    usPerJob: ns / 1000 / jobs,
    bidsPerJob: h.recorder.count('bid').count / jobs,
    deliveriesPerJob: delivered / jobs,
    settled,
    // the agents' time is wall time inside handle: compare it with the run's wall time
    agentShare: measureShare ? agentNs / wallNs : NaN,
    agentCallsPerJob: inside.calls / jobs
  }
}

// ---------------------------------------------------------------------------------------------
// 3. Jobs per second, many in flight
// ---------------------------------------------------------------------------------------------

interface LoopRun { jobsPerSec: number, seconds: number, settled: number, other: Record<string, number> }

function loopRun (jobs: number): LoopRun {
  const h = new Harness({ seed: SEED, trace: false })
  fleet(h, PROVIDERS)
  const buyers = REGIONS.map((region, i) => h.requester(`buyer${i}`, { region }))
  h.runUntilQuiet()
  const start = h.scheduler.now()
  const jobRng = h.prng.fork('jobs')
  for (let i = 0; i < jobs; i++) {
    h.at(start + i * ARRIVAL_MS, () => {
      const model = MODELS[jobRng.int(0, MODELS.length - 1)] as GpuModel
      const spec: JobSpec = { gpus: jobRng.int(1, 2), models: [modelSlug(GPU_MODELS[model].name)], maxPrice: credits(5), bidWindowMs: 2_000, tier: jobRng.pick(['gold', 'silver', 'bronze'] as const) }
      ;(buyers[i % buyers.length] as ReturnType<Harness['requester']>).submit(spec, { durationMs: jobRng.int(1, 10) * MIN })
    })
  }
  const t = cpuUs()
  h.runUntilQuiet()
  const seconds = (cpuUs() - t) / 1e6
  const endings: Record<string, number> = {}
  for (const j of h.recorder.snapshot().jobs) endings[j.status] = (endings[j.status] ?? 0) + 1
  const { settled = 0, ...other } = endings
  return { jobsPerSec: jobs / seconds, seconds, settled, other }
}

// ---------------------------------------------------------------------------------------------

const timerCost = timerCostNs()

function repeat<T> (label: string, n: number, run: () => T): T[] {
  run() // warm-up
  const out: T[] = []
  for (let i = 0; i < n; i++) out.push(run())
  process.stderr.write(`  ${label}: ${n} runs done\n`)
  return out
}

const load = (): string => loadavg().map((x) => x.toFixed(1)).join(' ')
console.log(`bench:pipeline — ${RUNS} runs each (after a warm-up), medians of CPU time (this process, user + system); Node ${process.version}; seed ${SEED}; load average ${load()}`)

if (ONLY.has('lifecycle')) {
const short = repeat('1-minute lifecycle', RUNS, () => lifecycleRun(MIN, LIFECYCLE_JOBS))
const long = repeat('1-hour lifecycle', RUNS, () => lifecycleRun(60 * MIN, Math.max(10, Math.floor(LIFECYCLE_JOBS / 10))))
const s = { us: median(short.map((r) => r.usPerJob)), statuses: median(short.map((r) => r.statusesPerJob)), payments: median(short.map((r) => r.paymentsPerJob)) }
const l = { us: median(long.map((r) => r.usPerJob)), statuses: median(long.map((r) => r.statusesPerJob)), payments: median(long.map((r) => r.paymentsPerJob)) }
const perMessage = (l.us - s.us) / Math.max(1, (l.statuses + l.payments) - (s.statuses + s.payments))
printTable('1. one job through both agents (1 provider, 1 requester)', ['µs/job', 'statuses', 'payments', 'settled'], [
  { label: '1-minute run', cells: [fmt(s.us), fmt(s.statuses), fmt(s.payments), `${short[0]?.settled}/${LIFECYCLE_JOBS}`] },
  { label: '1-hour run', cells: [fmt(l.us), fmt(l.statuses), fmt(l.payments), `${long[0]?.settled}/${Math.max(10, Math.floor(LIFECYCLE_JOBS / 10))}`] }
])
console.log(`  a status or payment of a long run costs ${fmt(perMessage, 2)} µs (both agents and the harness); the hour's ${fmt(l.statuses + l.payments - s.statuses - s.payments, 0)} extra messages are ${fmt(100 * (l.us - s.us) / l.us, 0)} % of the 1-hour job's cost`)

}

if (ONLY.has('pipeline')) {
const pipe = repeat('pipeline', RUNS, () => pipelineRun(PIPELINE_JOBS, false))
const share = pipelineRun(PIPELINE_JOBS, true)
const p = { us: median(pipe.map((r) => r.usPerJob)), bids: median(pipe.map((r) => r.bidsPerJob)), deliveries: median(pipe.map((r) => r.deliveriesPerJob)) }
printTable(`2. per-job pipeline, ${PROVIDERS} providers on the job's topic (one job at a time, ${PIPELINE_JOBS} jobs per run)`, ['µs/job', 'target', 'ratio', 'bids/job', 'deliveries/job', 'settled'], [
  { label: 'H100 job, 1-minute run', cells: [fmt(p.us), fmt(PIPELINE_TARGET_US, 0), `${fmt(p.us / PIPELINE_TARGET_US, 2)}×`, fmt(p.bids), fmt(p.deliveries, 0), `${pipe[0]?.settled}/${PIPELINE_JOBS}`] }
])
console.log(`  inside the agents' handle: ${fmt(100 * share.agentShare, 0)} % of the time (${fmt(share.agentCallsPerJob, 0)} calls per job, timer cost ${fmt(timerCost, 0)} ns per call subtracted); the rest is the harness (scheduler, bus, shells)`)

}

if (ONLY.has('loop')) {
const loops = repeat('jobs/s loop', Math.max(1, Math.min(RUNS, 3)), () => loopRun(JOBS))
const jps = median(loops.map((r) => r.jobsPerSec))
printTable(`3. agents-only loop: ${PROVIDERS} providers, ${JOBS} jobs arriving every ${ARRIVAL_MS} ms (virtual)`, ['jobs/s', 'target', 'ratio', 'CPU s', 'settled', 'other endings'], [
  { label: 'mixed models, tiers, 1–2 GPUs', cells: [fmt(jps, 0), fmt(JOBS_PER_SEC_TARGET, 0), `${fmt(jps / JOBS_PER_SEC_TARGET, 2)}×`, fmt(median(loops.map((r) => r.seconds)), 1), String(loops[0]?.settled), JSON.stringify(loops[0]?.other ?? {})] }
])
}
