/**
 * npm run bench:core — the market's pure decisions, µs per call on one core (everything here is
 * synchronous, one event loop): `decideBid` on the common path, an early decline, a calendar with a
 * time zone and peak pricing, and a bid that needs preemption; damping (`shouldStaySilent` with 5 and
 * 64 seen bids); `decideAward` with 10 bids.
 *
 * Each line is the median of BENCH_RUNS runs of about BENCH_MS ms each, in this process, after a
 * warm-up; the min and max of the runs are printed beside it. Where issue 9 sets a target the line
 * prints it and the ratio median / target (≤ 1 meets it); lines without a target print `—`. Benchmarks
 * print numbers; they never fail on a target.
 *
 * The instants move: each call's `now` steps 61 s further through a week (10,080 steps), so calendar
 * caches see a week of distinct instants, as a provider or the simulator does, rather than one.
 *
 * Env: BENCH_MS=300 (one run), BENCH_RUNS=7.
 */
import '../node/polyfill.js'
import { cpus } from 'node:os'
import { Identity, cidOfValue } from '../crypto/index.js'
import { jobIdOf, sealMessage, type Bid, type CapabilityAd, type GpuInfo, type JobRequest } from '../protocol/index.js'
import { decideAward, type AuctionBid, type AuctionJob } from '../protocol/market/award.js'
import { decideBid } from '../protocol/market/bid-policy.js'
import { shouldStaySilent } from '../protocol/market/damping.js'
import type { Allocation, ProviderState } from '../protocol/market/types.js'
import { printTable, type Row } from './stats.js'

const RUN_MS = Number(process.env.BENCH_MS ?? 300)
const RUNS = Math.max(1, Number(process.env.BENCH_RUNS ?? 7))

const M = 60_000
const H = 60 * M
/** Monday 2024-01-08 10:00Z. */
const T0 = Date.UTC(2024, 0, 8, 10)
const STEP_MS = 61_000
const STEPS = 10_080
const nowAt = (i: number): number => T0 + (i % STEPS) * STEP_MS

/** µs-per-call targets from issue 9 ("Speed"). */
const TARGET_COMMON_US = 5
const TARGET_EARLY_US = 1

// ---------------------------------------------------------------------------------------------
// Fixtures: a 4 × H100 provider and a 2-GPU job, as in the bid-policy tests
// ---------------------------------------------------------------------------------------------

const H100 = 'nvidia-h100-80gb-hbm3'
const ALWAYS = [1, 2, 3, 4, 5, 6, 7].map((day) => ({ day, start: 0, end: 1440 }))

function gpu (index: number): GpuInfo {
  return { index, uuid: `GPU-${index}`, name: H100, model: H100, vramMiB: 81_559, provenance: 'declared' }
}

function makeAd (over: Partial<CapabilityAd> = {}): CapabilityAd {
  return {
    v: 1, issuedAt: T0 - H, expiresAt: T0 + 30 * 24 * H, seq: 1,
    gpus: [0, 1, 2, 3].map(gpu),
    host: { cpuCores: 64, memoryMiB: 512_000, diskGiB: 2000 },
    region: 'eu-west',
    price: { floor: 2_000_000 },
    availability: { timeZone: 'UTC', windows: ALWAYS },
    workloads: ['process', 'docker'],
    limits: { maxTempC: 85, maxPowerW: 2000 },
    attestations: [],
    addrs: [],
    ...over
  }
}

function makeJob (over: { executor?: JobRequest['workload']['executor'], minVramGB?: number, tier?: JobRequest['sla']['tier'], gpus?: number } = {}): JobRequest {
  return {
    v: 1, issuedAt: T0 - M, expiresAt: T0 + 30 * 24 * H,
    nonce: new Uint8Array(16).fill(3),
    workload: { executor: over.executor ?? 'process', argv: ['train'], env: {}, inputs: [], outputs: [], maxRuntimeSec: 7200, network: false },
    resources: { gpus: over.gpus ?? 2, minVramGB: over.minVramGB ?? 40, models: [], cpuCores: 4, memoryMiB: 16_000, diskMiB: 10_000 },
    sla: { tier: over.tier ?? 'silver', maxPrice: 3_000_000, maxStartDelaySec: 600 },
    placement: { regions: ['eu'], residency: 'strict' },
    verification: { mode: 'none' },
    auction: { bidWindowMs: 5000, paymentRule: 'first-price' }
  }
}

