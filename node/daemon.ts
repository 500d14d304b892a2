/**
 * The gpumesh daemon: one per data dir. It wires identity, storage, the libp2p node, the provider's
 * capability ad and its DHT announcement, provider discovery and the local API, and shuts them down
 * in reverse order. The bootstrap role is the same daemon with `role: 'bootstrap'` (no selling,
 * relay server, peer exchange).
 */
import { cpus, totalmem } from 'node:os'
import { join } from 'node:path'
import { privateKeyFromProtobuf } from '@libp2p/crypto/keys'
import { LevelDatastore } from 'datastore-level'
import type { Identity } from '../crypto/index.js'
import { EVIDENCE_TOPIC, MAX_FIND_LIMIT, capabilityKeys, sealMessage, type CapabilityAd, type GpuInfo, type JobRequest, type ProviderQuery, type SealedMessage } from '../protocol/index.js'
import { availableMs } from '../protocol/market/calendar.js'
import { createMarketParams, type MarketParams, type MarketParamsInit } from '../protocol/market/params.js'
import type { RefusedRequester } from '../protocol/market/provider-agent.js'
import { ApiError, startApiServer, type ApiServer } from './api/server.js'
import { ensureApiToken, removeEndpoint, writeEndpoint } from './api/credentials.js'
import { Announcer, type KeyState } from './announcer.js'
import { BootstrapWatcher, type BootstrapStatus } from './bootstrap-watcher.js'
import { Market } from './market/market.js'
import { GossipRouter } from './gossip-router.js'
import { Peering } from './peering.js'
import { adAddresses, buildCapabilityAd, declaredGpuInfos } from './capability-ad.js'
import { signAttestation } from './trust/attestation.js'
import { Prober } from './trust/prober.js'
import { probeRoute } from './api/probe-route.js'
import { openDataDir, writeMarker } from './data-dir.js'
import type { Config } from './config/schema.js'
import { findProviders, type FindResult } from './discovery.js'
import { setupExecutors, type ExecutorSetup } from './executors/setup.js'
import { RelaySlots, type RelaySlotsStatus } from './relay-slots.js'
import { GpuDetectionError, detectGpus, toGpuInfo, type GpuDetection } from './gpu/nvidia-smi.js'
import { libp2pLogger } from './libp2p-logger.js'
import { buildLibp2p, type BuildOptions, type GpumeshLibp2p, type Role } from './libp2p.js'
import type { ReachabilityStatus } from './services/reachability.js'
import type { Logger, LoggerFactory } from './logger.js'
import { createMetrics, type NodeMetrics } from './metrics.js'
import { NodeStore, StorageError } from './storage.js'
import { DaemonError } from './daemon-error.js'

export { DaemonError, type DaemonErrorCode } from './daemon-error.js'

export interface DaemonOptions {
  dataDir: string
  config: Config
  role: Role
  bootstrapPeers: string[]
  loggers: LoggerFactory
  version: string
  /** Serve the local API (default true). In-process tests and benchmarks turn it off. */
  api?: boolean
  /** GPU detection; defaults to nvidia-smi. */
  detect?: () => Promise<GpuDetection>
  now?: () => number
  /** In-process tests: transports, encrypters and muxers to use instead of TCP/WS, Noise, Yamux. */
  libp2p?: Pick<BuildOptions, 'transports' | 'connectionEncrypters' | 'streamMuxers' | 'connectionGater'>
  metrics?: NodeMetrics
  /**
   * Market parameters over config.json's `market` section, for tests and benchmarks (the lease and
   * billing interval put in awards, bid damping, …). Invalid ones throw InvalidMarketParamsError.
   */
  market?: MarketParamsInit
  /** Providers' addresses for replication's independence rule beyond the connections to them (in-process tests: the memory transport has no IP). */
  replicaAddresses?: (peer: string) => readonly string[] | undefined
  /**
   * Where libp2p keeps its peer store and DHT records: a level database in the data dir (default),
   * or memory. In-process networks of many nodes use memory: dozens of level databases in one
   * process spend most of their time in level calls.
   */
  peerStore?: 'level' | 'memory'
}

