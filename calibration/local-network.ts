/**
 * In-process networks of real gpumesh daemons over the libp2p memory transport (plaintext, yamux):
 * the same daemon code as `gpumesh node start`, minus TCP, Noise and the local API. `gpumesh sim
 * --calibrate` runs the real stack with it (calibration/), and so do the integration tests and
 * benchmarks (through test/helpers/network.ts); end-to-end tests use separate processes over TCP.
 *
 * `latencyMs` is @libp2p/memory's `latency`: every buffer a connection carries waits that long, one
 * after another (the transport delays each buffer in turn, so buffers sent together queue: it is a
 * per-buffer delay, not only a propagation delay), and a dial waits it once. Because of that queue a
 * network that starts with a latency spends minutes on its first DHT announcements (thousands of
 * ADD_PROVIDER streams queue behind each other; at 20 ms they time out): `setLatency` sets it on a
 * running network instead, once it has formed.
 */
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { memory } from '@libp2p/memory'
import { plaintext } from '@libp2p/plaintext'
import { multiaddr } from '@multiformats/multiaddr'
import { resolveConfig, type Layer } from '../node/config/load.js'
import { Daemon } from '../node/daemon.js'
import { silentLoggers, type LoggerFactory } from '../node/logger.js'
import { startBootstrap } from '../bootstrap/role.js'
import { yamux } from '@chainsafe/libp2p-yamux'

export interface NodeSpec {
  region?: string
  /** e.g. "NVIDIA H100 80GB HBM3:81559x2" */
  gpus?: string[]
  priceFloor?: number
  sell?: boolean
  /** config.dht overrides (benchmarks compare settings) */
  dht?: Record<string, number>
  /** Other config.provider values: availability, workloads, peak, country, limits… */
  provider?: Record<string, unknown>
  /** The lease and billing interval this node puts in its awards; damping: false turns bid damping off. */
  market?: { leaseMs?: number, billingIntervalSec?: number, damping?: boolean }
  /** This node's clock (default Date.now): a skewed clock, e.g. () => Date.now() + 5_000. */
  now?: () => number
}

export interface NetworkOptions {
  bootstrapCount?: number
  loggers?: LoggerFactory
  /** One-way delay of every buffer on every connection, ms (@libp2p/memory's `latency`; default 0). */
  latencyMs?: number
}

export interface LocalNetwork {
  root: string
  bootstraps: Daemon[]
  nodes: Daemon[]
  all: Daemon[]
  stop (): Promise<void>
}

let counter = 0

function configFor (name: string, spec: NodeSpec): ReturnType<typeof resolveConfig> {
  const layers: Layer[] = [{
    source: 'test',
    values: {
      listen: [`/memory/${name}`],
      communityBootstrap: false,
      // every in-process peer dials from the same "host": lift the per-host inbound limits
      connections: { inboundPerSecond: 100_000, maxPendingInbound: 100_000 },
      // tests run on a fast, quiet network: re-check pending provides often
      dht: { reprovideCheckMs: 60_000, ...(spec.dht ?? {}) },
      provider: {
        detectGpus: false,
        region: spec.region ?? 'local',
        sell: spec.sell ?? true,
        priceFloor: spec.priceFloor ?? 2,
        ...spec.provider,
        gpus: (spec.gpus ?? []).map((s) => {
          const match = /^(.+):(\d+)(?:x(\d+))?$/.exec(s)
          if (match === null) throw new Error(`bad gpu spec ${s}`)
          return { name: match[1], vramMiB: Number(match[2]), count: Number(match[3] ?? 1) }
        })
      }
    }
  }]
  return resolveConfig(layers)
}