/** Evenings, nights and weekends in Berlin, peak-priced 18:00–22:00 on weekdays. */
const berlinAd = makeAd({
  availability: {
    timeZone: 'Europe/Berlin',
    windows: [
      ...[1, 2, 3, 4, 5].flatMap((day) => [{ day, start: 0, end: 8 * 60 }, { day, start: 18 * 60, end: 1440 }]),
      { day: 6, start: 0, end: 1440 }, { day: 7, start: 0, end: 1440 }
    ]
  },
  price: { floor: 1_500_000, peak: { price: 2_800_000, windows: [1, 2, 3, 4, 5].map((day) => ({ day, start: 18 * 60, end: 22 * 60 })) } }
})

/** Every GPU held by bronze work for the next day: a gold job must preempt. */
function bronzeAllocations (now: number): Allocation[] {
  return [
    { job: 'bronze-a', tier: 'bronze', gpus: ['GPU-0', 'GPU-1'], price: 1_000_000, startedAt: now - H, endsAt: now + 24 * H },
    { job: 'bronze-b', tier: 'bronze', gpus: ['GPU-2'], price: 900_000, startedAt: now - H, endsAt: now + 24 * H },
    { job: 'bronze-c', tier: 'bronze', gpus: ['GPU-3'], price: 1_100_000, startedAt: now - H, endsAt: now + 24 * H }
  ]
}

const common: ProviderState = { ad: makeAd(), allocations: [] }
const job = makeJob()
const dockerOnly: ProviderState = { ad: makeAd({ workloads: ['docker'] }), allocations: [] }
const bigVramJob = makeJob({ minVramGB: 141 })
const berlin: ProviderState = { ad: berlinAd, allocations: [] }
const goldJob = makeJob({ tier: 'gold' })
const preempting: ProviderState = { ad: makeAd(), allocations: bronzeAllocations(T0 + (STEPS - 1) * STEP_MS) }
// the allocations run from before the first instant to a day after the last
for (const a of preempting.allocations as Allocation[]) a.startedAt = T0 - H

// ---------------------------------------------------------------------------------------------
// Auction fixtures: real signed bids, opened values as the requester sees them
// ---------------------------------------------------------------------------------------------

const identities = Array.from({ length: 64 }, (_, i) => new Identity(new Uint8Array(32).fill(10 + i)))
const auctionPayload: JobRequest = { ...makeJob({ gpus: 1 }), issuedAt: T0, expiresAt: T0 + H }
auctionPayload.placement = { regions: ['eu'], residency: 'prefer' }
auctionPayload.auction = { bidWindowMs: 500, paymentRule: 'second-score' }
const auctionJob: AuctionJob = { cid: jobIdOf(auctionPayload), payload: auctionPayload }

function auctionBid (i: number): AuctionBid {
  const identity = identities[i] as Identity
  const payload: Bid = {
    v: 1, issuedAt: T0, expiresAt: T0 + 60_000, job: auctionJob.cid, provider: identity.peerId,
    price: 1_500_000 + 10_000 * i, gpus: [`GPU-${i}`], model: H100, vramMiB: 81_559, region: 'eu-west',
    startBy: T0 + 30_000, ad: cidOfValue({ ad: i }).cid
  }
  const sealed = sealMessage(identity, 'bid', payload)
  return { cid: sealed.cid, signer: identity.peerId, payload: sealed.payload }
}

const bids = identities.map((_, i) => auctionBid(i))
const reliability = new Map(identities.map((id, i) => [id.peerId, 0.5 + (i % 5) / 10]))
const rtt = new Map(identities.map((id, i) => [id.peerId, 20 + i]))
const decidedAt = T0 + 1_000

// ---------------------------------------------------------------------------------------------
// Measurement
// ---------------------------------------------------------------------------------------------

/** Defeats dead-code elimination: every result feeds it. */
let sink = 0

