/**
 * The gpumesh strategy: a workload run through the real market agents on the scenario harness. Each
 * fleet node is a provider (its capability ad from the node's GPUs and its owner's price floor, its
 * owner's own work fed to its agent as holds, a look-ahead at a time); renters are requester nodes,
 * one per region the jobs ask for; each job is submitted at its time as a job request and runs, once
 * awarded, for its duration. The outcome of every job and every node is read back from the recorder
 * (awards, run starts, both ledgers, endings) — nothing here decides anything the agents decide.
 */
import { sha256 } from '../../crypto/index.js'
import type { MarketParamsInit } from '../../protocol/market/params.js'
import type { OwnerHold } from '../../protocol/market/provider-agent-types.js'
import { HOUR_MS } from '../../protocol/limits.js'
import { jobTopics, providerTopics } from '../../protocol/discovery.js'
import { EVIDENCE_TOPIC } from '../../protocol/constants.js'
import { Harness, DEFAULT_START } from '../harness/harness.js'
import { scheduleSybilRing } from '../harness/sybil-ring.js'
import type { Verification } from '../../protocol/messages/job-request.js'
import { peerIdOf } from '../harness/ids.js'
import type { AwardRecord, LedgerMismatch } from '../harness/recorder.js'
import { regionNetwork, type NetworkModel, type Place } from '../harness/network.js'
import { MeshGossip, type MeshGossipOptions, type WireCounts } from '../overlay/mesh-gossip.js'
import { discoveryCost, type DiscoveryStats } from './discovery.js'
import type { Traffic } from '../harness/bus.js'
import type { Delivery } from '../harness/keyed-delivery.js'
import type { Prng, Seed } from '../harness/prng.js'
import type { ProviderBehaviour, ProviderNode } from '../harness/provider-node.js'
import type { RequesterNode } from '../harness/requester-node.js'
import { runEndMs, type FleetNode, type JobOutcome, type JobStatus, type NodeOutcome, type SimJob, type StrategyRun, type Workload } from '../model.js'
import type { ChurnSchedule } from '../network/churn.js'
import { applyChurn } from './churn.js'
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
  /** Adversarial behaviour by node id (harness/adversaries.ts: undercutters, stallers, spammers); a no-show in `noShows` too gets both. */
  behaviours?: ReadonlyMap<string, ProviderBehaviour>
  /** Bid damping (default on). */
  damping?: boolean
  /** Every renter's job asks for this verification (default `none`). */
  verification?: Verification
  /** Every renter's job runs on this executor (default `process`; `wasm` is deterministic: re-execution and fraud proofs apply). */
  executor?: 'process' | 'wasm'
  /**
   * The renters re-execute this share (per mille) of their deterministic replicated jobs whose replicas
   * agree (RequesterTrustOptions.agreementAuditPerMille; each renter's draw seed from its name). Default 0.
   */
  agreementAuditPerMille?: number
  /** The renters' reputation views take others' gossiped payments and failure reports (requester-node.ts `evidence`; default off). */
  evidence?: boolean
  /** The multiaddrs each node's ad lists (default none). */
  addrsOf?: (node: FleetNode) => readonly string[]
  /** Sybils vouching for each other on the evidence topic (harness/sybil-ring.ts): node ids, and times since the run's start. */
  sybilRing?: { members: readonly string[], periodMs: number, fanout: number, fromMs: number, untilMs: number }
  /** Providers leave and rejoin on this schedule (market/churn.ts: crash and restart). */
  churn?: ChurnSchedule
  /** The run's strategy name (default `gpumesh`), e.g. `gpumesh+churn` for a churned run beside the calm `gpumesh`. */
  strategy?: string
  /**
   * Gossip through the gossipsub mesh model (overlay/mesh-gossip.ts: one mesh per topic over its
   * subscribers, each delivery after its mesh path's delays, every wire copy counted) instead of the bus's
   * `gossipHops × latency`. Default off (the harness's plain delivery); every scenario turns it on.
   */
  mesh?: boolean | Omit<MeshGossipOptions, 'subscribers' | 'seed'>
  /** Measure each job's `providers` lookup on the Kademlia model (market/discovery.ts). Default off. */
  discovery?: boolean
  /** Called every `progressEvery` submitted jobs with (submitted, total). */
  onProgress?: (done: number, total: number) => void
  progressEvery?: number
  /** A second observer of the bus's traffic (HarnessOptions.tap). */
  tap?: Traffic
  /**
   * How the bus delivers gossip (harness/keyed-delivery.ts): `sequential` (default, what every scenario
   * runs), `keyed-all` or `keyed-interested` (bench:sim: delays hashed per message and receiver, only the
   * receivers that may act visited). Not with `mesh` yet (KeyedDeliveryError).
   */
  delivery?: Delivery
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
  /** Awards still running on either side when the run ended (horizon + drain; not a disagreement). */
  openAtHorizon: number
  /** Scheduler events run. */
  events: number
  /** When the run's clock stopped, ms from t = 0: the horizon plus the workload's drain. */
  endedAtMs: number
  /** With `mesh`: what went on the wire (gossip copies from the mesh model, stream messages as sent). */
  wire?: WireStats
  /** With `discovery`: the renters' `providers` lookups, apart from the award path. */
  discovery?: DiscoveryStats
  /** The awards' round trips: `awardRtt` below. */
  awardRtt: AwardRttStats
}

