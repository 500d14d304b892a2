/**
 * The real side of calibration: the calibration workload on real gpumesh daemons in this process,
 * over the libp2p memory transport with a set latency (calibration/local-network.ts). Every job is
 * signed, gossiped, bid on, awarded, run (the process executor, `sleep` for its duration) and paid
 * by the same daemon code as `gpumesh node start`. Measures come from the daemons' own records (the
 * requester's job views: publish and award times) and read-only taps on their gossip and exec
 * streams (taps.ts); the mesh's gossip hops are read from gossipsub's peer and mesh tables.
 */
import { monitorEventLoopDelay } from 'node:perf_hooks'
import { capabilityKeyCid, jobTopics, providerTopics } from '../protocol/index.js'
import type { Daemon } from '../node/daemon.js'
import type { JobView } from '../node/market/views.js'
import { silentLoggers, type LoggerFactory } from '../node/logger.js'
import { jobSpecOf } from '../simulations/market/job-spec.js'
import {
  CALIBRATION_BID_WINDOW_MS, CALIBRATION_MARKET, CALIBRATION_START_DELAY_SEC, discoveryLookups, mean, perJob, quantile,
  type CalibrationMeasures, type CalibrationNetwork, type CalibrationWorkload
} from '../simulations/calibration/index.js'
import type { SimJob } from '../simulations/model.js'
import { startNetwork, type LocalNetwork, type NodeSpec } from './local-network.js'
import { emptyCounts, tapDaemon } from './taps.js'
import { PropagationDelay } from './delay-transport.js'

export interface RealRunOptions {
  /** The memory transport's latency, ms. */
  latencyMs: number
  bidWindowMs?: number
  loggers?: LoggerFactory
  /** Progress: the phase, and how far it is. */
  onProgress?: (phase: string, done: number, total: number) => void
  /** Give up on jobs not final this long after the last submission, ms (default 90 s). */
  settleTimeoutMs?: number
  /** How long to wait for the providers' DHT announcements before the jobs, ms (ANNOUNCE_TIMEOUT_MS); the run fails if they do not finish. */
  announceTimeoutMs?: number
}

export interface RealRun {
  measures: CalibrationMeasures
  network: CalibrationNetwork
  /** Jobs that were not final when the run gave up on them, with their status. */
  stuck: Array<{ job: string, status: string }>
  /** Wall time of each phase, ms. */
  phases: Record<string, number>
  /** The providers' capability keys on the DHT when the jobs started: provided of all. */
  announced: { provided: number, keys: number }
  /**
   * The market window (first submission to the last job final): this process's event-loop delay
   * (every daemon shares the loop, so it is time a message waited for the CPU, which the model, one
   * machine per node, does not have), and the DHT requests the daemons answered in it.
   */
  window: { loopDelayP50Ms: number, loopDelayP99Ms: number, loopDelayMaxMs: number, dhtRequests: number }
}

export class CalibrationRunError extends Error {
  readonly code = 'CALIBRATION_RUN_FAILED'
  constructor (message: string, options?: { cause?: unknown }) {
    super(message, options)
    this.name = 'CalibrationRunError'
  }
}

/** The default wait for the start-up announcements, ms: 54 s at 20 nodes on a quiet machine (bench:dht), minutes on a loaded one. */
export const ANNOUNCE_TIMEOUT_MS = 600_000
/** One `providers` lookup's limit, ms (node/discovery.ts FIND_TIMEOUT_MS). */
const LOOKUP_TIMEOUT_MS = 10_000
const FINAL = new Set(['settled', 'failed', 'cancelled', 'expired'])
const sleep = async (ms: number): Promise<void> => { await new Promise((resolve) => setTimeout(resolve, ms)) }