/** µs per call of one run of about `ms` ms (the clock is read every 64 calls). */
function runOnce (fn: (i: number) => unknown, ms: number, offset: number): number {
  const start = performance.now()
  let calls = 0
  while (true) {
    for (let k = 0; k < 64; k++) if (fn(offset + calls++) !== undefined) sink++
    if (performance.now() - start >= ms) break
  }
  return (performance.now() - start) * 1000 / calls
}

interface Line { name: string, targetUs?: number, fn: (i: number) => unknown }

function median (values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b)
  const mid = Math.floor(sorted.length / 2)
  return sorted.length % 2 === 1 ? sorted[mid] as number : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2
}

const us = (v: number): string => v < 10 ? v.toFixed(3) : v.toFixed(1)

function measureLine (line: Line): Row {
  runOnce(line.fn, Math.min(200, RUN_MS), 0)
  const runs: number[] = []
  for (let r = 0; r < RUNS; r++) runs.push(runOnce(line.fn, RUN_MS, r * 7919))
  const m = median(runs)
  const target = line.targetUs
  return {
    label: line.name,
    cells: [us(m), us(Math.min(...runs)), us(Math.max(...runs)), target === undefined ? '—' : us(target), target === undefined ? '—' : (m / target).toFixed(2)]
  }
}

function expectKind (decision: { kind: string }, kind: string, what: string): void {
  if (decision.kind !== kind) throw new Error(`bench fixture broken: ${what} gave ${JSON.stringify(decision)}`)
}

// every fixture must take the path its line names, or the numbers mean nothing
expectKind(decideBid(job, common, T0), 'bid', 'common path')
expectKind(decideBid(job, dockerOnly, T0), 'decline', 'wrong executor')
expectKind(decideBid(bigVramJob, common, T0), 'decline', 'too little VRAM')
expectKind(decideBid(job, berlin, Date.UTC(2024, 0, 8, 17, 30)), 'bid', 'Berlin calendar, peak')
const preempted = decideBid(goldJob, preempting, T0)
if (preempted.kind !== 'bid' || preempted.preempts.length === 0) throw new Error(`bench fixture broken: preemption gave ${JSON.stringify(preempted)}`)

const seen5 = bids.slice(1, 6)
const seen64 = bids.slice(0, 64)
const award10 = bids.slice(0, 10)
expectKind(decideAward({ job: auctionJob, bids: award10, reliability, rtt, attempt: 1, now: decidedAt, leaseMs: 30_000, billingIntervalSec: 60 }), 'award', 'award')

const lines: Line[] = [
  { name: 'decideBid common path (UTC, free, bids)', targetUs: TARGET_COMMON_US, fn: (i) => decideBid(job, common, nowAt(i)) },
  { name: 'decideBid early decline (executor)', targetUs: TARGET_EARLY_US, fn: (i) => decideBid(job, dockerOnly, nowAt(i)) },
  { name: 'decideBid early decline (VRAM)', targetUs: TARGET_EARLY_US, fn: (i) => decideBid(bigVramJob, common, nowAt(i)) },
  { name: 'decideBid Europe/Berlin calendar + peak', targetUs: TARGET_COMMON_US, fn: (i) => decideBid(job, berlin, nowAt(i)) },
  { name: 'decideBid preemption (gold over bronze)', fn: (i) => decideBid(goldJob, preempting, nowAt(i)) },
  { name: 'shouldStaySilent, 5 seen bids', fn: () => shouldStaySilent({ job: auctionJob, price: 1_600_000, seen: seen5, decidedAt }) },
  { name: 'shouldStaySilent, 64 seen bids', fn: () => shouldStaySilent({ job: auctionJob, price: 1_600_000, seen: seen64, decidedAt }) },
  { name: 'decideAward, 10 bids', fn: () => decideAward({ job: auctionJob, bids: award10, reliability, rtt, attempt: 1, now: decidedAt, leaseMs: 30_000, billingIntervalSec: 60 }) }
]

console.log(`bench:core — µs per call, median of ${RUNS} runs × ${RUN_MS} ms, one core (${cpus()[0]?.model ?? 'unknown CPU'}, Node ${process.version})`)
printTable('market decisions', ['µs/call', 'min', 'max', 'target', 'ratio'], lines.map(measureLine))
console.log(`\n(ratio = median / target; ≤ 1 meets it. sink ${sink > 0 ? 'ok' : 'empty'})`)
