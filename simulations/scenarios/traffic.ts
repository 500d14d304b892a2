/**
 * What the market run's traffic comes to per job, in one row: application messages (each gossip message
 * once, as the daemon sends it) beside wire copies (every copy the gossipsub mesh carries, duplicates
 * included, plus stream messages), bytes, bids, time to award, and the `providers` lookup on the DHT
 * (apart from the award path: market/discovery.ts says why). Rounded for report.json.
 */
import type { CutReason } from '../../protocol/discovery-completeness.js'
import type { MarketRunStats } from '../market/run-market.js'
import type { Percentiles } from '../report/metrics.js'
import { round, type ReportSection } from '../report/report.js'

export interface TrafficRow {
  nodes: number
  jobs: number
  /** Application messages and bytes per job (the recorder's count: one per gossip publish or stream message). */
  messagesPerJob: number
  bytesPerJob: number
  /** The same on the wire (null without the mesh model). */
  wireMessagesPerJob: number | null
  wireBytesPerJob: number | null
  /** Gossip copies per gossip message, and of those copies the share that were duplicates. */
  copiesPerGossipMessage: number | null
  duplicateShare: number | null
  bidsPerJob: number
  timeToAwardMs: { p50: number | null, p95: number | null }
  /** The `providers` lookup (null without discovery). */
  discovery: {
    firstProviderMsP50: number | null
    timeMsP50: number | null
    timeMsP95: number | null
    messagesPerLookup: number
    bytesPerLookup: number
    hops: number
    /** Matching providers listed per search, and what the DHT's own lookup yielded (at most k) before the walk past k. */
    providersFound: number
    yieldedPerLookup: number
    walkQueriesPerLookup: number
    /** Searches whose answer is complete, and the others ("at least N") by why (protocol/discovery-completeness.ts). */
    lookups: number
    complete: number
    cut: Partial<Record<CutReason, number>>
    announceMessagesPerNode: number
  } | null
  /** Awards still open when the run ended (after the drain). */
  openAtEnd: number
  /** Mean modelled RTT from each award's renter to its winner, ms, and how the renter's view knew the winner's RTT (run-market.ts AwardRttStats). */
  awardRtt: { meanRttMs: number | null, measured: number, estimated: number, unknown: number }
}

const r3 = (x: number): number => round(x, 3) as number

export function trafficRow (nodes: number, jobs: number, stats: MarketRunStats, timeToAward: Percentiles): TrafficRow {
  const per = (x: number): number => (jobs === 0 ? 0 : r3(x / jobs))
  const g = stats.wire?.gossip
  const d = stats.discovery
  return {
    nodes,
    jobs,
    messagesPerJob: per(stats.messages),
    bytesPerJob: per(stats.bytes),
    wireMessagesPerJob: stats.wire === undefined ? null : per(stats.wire.messages),
    wireBytesPerJob: stats.wire === undefined ? null : per(stats.wire.bytes),
    copiesPerGossipMessage: g === undefined || g.messages === 0 ? null : r3(g.copies / g.messages),
    duplicateShare: g === undefined || g.copies === 0 ? null : round(g.duplicates / g.copies, 4),
    bidsPerJob: r3(stats.bidsPerJob),
    timeToAwardMs: { p50: round(timeToAward.p50, 0), p95: round(timeToAward.p95, 0) },
    discovery: d === undefined
      ? null
      : {
          firstProviderMsP50: round(d.firstProviderMs.p50, 0),
          timeMsP50: round(d.timeMs.p50, 0),
          timeMsP95: round(d.timeMs.p95, 0),
          messagesPerLookup: r3(d.messagesPerLookup),
          bytesPerLookup: r3(d.bytesPerLookup),
          hops: r3(d.hops),
          providersFound: r3(d.providersFound),
          yieldedPerLookup: r3(d.yieldedPerLookup),
          walkQueriesPerLookup: r3(d.walkQueriesPerLookup),
          lookups: d.lookups,
          complete: d.complete,
          cut: { ...d.cut },
          announceMessagesPerNode: r3(d.announce.messagesPerNode)
        },
    openAtEnd: stats.openAtHorizon,
    awardRtt: { meanRttMs: round(stats.awardRtt.meanRttMs, 1), measured: stats.awardRtt.measured, estimated: stats.awardRtt.estimated, unknown: stats.awardRtt.unknown }
  }
}