/** The daemon's job spec (POST /v1/jobs fields) for `job`: jobSpecOf's request, the one the model submits, in the API's units. */
export function daemonJobSpec (job: SimJob, bidWindowMs: number): Record<string, unknown> {
  const s = jobSpecOf(job, {
    capOf: (j) => j.maxPrice ?? 0,
    startDelaySec: { gold: CALIBRATION_START_DELAY_SEC, silver: CALIBRATION_START_DELAY_SEC, bronze: CALIBRATION_START_DELAY_SEC },
    bidWindowMs
  })
  return {
    label: s.label,
    command: ['/bin/sh', '-c', `sleep ${(job.durationMs / 1000).toFixed(3)}; echo ok > result`],
    outputs: s.outputs,
    gpus: s.gpus,
    minVramGB: s.minVramGB,
    models: s.models,
    tier: s.tier,
    maxPrice: (s.maxPrice ?? 0) / 1_000_000,
    maxStartDelaySec: s.maxStartDelaySec,
    regions: s.regions,
    residency: s.residency,
    maxRuntimeSec: s.maxRuntimeSec,
    bidWindowMs: s.bidWindowMs
  }
}

/** Node specs: the providers as the fleet says, then one buyer per region (selling nothing). */
function specsOf (workload: CalibrationWorkload): NodeSpec[] {
  const providers = workload.fleet.map((n): NodeSpec => ({ region: n.region, gpus: [`${n.gpuName}:${n.vramMiB}x${n.gpus}`], priceFloor: n.floor / 1_000_000, market: CALIBRATION_MARKET }))
  const buyers = workload.buyers.map((b): NodeSpec => ({ sell: false, region: b.slice('renter-'.length), market: CALIBRATION_MARKET }))
  return [...providers, ...buyers]
}

/** Run `workload` on real daemons. */
export async function runCalibrationReal (workload: CalibrationWorkload, options: RealRunOptions): Promise<RealRun> {
  const phases: Record<string, number> = {}
  const bidWindowMs = options.bidWindowMs ?? CALIBRATION_BID_WINDOW_MS
  let t = Date.now()
  const lap = (phase: string): void => { phases[phase] = Date.now() - t; t = Date.now() }
  // formed without delay (the announcements' lookups go faster), then set before the market runs;
  // the nodes join in turn, each announcing before the next starts (local-network.ts `join`)
  const delay = new PropagationDelay(0)
  const net = await startNetwork(specsOf(workload), { bootstrapCount: 1, loggers: options.loggers ?? silentLoggers, delay, join: 'in-turn' })
  try {
    const providers = net.nodes.slice(0, workload.fleet.length)
    const buyers = new Map(workload.buyers.map((b, i) => [b, net.nodes[workload.fleet.length + i] as Daemon]))
    options.onProgress?.('network', 0, 1)
    // the market needs no DHT (jobs and bids are gossiped), but on one event loop the providers'
    // start-up announcements (thousands of DHT streams) would share the market's window and delay its
    // gossip by seconds: wait until they are all done, and refuse to measure if they are not
    const announceTimeoutMs = options.announceTimeoutMs ?? ANNOUNCE_TIMEOUT_MS
    const announced = await announcements(providers, announceTimeoutMs, options.onProgress)
    if (announced.provided < announced.keys) {
      throw new CalibrationRunError(`the providers' DHT announcements did not finish in ${announceTimeoutMs / 1000} s (${announced.provided} of ${announced.keys} keys provided): the market would be measured inside the announcement storm; rerun on a less loaded machine, or with fewer --nodes`)
    }
    const unreached = await meshReady(workload, net)
    delay.set(options.latencyMs)
    // gossipsub's next heartbeats, with the latency in force
    await sleep(2_000)
    options.onProgress?.('network', 1, 1)
    lap('network')
    const network = { latencyMs: options.latencyMs, ...measureHops(workload, net), unreachedPairs: unreached }

    const discovery = await realDiscovery(workload, buyers)
    lap('discovery')

    const counts = emptyCounts()
    for (const d of net.nodes) tapDaemon(d, counts)
    const loop = monitorEventLoopDelay({ resolution: 10 })
    loop.enable()
    const submitted: Array<{ buyer: Daemon, id: string }> = []
    const start = Date.now()
    const offset = workload.jobs[0]?.submitAt ?? 0
    let done = 0
    await Promise.all(workload.jobs.map(async (job) => {
      const due = start + job.submitAt - offset
      await sleep(Math.max(0, due - Date.now()))
      const buyer = buyers.get(`renter-${job.region ?? 'global'}`)
      const market = buyer?.market
      if (buyer === undefined || market === undefined) throw new CalibrationRunError(`no buyer for region ${job.region ?? 'global'}`)
      const { job: id } = await market.submit(daemonJobSpec(job, bidWindowMs))
      submitted.push({ buyer, id })
      options.onProgress?.('jobs', ++done, workload.jobs.length)
    }))
    lap('submit')
    const views = await untilFinal(submitted, options.settleTimeoutMs ?? 90_000)
    loop.disable()
    const ms = (ns: number): number => Math.round(ns / 1e5) / 10
    const window = { loopDelayP50Ms: ms(loop.percentile(50)), loopDelayP99Ms: ms(loop.percentile(99)), loopDelayMaxMs: ms(loop.max), dhtRequests: counts.dhtRequests }
    lap('settle')
    // the last payments and closes still in flight: let them land before counting
    await sleep(Math.max(1_000, 4 * options.latencyMs))
    const stuck = views.filter((v) => !FINAL.has(v.status)).map((v) => ({ job: v.label ?? v.id, status: v.status }))
    return { measures: measuresOf(views, counts, discovery), network, stuck, phases, announced, window }
  } finally {
    await net.stop()
  }
}