/**
 * How far the awards went: the network model's mean round trip from each award's requester to its winner,
 * and what the requester's RTT view scored the winner at (protocol/market/rtt-view.ts: measured on a
 * connection, estimated from the bid's region and country, or unknown and scored at defaultRttMs).
 */
export interface AwardRttStats {
  awards: number
  /** Mean modelled RTT requester → winner, ms (null: no award). */
  meanRttMs: number | null
  /** Awards whose winner the view had measured, estimated, or did not know. */
  measured: number
  estimated: number
  unknown: number
}

export function awardRttStats (awards: readonly AwardRecord[]): AwardRttStats {
  let sum = 0
  let n = 0
  let measured = 0
  let estimated = 0
  for (const a of awards) {
    if (a.rttMs !== undefined) { sum += a.rttMs; n++ }
    if (a.rttSource === 'measured') measured++
    else if (a.rttSource === 'estimated') estimated++
  }
  return { awards: awards.length, meanRttMs: n === 0 ? null : sum / n, measured, estimated, unknown: awards.length - measured - estimated }
}

export interface WireStats {
  /** Messages on the wire: every gossip copy (duplicates and IHAVE/IWANT/IDONTWANT not included) plus stream messages. */
  messages: number
  /** Their bytes, with the gossip control RPCs. */
  bytes: number
  /** The mesh model's counts. */
  gossip: WireCounts
}

/** The run's outcomes, traffic, its harness (the record), and the epoch of its t = 0. */
export interface MarketRun { run: StrategyRun, stats: MarketRunStats, harness: Harness, start: number }

/** Run the gpumesh market on `workload`: arrivals until its horizon, then its drain (model.ts `runEndMs`). */
export function runMarket (workload: Workload, options: MarketRunOptions): MarketRun {
  const start = options.start ?? DEFAULT_START
  const seed = options.seed ?? 1
  const placeOfNode = (n: FleetNode): Place => ({ node: peerIdOf(n.id), region: n.region })
  const renterKey = (job: SimJob): string => job.region ?? 'global'
  const countryOf = renterCountries(workload.fleet)
  const placeOfRenter = (job: SimJob): Place => ({ node: peerIdOf(`renter-${renterKey(job)}`), region: job.region ?? workload.fleet[0]?.region ?? 'global', country: countryOf(job.region) })
  const baseNetwork = options.network ?? ((prng: Prng) => regionNetwork(prng))
  let mesh: MeshGossip | undefined
  let network: NetworkModel | undefined
  const h = new Harness({
    seed,
    start,
    params: { ...SIM_MARKET_PARAMS, ...options.params },
    network: (prng) => {
      network = baseNetwork(prng)
      if (options.mesh === undefined || options.mesh === false) return network
      mesh = new MeshGossip(network, { ...(options.mesh === true ? {} : options.mesh), seed, subscribers: subscribersOf(workload, placeOfNode, placeOfRenter) })
      return mesh.network()
    },
    trace: false,
    perJob: true,
    ...(options.tap !== undefined ? { tap: options.tap } : {}),
    ...(options.delivery !== undefined ? { delivery: options.delivery } : {})
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
      ...(options.addrsOf !== undefined ? { addrs: options.addrsOf(node) } : {}),
      ...(options.damping === false ? { damping: false } : {}),
      ...behaviourOf(node.id, options)
    })
    providers.set(node.id, p)
    const mine = (holds.get(node.id) ?? []).map((x): OwnerHold => ({ ...x, from: start + x.from, until: start + x.until }))
    if (mine.length > 0) feedHolds(h, p, mine, start, start + runEndMs(workload), Math.max(HOUR_MS, Math.floor(lookahead / 2)), lookahead)
  }

  if (options.churn !== undefined) applyChurn(h, providers, options.churn, start)
  const ring = options.sybilRing
  if (ring !== undefined) scheduleSybilRing(h.world, { ...ring, members: ring.members.map(peerIdOf), fromMs: start + ring.fromMs, untilMs: start + ring.untilMs })

  // renters: one requester per region asked for ('global' for jobs without one)
  const renters = new Map<string, RequesterNode>()
  const renterFor = (job: SimJob): RequesterNode => {
    const key = job.region ?? 'global'
    let r = renters.get(key)
    if (r === undefined) {
      // every renter has its spotcheck seed, as every daemon's requester does (node/market/market.ts), whether
      // or not the agreement audit is on: a job asking `spotcheck p` is drawn with it either way
      const share = options.agreementAuditPerMille ?? 0
      const trust = { spotcheckSeed: sha256(new TextEncoder().encode(`gpumesh-sim/renter-seed/${key}`)), ...(share > 0 ? { agreementAuditPerMille: share } : {}) }
      const place = placeOfRenter(job)
      r = h.requester(`renter-${key}`, { region: place.region, ...(place.country !== undefined ? { country: place.country } : {}), ...(options.evidence === true ? { evidence: true } : {}), trust })
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
      const spec = jobSpecOf(job, rules)
      const id = renter.submit({ ...spec, ...(options.verification !== undefined ? { verification: options.verification } : {}), ...(options.executor !== undefined ? { executor: options.executor } : {}) }, { durationMs: job.durationMs, exitCode: 0, outputBytes: 1_000_000, inputBytes: 0 })
      ids.set(id, job)
      submitted++
      if (options.onProgress !== undefined && submitted % every === 0) options.onProgress(submitted, workload.jobs.length)
    })
  }
  // the drain: no job is submitted at or after the horizon, but the clock runs on to horizon + drainMs so
  // work awarded before it can end (model.ts runEndMs; the baselines cut placed work at the same instant)
  let events = 0
  const end = start + runEndMs(workload)
  for (let next = h.scheduler.next(); next !== undefined && next <= end; next = h.scheduler.next()) {
    h.scheduler.step()
    events++
  }
  options.onProgress?.(submitted, workload.jobs.length)
  const run = { ...outcomes(h, workload, ids, start, options.listPriceOf ?? options.capOf), strategy: options.strategy ?? 'gpumesh' }
  const s = stats(h, ids.size, events, runEndMs(workload))
  if (mesh !== undefined) s.wire = wireStats(s, mesh.wire)
  if (options.discovery === true) {
    const model = network as NetworkModel
    const mean = model.meanLatencyMs ?? model.latencyMs
    s.discovery = discoveryCost({ fleet: workload.fleet, jobs: workload.jobs.filter((j) => j.submitAt < workload.horizonMs), placeOfNode, placeOfRenter, delay: mean, seed })
  }
  return { run, stats: s, harness: h, start }
}

