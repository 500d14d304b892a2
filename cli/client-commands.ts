/**
 * `gpumesh status`, `gpumesh peers`, `gpumesh providers`: ask the running daemon over the local API.
 */
import type { Command } from 'commander'
import { MAX_FIND_LIMIT, formatVram, type CapabilityAd } from '../protocol/index.js'
import type { RefusedRequester } from '../protocol/market/provider-agent.js'
import { ApiClient } from '../node/api/client.js'
import type { BootstrapStatus } from '../node/bootstrap-watcher.js'
import type { StatusInfo } from '../node/daemon.js'
import type { FindResult } from '../node/discovery.js'
import { dataDirOf } from './context.js'
import { NotConnectedError, UsageError } from './errors.js'
import { reputationText, table, toJson } from './format.js'
import { probeText } from './probe-command.js'

async function client (command: Command): Promise<ApiClient> {
  return await ApiClient.fromDataDir(dataDirOf(command))
}

const out = (text: string): void => { process.stdout.write(`${text}\n`) }

/** One line on the bootstrap peers: `connected to 1 of 2`, `no answer from any of 1 (…)`. */
export function bootstrapLine (b: BootstrapStatus, now: number): string {
  switch (b.state) {
    case 'none': return 'none configured'
    case 'dialling': return `dialling ${b.configured}`
    case 'connected': return `connected to ${b.connected} of ${b.configured}${b.connected === 0 ? ' (answered at start, not connected now)' : ''}`
    case 'unreachable': {
      const next = b.nextAttemptAt !== undefined ? `, next try in ${Math.max(0, Math.ceil((b.nextAttemptAt - now) / 1000))} s` : ''
      return `no answer from any of ${b.configured} (${b.failedRounds} failed round${b.failedRounds === 1 ? '' : 's'}${next}; last error: ${b.lastErrors[0] ?? '?'})`
    }
  }
}

/**
 * Fail with NotConnectedError when the daemon has no connection at all: a DHT lookup or an auction
 * there cannot find anyone, and "none found" would read as if the network had been asked.
 */
export async function requireConnected (client: ApiClient): Promise<void> {
  const problem = notConnected(await client.get<StatusInfo>('/v1/status'))
  if (problem !== undefined) throw problem
}

/** The NotConnectedError for a daemon with no connection at all, or undefined when it has one. */
function notConnected (status: StatusInfo): NotConnectedError | undefined {
  if (status.connections > 0) return undefined
  const b = status.bootstrap
  return new NotConnectedError(`not connected to any peer; bootstrap peers: ${b !== undefined ? bootstrapLine(b, Date.now()) : 'unknown'}`)
}

/** `reachability: private (reason)`, and the relay and DCUtR counts when a relay is involved. */
function natLines (nat: StatusInfo['nat']): string[] {
  const lines = [`  reachability: ${nat.reachability} (${nat.reason})`]
  const releases = nat.relayReleases
  if (nat.relayListening || nat.relayedConnections > 0 || releases > 0) {
    lines.push(`  relay:       ${nat.relayAddresses.length} relay address(es), ${nat.relayedConnections} relayed connection(s), ${nat.directUpgrades} upgraded to direct` +
      (releases > 0 ? `, released ${releases} time(s) once public${nat.relayListening ? '' : ', not listening'}` : ''))
  }
  lines.push(...nat.relayAddresses.map((a) => `  via relay:   ${a}`))
  return lines
}

export async function statusCommand (command: Command): Promise<void> {
  const status = await (await client(command)).get<StatusInfo>('/v1/status')
  if (command.opts().json === true) return out(toJson(status))
  const provided = status.capabilityKeys.filter((k) => k.provided).length
  out([
    `${status.role} ${status.peerId} (gpumesh ${status.version})`,
    `  up since:    ${new Date(status.startedAt).toISOString()}`,
    `  connections: ${status.connections}, DHT ${status.dht.mode} with ${status.dht.routingTable} peers in its routing table`,
    `  bootstrap:   ${bootstrapLine(status.bootstrap, Date.now())}`,
    ...(status.nat !== undefined ? natLines(status.nat) : []),
    ...(status.relaySlots !== undefined ? [`  relay slots: ${status.relaySlots.reservations} held, ${status.relaySlots.freed} freed since start (holders that withdrew their relay address)`] : []),
    ...status.addresses.map((a) => `  listening:   ${a}`),
    `  GPUs:        ${status.gpus.length === 0 ? 'none' : status.gpus.map((g) => `${g.name} (${formatVram(g.vramMiB)}, ${g.provenance})`).join(', ')}`,
    `  detection:   ${status.gpuDetection}`,
    ...Object.entries(status.executors ?? {}).map(([kind, note]) => `  ${`${kind}:`.padEnd(12)} ${note ?? ''}`),
    `  selling:     ${status.ad !== undefined ? `ad ${status.ad.cid} (seq ${status.ad.seq}), ${provided}/${status.capabilityKeys.length} capability keys on the DHT` : 'no'}`,
    ...(status.refusedRequesters ?? []).map(refusedLine)
  ].join('\n'))
}

