/**
 * In-process networks of real gpumesh daemons over the libp2p memory transport (plaintext, yamux):
 * the same daemon code as `gpumesh node start`, minus TCP, Noise and the local API. `gpumesh sim
 * --calibrate` runs the real stack with it (calibration/), and so do the integration tests and
 * benchmarks (through test/helpers/network.ts); end-to-end tests use separate processes over TCP.
 *
 * `delay` is a propagation delay (delay-transport.ts): every chunk arrives that long after it was
 * written, chunks pipelined, so it means what the model's one-way delay means. @libp2p/memory's own
 * `latency` is not used: it delays each buffer in turn on a connection, a queue that caps throughput
 * (a network that started with it spent minutes on its first DHT announcements). The delay is
 * shared and can be changed on a running network (`delay.set(ms)`).
 */
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { memory } from '@libp2p/memory'
import { plaintext } from '@libp2p/plaintext'
import { multiaddr } from '@multiformats/multiaddr'
import type { ConnectionGater } from '@libp2p/interface'
import { resolveConfig, type Layer } from '../node/config/load.js'
import { Daemon } from '../node/daemon.js'
import { silentLoggers, type LoggerFactory } from '../node/logger.js'
import { startBootstrap } from '../bootstrap/role.js'
import { yamux } from '@chainsafe/libp2p-yamux'
import { delayedMemory, type PropagationDelay } from './delay-transport.js'

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
  /**
   * config.probes overrides. The daemon's own probes are off in these networks unless a spec turns them
   * on ({enabled: true}): every declared GPU here computes on this CPU, so probes would flag them all and
   * change the awards the other tests check.
   */
  probes?: Record<string, unknown>
  /** This node's clock (default Date.now): a skewed clock, e.g. () => Date.now() + 5_000. */
  now?: () => number
  /** In-process networks have no IP addresses: the ones replication's independence rule reads instead. */
  replicaAddresses?: (peer: string) => readonly string[] | undefined
  /** Which peers this node may connect to (libp2p's connection gater): a test cuts a link with it. */
  connectionGater?: ConnectionGater
  /** libp2p's own metrics in the node's registry (config metrics.libp2p; default off here, on for daemons). */
  libp2pMetrics?: boolean
  /** Serve the local HTTP API (on 127.0.0.1, a free port; api.json and api.token in the data dir). Default off. */
  api?: boolean
}

export interface NetworkOptions {
  bootstrapCount?: number
  loggers?: LoggerFactory
  /** One-way propagation delay of every connection (default none: the bare memory transport). */
  delay?: PropagationDelay
  /**
   * `together` (default): every node starts at once. `in-turn`: one after another, each once the
   * previous one's capability keys are on the DHT (or `turnTimeoutMs` passed), as a network grows.
   * On one event loop, 18 providers' cold starts together are thousands of DHT streams at once; the
   * provides then outlast their 30 s timeout and retry, and under load few ever finish.
   */
  join?: 'together' | 'in-turn'
  /** In turn: the longest wait for one node's announcements before the next starts, ms (default 60 s). */
  turnTimeoutMs?: number
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
      probes: { enabled: false, ...(spec.probes ?? {}) },
      // libp2p's metrics wrap every stream: off for networks of many nodes in one process, unless asked
      metrics: { libp2p: spec.libp2pMetrics ?? false },
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

export async function startDaemon (root: string, spec: NodeSpec, options: { role?: 'node' | 'bootstrap', loggers?: LoggerFactory, dial?: string[], dataDir?: string, delay?: PropagationDelay, connectionGater?: ConnectionGater } = {}): Promise<Daemon> {
  const name = `gpumesh-local-${process.pid}-${counter++}`
  // a restart passes the data dir of the daemon it replaces
  const dataDir = options.dataDir ?? join(root, name)
  const daemonOptions = {
    dataDir,
    config: configFor(name, spec),
    bootstrapPeers: [],
    loggers: options.loggers ?? silentLoggers,
    version: 'test',
    api: spec.api ?? false,
    peerStore: 'memory' as const,
    ...(spec.market !== undefined ? { market: spec.market } : {}),
    ...(spec.now !== undefined ? { now: spec.now } : {}),
    ...(spec.replicaAddresses !== undefined ? { replicaAddresses: spec.replicaAddresses } : {}),
    libp2p: {
      transports: [options.delay !== undefined ? delayedMemory(options.delay) : memory()],
      connectionEncrypters: [plaintext()],
      streamMuxers: [yamux()],
      ...(options.connectionGater !== undefined ? { connectionGater: options.connectionGater } : {})
    }
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
  for (let i = 0; i < (options.bootstrapCount ?? 1); i++) bootstraps.push(await startDaemon(root, {}, { role: 'bootstrap', loggers: options.loggers, delay: options.delay }))
  const dial = bootstraps.map((b) => b.addresses()[0] as string)
  const start = async (spec: NodeSpec): Promise<Daemon> => await startDaemon(root, spec, { dial, loggers: options.loggers, delay: options.delay, ...(spec.connectionGater !== undefined ? { connectionGater: spec.connectionGater } : {}) })
  const nodes: Daemon[] = []
  if (options.join === 'in-turn') {
    for (const spec of specs) {
      const d = await start(spec)
      nodes.push(d)
      // not there yet is not fatal here: the caller waits for every node's keys once all have started
      await waitForAnnouncements([d], options.turnTimeoutMs ?? 60_000).catch(() => {})
    }
  } else {
    nodes.push(...await Promise.all(specs.map(start)))
  }
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
