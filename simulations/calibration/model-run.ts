/**
 * The model side of calibration: the calibration workload through the gpumesh market strategy
 * (market/run-market.ts: the real agents on the harness) on a network whose one-way delay is the
 * memory transport's latency and whose gossip takes the hops measured on the real mesh, plus the
 * same `providers` lookups on the Kademlia model. Measures come from the recorder and a tap on the
 * bus (gossip and stream traffic apart), so nothing here re-decides what the agents decide.
 */
import { capabilityKeys } from '../../protocol/constants.js'
import { fixedNetwork } from '../harness/network.js'
import type { Message, Traffic } from '../harness/bus.js'
import { capabilityAd } from '../harness/payloads.js'
import { DEFAULT_START } from '../harness/harness.js'
import { runMarket } from '../market/run-market.js'
import { KademliaModel } from '../overlay/kademlia.js'
import { mean, perJob, quantile, type CalibrationMeasures } from './measures.js'
import { CALIBRATION_MARKET, CALIBRATION_START_DELAY_SEC, discoveryLookups, type CalibrationProvider, type CalibrationWorkload } from './workload.js'

/** The bid window every calibration job asks for, ms (both sides). */
export const CALIBRATION_BID_WINDOW_MS = 1_000

export interface ModelRunOptions {
  seed: number
  /** One-way delay per hop, ms (the memory transport's latency). */
  latencyMs: number
  /** Gossip hops from publisher to subscriber (measured on the real mesh; may be fractional: a mean). */
  gossipHops: number
  bidWindowMs?: number
}

/**
 * A mean hop count the bus can use: hops × latency must be whole ms (the agents check their times are
 * integers), so the hops are rounded to the nearest n / latency (1.27 hops at 20 ms → 1.25: 25 ms).
 */
export function wholeMsHops (hops: number, latencyMs: number): number {
  if (latencyMs <= 0) return Math.max(1, hops)
  const h = Math.round(Math.max(1, hops) * latencyMs) / latencyMs
  return Number.isInteger(h * latencyMs) ? h : Math.round(Math.max(1, hops))
}

/** The node id of the bootstrap peer in the Kademlia model (the real network has one). */
const BOOTSTRAP = 'bootstrap'

/** Run the model on `workload`; returns its measures. */
export function runCalibrationModel (workload: CalibrationWorkload, options: ModelRunOptions): CalibrationMeasures {
  const gossipSent = new Map<string, number>()
  let gossipDelivered = 0
  const tap: Traffic = {
    sent: (channel, _from, m: Message) => { if (channel === 'gossip') gossipSent.set(m.kind, (gossipSent.get(m.kind) ?? 0) + 1) },
    delivered: (channel) => { if (channel === 'gossip') gossipDelivered++ },
    lost: () => {}
  }
  const floors = new Map(workload.fleet.map((n) => [n.id, n.floor]))
  const { harness, stats } = runMarket(workload, {
    seed: options.seed,
    params: CALIBRATION_MARKET,
    floorOf: (n) => floors.get(n.id) ?? 0,
    capOf: (j) => j.maxPrice ?? 0,
    startDelaySec: { gold: CALIBRATION_START_DELAY_SEC, silver: CALIBRATION_START_DELAY_SEC, bronze: CALIBRATION_START_DELAY_SEC },
    bidWindowMs: options.bidWindowMs ?? CALIBRATION_BID_WINDOW_MS,
    network: () => fixedNetwork(options.latencyMs, { hops: wholeMsHops(options.gossipHops, options.latencyMs) }),
    tap
  })
  const r = harness.recorder
  const ids = [...harness.world.jobs.keys()]
  const firstAward = new Map<string, number>()
  for (const a of r.awards) if (!firstAward.has(a.job)) firstAward.set(a.job, a.at)
  const waits: number[] = []
  for (const id of ids) {
    const at = firstAward.get(id)
    const request = harness.world.jobs.get(id)
    if (at !== undefined && request !== undefined) waits.push(at - request.payload.issuedAt)
  }
  const jobs = ids.length
  const byKind: Record<string, number> = {}
  for (const [kind, c] of Object.entries(stats.byKind)) if (!kind.endsWith('-blob')) byKind[kind] = c.count
  const discovery = modelDiscovery(workload, options)
  return {
    jobs,
    awarded: waits.length,
    settled: ids.filter((id) => r.jobEnding(id)?.status === 'settled').length,
    timeToAwardMs: mean(waits),
    timeToAwardP50Ms: quantile(waits, 0.5),
    timeToAwardP90Ms: quantile(waits, 0.9),
    bidsPerJob: jobs === 0 ? 0 : (byKind.bid ?? 0) / jobs,
    reauctionsPerJob: jobs === 0 ? 0 : (byKind['auction-round'] ?? 0) / jobs,
    messagesPerJob: jobs === 0 ? 0 : stats.messages / jobs,
    messagesPerJobByKind: perJob(byKind, jobs),
    gossipDeliveriesPerJob: jobs === 0 ? 0 : gossipDelivered / jobs,
    gossipDelayMs: Math.max(1, wholeMsHops(options.gossipHops, options.latencyMs)) * options.latencyMs,
    discoveryFirstMs: discovery.first,
    discoveryMs: discovery.whole
  }
}

/** The workload's lookups on the Kademlia model, after every provider provided its keys. */
function modelDiscovery (workload: CalibrationWorkload, options: ModelRunOptions): { first: number | undefined, whole: number | undefined } {
  const ids = [BOOTSTRAP, ...workload.fleet.map((n) => n.id), ...workload.buyers]
  const index = new Map(ids.map((id, i) => [id, i]))
  const kad = KademliaModel.build(ids, { seed: options.seed })
  const delay = (): number => options.latencyMs
  workload.fleet.forEach((n: CalibrationProvider) => {
    const ad = capabilityAd(n.id, { region: n.region, gpus: {}, hardware: [{ name: n.gpuName, vramMiB: n.vramMiB, count: n.gpus }], floor: n.floor }, DEFAULT_START)
    for (const key of capabilityKeys(ad)) kad.provide(index.get(n.id) as number, key, { delay })
  })
  const first: number[] = []
  const whole: number[] = []
  for (const l of discoveryLookups(workload)) {
    const result = kad.findProviders(index.get(l.buyer) as number, l.key, { delay })
    if (result.firstProviderMs !== undefined) first.push(result.firstProviderMs)
    whole.push(result.timeMs)
  }
  return { first: first.length === 0 ? undefined : mean(first), whole: whole.length === 0 ? undefined : mean(whole) }
}