/**
 * Where a renter sits (ISO 3166 alpha-2): the country of the fleet's first node in its region, a global
 * renter (or one whose region has no node) in the fleet's most common country ('US' for an empty fleet).
 * The measured network places renters so (scenarios/market-setup.ts), and the renter's agent estimates
 * bidders' RTTs from it, as a daemon from its configured country.
 */
export function renterCountries (fleet: readonly FleetNode[]): (region: string | undefined) => string {
  const byRegion = new Map<string, string>()
  const counts = new Map<string, number>()
  for (const n of fleet) {
    if (!byRegion.has(n.region)) byRegion.set(n.region, n.country)
    counts.set(n.country, (counts.get(n.country) ?? 0) + 1)
  }
  let common = 'US'
  for (const [c, k] of counts) if (k > (counts.get(common) ?? 0)) common = c
  return (region) => (region === undefined ? undefined : byRegion.get(region)) ?? common
}

/** The node's adversarial behaviour from `noShows` and `behaviours` (none: honest). */
function behaviourOf (id: string, options: MarketRunOptions): { behaviour?: ProviderBehaviour } {
  const given = options.behaviours?.get(id)
  const noShow = options.noShows?.has(id) === true
  if (given === undefined && !noShow) return {}
  return { behaviour: { ...given, ...(noShow ? { noShow: true } : {}) } }
}

/**
 * A drain long enough for the work submitted before the horizon to end: the latest (submit + the tier's
 * start delay + the job's runtime) past the horizon, plus two leases (a re-award after a provider's lease
 * ran out) and the bid window, rounded up to a minute. It is bounded by the longest job: nothing placed
 * runs longer than that, so the clock never runs on for work that cannot exist.
 */
export function drainMsFor (workload: Pick<Workload, 'jobs' | 'horizonMs'>, options: { startDelaySec?: Partial<Record<SimJob['tier'], number>>, params?: MarketParamsInit, bidWindowMs?: number } = {}): number {
  const delays = { ...DEFAULT_START_DELAY_SEC, ...options.startDelaySec }
  const lease = options.params?.leaseMs ?? SIM_MARKET_PARAMS.leaseMs ?? 600_000
  let latest = 0
  for (const j of workload.jobs) {
    if (j.submitAt >= workload.horizonMs) continue
    latest = Math.max(latest, j.submitAt + delays[j.tier] * 1000 + j.durationMs)
  }
  const past = latest - workload.horizonMs
  if (past <= 0) return 0
  return Math.ceil((past + 2 * lease + (options.bidWindowMs ?? 2_000)) / 60_000) * 60_000
}

