/**
 * The market inside one daemon (DESIGN §5–§6): the gossip on market and evidence topics, the
 * requester (jobs submitted here), the provider (jobs this node bids on and runs, when it sells),
 * the blob store their inputs and outputs move through, and the market's records in level. It
 * dispatches gossip to both sides, hands exec streams to the provider, and serves the job and ledger
 * routes of the local API.
 */
import { join } from 'node:path'
import { type CID, type Signer } from '../../crypto/index.js'
import { randomNonce } from '../random.js'
import {
  EVIDENCE_TOPIC, MessageRejectedError, defaultMarketParams, openRoundRequest, providerTopics, sealMessage,
  type JobRequest, type MarketParams, type Scheduler, type KnownProviders, type OpenedMessage, type SealedMessage
} from '../../protocol/index.js'
import { ApiError, type Route } from '../api/server.js'
import { BlobError, BlobStore } from '../blobs/store.js'
import type { Config } from '../config/schema.js'
import { setupExecutors } from '../executors/setup.js'
import type { Executor } from '../executors/types.js'
import type { GpumeshLibp2p } from '../libp2p.js'
import type { LoggerFactory } from '../logger.js'
import type { NodeMetrics } from '../metrics.js'
import type { NodeStore } from '../storage.js'
import { AuditLog } from './audit.js'
import { BudgetRefusal } from '../../protocol/trust/budget.js'
import { ALWAYS_RELEVANT_KINDS, EVIDENCE_KINDS, EvidenceQuota, evidenceSubjects, isRelevant, type EvidenceKind } from '../../protocol/trust/evidence-budget.js'
import { evidenceFromMessage, type EvidenceMessageKind } from '../../protocol/trust/reputation-evidence.js'
import { Convictions } from '../trust/convictions.js'
import { DEFAULT_REEXECUTE_WALL_MS } from '../trust/reexecute.js'
import { HistorySync } from '../trust/history-sync.js'
import type { HistoryAskParams } from '../../protocol/trust/history-asker.js'
import { EvidenceHistory } from './history.js'
import { MarketGossip, type GossipKind } from './gossip.js'
import { JobSpecError, buildJobRequest, validateJobSpec, type JobSpecFields } from './job-spec.js'
import { ledgerView } from './ledger-view.js'
import { ProviderMarket } from './provider.js'
import { createRealScheduler } from './real-scheduler.js'
import { loadSpotcheckSeed } from './requester-seed.js'
import { RequesterMarket } from './requester.js'
import { MarketStore } from './store.js'
import type { LedgerView } from './views.js'

/** The gossiped evidence kinds that say something of a peer's conduct (receipts are the provider's own word). */
const REPUTATION_KINDS: readonly EvidenceMessageKind[] = ['payment', 'failure-report', 'probe-result']

/** Largest input file a job may name, and all of a job's inputs together. */
export const MAX_INPUT_BYTES = 256 * 1024 * 1024

export interface MarketOptions {
  signer: Signer
  node: GpumeshLibp2p
  nodeStore: NodeStore
  dataDir: string
  config: Config
  loggers: LoggerFactory
  metrics?: NodeMetrics
  now: () => number
  /** The market's parameters (config.json's `market` section); default defaultMarketParams. */
  params?: MarketParams
  /** Time for every market component (default: the wall clock, `now`). */
  scheduler?: Scheduler
  /** This node's current signed capability ad (undefined while not selling). */
  ad: () => SealedMessage<'capability-ad'> | undefined
  /** The providers that might run a job, for the no-bids explanation: ads fetched, and DHT answers without one. */
  knownAds?: (job: JobRequest) => Promise<KnownProviders>
  /** Executors by kind (default: setupExecutors — process, wasm and docker as configured, process only when its sandbox can run). */
  executors?: Partial<Record<'process' | 'wasm' | 'docker', Executor>>
  /** Providers' addresses for replication's independence rule beyond the connections to them (protocol/trust/replicate.ts AddressLookup). */
  replicaAddresses?: (peer: string) => readonly string[] | undefined
  /** Whom to ask for history and when (protocol/trust/history-asker.ts); default defaultHistoryAskParams. */
  historyAsk?: Partial<HistoryAskParams>
}

export class Market {
  /** Auctions this node watched, so it can check their awards. */
  readonly audit = new AuditLog()
  /** Told of each bid on a job of this node's that is still taking bids: the bidder, its model, the window's close (the prober). */
  onBidder: ((peer: string, model: string, closesAt: number) => void) | undefined
  /** The evidence index this node serves on /gpumesh/history/1.0.0 and the taking of other nodes' answers. */
  readonly history: EvidenceHistory
  /** Asks peers for convictions on joining and for the history of providers this node meets (§7.11). */
  readonly historySync: HistorySync