const num = (x: number | null, digits = 1): string => (x === null ? '–' : x.toFixed(digits))
const sec = (ms: number | null): string => (ms === null ? '–' : (ms / 1000).toFixed(2))

/** The rows as a markdown table. */
export function trafficTable (rows: readonly TrafficRow[]): string {
  const lines = [
    '| nodes | jobs | messages / job (app) | wire copies / job | KiB / job (app) | wire KiB / job | copies / gossip msg | duplicates | bids / job | award p50 / p95 s | DHT lookup p50 / p95 s | DHT msgs / lookup | providers / lookup (complete) | award RTT ms (measured / estimated / unknown) | open at end |',
    '|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|'
  ]
  for (const r of rows) {
    const d = r.discovery
    lines.push(`| ${num(r.nodes, 0)} | ${num(r.jobs, 0)} | ${num(r.messagesPerJob)} | ${num(r.wireMessagesPerJob)} | ${num(r.bytesPerJob / 1024)} | ${num(r.wireBytesPerJob === null ? null : r.wireBytesPerJob / 1024)} | ${num(r.copiesPerGossipMessage)} | ${r.duplicateShare === null ? '–' : `${(r.duplicateShare * 100).toFixed(1)} %`} | ${num(r.bidsPerJob)} | ${sec(r.timeToAwardMs.p50)} / ${sec(r.timeToAwardMs.p95)} | ${d === null ? '–' : `${sec(d.timeMsP50)} / ${sec(d.timeMsP95)}`} | ${d === null ? '–' : num(d.messagesPerLookup)} | ${d === null ? '–' : `${num(d.providersFound)} (${d.complete} of ${d.lookups})`} | ${num(r.awardRtt.meanRttMs)} (${r.awardRtt.measured} / ${r.awardRtt.estimated} / ${r.awardRtt.unknown}) | ${r.openAtEnd} |`)
  }
  return `${lines.join('\n')}\n`
}

/** One gpumesh run's traffic as the report's `traffic` section: the row under `sections.traffic`, the table and its note under `## Traffic (gpumesh)`. */
export function trafficSection (row: TrafficRow): ReportSection {
  return { key: 'traffic', title: 'Traffic (gpumesh)', json: { ...row }, markdown: [trafficTable([row]), TRAFFIC_NOTE] }
}

/** What the traffic table's columns mean, for report.md. */
export const TRAFFIC_NOTE = 'Messages / job (app): each gossip message counted once and each stream message once, as the daemon sends them. Wire copies / job: every copy the gossipsub mesh model carries (one mesh per topic, D = 6, Dlo = 4, Dhi = 12, Dlazy = 6, flood publish, IHAVE/IWANT on), duplicates included, plus the stream messages; wire KiB adds the IHAVE/IWANT/IDONTWANT control RPCs. Award: submit to award. Award RTT: the network model\'s mean round trip from each award\'s renter to its winner, and how the renter\'s RTT view knew the winner when it scored (measured on a connection it holds, estimated from the bid\'s region and country, or unknown: scored at 200 ms). DHT lookup: the `providers` query a buyer runs for the job on the Kademlia model (k = 20, α = 3, 2 disjoint paths), continued past k as the daemon does (protocol/provider-walk.ts) up to the daemon\'s limit of 100 matching providers; providers / lookup: matching providers listed, and (in brackets) how many searches were complete rather than "at least N" — job submission itself does no DHT lookup, so this is not part of the award path.'

/** The overlay models' assumptions, one sentence each, for a scenario's report. */
export const OVERLAY_ASSUMPTIONS: readonly string[] = [
  'Gossip: every job request, round, bid and award floods the gossipsub mesh model of each of its topics (simulations/overlay/mesh-gossip.ts) with the daemon\'s gossipsub defaults; a delivery\'s delay is its mesh path\'s, on the pairs\' mean one-way delays (no per-message jitter), and a publisher\'s flood on a topic is computed once and reused.',
  'Discovery: per job, the `providers` lookup a buyer runs (GET_PROVIDERS of the job\'s capability key on the Kademlia model, static routing tables, no churn), reported apart from the award path because job submission does no DHT lookup in the daemon.'
]