export interface StatusInfo {
  peerId: string
  role: Role
  version: string
  startedAt: number
  addresses: string[]
  connections: number
  dht: { mode: string, routingTable: number }
  /** Reachability and NAT traversal (node/services/reachability.ts). */
  nat: ReachabilityStatus
  selling: boolean
  gpus: GpuInfo[]
  ad?: { cid: string, seq: number, expiresAt: number }
  /** GPU-seconds offered since the start: the ad's GPUs × the free time of its availability windows since then (a provider's fill rate divides by it). */
  offered?: { gpuSeconds: number, since: number }
  capabilityKeys: KeyState[]
  gpuDetection: string
  /** What happens to buyers' jobs of each configured workload (e.g. process: sandboxed, refused or UNSANDBOXED, and as whom). */
  executors: Partial<Record<string, string>>
  /** The workloads offered in the ad (configured ones less those refused). */
  workloads: string[]
  /** Whether the configured bootstrap peers answer (node/bootstrap-watcher.ts). */
  bootstrap: BootstrapStatus
  /** A relay's slots (bootstrap peers, node/relay-slots.ts). */
  relaySlots?: RelaySlotsStatus
  /** The market parameters in force (config.json's `market` section over the defaults); absent on a bootstrap peer. */
  market?: MarketParams
  /** Requesters this provider gives no bid for their score (protocol/market/requester-view.ts); absent on a bootstrap peer. */
  refusedRequesters?: RefusedRequester[]
}

/** Re-sign the ad when half its lifetime is gone, so peers never fetch an expired one. */
const AD_REFRESH_FRACTION = 0.5
const AD_RETRY_MS = 60_000
/**
 * An address change (a relay address gained or released, an observed address confirmed) re-signs the
 * ad this long after the change, so a burst of changes costs one signature and the ad's `addrs` never
 * lag for a whole refresh period.
 */
export const AD_ADDRESS_RESIGN_MS = 2_000

export class Daemon {
  private readonly log: Logger
  private ad: SealedMessage<'capability-ad'> | undefined
  /** This node's hardware attestation, signed when it starts selling; its id is in the ad and the receipts. */
  attestation: SealedMessage<'attestation'> | undefined
  private gpus: GpuInfo[] = []
  private gpuDetection = 'not run'
  private execution: ExecutorSetup | undefined
  private marketParams: MarketParams | undefined
  private refreshTimer: NodeJS.Timeout | undefined
  /** When the pending re-sign is due (ms epoch, this.now()'s clock). */
  private refreshDue = Infinity
  private api: ApiServer | undefined
  /** Jobs, bids, execution and settlement (not on bootstrap peers). */
  market: Market | undefined
  /** Probes the providers this node hears of, and by hand (not on bootstrap peers). */
  prober: Prober | undefined
  private peering: Peering | undefined
  /** A bootstrap peer's gossip relay (node/gossip-router.ts). */
  router: GossipRouter | undefined
  private bootstrapWatcher: BootstrapWatcher | undefined
  private relaySlots: RelaySlots | undefined
  private stopping: Promise<void> | undefined
  readonly startedAt: number
  private readonly now: () => number

  private constructor (
    readonly options: DaemonOptions,
    readonly identity: Identity,
    readonly node: GpumeshLibp2p,
    readonly store: NodeStore,
    private readonly datastore: LevelDatastore | undefined,
    readonly metrics: NodeMetrics,
    readonly announcer: Announcer
  ) {
    this.now = options.now ?? Date.now
    this.startedAt = this.now()
    this.log = options.loggers.forComponent(options.role === 'bootstrap' ? 'bootstrap' : 'node')
  }