  private constructor (
    private readonly options: MarketOptions,
    readonly blobs: BlobStore,
    readonly store: MarketStore,
    readonly gossip: MarketGossip,
    readonly requester: RequesterMarket,
    readonly provider: ProviderMarket,
    private readonly quota: EvidenceQuota,
    readonly convictions: Convictions
  ) {
    this.history = new EvidenceHistory({
      store,
      gossip,
      now: options.now,
      log: options.loggers.forComponent('history'),
      ...(options.metrics !== undefined ? { metrics: options.metrics } : {}),
      admit: (message, asked) => this.admitEvidence(message, asked),
      deliver: (message) => { this.dispatch(message) }
    })
    this.historySync = new HistorySync({
      node: options.node,
      history: this.history,
      knows: (peer) => requester.agent.reputation.reliability(peer) !== undefined,
      now: options.now,
      log: options.loggers.forComponent('history'),
      ...(options.historyAsk !== undefined ? { params: options.historyAsk } : {})
    })
  }

  static async start (options: MarketOptions): Promise<Market> {
    const { node, config, loggers, metrics, now } = options
    const params = options.params ?? defaultMarketParams
    const scheduler = options.scheduler ?? createRealScheduler(now)
    const blobs = await BlobStore.open(join(options.dataDir, 'blobs'), { inputCacheBytes: config.provider.inputCacheMiB * 1024 * 1024 })
    node.services.blob.store = blobs
    const store = new MarketStore(options.nodeStore.database, options.nodeStore.journal)
    const quota = new EvidenceQuota()
    await store.loadEvidenceQuota(quota)
    let market: Market | undefined
    const gossip = new MarketGossip({
      node,
      now,
      log: loggers.forComponent('gossip'),
      ...(metrics !== undefined ? { metrics } : {}),
      onMessage: (message) => { market?.dispatch(message) },
      admit: (message) => market?.admitEvidence(message),
      // this node's own evidence is served too (its failure reports, receipts, probe results, attestation)
      onPublish: (message, topics) => {
        if (!topics.includes(EVIDENCE_TOPIC) || !(EVIDENCE_KINDS as readonly string[]).includes(message.kind)) return
        const own = message as SealedMessage<EvidenceKind>
        void store.putEnvelope(own.cid.toString(), own.bytes).then(async () => { await market?.history.index(own, options.signer.peerId) }).catch(() => {})
      }
    })
    if (config.verification.replicaIndependence === 'peer') {
      loggers.forComponent('requester').warn('verification.replicaIndependence is peer: replicas need only distinct peer ids, not distinct networks — one operator with many identities can hold every replica of a job')
    }
    const requester = new RequesterMarket({
      signer: options.signer,
      node,
      gossip,
      store,
      blobs,
      jobsDir: join(options.dataDir, 'jobs'),
      now,
      params,
      scheduler,
      log: loggers.forComponent('requester'),
      ...(metrics !== undefined ? { metrics } : {}),
      ...(options.knownAds !== undefined ? { knownAds: options.knownAds } : {}),
      trust: {
        spotcheckSeed: await loadSpotcheckSeed(options.dataDir),
        independence: config.verification.replicaIndependence,
        auditUnproven: config.verification.auditUnproven,
        reexecuteLimitMs: DEFAULT_REEXECUTE_WALL_MS,
        agreementAuditPerMille: config.verification.agreementAuditPerMille,
        // where this machine is: bidders not measured yet are scored at the RTT estimated from it
        location: { region: config.provider.region, ...(config.provider.country !== undefined ? { country: config.provider.country } : {}) },
        ...(options.replicaAddresses !== undefined ? { addresses: options.replicaAddresses } : {})
      }
    })
    const provider = new ProviderMarket({
      signer: options.signer,
      peerId: options.signer.peerId,
      node,
      gossip,
      store,
      blobs,
      executors: options.executors ?? (await setupExecutors(config, { workRoot: join(options.dataDir, 'work'), runDir: join(options.dataDir, 'run', 'process-jobs') }, loggers.forComponent('executors'))).executors,
      ad: options.ad,
      now,
      params,
      scheduler,
      log: loggers.forComponent('provider'),
      ...(metrics !== undefined ? { metrics } : {}),
      seenBid: (job, bid) => market?.audit.bid(job, bid),
      minRequesterTrust: config.provider.minRequesterTrust
    })
    const convictions = new Convictions({
      signer: options.signer, node, gossip, store, blobs, requester, dataDir: options.dataDir, now, log: loggers.forComponent('fraud'), maxInputBytes: MAX_INPUT_BYTES,
      // a proof this node signed is a SealedMessage: its signer is this node
      onKept: (c) => { void market?.history.index(c.message, (c.message as Partial<OpenedMessage<'fraud-proof'>>).signer ?? options.signer.peerId) }
    })
    requester.proveWrongReplica = async (job, receipt) => { await convictions.proveWrongReplica(job, receipt) }
    market = new Market(options, blobs, store, gossip, requester, provider, quota, convictions)
    await requester.load()
    const resumed = new Set([...requester.awardsInFlight(), ...await provider.load()])
    // work in flight at the last stop that neither side took up again: its ledger entries say so
    for (const entry of await store.ledger()) {
      if (entry.state === 'open' && !resumed.has(entry.award)) await store.putLedger({ ...entry, state: 'interrupted', updatedAt: now() })
    }
    node.services.exec.onChannel = (channel) => { provider.handleChannel(channel) }
    node.services.history.source = async (request) => await market.history.page(request)
    gossip.subscribe([...providerTopics(config.provider.region), EVIDENCE_TOPIC])
    market.historySync.start()
    return market
  }