/** One requester refused for its score, on one line. */
export function refusedLine (r: RefusedRequester): string {
  return `  refused:     ${r.requester} score ${r.score.toFixed(3)} < ${r.min} (${r.reason}), ${r.jobs} job request${r.jobs === 1 ? '' : 's'}, last ${new Date(r.at).toISOString()}`
}

export async function peersCommand (command: Command): Promise<void> {
  const peers = await (await client(command)).get<Array<{ peerId: string, addresses: string[], direction: string }>>('/v1/peers')
  if (command.opts().json === true) return out(toJson(peers))
  if (peers.length === 0) return out('no connected peers')
  out(table(['PEER', 'DIRECTION', 'ADDRESS'], peers.map((p) => [p.peerId, p.direction, p.addresses[0] ?? ''])))
}

export async function providersCommand (command: Command): Promise<void> {
  const opts = command.opts<{ gpu?: string, minVram?: string, region?: string, timeout?: string, limit?: string, json?: boolean }>()
  const minVram = opts.minVram !== undefined ? Number(opts.minVram) : undefined
  if (minVram !== undefined && (!Number.isFinite(minVram) || minVram < 0)) throw new UsageError(`--min-vram must be a number of GB, got "${opts.minVram}"`)
  const timeoutMs = opts.timeout !== undefined ? Number(opts.timeout) * 1000 : undefined
  if (timeoutMs !== undefined && !(timeoutMs > 0)) throw new UsageError(`--timeout must be a positive number of seconds, got "${opts.timeout}"`)
  const limit = opts.limit !== undefined ? Number(opts.limit) : undefined
  if (limit !== undefined && !(Number.isInteger(limit) && limit >= 1 && limit <= MAX_FIND_LIMIT)) throw new UsageError(`--limit must be a whole number from 1 to ${MAX_FIND_LIMIT}, got "${opts.limit}"`)
  const api = await client(command)
  const status = await api.get<StatusInfo>('/v1/status')
  const result = await api.get<FindResult>('/v1/providers', {
    gpu: opts.gpu, minVram, region: opts.region, timeoutMs, limit
  }, (timeoutMs ?? 10_000) + 5_000)
  // with no connection only this node's own ad can match: list it, but never let "none found" stand for the network
  const alone = notConnected(status)
  if (alone !== undefined) {
    if (result.providers.length === 0) throw alone
    process.stderr.write(`gpumesh: ${alone.message}: only this node's own ad was searched\n`)
  }
  if (opts.json === true) return out(toJson(result))
  if (result.providers.length === 0) {
    out(`no providers found (looked up ${result.key} in ${Math.round(result.elapsedMs)} ms; ${result.filtered} did not match, ${result.failures.length} unreachable)${result.complete ? '' : ` — ${cutText(result)}`}`)
    return
  }
  const now = Date.now()
  out(table(['PEER', 'REGION', 'GPUS', 'FLOOR/GPU-H', 'PROCESS JOBS', 'REPUTATION', 'LAST PROBE'], result.providers.map((p) => {
    const models = new Map<string, number>()
    for (const g of p.ad.gpus) models.set(`${g.name} ${formatVram(g.vramMiB)}`, (models.get(`${g.name} ${formatVram(g.vramMiB)}`) ?? 0) + 1)
    const reputation = p.reputation !== undefined ? reputationText(p.reputation) : 'no market on this node'
    return [p.peerId, p.ad.region, [...models].map(([m, n]) => `${n}× ${m}`).join(', '), `${(p.ad.price.floor / 1e6).toFixed(2)} cr`, processJobs(p.ad), reputation, p.probe !== undefined ? probeText(p.probe, now) : 'none yet']
  })))
  out(`${providerCount(result)} via ${result.key} in ${Math.round(result.elapsedMs)} ms`)
}

/** `12 provider(s)` for a complete answer, `at least 12 providers (…why…)` for a cut one. */
export function providerCount (result: Pick<FindResult, 'providers' | 'complete' | 'cut' | 'limit'>): string {
  const n = result.providers.length
  if (result.complete) return `${n} provider(s)`
  return `at least ${n} provider${n === 1 ? '' : 's'} (${cutText(result)})`
}

/** Why an answer is only "at least N", in words. */
function cutText (result: Pick<FindResult, 'cut' | 'limit'>): string {
  switch (result.cut) {
    case 'limit': return `the answer was cut at --limit ${result.limit}`
    case 'timeout': return 'the search stopped at its --timeout'
    case 'k': return 'the DHT lookup stopped at k and not every peer closest to the key answered'
    default: return 'a DHT lookup failed'
  }
}

/** How a provider runs process jobs, as its ad says: an ad that offers them without naming a sandbox counts as unsandboxed. */
function processJobs (ad: CapabilityAd): string {
  if (!ad.workloads.includes('process')) return 'not offered'
  return ad.processSandbox === 'bwrap' ? 'sandboxed (bwrap)' : 'UNSANDBOXED'
}
