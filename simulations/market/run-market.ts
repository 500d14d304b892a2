/**
 * The gpumesh strategy: a workload run through the real market agents on the scenario harness. Each
 * fleet node is a provider (its capability ad from the node's GPUs and its owner's price floor, its
 * owner's own work fed to its agent as holds, a look-ahead at a time); renters are requester nodes,
 * one per region the jobs ask for; each job is submitted at its time as a job request and runs, once
 * awarded, for its duration. The outcome of every job and every node is read back from the recorder
 * (awards, run starts, both ledgers, endings) — nothing here decides anything the agents decide.
 */
import type { MarketParamsInit } from '../../protocol/market/params.js'
import type { OwnerHold } from '../../protocol/market/provider-agent-types.js'
import { HOUR_MS } from '../../protocol/limits.js'
import { Harness, DEFAULT_START } from '../harness/harness.js'
import type { LedgerMismatch } from '../harness/recorder.js'
import type { NetworkModel } from '../harness/network.js'
import type { Traffic } from '../harness/bus.js'
import type { Prng, Seed } from '../harness/prng.js'
import type { ProviderNode } from '../harness/provider-node.js'
import type { RequesterNode } from '../harness/requester-node.js'
import type { FleetNode, JobOutcome, JobStatus, NodeOutcome, SimJob, StrategyRun, Workload } from '../model.js'
import { DEFAULT_START_DELAY_SEC, jobSpecOf } from './job-spec.js'
import { holdsWithin, ownerHolds } from './owner-holds.js'

/**
 * Market parameters for simulated runs: a 10-minute lease (a heartbeat every 200 s) and hourly
 * billing, so a job of days costs hundreds of messages, not tens of thousands. The daemon's defaults
 * (30 s, 5 min) are for interactive jobs; a scenario can pass them (`params`) to measure that cost.
 */
export const SIM_MARKET_PARAMS: Readonly<MarketParamsInit> = Object.freeze({ leaseMs: 600_000, billingIntervalSec: 3_600 })

export interface MarketRunOptions {
  seed?: Seed
  /** The epoch of t = 0 (DEFAULT_START: a Monday 00:00 UTC). */
  start?: number
  params?: MarketParamsInit
  /** The price floor of a node's owner, micros per GPU-hour. */
  floorOf: (node: FleetNode) => number
  /** A job's price cap when it names none (the renter's list price), micros per GPU-hour. */
  capOf: (job: SimJob) => number
  /** The list price the report compares with, micros per GPU-hour (capOf by default). */
  listPriceOf?: (job: SimJob) => number
  startDelaySec?: Partial<Record<SimJob['tier'], number>>
  bidWindowMs?: number
  network?: (prng: Prng) => NetworkModel
  /** Owner holds are fed to each agent this far ahead (default: the longest job's runtime + start delay + 1 h). */
  holdLookaheadMs?: number
  /** Nodes that win and vanish (no-shows): they take the award's stream and never answer. */
  noShows?: ReadonlySet<string>
  /** Bid damping (default on). */
  damping?: boolean
  /** Called every `progressEvery` submitted jobs with (submitted, total). */
  onProgress?: (done: number, total: number) => void
  progressEvery?: number
  /** A second observer of the bus's traffic (HarnessOptions.tap). */
  tap?: Traffic
}

/** What the market run measured beyond the outcomes: totals of the protocol's traffic. */
export interface MarketRunStats {
  messages: number
  bytes: number
  /** Messages by kind (sent). */
  byKind: Record<string, { count: number, bytes: number }>
  /** Bids sent per job (mean over jobs). */
  bidsPerJob: number
  /** Awards whose two ledgers disagree once both ended (should be 0). */
  ledgerMismatches: number
  /** Awards still running on either side when the horizon cut the run (not a disagreement). */
  openAtHorizon: number
  /** Scheduler events run. */
  events: number
}

export interface MarketRun { run: StrategyRun, stats: MarketRunStats, harness: Harness }