export async function startDaemon (root: string, spec: NodeSpec, options: { role?: 'node' | 'bootstrap', loggers?: LoggerFactory, dial?: string[], dataDir?: string, latencyMs?: number } = {}): Promise<Daemon> {
  const name = `gpumesh-local-${process.pid}-${counter++}`
  // a restart passes the data dir of the daemon it replaces
  const dataDir = options.dataDir ?? join(root, name)
  const daemonOptions = {
    dataDir,
    config: configFor(name, spec),
    bootstrapPeers: [],
    loggers: options.loggers ?? silentLoggers,
    version: 'test',
    api: false,
    peerStore: 'memory' as const,
    ...(spec.market !== undefined ? { market: spec.market } : {}),
    ...(spec.now !== undefined ? { now: spec.now } : {}),
    libp2p: { transports: [memory(options.latencyMs !== undefined && options.latencyMs > 0 ? { latency: options.latencyMs } : {})], connectionEncrypters: [plaintext()], streamMuxers: [yamux()] }
  }
  const daemon = options.role === 'bootstrap' ? await startBootstrap(daemonOptions) : await Daemon.start({ ...daemonOptions, role: 'node' })
  // @libp2p/bootstrap only dials IP/DNS addresses: with the memory transport, dial directly
  for (const addr of options.dial ?? []) await daemon.node.dial(multiaddr(addr))
  return daemon
}

/** Start `bootstrapCount` bootstrap peers, then `specs.length` nodes dialling all of them. */
export async function startNetwork (specs: NodeSpec[], options: NetworkOptions = {}): Promise<LocalNetwork> {
  const root = await mkdtemp(join(tmpdir(), 'gpumesh-net-'))
  const bootstraps: Daemon[] = []
  for (let i = 0; i < (options.bootstrapCount ?? 1); i++) bootstraps.push(await startDaemon(root, {}, { role: 'bootstrap', loggers: options.loggers, latencyMs: options.latencyMs }))
  const dial = bootstraps.map((b) => b.addresses()[0] as string)
  const nodes = await Promise.all(specs.map(async (spec) => await startDaemon(root, spec, { dial, loggers: options.loggers, latencyMs: options.latencyMs })))
  const all = [...bootstraps, ...nodes]
  return {
    root,
    bootstraps,
    nodes,
    all,
    async stop () {
      await Promise.all(all.map(async (d) => { await d.stop() }))
      await rm(root, { recursive: true, force: true })
    }
  }
}

/** Wait until every selling node has all its capability keys on the DHT (or `timeoutMs` passes). */
export async function waitForAnnouncements (daemons: Daemon[], timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs
  for (const d of daemons) {
    while (d.announcer.state().some((k) => !k.provided)) {
      if (Date.now() > deadline) throw new Error(`${d.identity.peerId} did not announce: ${JSON.stringify(d.announcer.state().filter((k) => !k.provided).slice(0, 2))}`)
      d.announcer.kick()
      await d.announcer.idle()
      await new Promise((resolve) => setTimeout(resolve, 50))
    }
  }
}

/** The transport's per-connection delay object: @libp2p/memory keeps it on each listener and reads it for every buffer. */
interface MemoryListener { connection?: { latency?: number } }

/** Thrown when a network's transport offers no latency to set (not the memory transport, or another version of it). */
export class LatencyUnavailableError extends Error {
  readonly code = 'LATENCY_UNAVAILABLE'
  constructor (message: string) {
    super(message)
    this.name = 'LatencyUnavailableError'
  }
}

/**
 * Set the memory transport's latency on every daemon of a running network, ms: each buffer on every
 * connection (the listener's side decides, for both directions) waits that long from now on, and
 * each new dial too. Fails closed when a listener has no latency to set.
 */
export function setLatency (daemons: readonly Daemon[], latencyMs: number): void {
  if (!Number.isFinite(latencyMs) || latencyMs < 0) throw new RangeError(`latency must be ≥ 0 ms, got ${latencyMs}`)
  for (const d of daemons) {
    const components = (d.node as unknown as { components?: { transportManager?: { getListeners: () => unknown[] } } }).components
    const listeners = (components?.transportManager?.getListeners() ?? []) as MemoryListener[]
    const memory = listeners.filter((l) => typeof l.connection?.latency === 'number')
    if (memory.length === 0) throw new LatencyUnavailableError(`${d.identity.peerId} has no memory-transport listener whose latency can be set`)
    for (const l of memory) (l.connection as { latency: number }).latency = latencyMs
  }
}