  static async start (options: DaemonOptions): Promise<Daemon> {
    // a used data dir (datadir.json) keeps its identity and its records, or the daemon does not start
    const { identity, state } = await openDataDir(options.dataDir)
    const store = await NodeStore.open(options.dataDir, { mustExist: state.used, log: options.loggers.forComponent('store') })
    const datastore = options.peerStore === 'memory' ? undefined : new LevelDatastore(join(options.dataDir, 'libp2p'))
    let node: GpumeshLibp2p | undefined
    try {
      if (state.marker === undefined) await writeMarker(options.dataDir, identity.peerId, (options.now ?? Date.now)())
      try {
        await datastore?.open()
      } catch (err) {
        throw new StorageError('STORE_UNAVAILABLE', join(options.dataDir, 'libp2p'), `cannot open the peer store: ${(err as Error).message}`)
      }
      const metrics = options.metrics ?? createMetrics()
      node = await buildLibp2p({
        privateKey: privateKeyFromProtobuf(identity.toProtobuf()),
        config: options.config,
        role: options.role,
        bootstrapPeers: options.bootstrapPeers,
        ...(datastore !== undefined ? { datastore } : {}),
        metrics,
        log: options.loggers.forComponent('gossip'),
        // libp2p's own lines through the same sink, at the levels the spec gives libp2p:* (node/libp2p-logger.ts)
        logger: libp2pLogger(options.loggers),
        now: options.now,
        ...options.libp2p
      })
      try {
        await node.start()
      } catch (err) {
        const message = (err as Error).message
        if (/EADDRINUSE|address already in use/i.test(message) || (err as { code?: string }).code === 'EADDRINUSE') {
          throw new DaemonError('LISTEN_FAILED', `cannot listen on ${options.config.listen.join(', ')}: address already in use`, { cause: err })
        }
        throw new DaemonError('START_FAILED', `libp2p did not start: ${message}`, { cause: err })
      }
      const log = options.loggers.forComponent('dht')
      const announcer = new Announcer(node, log, metrics, async (keys) => { await store.setAnnouncedKeys(keys) }, options.config.dht.provideConcurrency)
      const daemon = new Daemon(options, identity, node, store, datastore, metrics, announcer)
      try {
        await daemon.afterStart()
      } catch (err) {
        await daemon.stop().catch(() => {})
        throw err
      }
      return daemon
    } catch (err) {
      await Promise.resolve(node?.stop()).catch(() => {})
      await datastore?.close().catch(() => {})
      await store.close().catch(() => {})
      throw err
    }
  }

  private async afterStart (): Promise<void> {
    const { config, role } = this.options
    this.node.addEventListener('peer:connect', () => {
      this.metrics.connectedPeers.set(this.node.getConnections().length)
      this.announcer.kick()
    })
    this.node.addEventListener('peer:disconnect', () => { this.metrics.connectedPeers.set(this.node.getConnections().length) })
    this.node.addEventListener('self:peer:update', () => { this.addressesChanged() })
    this.node.services.capability.currentAd = () => this.ad?.bytes
    this.node.services.probe.signer = this.identity
    this.log.info('started', { peerId: this.identity.peerId, role, addresses: this.addresses() })
    this.bootstrapWatcher = new BootstrapWatcher(this.node, this.options.bootstrapPeers, this.options.loggers.forComponent('bootstrap-peers'))
    this.bootstrapWatcher.start()
    const relay = this.node.services.relay
    if (relay !== undefined) {
      this.relaySlots = new RelaySlots(this.node, relay.reservations, this.options.loggers.forComponent('relay'))
      this.relaySlots.start()
    }
    if (role === 'node' && config.dht.mode === 'server') {
      // a node found behind NAT cannot be dialled: it serves no DHT there (peers' lookups would waste dials
      // on it) and serves again once public; a private network (`local`) and `unknown` change nothing
      const dht = this.node.services.dht
      this.node.services.reachability.onChange = async (d) => {
        const want = d.reachability === 'private' ? 'client' : d.reachability === 'public' ? 'server' : undefined
        if (want === undefined || dht.getMode() === want) return
        this.log.info('DHT mode follows reachability', { reachability: d.reachability, mode: want })
        await dht.setMode(want)
      }
    }
    if (role === 'node') {
      await this.startMarket()
      this.peering = new Peering(this.node, this.options.loggers.forComponent('peering'))
      this.peering.start()
    } else {
      // a bootstrap peer relays the market and evidence topics (and does peer exchange on them), nothing more
      this.router = new GossipRouter({ node: this.node, now: this.now, log: this.options.loggers.forComponent('gossip-router'), metrics: this.metrics })
      this.router.start()
    }
    // the API first: if its port is taken, fail before announcing anything
    if (this.options.api !== false) await this.startApi()
    const previous = await this.store.announcedKeys()
    if (role === 'node' && config.provider.sell) await this.sell(previous)
    else await this.announcer.forgetStale(previous, [])
  }