/** Run the gpumesh market on `workload` until its horizon. */
export function runMarket (workload: Workload, options: MarketRunOptions): MarketRun {
  const start = options.start ?? DEFAULT_START
  const h = new Harness({
    seed: options.seed ?? 1,
    start,
    params: { ...SIM_MARKET_PARAMS, ...options.params },
    ...(options.network !== undefined ? { network: options.network } : {}),
    trace: false,
    perJob: true,
    ...(options.tap !== undefined ? { tap: options.tap } : {})
  })
  const delays = { ...DEFAULT_START_DELAY_SEC, ...options.startDelaySec }
  const bidWindowMs = options.bidWindowMs ?? 2_000
  const rules = { capOf: options.capOf, startDelaySec: delays, bidWindowMs }

  // providers, with their owners' work as holds fed a look-ahead at a time
  const holds = ownerHolds(workload.fleet, workload.ownerWork)
  const longest = workload.jobs.reduce((m, j) => Math.max(m, j.durationMs), 0)
  const lookahead = options.holdLookaheadMs ?? Math.ceil(longest * 1.1) + Math.max(...Object.values(delays)) * 1000 + HOUR_MS
  const providers = new Map<string, ProviderNode>()
  for (const node of workload.fleet) {
    const p = h.provider(node.id, {
      region: node.region,
      country: node.country,
      gpus: {},
      hardware: [{ name: node.gpuName, vramMiB: node.vramMiB, count: node.gpus }],
      floor: options.floorOf(node),
      ...(options.damping === false ? { damping: false } : {}),
      ...(options.noShows?.has(node.id) === true ? { behaviour: { noShow: true } } : {})
    })
    providers.set(node.id, p)
    const mine = (holds.get(node.id) ?? []).map((x): OwnerHold => ({ ...x, from: start + x.from, until: start + x.until }))
    if (mine.length > 0) feedHolds(h, p, mine, start, start + workload.horizonMs, Math.max(HOUR_MS, Math.floor(lookahead / 2)), lookahead)
  }

  // renters: one requester per region asked for ('global' for jobs without one)
  const renters = new Map<string, RequesterNode>()
  const renterFor = (job: SimJob): RequesterNode => {
    const key = job.region ?? 'global'
    let r = renters.get(key)
    if (r === undefined) {
      r = h.requester(`renter-${key}`, { region: job.region ?? workload.fleet[0]?.region ?? 'global' })
      renters.set(key, r)
    }
    return r
  }
  const ids = new Map<string, SimJob>()
  const every = options.progressEvery ?? 1_000
  let submitted = 0
  for (const job of workload.jobs) {
    if (job.submitAt >= workload.horizonMs) continue
    const renter = renterFor(job)
    h.at(start + job.submitAt, () => {
      const id = renter.submit(jobSpecOf(job, rules), { durationMs: job.durationMs, exitCode: 0, outputBytes: 1_000_000, inputBytes: 0 })
      ids.set(id, job)
      submitted++
      if (options.onProgress !== undefined && submitted % every === 0) options.onProgress(submitted, workload.jobs.length)
    })
  }
  let events = 0
  const end = start + workload.horizonMs
  for (let next = h.scheduler.next(); next !== undefined && next <= end; next = h.scheduler.next()) {
    h.scheduler.step()
    events++
  }
  options.onProgress?.(submitted, workload.jobs.length)
  const run = outcomes(h, workload, ids, start, options.listPriceOf ?? options.capOf)
  return { run, stats: stats(h, ids.size, events), harness: h }
}

/** Feed `p` the holds overlapping [t, t + lookahead) at t = from, from + every, … until `until`. */
function feedHolds (h: Harness, p: ProviderNode, holds: OwnerHold[], from: number, until: number, every: number, lookahead: number): void {
  const feed = (t: number): void => {
    p.setHolds(holdsWithin(holds, t, t + lookahead))
    if (t + every < until) h.at(t + every, () => { feed(t + every) })
  }
  feed(from)
}

const MS_PER_HOUR = 3_600_000