/**
 * Until every provider's capability keys are all on the DHT, or `timeoutMs` passes: every 500 ms each
 * announcer with keys pending is kicked (a no-op while its round runs), so none sits out its retry
 * backoff (up to 60 s) while the others finish. Reports progress as keys provided of all.
 */
async function announcements (daemons: readonly Daemon[], timeoutMs: number, onProgress?: RealRunOptions['onProgress']): Promise<{ provided: number, keys: number }> {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const states = daemons.flatMap((d) => d.announcer.state())
    const provided = states.filter((k) => k.provided).length
    onProgress?.('announcements', provided, states.length)
    if (provided === states.length || Date.now() > deadline) return { provided, keys: states.length }
    for (const d of daemons) if (d.announcer.state().some((k) => !k.provided)) d.announcer.kick()
    await sleep(500)
  }
}

/**
 * Until every buyer reaches each provider of its area on the area's job topic, and the reverse, by
 * flood and mesh (gossipsub learnt the subscriptions and grafted), or `timeoutMs` passes: returns the
 * pairs still unreached then (gossipsub's IHAVE gossip may reach them later; the hops leave them out).
 */
async function meshReady (workload: CalibrationWorkload, net: LocalNetwork, timeoutMs = 20_000): Promise<number> {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const { unreached } = hopsTable(workload, net)
    if (unreached === 0 || Date.now() > deadline) return unreached
    await sleep(200)
  }
}

/** For each buyer and each provider of its area, both ways: the gossip hops on the area's job topic. */
function hopsTable (workload: CalibrationWorkload, net: LocalNetwork): { hops: number[], unreached: number } {
  const byPeer = new Map(net.all.map((d) => [d.identity.peerId, d]))
  const hops: number[] = []
  let unreached = 0
  workload.buyers.forEach((b, i) => {
    const area = b.slice('renter-'.length)
    const buyer = net.nodes[workload.fleet.length + i] as Daemon
    const topic = jobTopics({ regions: [area], residency: 'strict' })[0] as string
    const members = workload.fleet.map((n, j) => ({ n, d: net.nodes[j] as Daemon })).filter(({ n }) => providerTopics(n.region).includes(topic)).map(({ d }) => d)
    const pairs: Array<[Daemon, Daemon]> = [...members.map((p): [Daemon, Daemon] => [buyer, p]), ...members.map((p): [Daemon, Daemon] => [p, buyer])]
    for (const [from, to] of pairs) {
      const h = gossipHops(from, to, topic, byPeer)
      if (h === undefined) unreached++
      else hops.push(h)
    }
  })
  return { hops, unreached }
}

/**
 * Hops a message published by `from` on `topic` takes to `to`: gossipsub floods a publish to every
 * connected peer it knows subscribes (floodPublish), and each receiver forwards it to its mesh peers.
 */
function gossipHops (from: Daemon, to: Daemon, topic: string, byPeer: Map<string, Daemon>): number | undefined {
  const target = to.identity.peerId
  let frontier = from.node.services.pubsub.getSubscribers(topic).map((p) => p.toString())
  const seen = new Set<string>([from.identity.peerId, ...frontier])
  for (let hop = 1; frontier.length > 0 && hop <= 16; hop++) {
    if (frontier.includes(target)) return hop
    const next: string[] = []
    for (const peer of frontier) {
      for (const m of meshPeers(byPeer.get(peer), topic)) {
        if (!seen.has(m)) { seen.add(m); next.push(m) }
      }
    }
    frontier = next
  }
  return undefined
}