  private async startMarket (): Promise<void> {
    const { config, dataDir, loggers } = this.options
    this.execution = await setupExecutors(config, { workRoot: join(dataDir, 'work'), runDir: join(dataDir, 'run', 'process-jobs') }, loggers.forComponent('executors'))
    const params = this.options.market === undefined ? config.market : createMarketParams(this.options.market, config.market)
    this.marketParams = params
    this.market = await Market.start({
      executors: this.execution.executors,
      signer: this.identity,
      node: this.node,
      nodeStore: this.store,
      dataDir,
      config,
      loggers,
      metrics: this.metrics,
      now: this.now,
      ad: () => this.ad,
      knownAds: async (job) => {
        const found = await this.findProviders(queryFor(job), { timeoutMs: 5_000 })
        return { providers: found.providers, unreachable: found.failures.map((f) => f.peerId) }
      },
      ...(this.options.replicaAddresses !== undefined ? { replicaAddresses: this.options.replicaAddresses } : {}),
      params
    })
    const market = this.market
    const probes = config.probes
    this.prober = new Prober({
      probe: this.node.services.probe,
      signer: this.identity,
      enabled: probes.enabled,
      schedule: { intervalMs: probes.intervalMs, jitter: probes.jitter, perHour: probes.perHour, burst: probes.burst },
      now: this.now,
      log: loggers.forComponent('prober'),
      record: (evidence) => { market.requester.onEvidence(evidence) },
      keep: async (result) => { await market.store.putEnvelope(result.cid.toString(), result.bytes) },
      publish: async (result) => { await market.gossip.publish(result, [EVIDENCE_TOPIC]) },
      metrics: this.metrics
    })
    market.onBidder = (peer, model, closesAt) => { this.prober?.heardBid(peer, model, closesAt) }
    this.prober.start()
  }

  /** Detect and declare GPUs, sign the ad, announce the capability keys. */
  private async sell (previouslyAnnounced: readonly string[]): Promise<void> {
    const { provider } = this.options.config
    let detected: GpuInfo[] = []
    if (provider.detectGpus) {
      try {
        const detection = await (this.options.detect ?? detectGpus)()
        detected = detection.gpus.map((gpu) => toGpuInfo(gpu, provider.gpuVramMiB))
        this.gpuDetection = [`nvidia-smi: ${detected.length} GPU(s)`, ...gpuNotes(detection, provider.gpuVramMiB)].join('; ')
        if (this.gpuDetection.includes(';')) this.log.warn('GPU detection', { result: this.gpuDetection })
      } catch (err) {
        if (!(err instanceof GpuDetectionError)) throw err
        this.gpuDetection = `${err.code}: ${err.message}`
        this.log.info('no GPUs detected; selling declared GPUs only', { reason: err.message })
      }
    } else {
      this.gpuDetection = 'off (provider.detectGpus = false)'
    }
    this.gpus = [...detected, ...declaredGpuInfos(provider.gpus, this.identity.peerId, detected.length)]
    this.metrics.sellingGpus.set(this.gpus.length)
    if (this.gpus.length === 0 || this.execution?.workloads.length === 0) {
      this.log.warn(this.gpus.length === 0
        ? 'nothing to sell: no GPU detected and none declared (provider.gpus in config.json, or GPUMESH_GPUS)'
        : 'nothing to sell: every configured workload is refused (see executors in status)')
      await this.announcer.forgetStale(previouslyAnnounced, [])
      return
    }
    if (this.gpus.length > 64) {
      throw new DaemonError('START_FAILED', `${this.gpus.length} GPUs detected and declared; a capability ad holds at most 64`)
    }
    this.attestation = await signAttestation(this.identity, this.gpus, this.now())
    this.log.info('hardware attestation signed', { cid: this.attestation.cid.toString(), benchmark: this.attestation.payload.benchmark })
    await this.signAd()
    const keys = capabilityKeys({ gpus: this.gpus, region: provider.region })
    await this.announcer.forgetStale(previouslyAnnounced, keys)
    await this.announcer.set(keys)
  }