  /** Route one accepted gossip message to the side that wants it. */
  private dispatch (message: OpenedMessage<GossipKind>): void {
    switch (message.kind) {
      case 'job-request':
        this.audit.onJob(message as OpenedMessage<'job-request'>)
        this.provider.onJob(message as OpenedMessage<'job-request'>)
        return
      case 'auction-round': {
        const round = message as OpenedMessage<'auction-round'>
        let request: OpenedMessage<'job-request'>
        try {
          request = openRoundRequest(round, this.options.now())
        } catch (err) {
          if (!(err instanceof MessageRejectedError)) throw err
          this.options.metrics?.messagesRejected.inc({ kind: 'auction-round', reason: err.reason, via: 'gossip' })
          return
        }
        this.provider.onJob(request, { round: round.payload.round, attempt: round.payload.attempt, excluded: round.payload.excluded, opensAt: round.payload.issuedAt })
        return
      }
      case 'bid': {
        const bid = message as OpenedMessage<'bid'>
        const closesAt = this.requester.biddingClosesAt(bid.payload.job.toString())
        if (closesAt !== undefined) {
          this.onBidder?.(bid.signer, bid.payload.model, closesAt)
          // a bidder this node knows nothing of: ask a few peers what they hold on it, in the background
          this.historySync.providerMet(bid.signer)
        }
        this.audit.onBid(bid)
        this.requester.onBid(bid)
        this.provider.onBid(bid)
        return
      }
      case 'award':
        this.audit.onAward(message as OpenedMessage<'award'>)
        this.provider.onAwardSeen(message as OpenedMessage<'award'>)
        void this.store.putEnvelope(message.cid.toString(), message.bytes).catch(() => {})
        return
      default:
        // evidence (admitted by admitEvidence): kept, and what speaks of a peer goes to the reputation view,
        // where it counts as much as this node trusts its signer (protocol/trust/reputation.ts)
        void this.store.putEvidence(message.cid.toString(), message.signer, message.bytes)
          .then(async () => { await this.history.index(message as OpenedMessage<EvidenceKind>, message.signer) }).catch(() => {})
        if ((REPUTATION_KINDS as readonly string[]).includes(message.kind) && message.signer !== this.options.signer.peerId) {
          const evidence = evidenceFromMessage(message as OpenedMessage<EvidenceMessageKind>)
          this.requester.onEvidence(evidence)
          // the provider's view of requesters takes what speaks of paying (requester-view.ts)
          this.provider.onEvidence(evidence)
        }
    }
  }

  /**
   * Evidence is kept (and relayed) only when it is about a job this node submitted or watched, or
   * a peer it is connected to (or itself), and within its signer's and the store's quota
   * (protocol/trust/evidence-budget.ts). Market messages pass. A fraud proof concerns every node (its
   * subject may bid on any job) and goes to the verifier within its signer's quota (node/trust/convictions.ts).
   * `asked`: a peer this node asked a history server about (§7.11): evidence naming it is relevant.
   */
  admitEvidence (message: OpenedMessage<GossipKind>, asked?: string): string | undefined {
    if (!(EVIDENCE_KINDS as readonly string[]).includes(message.kind)) return undefined
    if (ALWAYS_RELEVANT_KINDS.includes(message.kind as EvidenceKind)) {
      const refusal = this.quota.charge(message.signer, message.bytes.byteLength)
      if (refusal !== undefined || message.kind !== 'fraud-proof') return refusal
      return this.convictions.take(message as OpenedMessage<'fraud-proof'>)
    }
    const me = this.options.signer.peerId
    const knows = {
      job: (id: string) => this.audit.watches(id) || this.requester.view(id) !== undefined,
      peer: (id: string) => id === me || id === asked || this.options.node.getConnections().some((c) => c.remotePeer.toString() === id)
    }
    const subjects = evidenceSubjects(message.kind as EvidenceKind, message.payload as unknown as Record<string, unknown>, message.signer)
    if (!isRelevant(subjects, knows)) return BudgetRefusal.IRRELEVANT
    return this.quota.charge(message.signer, message.bytes.byteLength)
  }