/** gossipsub's mesh for `topic` on `d` (the implementation has it; the GossipSub interface does not list it). */
function meshPeers (d: Daemon | undefined, topic: string): string[] {
  const pubsub = d?.node.services.pubsub as unknown as { getMeshPeers?: (topic: string) => string[] } | undefined
  if (pubsub !== undefined && typeof pubsub.getMeshPeers !== 'function') throw new CalibrationRunError('this gossipsub has no getMeshPeers: the mesh\'s hops cannot be measured')
  return pubsub?.getMeshPeers?.(topic) ?? []
}

function measureHops (workload: CalibrationWorkload, net: LocalNetwork): Pick<CalibrationNetwork, 'gossipHops' | 'hopShares'> {
  const { hops } = hopsTable(workload, net)
  const most = Math.max(1, ...hops)
  const hopShares = Array.from({ length: most }, (_, i) => hops.filter((h) => h === i + 1).length / Math.max(1, hops.length))
  return { gossipHops: mean(hops), hopShares }
}

/** Each lookup the workload's jobs ask for, from its buyer: to the first provider record and to the lookup's end. */
async function realDiscovery (workload: CalibrationWorkload, buyers: Map<string, Daemon>): Promise<{ first: number | undefined, whole: number | undefined }> {
  const first: number[] = []
  const whole: number[] = []
  for (const l of discoveryLookups(workload)) {
    const d = buyers.get(l.buyer)
    if (d === undefined) continue
    const started = performance.now()
    let firstAt: number | undefined
    try {
      for await (const _ of d.node.contentRouting.findProviders(capabilityKeyCid(l.key), { signal: AbortSignal.timeout(LOOKUP_TIMEOUT_MS) })) {
        firstAt ??= performance.now() - started
      }
    } catch (err) {
      // a lookup that runs out of time counts with the time it took (what a user waits)
      if ((err as Error).name !== 'AbortError') throw err
    }
    if (firstAt !== undefined) first.push(firstAt)
    whole.push(performance.now() - started)
  }
  return { first: first.length === 0 ? undefined : mean(first), whole: whole.length === 0 ? undefined : mean(whole) }
}

async function untilFinal (jobs: Array<{ buyer: Daemon, id: string }>, timeoutMs: number): Promise<JobView[]> {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const views = jobs.map(({ buyer, id }) => buyer.market?.requester.view(id)).filter((v): v is JobView => v !== undefined)
    if (views.every((v) => FINAL.has(v.status)) || Date.now() > deadline) return views
    await sleep(100)
  }
}

function measuresOf (views: JobView[], counts: ReturnType<typeof emptyCounts>, discovery: { first: number | undefined, whole: number | undefined }): CalibrationMeasures {
  const waits: number[] = []
  for (const v of views) {
    const award = v.events.find((e) => e.type === 'award')
    if (award !== undefined) waits.push(award.at - v.submittedAt)
  }
  const jobs = views.length
  const byKind: Record<string, number> = {}
  for (const map of [counts.gossip, counts.stream]) for (const [k, n] of map) byKind[k] = (byKind[k] ?? 0) + n
  const total = Object.values(byKind).reduce((a, b) => a + b, 0)
  return {
    jobs,
    awarded: waits.length,
    settled: views.filter((v) => v.status === 'settled').length,
    timeToAwardMs: mean(waits),
    timeToAwardP50Ms: quantile(waits, 0.5),
    timeToAwardP90Ms: quantile(waits, 0.9),
    bidsPerJob: jobs === 0 ? 0 : (counts.gossip.get('bid') ?? 0) / jobs,
    reauctionsPerJob: jobs === 0 ? 0 : (counts.gossip.get('auction-round') ?? 0) / jobs,
    messagesPerJob: jobs === 0 ? 0 : total / jobs,
    messagesPerJobByKind: perJob(byKind, jobs),
    gossipDeliveriesPerJob: jobs === 0 ? 0 : counts.delivered / jobs,
    gossipDelayMs: mean(counts.delays),
    discoveryFirstMs: discovery.first,
    discoveryMs: discovery.whole
  }
}