  private async signAd (): Promise<void> {
    if (this.stopping !== undefined) return
    const now = this.now()
    // an attestation that would expire before the next refresh is signed again
    if (this.attestation !== undefined && this.attestation.payload.expiresAt - now < this.options.config.provider.adTtlMs) {
      this.attestation = await signAttestation(this.identity, this.gpus, now)
    }
    const ad: CapabilityAd = buildCapabilityAd({
      provider: this.options.config.provider,
      gpus: this.gpus,
      host: { cpuCores: cpus().length, memoryMiB: Math.floor(totalmem() / 2 ** 20), diskGiB: 0 },
      seq: await this.store.nextAdSeq(now),
      addrs: this.addresses(),
      now,
      ...(this.attestation !== undefined ? { attestations: [this.attestation.cid] } : {}),
      ...(this.execution !== undefined ? { workloads: this.execution.workloads } : {}),
      ...(this.execution?.processSandbox !== undefined ? { processSandbox: this.execution.processSandbox } : {})
    })
    if (this.stopping !== undefined) return
    this.ad = sealMessage(this.identity, 'capability-ad', ad)
    this.log.info('capability ad signed', { cid: this.ad.cid.toString(), gpus: this.gpus.length, seq: ad.seq })
    // the attestation travels on the evidence topic, so a buyer holding the ad can check its id (best effort, as any gossip)
    if (this.attestation !== undefined) {
      this.market?.gossip.publish(this.attestation, [EVIDENCE_TOPIC]).catch((err: unknown) => {
        this.log.warn('publishing the attestation failed', { error: err })
      })
    }
    this.scheduleRefresh(Math.floor(this.options.config.provider.adTtlMs * AD_REFRESH_FRACTION))
  }

  /** The node's addresses changed: re-sign soon if the ad names others (no sooner than a re-sign already due). */
  private addressesChanged (): void {
    if (this.ad === undefined || this.stopping !== undefined) return
    const signed = new Set(this.ad.payload.addrs)
    const current = adAddresses(this.addresses())
    if (current.length === signed.size && current.every((a) => signed.has(a))) return
    if (this.refreshDue - this.now() <= AD_ADDRESS_RESIGN_MS) return
    this.log.debug('addresses changed: re-signing the ad', { addresses: current })
    this.scheduleRefresh(AD_ADDRESS_RESIGN_MS)
  }

  /** Re-sign later; a failed refresh retries after a minute, so one bad write cannot let the ad expire. */
  private scheduleRefresh (delayMs: number): void {
    clearTimeout(this.refreshTimer)
    this.refreshDue = this.now() + delayMs
    this.refreshTimer = setTimeout(() => {
      this.refreshDue = Infinity
      this.signAd().catch((err: unknown) => {
        this.log.error('re-signing the ad failed; retrying in a minute', { error: err })
        if (this.stopping === undefined) this.scheduleRefresh(AD_RETRY_MS)
      })
    }, delayMs)
    this.refreshTimer.unref()
  }

  addresses (): string[] {
    return this.node.getMultiaddrs().map((ma) => ma.toString())
  }