  /** Validate a job spec from the API, import its inputs, sign and submit the job. */
  async submit (body: unknown): Promise<{ job: string }> {
    let spec
    try {
      spec = validateJobSpec(body as JobSpecFields, 'the request')
    } catch (err) {
      if (err instanceof JobSpecError) throw new ApiError(400, 'BAD_JOB', err.message)
      throw err
    }
    const inputs: Array<{ path: string, cid: CID, size: number }> = []
    let total = 0
    for (const input of spec.inputs) {
      try {
        const blob = await this.blobs.importFile(input.file, MAX_INPUT_BYTES - total)
        total += blob.size
        inputs.push({ path: input.path, cid: blob.cid, size: blob.size })
      } catch (err) {
        if (err instanceof BlobError) throw new ApiError(400, 'BAD_INPUT', `input ${input.path} (${input.file}): ${err.message}`)
        throw err
      }
    }
    let request: SealedMessage<'job-request'>
    try {
      request = sealMessage(this.options.signer, 'job-request', buildJobRequest(spec, inputs, this.options.now(), randomNonce(16)))
    } catch (err) {
      if (err instanceof JobSpecError || err instanceof MessageRejectedError) throw new ApiError(400, 'BAD_JOB', err.message)
      throw err
    }
    return { job: await this.requester.submit(request) }
  }

  async ledger (): Promise<LedgerView> {
    return ledgerView(this.options.signer.peerId, await this.store.ledger())
  }

  /** The job and ledger routes of the local API. */
  routes (): Record<string, Route> {
    const id = (query: URLSearchParams): string => {
      const value = query.get('id')
      if (value === null || value === '') throw new ApiError(400, 'BAD_QUERY', 'id is required')
      return value
    }
    const found = <T>(value: T | undefined, job: string): T => {
      if (value === undefined) throw new ApiError(404, 'NO_SUCH_JOB', `no job ${job} was submitted from this node`)
      return value
    }
    return {
      'POST /v1/jobs': async (_query, _signal, body) => await this.submit(body),
      '/v1/jobs': async () => this.requester.list(),
      '/v1/job': async (query) => found(this.requester.view(id(query)), id(query)),
      '/v1/job/logs': async (query) => found(await this.requester.logs(id(query), Number(query.get('from') ?? 0) || 0), id(query)),
      '/v1/job/result': async (query) => found(this.requester.result(id(query)), id(query)),
      'POST /v1/job/cancel': async (query) => found(await this.requester.cancel(id(query)), id(query)),
      'POST /v1/job/verify': async (query) => await this.convictions.verifyJob(id(query)),
      '/v1/ledger': async () => await this.ledger(),
      '/v1/audit': async (query) => {
        const results = this.audit.check(id(query))
        if (results === undefined) throw new ApiError(404, 'NOT_WATCHED', `this node did not see job ${id(query)} on gossip`)
        return results
      },
      '/v1/market': async () => this.provider.status(),
      '/v1/market/logs': async (query) => {
        const logs = this.provider.logs(id(query), Number(query.get('from') ?? 0) || 0)
        if (logs === undefined) throw new ApiError(404, 'NO_SUCH_JOB', `this node holds no award of job ${id(query)} (it keeps one while it runs and a while after)`)
        return logs
      },
      '/v1/bids': async () => ({ bids: this.provider.recentBids() }),
      // how a peer scores in this node's reputation view; without `peer`, this node itself: the evidence
      // about it that reached it, weighed by the formula every peer uses (each with its own trust in the reporters)
      '/v1/reputation': async (query) => {
        const peer = query.get('peer') ?? this.options.signer.peerId
        return { peer, self: peer === this.options.signer.peerId, ...this.requester.agent.reputation.explain(peer, this.options.now()) }
      }
    }
  }

  async stop (): Promise<void> {
    this.options.node.services.exec.onChannel = undefined
    this.options.node.services.history.source = undefined
    await this.historySync.stop()
    await this.requester.stop()
    await this.provider.stop()
    await this.convictions.stop()
    this.gossip.stop()
  }
}