function outcomes (h: Harness, workload: Workload, ids: Map<string, SimJob>, start: number, listPriceOf: (job: SimJob) => number): StrategyRun {
  const r = h.recorder
  const awardsByJob = new Map<string, typeof r.awards>()
  for (const a of r.awards) {
    const list = awardsByJob.get(a.job)
    if (list === undefined) awardsByJob.set(a.job, [a])
    else list.push(a)
  }
  const startsByJob = new Map<string, number>()
  for (const s of r.starts) startsByJob.set(s.job, s.at)
  const preemptionsByJob = new Map<string, number>()
  for (const o of r.offers) if (o.status === 'preempted') preemptionsByJob.set(o.job, (preemptionsByJob.get(o.job) ?? 0) + 1)
  const ownerMs = new Map<string, number>()
  for (const w of workload.ownerWork) ownerMs.set(w.node, (ownerMs.get(w.node) ?? 0) + w.gpus * Math.max(0, Math.min(w.end, workload.horizonMs) - Math.max(w.start, 0)))
  const sold = new Map<string, { hours: number, revenue: number }>()
  const jobs: JobOutcome[] = []
  const byId = new Map<string, string>()
  for (const [id, job] of ids) byId.set(job.id, id)
  const horizon = start + workload.horizonMs
  for (const job of workload.jobs) {
    const id = byId.get(job.id)
    const awards = id === undefined ? [] : awardsByJob.get(id) ?? []
    let paid = 0
    let hours = 0
    for (const a of awards) {
      const line = r.ledgerOf(a.requester, a.award)
      const cumulative = line?.cumulative ?? 0
      paid += cumulative
      const gpuHours = a.price > 0 ? cumulative / a.price : 0
      hours += gpuHours
      const node = a.provider.slice('peer:'.length)
      const s = sold.get(node) ?? { hours: 0, revenue: 0 }
      s.hours += gpuHours
      s.revenue += cumulative
      sold.set(node, s)
    }
    const ending = id === undefined ? undefined : r.jobEnding(id)
    const last = awards.at(-1)
    const startedAt = id === undefined ? undefined : startsByJob.get(id)
    const status: JobStatus = ending?.status === 'settled' ? 'completed' : awards.length === 0 ? 'unserved' : 'failed'
    const delayMs = jobSpecDelay(h, id)
    const started = startedAt === undefined ? undefined : startedAt - start
    const slaMiss = job.tier !== 'bronze' && (status !== 'completed' || started === undefined || started - job.submitAt > delayMs)
    const traffic = id === undefined ? { count: 0, bytes: 0 } : r.jobTraffic(id)
    jobs.push({
      job: job.id,
      tier: job.tier,
      gpus: job.gpus,
      status,
      ...(last !== undefined ? { node: last.provider.slice('peer:'.length), awardedAt: last.at - start } : {}),
      submittedAt: job.submitAt,
      ...(started !== undefined ? { startedAt: started } : {}),
      endedAt: (ending?.at ?? horizon) - start,
      gpuHours: hours,
      paid,
      listCost: Math.round(hours * listPriceOf(job)),
      preemptions: id === undefined ? 0 : preemptionsByJob.get(id) ?? 0,
      attempts: awards.length,
      slaMiss,
      messages: traffic.count,
      bytes: traffic.bytes
    })
  }
  const nodes: NodeOutcome[] = workload.fleet.map((n) => {
    const owner = (ownerMs.get(n.id) ?? 0) / MS_PER_HOUR
    const s = sold.get(n.id) ?? { hours: 0, revenue: 0 }
    return { node: n.id, offeredGpuHours: n.gpus * workload.horizonMs / MS_PER_HOUR - owner, soldGpuHours: s.hours, ownerGpuHours: owner, revenue: s.revenue }
  })
  return { strategy: 'gpumesh', jobs, nodes }
}

/** The job's start delay as its request says, ms (0 when it was never submitted). */
function jobSpecDelay (h: Harness, id: string | undefined): number {
  if (id === undefined) return 0
  const request = h.world.jobs.get(id)
  return (request?.payload.sla.maxStartDelaySec ?? 0) * 1000
}

/** A disagreement only because the award was still running on a side when the run stopped. */
const open = (m: LedgerMismatch): boolean => m.requester?.state === 'open' || m.provider?.state === 'open'

function stats (h: Harness, jobs: number, events: number): MarketRunStats {
  const snap = h.recorder.snapshot()
  const mismatches = h.ledgerMismatches()
  let messages = 0
  let bytes = 0
  for (const [kind, c] of Object.entries(snap.sent)) {
    if (kind.endsWith('-blob')) continue
    messages += c.count
    bytes += c.bytes
  }
  return {
    messages,
    bytes,
    byKind: snap.sent,
    bidsPerJob: jobs === 0 ? 0 : (snap.sent.bid?.count ?? 0) / jobs,
    ledgerMismatches: mismatches.filter((m) => !open(m)).length,
    openAtHorizon: mismatches.filter(open).length,
    events
  }
}