  status (): StatusInfo {
    const dht = this.node.services.dht
    return {
      peerId: this.identity.peerId,
      role: this.options.role,
      version: this.options.version,
      startedAt: this.startedAt,
      addresses: this.addresses(),
      connections: this.node.getConnections().length,
      dht: { mode: dht.getMode(), routingTable: (dht as unknown as { routingTable?: { size: number } }).routingTable?.size ?? -1 },
      nat: this.node.services.reachability.status(),
      selling: this.ad !== undefined,
      gpus: this.gpus,
      ...(this.ad !== undefined ? { ad: { cid: this.ad.cid.toString(), seq: this.ad.payload.seq, expiresAt: this.ad.payload.expiresAt } } : {}),
      ...(this.ad !== undefined ? { offered: { gpuSeconds: this.ad.payload.gpus.length * availableMs(this.ad.payload.availability, this.startedAt, this.now()) / 1000, since: this.startedAt } } : {}),
      capabilityKeys: this.announcer.state(),
      gpuDetection: this.gpuDetection,
      executors: this.execution?.notes ?? {},
      workloads: this.execution?.workloads ?? [],
      bootstrap: this.bootstrapWatcher?.status() ?? { state: 'none', configured: 0, connected: 0, failedRounds: 0, lastErrors: [] },
      ...(this.relaySlots !== undefined ? { relaySlots: this.relaySlots.status() } : {}),
      ...(this.marketParams !== undefined ? { market: this.marketParams } : {}),
      ...(this.market !== undefined ? { refusedRequesters: this.market.provider.status().refused } : {})
    }
  }

  peers (): Array<{ peerId: string, addresses: string[], direction: string, openedAt: number }> {
    return this.node.getConnections().map((c) => ({
      peerId: c.remotePeer.toString(),
      addresses: [c.remoteAddr.toString()],
      direction: c.direction,
      openedAt: c.timeline.open
    })).sort((a, b) => a.peerId < b.peerId ? -1 : 1)
  }

  async findProviders (query: ProviderQuery, options: { signal?: AbortSignal, timeoutMs?: number, limit?: number } = {}): Promise<FindResult> {
    const log = this.options.loggers.forComponent('discovery')
    const result = await findProviders(this.node, query, log, this.metrics, {
      ...options,
      ...(this.ad !== undefined ? { ownAd: { cid: this.ad.cid.toString(), ad: this.ad.payload } } : {})
    })
    const reputation = this.market?.requester.agent.reputation
    if (reputation !== undefined) {
      const now = this.now()
      for (const p of result.providers) p.reputation = reputation.explain(p.peerId, now)
    }
    for (const p of result.providers) {
      this.prober?.heardAd(p.peerId, p.ad.gpus[0]?.model)
      const probe = this.prober?.lastProbe(p.peerId)
      if (probe !== undefined) p.probe = probe
    }
    return result
  }

  private async startApi (): Promise<void> {
    const { dataDir, config } = this.options
    const token = await ensureApiToken(dataDir)
    try {
      this.api = await startApiServer({
        host: config.api.host,
        port: config.api.port,
        token,
        metrics: this.metrics,
        log: this.options.loggers.forComponent('api'),
        routes: {
          '/v1/status': async () => this.status(),
          '/v1/peers': async () => this.peers(),
          '/v1/providers': async (query, signal) => await this.findProviders(parseProviderQuery(query), { signal, timeoutMs: numberParam(query, 'timeoutMs', 1, 120_000), limit: limitParam(query) }),
          ...this.market?.routes(),
          ...(this.prober !== undefined ? probeRoute(this.prober, this.node.services.capability) : {})
        }
      })
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'EADDRINUSE') {
        throw new DaemonError('LISTEN_FAILED', `cannot serve the local API on ${config.api.host}:${config.api.port}: address already in use`, { cause: err })
      }
      throw err
    }
    await writeEndpoint(dataDir, { url: this.api.url, pid: process.pid, peerId: this.identity.peerId, role: this.options.role })
    this.log.info('local API listening', { url: this.api.url })
  }

  /** Graceful shutdown: stop the API, withdraw capability keys, close connections, flush storage. */
  async stop (): Promise<void> {
    this.stopping ??= this.shutdown()
    await this.stopping
  }

  private async shutdown (): Promise<void> {
    this.log.info('stopping')
    clearTimeout(this.refreshTimer)
    this.ad = undefined
    // every step runs even when an earlier one fails, so the databases are always closed
    const steps: Array<[string, () => Promise<void>]> = [
      ['close the API', async () => { await this.api?.close() }],
      ['remove api.json', async () => { if (this.api !== undefined) await removeEndpoint(this.options.dataDir) }],
      ['stop the market', async () => { this.bootstrapWatcher?.stop(); this.relaySlots?.stop(); this.peering?.stop(); this.router?.stop(); await this.prober?.stop(); await this.market?.stop() }],
      ['withdraw capability keys', async () => { await this.announcer.withdraw() }],
      ['stop the announcer', async () => { await this.announcer.stop() }],
      ['stop libp2p', async () => { await this.node.stop() }],
      ['close the peer store', async () => { await this.datastore?.close() }],
      ['close the database', async () => { await this.store.close() }]
    ]
    const failures: Error[] = []
    for (const [what, step] of steps) {
      try {
        await step()
      } catch (err) {
        failures.push(new Error(`${what}: ${(err as Error).message}`))
      }
    }
    if (failures.length > 0) throw new AggregateError(failures, `shutdown finished with errors: ${failures.map((f) => f.message).join('; ')}`)
    this.log.info('stopped')
  }
}