/** Who subscribes to a topic in this run: providers by their region's topics, renters by theirs and their jobs'. */
function subscribersOf (workload: Workload, placeOfNode: (n: FleetNode) => Place, placeOfRenter: (j: SimJob) => Place): (topic: string) => Place[] {
  const byTopic = new Map<string, Map<string, Place>>()
  const add = (topic: string, place: Place): void => {
    let m = byTopic.get(topic)
    if (m === undefined) byTopic.set(topic, m = new Map())
    if (!m.has(place.node)) m.set(place.node, place)
  }
  for (const n of workload.fleet) {
    const place = placeOfNode(n)
    for (const t of providerTopics(n.region)) add(t, place)
    add(EVIDENCE_TOPIC, place)
  }
  for (const j of workload.jobs) {
    const place = placeOfRenter(j)
    for (const t of providerTopics(place.region)) add(t, place)
    add(EVIDENCE_TOPIC, place)
    for (const t of jobTopics({ regions: j.region === undefined ? [] : [j.region], residency: j.residency })) add(t, place)
  }
  return (topic) => [...(byTopic.get(topic)?.values() ?? [])]
}

/** Wire totals: the recorder's stream messages as sent, each gossip message replaced by its mesh copies. */
function wireStats (s: MarketRunStats, gossip: WireCounts): WireStats {
  return {
    messages: s.messages - gossip.messages + gossip.copies,
    bytes: s.bytes - gossip.appBytes + gossip.bytes,
    gossip
  }
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
  const startsByAttempt = new Map<string, number[]>()
  for (const s of r.starts) {
    startsByJob.set(s.job, s.at)
    const k = `${s.job} ${s.provider}`
    const list = startsByAttempt.get(k)
    if (list === undefined) startsByAttempt.set(k, [s.at])
    else list.push(s.at)
  }
  const preemptionsByJob = new Map<string, number>()
  for (const o of r.offers) if (o.status === 'preempted') preemptionsByJob.set(o.job, (preemptionsByJob.get(o.job) ?? 0) + 1)
  const ownerMs = new Map<string, number>()
  const runEnd = runEndMs(workload)
  for (const w of workload.ownerWork) ownerMs.set(w.node, (ownerMs.get(w.node) ?? 0) + w.gpus * Math.max(0, Math.min(w.end, runEnd) - Math.max(w.start, 0)))
  const sold = new Map<string, { hours: number, revenue: number }>()
  const jobs: JobOutcome[] = []
  const byId = new Map<string, string>()
  for (const [id, job] of ids) byId.set(job.id, id)
  const horizon = start + runEndMs(workload)
  for (const job of workload.jobs) {
    const id = byId.get(job.id)
    const awards = id === undefined ? [] : awardsByJob.get(id) ?? []
    let paid = 0
    let hours = 0
    let lost = 0
    for (const a of awards) {
      const line = r.ledgerOf(a.requester, a.award)
      const cumulative = line?.cumulative ?? 0
      paid += cumulative
      const gpuHours = a.price > 0 ? cumulative / a.price : 0
      hours += gpuHours
      // an attempt that ended without settling the job (a crash, a cut, a failure): the GPU-hours it ran,
      // from its start to when the renter's side ended it, are lost — paid or not (hourly billing pays
      // after the hour). One still open when the run stops is cut by the horizon, not lost.
      if (line !== undefined && line.state !== 'settled' && line.state !== 'open') {
        const began = startsByAttempt.get(`${a.job} ${a.provider}`)?.find((t) => t >= a.at)
        if (began !== undefined) lost += job.gpus * Math.max(0, line.updatedAt - began) / MS_PER_HOUR
      }
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
      lostGpuHours: lost,
      slaMiss,
      messages: traffic.count,
      bytes: traffic.bytes
    })
  }
  const nodes: NodeOutcome[] = workload.fleet.map((n) => {
    const owner = (ownerMs.get(n.id) ?? 0) / MS_PER_HOUR
    const s = sold.get(n.id) ?? { hours: 0, revenue: 0 }
    return { node: n.id, offeredGpuHours: n.gpus * runEnd / MS_PER_HOUR - owner, soldGpuHours: s.hours, ownerGpuHours: owner, revenue: s.revenue }
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

function stats (h: Harness, jobs: number, events: number, endedAtMs: number): MarketRunStats {
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
    events,
    endedAtMs,
    awardRtt: awardRttStats(h.recorder.awards)
  }
}