/** The lines nvidia-smi printed that could not be read, and the GPUs whose memory it did not report. */
function gpuNotes (detection: GpuDetection, declaredVramMiB: Readonly<Record<string, number>>): string[] {
  const notes = detection.skipped.map((err) => `skipped ${err.message.replace(/^nvidia-smi printed output that gpumesh cannot read: /, '')}`)
  for (const gpu of detection.gpus) {
    if (gpu.memoryMiB !== undefined) continue
    const declared = declaredVramMiB[gpu.uuid] ?? declaredVramMiB[String(gpu.index)]
    notes.push(declared !== undefined
      ? `GPU ${gpu.index} (${gpu.name}) reports no memory size; ${declared} MiB declared in provider.gpuVramMiB`
      : `GPU ${gpu.index} (${gpu.name}) reports no memory size: sold with VRAM unknown (no VRAM bucket); declare it as provider.gpuVramMiB {"${gpu.index}": MiB}`)
  }
  return notes
}

function numberParam (query: URLSearchParams, name: string, min: number, max: number): number | undefined {
  const raw = query.get(name)
  if (raw === null || raw === '') return undefined
  const value = Number(raw)
  if (!Number.isFinite(value) || value < min || value > max) throw new ApiError(400, 'BAD_QUERY', `${name} must be a number from ${min} to ${max}`)
  return value
}

/**
 * The DHT query for the no-bids explanation: broad on purpose, so the explanation can count the providers
 * that miss the job's terms too. Only a strict single region narrows it; VRAM never does (a request larger
 * than any GPU would otherwise find no provider at all, and say "0 of 0").
 */
function queryFor (job: JobRequest): ProviderQuery {
  const query: ProviderQuery = {}
  if (job.placement.residency === 'strict' && job.placement.regions.length === 1) query.region = job.placement.regions[0] as string
  return query
}

/** `limit` of /v1/providers: a whole number of providers, 1 … MAX_FIND_LIMIT; absent → the default. */
function limitParam (query: URLSearchParams): number | undefined {
  const limit = numberParam(query, 'limit', 1, MAX_FIND_LIMIT)
  if (limit !== undefined && !Number.isInteger(limit)) throw new ApiError(400, 'BAD_QUERY', `limit must be a whole number from 1 to ${MAX_FIND_LIMIT}`)
  return limit
}

export function parseProviderQuery (query: URLSearchParams): ProviderQuery {
  const out: ProviderQuery = {}
  const gpu = query.get('gpu')
  const region = query.get('region')
  const minVram = numberParam(query, 'minVram', 0, 1024)
  if (gpu !== null && gpu !== '') out.gpu = gpu
  if (region !== null && region !== '') {
    if (!/^[a-z0-9]+(-[a-z0-9]+)*$/.test(region)) throw new ApiError(400, 'BAD_QUERY', 'region must be a lower-case slug such as eu or eu-west')
    out.region = region
  }
  if (minVram !== undefined) out.minVramGB = minVram
  return out
}
