/**
 * The requester's side of the market (DESIGN §5–§6): it gossips a job, collects bids, decides the
 * award with the shared pure logic, contacts the winner on the exec stream, watches heartbeats,
 * pays each billing interval, checks the receipt against the outputs it fetches, and re-auctions
 * when a provider fails. The job's state machine is `reduceRequester` (protocol/market); this class
 * feeds it events and carries out its effects. One `RequesterMarket` per node; one `ActiveJob` per
 * job submitted here.
 */
import { appendFile, mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises'
import { dirname, join } from 'node:path'
import { peerIdFromString } from '@libp2p/peer-id'
import { CID, decodeCanonical, type Signer } from '../../crypto/index.js'
import {
  DEFAULT_BILLING_INTERVAL_SEC, DEFAULT_LEASE_MS, EVIDENCE_TOPIC, MessageRejectedError,
  assessBid, decideAward, explainNoBids, formatMicros, isRequesterFinal, jobTopics, openMessage, reduceRequester, requesterInitFromJob,
  sealMessage, startRequesterJob,
  type EvidenceRef, type JobRequest, type KnownProviders, type MarketParams, type Scheduler, type OpenedMessage, type RankedBid, type RequesterEffect,
  type RequesterEvent, type RequesterJob, type SealedMessage
} from '../../protocol/index.js'
import type { BlobStore } from '../blobs/store.js'
import { BlobFetchError } from '../services/blob.js'
import type { GpumeshLibp2p } from '../libp2p.js'
import type { Logger } from '../logger.js'
import type { NodeMetrics } from '../metrics.js'
import { LOG_WINDOW, ExecStreamError, type ExecChannel } from '../services/exec.js'
import type { MarketGossip } from './gossip.js'
import { checkManifest, type OutputManifest } from './manifest.js'
import { MAX_LOG_BYTES } from './provider-io.js'
import { Reputation } from '../../protocol/index.js'
import type { MarketStore } from './store.js'
import { jobView, type JobRecord } from './requester-views.js'
import type { JobView, LedgerEntry, LogsView, ResultView } from './views.js'

/** Most bytes of outputs fetched for one job, all files together. */
export const MAX_OUTPUT_BYTES = 256 * 1024 * 1024
/** Most bytes of log kept for one job, all attempts together (the provider's own cap); the rest is cut. */
export const MAX_JOB_LOG_BYTES = MAX_LOG_BYTES
const MAX_MANIFEST_BYTES = 1024 * 1024
const MAX_EVENTS = 200
const HOUR_MS = 3_600_000
const DAY_MS = 24 * HOUR_MS

export interface RequesterOptions {
  signer: Signer
  node: GpumeshLibp2p
  gossip: MarketGossip
  store: MarketStore
  blobs: BlobStore
  /** Where fetched outputs and logs go: `<jobsDir>/<job id>/`. */
  jobsDir: string
  now: () => number
  /** The market's parameters and time (market.ts passes the daemon's). */
  params?: MarketParams
  scheduler?: Scheduler
  log: Logger
  metrics?: NodeMetrics
  /** Lease and billing interval put in awards (defaults: 30 s, 300 s). */
  leaseMs?: number
  billingIntervalSec?: number
  /** The providers that might run `job`, for the no-bids explanation (a DHT lookup: ads fetched, peers without one). */
  knownAds?: (job: JobRequest) => Promise<KnownProviders>
}

/** What is kept per award attempt: the signed award, its stream and the envelopes that may become evidence. */
interface Attempt {
  award: SealedMessage<'award'>
  provider: string
  price: number
  channel?: ExecChannel
  evidence: Partial<Record<EvidenceRef, Uint8Array>>
  paySeq: number
  /**
   * This attempt's log (offsets are the provider's): bytes taken in from the stream (or the log blob)
   * so far, bytes of those written out, and the credit given (counted from what is written, so the
   * writes waiting never exceed one window).
   */
  logReceived: number
  logBytes: number
  logCredit: number
  /** Every credit given (the first is implicit): where a stream that stopped may have been waiting. */
  grants: Set<number>
  /** Log bytes received when the receipt came (all the frames sent before it). */
  logAtReceipt?: number
  /** The receipt, once it came: its outputs are fetched on the lifecycle's `fetch-outputs`. */
  receipt?: OpenedMessage<'receipt'>
}

interface ActiveJob {
  record: JobRecord
  request: SealedMessage<'job-request'>
  state: RequesterJob
  /** Bids of the current round, by CID string. */
  bids: Map<string, OpenedMessage<'bid'>>
  /** The decision taken when the round closed, sent as the award. */
  decision?: { award: Omit<SealedMessage<'award'>['payload'], 'v' | 'issuedAt' | 'expiresAt'>, ranking: RankedBid[] }
  attempts: Map<number, Attempt>
  /** Pending wakes by time: a wake superseded by an earlier one must still fire (lifecycle-shared.ts). */
  timers: Map<number, NodeJS.Timeout>
  /** Events are applied one at a time, in order. */
  queue: Promise<void>
  /** Writes to the job's log file, one at a time. */
  logQueue: Promise<void>
  /** The record write in flight (writes never hold up the queue), and whether another is due after it. */
  saving?: Promise<void>
  dirty: boolean
}

export class RequesterMarket {
  private readonly jobs = new Map<string, ActiveJob>()
  private readonly reputation = new Reputation()
  private stopping = false

  constructor (private readonly options: RequesterOptions) {}

  get peerId (): string {
    return this.options.signer.peerId
  }

  /**
   * Read back the jobs submitted before a restart, so `job list|status|result` and the ledger still
   * show them. A job that was still in flight cannot be resumed (its exec stream and timers are gone):
   * it is marked failed, with the reason, and its provider stops when payments stop.
   */
  async load (): Promise<number> {
    let loaded = 0
    for (const record of await this.options.store.list<JobRecord>('requester')) {
      if (this.jobs.has(record.id)) continue
      const bytes = await this.options.store.getEnvelope(record.request)
      if (bytes === undefined) continue
      let request: OpenedMessage<'job-request'>
      try {
        request = openMessage(bytes, 'job-request', { now: this.options.now(), historical: true })
      } catch (err) {
        this.options.log.warn('a stored job request does not open; skipped', { job: record.id, error: err })
        continue
      }
      const active: ActiveJob = { record, request, state: record.state, bids: new Map(), attempts: new Map(), timers: new Map(), queue: Promise.resolve(), logQueue: Promise.resolve(), dirty: false }
      this.jobs.set(record.id, active)
      loaded++
      if (isRequesterFinal(record.state.status)) continue
      active.state = { ...record.state, status: 'failed', reason: `interrupted: the daemon stopped while the job was ${record.state.status}` }
      this.event(active, 'failed', active.state.reason as string)
      record.state = active.state
      await this.options.store.put('requester', record.id, record)
    }
    return loaded
  }

  /** Offer a sealed job request to the market; returns the job id. */
  async submit (request: SealedMessage<'job-request'>): Promise<string> {
    const id = request.cid.toString()
    if (this.jobs.has(id)) return id
    const now = this.options.now()
    const job = request.payload
    const transition = startRequesterJob(requesterInitFromJob(id, job, {
      leaseMs: this.options.leaseMs ?? DEFAULT_LEASE_MS,
      billingIntervalSec: this.options.billingIntervalSec ?? DEFAULT_BILLING_INTERVAL_SEC
    }), now)
    const record: JobRecord = {
      id, request: id, submittedAt: now, updatedAt: now, bids: [], paid: 0, events: [], logBytes: 0, state: transition.state
    }
    const active: ActiveJob = { record, request, state: transition.state, bids: new Map(), attempts: new Map(), timers: new Map(), queue: Promise.resolve(), logQueue: Promise.resolve(), dirty: false }
    this.jobs.set(id, active)
    await this.options.store.putEnvelope(id, request.bytes)
    await mkdir(this.jobDir(id), { recursive: true, mode: 0o700 })
    this.options.gossip.subscribe(jobTopics(job.placement))
    this.event(active, 'submitted', `${job.sla.tier} job for ${job.resources.gpus} GPU(s), cap ${credits(job.sla.maxPrice)}/GPU-h, bid window ${job.auction.bidWindowMs} ms`)
    await this.carryOut(active, transition.effects)
    return id
  }

  /**
   * A bid seen on gossip: for one of our jobs in its bidding round, screened on arrival and kept in
   * the round's bounded store when it can win (protocol/market/bid-store.ts).
   */
  onBid (bid: OpenedMessage<'bid'>): void {
    const active = this.jobs.get(bid.payload.job.toString())
    if (active === undefined || active.state.status !== 'bidding') return
    // the bid counts at its arrival, however long the queue ahead of it takes
    const now = this.options.now()
    void this.enqueue(active, async () => {
      const cid = bid.cid.toString()
      if (active.state.status !== 'bidding' || active.state.auction.closing || active.bids.has(cid)) return
      const assessed = assessBid(active.request, bid, { at: Math.max(now, active.state.auction.closesAt), reliability: (peer) => this.reputation.reliability(peer) })
      if ('fault' in assessed) {
        this.options.log.debug('bid refused on arrival', { job: active.record.id, bid: cid, provider: bid.signer, reason: assessed.fault })
        return
      }
      await this.apply(active, { type: 'bid-received', now, ...assessed.held })
      const held = new Set(active.state.auction.bids.map((b) => b.bid))
      if (!held.has(cid)) return
      // a bid it replaced (the peer's worse one, or the worst of a full round) is gone from the round
      for (const kept of active.bids.keys()) if (!held.has(kept)) active.bids.delete(kept)
      active.record.bids = active.record.bids.filter((view) => held.has(view.cid))
      active.bids.set(cid, bid)
      active.record.bids.push({ cid, provider: bid.signer, price: bid.payload.price, model: bid.payload.model, region: bid.payload.region })
      this.event(active, 'bid', `bid ${credits(bid.payload.price)}/GPU-h (${bid.payload.model}, ${bid.payload.region})`, bid.signer)
    })
  }

  async cancel (id: string): Promise<JobView | undefined> {
    const active = this.jobs.get(id)
    if (active === undefined) return undefined
    await this.enqueue(active, async () => { await this.apply(active, { type: 'cancel', now: this.options.now() }) })
    return this.view(id)
  }

  view (id: string): JobView | undefined {
    const active = this.jobs.get(id)
    return active === undefined ? undefined : jobView(active.record, active.request.payload, active.state)
  }

  list (): JobView[] {
    return [...this.jobs.values()].map((a) => jobView(a.record, a.request.payload, a.state)).sort((a, b) => b.submittedAt - a.submittedAt)
  }

  async logs (id: string, from: number): Promise<LogsView | undefined> {
    const active = this.jobs.get(id)
    if (active === undefined) return undefined
    const bytes = await readFile(join(this.jobDir(id), 'log')).catch(() => new Uint8Array(0))
    const start = Math.min(Math.max(0, from), bytes.byteLength)
    return {
      text: new TextDecoder().decode(bytes.subarray(start)),
      next: bytes.byteLength,
      done: isRequesterFinal(active.state.status),
      ...(active.record.logCut !== undefined ? { cut: active.record.logCut } : {})
    }
  }

  result (id: string): ResultView | undefined {
    const active = this.jobs.get(id)
    if (active === undefined) return undefined
    const r = active.record
    return {
      id,
      status: active.state.status,
      ...(r.receipt !== undefined ? { exitCode: r.receipt.exitCode, receipt: r.receipt } : {}),
      outputs: r.outputs ?? []
    }
  }

  /** Stop timers and streams, and wait for the last record writes. */
  async stop (): Promise<void> {
    this.stopping = true
    for (const active of this.jobs.values()) {
      for (const timer of active.timers.values()) clearTimeout(timer)
      for (const attempt of active.attempts.values()) attempt.channel?.abort(new Error('the requester is shutting down'))
    }
    await Promise.all([...this.jobs.values()].map(async (active) => { await active.saving }))
  }

  // -------------------------------------------------------------------------------------------
  // The state machine
  // -------------------------------------------------------------------------------------------

  /** Run `work` after everything queued for the job (events never interleave). */
  private async enqueue (active: ActiveJob, work: () => Promise<void>): Promise<void> {
    const next = active.queue.then(work).catch((err: unknown) => {
      this.options.log.error('job event failed', { job: active.record.id, error: err })
    })
    active.queue = next
    await next
  }

  /** Feed one event to the lifecycle and carry out what it asks. Call inside `enqueue`. */
  private async apply (active: ActiveJob, event: RequesterEvent): Promise<void> {
    const { state, effects } = reduceRequester(active.state, event)
    const before = active.state.status
    active.state = state
    if (state.status !== before) {
      this.event(active, state.status, state.reason !== undefined && isRequesterFinal(state.status) ? `${state.status}: ${state.reason}` : state.status)
    }
    await this.carryOut(active, effects)
  }

  private feed (active: ActiveJob, event: RequesterEvent): void {
    void this.enqueue(active, async () => { await this.apply(active, event) })
  }

  private async carryOut (active: ActiveJob, effects: RequesterEffect[]): Promise<void> {
    for (const effect of effects) {
      try {
        await this.effect(active, effect)
      } catch (err) {
        this.options.log.error('job effect failed', { job: active.record.id, effect: effect.type, error: err })
      }
    }
    active.record.state = active.state
    active.record.updatedAt = this.options.now()
    this.save(active)
    if (isRequesterFinal(active.state.status)) this.finish(active)
  }

  /** Write the job record; writes are coalesced and never hold up the job's events. */
  private save (active: ActiveJob): void {
    active.dirty = true
    if (active.saving !== undefined) return
    active.saving = (async () => {
      while (active.dirty) {
        active.dirty = false
        await this.options.store.put('requester', active.record.id, active.record).catch((err: unknown) => {
          this.options.log.error('cannot save the job record', { job: active.record.id, error: err })
        })
      }
      active.saving = undefined
    })()
  }

  private async effect (active: ActiveJob, effect: RequesterEffect): Promise<void> {
    const now = this.options.now()
    const job = active.request.payload
    switch (effect.type) {
      case 'publish-job':
        await this.options.gossip.publish(active.request, jobTopics(job.placement))
        return
      case 're-auction': {
        active.bids.clear()
        active.record.bids = []
        const round = sealMessage(this.options.signer, 'auction-round', {
          v: 1,
          issuedAt: now,
          expiresAt: Math.min(job.expiresAt, now + job.auction.bidWindowMs + HOUR_MS),
          job: active.request.cid,
          round: Math.min(64, active.state.auction.round),
          attempt: effect.attempt,
          excluded: effect.exclude,
          request: active.request.bytes
        })
        this.event(active, 're-auction', `round ${active.state.auction.round} (${effect.reason}${effect.exclude.length > 0 ? `, excluding ${effect.exclude.length}` : ''})`)
        await this.options.gossip.publish(round, jobTopics(job.placement))
        return
      }
      case 'close-auction':
        this.closeAuction(active, effect.round, effect.exclude, now)
        return
      case 'explain':
        this.event(active, 'no-bids', effect.bids === 0 ? 'no bids in the window' : `none of ${effect.bids} bid(s) acceptable`)
        this.explain(active, now)
        return
      case 'send-award':
        await this.sendAward(active, effect, now)
        return
      case 'fetch-outputs':
        // off the job's queue: the fetch may take long, and the lifecycle waits for it in `verifying`
        void this.fetchAndVerify(active, effect.provider)
        return
      case 'verify':
        // replicate/spotcheck need a second provider's run (trust layer): accepted on the receipt for now
        this.feed(active, { type: 'verification-done', now, ok: true })
        return
      case 'cancel':
        await this.sendCancel(active, effect.reason, now)
        return
      case 'pay':
        await this.pay(active, effect, now)
        return
      case 'record-failure':
        await this.recordFailure(active, effect, now)
        return
      case 'wake': {
        if (active.timers.has(effect.at)) return
        const timer = setTimeout(() => {
          active.timers.delete(effect.at)
          // a timer may fire a millisecond before the wall clock reaches `at`: the tick is for `at`
          this.feed(active, { type: 'tick', now: Math.max(this.options.now(), effect.at) })
        }, Math.min(Math.max(0, effect.at - now), 2 ** 31 - 1))
        timer.unref()
        active.timers.set(effect.at, timer)
        return
      }
      case 'ignored':
        this.options.log.debug('job event ignored', { job: active.record.id, reason: effect.reason })
    }
  }

  /** The auction closed: decide with the shared logic, and tell the lifecycle. */
  private closeAuction (active: ActiveJob, round: number, exclude: string[], now: number): void {
    const bids = active.state.auction.bids.map((b) => active.bids.get(b.bid)).filter((b): b is OpenedMessage<'bid'> => b !== undefined)
    let decision
    try {
      decision = decideAward({
        job: { cid: active.request.cid, payload: active.request.payload },
        bids,
        reliability: (peer) => this.reputation.reliability(peer),
        excluded: exclude,
        attempt: active.state.attempt + 1,
        now,
        leaseMs: active.state.config.leaseMs,
        billingIntervalSec: active.state.config.billingIntervalMs / 1000
      })
    } catch (err) {
      this.options.log.warn('award decision failed', { job: active.record.id, error: err })
      this.feed(active, { type: 'bidding-closed', now, round })
      return
    }
    for (const view of active.record.bids) {
      const ranked = decision.kind === 'award' ? decision.ranking.find((r) => r.cid === view.cid) : undefined
      if (ranked !== undefined) view.effectivePrice = Math.round(ranked.effectivePrice)
      const rejected = decision.rejected.find((r) => r.cid === view.cid)
      if (rejected !== undefined) view.rejected = rejected.reason
    }
    if (decision.kind === 'none') {
      this.feed(active, { type: 'bidding-closed', now, round })
      return
    }
    active.decision = { award: decision.award, ranking: decision.ranking }
    this.feed(active, { type: 'bidding-closed', now, round, winner: { bid: decision.award.bid.toString(), provider: decision.award.winner, price: decision.award.price } })
  }

  /** Ask the network which providers exist, and say why none of them bid. */
  private explain (active: ActiveJob, now: number): void {
    const knownAds = this.options.knownAds
    if (knownAds === undefined) return
    void knownAds(active.request.payload).then((ads) => {
      active.record.explanation = explainNoBids(active.request.payload, ads, now)
      for (const line of active.record.explanation.summary) this.event(active, 'explanation', line)
    }).catch((err: unknown) => { this.options.log.warn('no-bids explanation failed', { job: active.record.id, error: err }) })
  }

  // -------------------------------------------------------------------------------------------
  // The exec stream
  // -------------------------------------------------------------------------------------------

  private async sendAward (active: ActiveJob, effect: Extract<RequesterEffect, { type: 'send-award' }>, now: number): Promise<void> {
    const decided = active.decision
    if (decided === undefined || decided.award.bid.toString() !== effect.bid) throw new Error('no award decision for this bid')
    const award = sealMessage(this.options.signer, 'award', {
      v: 1, issuedAt: now, expiresAt: now + HOUR_MS, ...decided.award, attempt: effect.attempt, leaseMs: effect.leaseMs, billingIntervalSec: effect.billingIntervalSec
    })
    const attempt: Attempt = { award, provider: effect.provider, price: effect.price, evidence: { award: award.bytes }, paySeq: 0, logReceived: 0, logBytes: 0, logCredit: LOG_WINDOW, grants: new Set([LOG_WINDOW]) }
    active.attempts.set(effect.attempt, attempt)
    await this.options.store.putEnvelope(award.cid.toString(), award.bytes)
    const runnerUp = decided.ranking[1]
    const winner = decided.ranking[0]
    active.record.award = {
      attempt: effect.attempt,
      cid: award.cid.toString(),
      provider: effect.provider,
      bid: effect.bid,
      price: effect.price,
      paymentRule: award.payload.paymentRule,
      considered: award.payload.considered.length,
      why: winner === undefined
        ? 'the only acceptable bid'
        : `lowest effective price ${credits(Math.round(winner.effectivePrice))}` + (runnerUp !== undefined ? ` vs ${credits(Math.round(runnerUp.effectivePrice))} next of ${decided.ranking.length}` : ' (the only bid)'),
      awardedAt: now
    }
    this.event(active, 'award', `awarded to ${short(effect.provider)} at ${credits(effect.price)}/GPU-h: ${active.record.award.why}`, effect.provider)
    // third parties can recompute it (protocol/market/award.ts auditAward)
    await this.options.gossip.publish(award, jobTopics(active.request.payload.placement))
    for (const input of active.request.payload.workload.inputs) this.options.blobs.grant(input.cid, effect.provider)
    void this.talk(active, attempt)
  }

  /** Open the exec stream, send the award, and handle what the provider sends until the stream ends. */
  private async talk (active: ActiveJob, attempt: Attempt): Promise<void> {
    let channel: ExecChannel
    try {
      channel = await this.options.node.services.exec.open(peerIdFromString(attempt.provider))
      attempt.channel = channel
      await channel.sendMessage(attempt.award.bytes)
    } catch (err) {
      // no answer within one lease counts as a no-show: the lifecycle's timer handles it
      this.event(active, 'unreachable', `cannot reach ${short(attempt.provider)}: ${(err as Error).message}`, attempt.provider)
      return
    }
    let failure: ExecStreamError | undefined
    try {
      for await (const frame of channel.frames()) {
        if (frame.type === 'log') this.onLog(active, attempt, frame.offset, frame.data)
        else if (frame.type === 'message') this.onProviderMessage(active, attempt, frame.bytes)
      }
    } catch (err) {
      // the channel aborts the stream on its own failures; onLog's (credit, disk) are aborted here
      failure = channel.fail(err instanceof ExecStreamError ? err : new ExecStreamError('LOCAL', (err as Error).message))
    }
    this.streamEnded(active, attempt, failure)
  }

  /**
   * The exec stream ended. Before the receipt nothing more can come on it (no heartbeat, no
   * receipt): the attempt ends now, with the real reason, instead of at the lease — blaming the
   * provider only for what it did (remote), never for this node's own limits (local).
   */
  private streamEnded (active: ActiveJob, attempt: Attempt, failure: ExecStreamError | undefined): void {
    // checked in the job's queue, after whatever the stream brought before it ended (a decline, a
    // preemption notice) has been applied
    void this.enqueue(active, async () => {
      if (this.stopping || attempt.evidence.receipt !== undefined || active.attempts.get(active.state.attempt) !== attempt) return
      if (active.state.status !== 'awarded' && active.state.status !== 'running') return
      const fault = failure?.fault ?? 'remote'
      const detail = failure?.message ?? 'the provider closed the exec stream before its receipt'
      this.options.log.warn('exec stream failed', { job: active.record.id, fault, code: failure?.code ?? 'CLOSED', error: detail })
      this.event(active, 'stream-failed', `exec stream failed (${fault === 'local' ? 'this node' : 'the provider'}): ${detail}`, attempt.provider)
      await this.apply(active, { type: 'stream-failed', now: this.options.now(), provider: attempt.provider, fault, detail })
    })
  }

  private onProviderMessage (active: ActiveJob, attempt: Attempt, bytes: Uint8Array): void {
    const now = this.options.now()
    let message: OpenedMessage<'award-response' | 'job-status' | 'receipt'>
    try {
      message = openMessage(bytes, ['award-response', 'job-status', 'receipt'], { now })
    } catch (err) {
      if (!(err instanceof MessageRejectedError)) throw err
      this.options.metrics?.messagesRejected.inc({ kind: 'exec', reason: err.reason })
      this.options.log.warn('bad message on the exec stream', { job: active.record.id, error: err.message })
      return
    }
    const p = message.payload
    if (message.signer !== attempt.provider || !p.job.equals(active.request.cid)) return
    if ('award' in p && !p.award.equals(attempt.award.cid)) return
    // the same provider may hold a later attempt (a re-auction it won again): the lifecycle matches
    // messages by provider, so an earlier attempt's stream must not speak for the current one
    if (active.attempts.get(active.state.attempt) !== attempt) {
      this.options.log.debug('message from an earlier attempt ignored', { job: active.record.id, kind: message.kind })
      return
    }
    const provider = attempt.provider
    if (message.kind === 'award-response') {
      const r = message.payload as OpenedMessage<'award-response'>['payload']
      attempt.evidence['award-response'] = bytes
      this.feed(active, r.decision === 'accept'
        ? { type: 'award-accepted', now, provider }
        : { type: 'award-declined', now, provider, ...(r.reason !== undefined ? { reason: r.reason } : {}) })
      if (r.decision === 'accept') this.event(active, 'accepted', `${short(provider)} accepted`, provider)
      else this.event(active, 'declined', `${short(provider)} declined: ${r.reason ?? 'no reason given'}`, provider)
    } else if (message.kind === 'job-status') {
      const s = message.payload as OpenedMessage<'job-status'>['payload']
      attempt.evidence['last-status'] = bytes
      if (s.state !== 'running' && s.state !== 'accepted') this.event(active, s.state, `provider reports ${s.state}${s.message !== undefined ? `: ${s.message}` : ''}`, provider)
      this.feed(active, { type: 'heartbeat', now, provider, seq: s.seq, state: s.state, gpuSeconds: s.gpuSeconds })
    } else {
      attempt.evidence.receipt = bytes
      attempt.logAtReceipt = attempt.logReceived
      void this.onReceipt(active, attempt, message as OpenedMessage<'receipt'>)
    }
  }

  /**
   * A log frame: it must stay within the credit given (else the provider broke the pacing: a remote
   * fault); taken in order and written out behind the stream (so reading never waits for the disk),
   * up to the job's log cap; each write done gives more credit, while the cap leaves room.
   */
  private onLog (active: ActiveJob, attempt: Attempt, offset: number, data: Uint8Array): void {
    const end = offset + data.byteLength
    if (end > attempt.logCredit) {
      this.cutLog(active, `the provider sent log past the credit given (${end} > ${attempt.logCredit} bytes)`)
      throw new ExecStreamError('LOG_CREDIT', `log up to byte ${end}, past the credit of ${attempt.logCredit}`)
    }
    if (offset !== attempt.logReceived) return // a gap or a repeat: the receipt's log blob is authoritative
    attempt.logReceived = end
    this.writeLog(active, attempt, async () => {
      attempt.logBytes = end
      await this.keepLog(active, data)
      const upTo = attempt.logBytes + Math.min(LOG_WINDOW, MAX_JOB_LOG_BYTES - active.record.logBytes)
      if (upTo - attempt.logCredit >= LOG_WINDOW / 4) {
        attempt.logCredit = upTo
        attempt.grants.add(upTo)
        attempt.channel?.send({ type: 'credit', upTo }).catch(() => {})
      }
    })
  }

  /** Append to the job's log file what fits under MAX_JOB_LOG_BYTES; say so when some is cut. Call inside writeLog. */
  private async keepLog (active: ActiveJob, data: Uint8Array): Promise<void> {
    const room = MAX_JOB_LOG_BYTES - active.record.logBytes
    const kept = data.subarray(0, Math.max(0, room))
    if (kept.byteLength > 0) {
      try {
        await appendFile(join(this.jobDir(active.record.id), 'log'), kept, { mode: 0o600 })
      } catch (err) {
        throw new ExecStreamError('LOCAL', `cannot write the job's log: ${(err as Error).message}`)
      }
      active.record.logBytes += kept.byteLength
    }
    if (active.record.logBytes >= MAX_JOB_LOG_BYTES) this.cutLog(active, `this node keeps at most ${MAX_JOB_LOG_BYTES} bytes of log per job`)
  }

  private cutLog (active: ActiveJob, why: string): void {
    if (active.record.logCut !== undefined) return
    active.record.logCut = why
    this.event(active, 'log-cut', `log cut at ${active.record.logBytes} bytes: ${why}`)
  }

  /** Queue a write to the job's log; one that fails ends the stream as this node's fault (LOCAL). */
  private writeLog (active: ActiveJob, attempt: Attempt, work: () => Promise<void>): void {
    active.logQueue = active.logQueue.then(work).catch((err: unknown) => {
      const failure = err instanceof ExecStreamError ? err : new ExecStreamError('LOCAL', (err as Error).message)
      this.options.log.warn('the job log could not be written', { job: active.record.id, error: failure.message })
      attempt.channel?.fail(failure)
    })
  }

  /**
   * The receipt's log blob (hash-checked) is the whole log: append what the stream had not brought
   * yet (log frames wait for credit, so a job that prints fast and ends leaves a tail behind).
   */
  private async completeLog (active: ActiveJob, attempt: Attempt, logs: CID | undefined): Promise<void> {
    // every log frame sent before the receipt has arrived before it: a tail can only be missing when
    // the stream stopped exactly at a credit this node gave (the provider waiting for more)
    if (logs === undefined || active.record.logCut !== undefined || !attempt.grants.has(attempt.logAtReceipt ?? -1)) return
    let bytes: Uint8Array
    try {
      bytes = await this.options.node.services.blob.fetch(peerIdFromString(attempt.provider), logs, { maxBytes: MAX_LOG_BYTES })
    } catch (err) {
      if (err instanceof BlobFetchError && err.code === 'TOO_LARGE') this.cutLog(active, `the provider's log is over ${MAX_LOG_BYTES} bytes`)
      else this.options.log.warn('the log blob could not be fetched', { job: active.record.id, error: err })
      return
    }
    if (bytes.byteLength <= attempt.logReceived) return
    const tail = bytes.subarray(attempt.logReceived)
    attempt.logReceived = bytes.byteLength
    this.writeLog(active, attempt, async () => {
      attempt.logBytes = bytes.byteLength
      await this.keepLog(active, tail)
    })
    await active.logQueue
  }

  /**
   * Tell the lifecycle of the receipt at once, then fetch the outputs (its `fetch-outputs` effect):
   * the lease stops running at the receipt, so however long the fetch takes blames nobody.
   */
  private async onReceipt (active: ActiveJob, attempt: Attempt, receipt: OpenedMessage<'receipt'>): Promise<void> {
    const r = receipt.payload
    const now = this.options.now()
    attempt.receipt = receipt
    const valid = r.requester === this.peerId
    active.record.receipt = {
      cid: receipt.cid.toString(),
      provider: attempt.provider,
      exitCode: r.exitCode,
      startedAt: r.startedAt,
      endedAt: r.endedAt,
      gpuSeconds: r.gpuSeconds,
      outputs: r.outputs.toString(),
      outputsValid: false
    }
    if (!valid || r.exitCode === -1) this.reputation.record(attempt.provider, false)
    if (!valid) {
      this.event(active, 'receipt', 'receipt rejected: the receipt names another requester', attempt.provider)
    } else {
      this.event(active, 'receipt', `receipt: exit ${r.exitCode}, ${r.gpuSeconds} GPU-s; fetching the outputs`, attempt.provider)
    }
    this.feed(active, { type: 'receipt-received', now, provider: attempt.provider, exitCode: r.exitCode, gpuSeconds: r.gpuSeconds, outputsValid: valid })
    await this.options.store.putEnvelope(receipt.cid.toString(), receipt.bytes).catch((err: unknown) => {
      this.options.log.error('cannot store the receipt', { job: active.record.id, error: err })
    })
  }

  /** Fetch the outputs the receipt names and recompute every CID; then tell the lifecycle. */
  private async fetchAndVerify (active: ActiveJob, provider: string): Promise<void> {
    const attempt = active.attempts.get(active.state.attempt)
    const receipt = attempt?.receipt
    if (attempt === undefined || receipt === undefined || attempt.provider !== provider) return
    const r = receipt.payload
    let detail: string | undefined
    try {
      active.record.outputs = await this.fetchOutputs(active, attempt, r.outputs)
    } catch (err) {
      detail = (err as Error).message
    }
    if (detail === undefined) await this.completeLog(active, attempt, r.logs)
    const produced = new Set((active.record.outputs ?? []).map((o) => o.path))
    const missingOutputs = detail === undefined ? [...new Set(active.request.payload.workload.outputs)].filter((p) => !produced.has(p)) : []
    if (active.record.receipt !== undefined && active.record.receipt.cid === receipt.cid.toString()) active.record.receipt.outputsValid = detail === undefined
    this.reputation.record(attempt.provider, detail === undefined)
    this.event(active, 'outputs', detail === undefined
      ? `${active.record.outputs?.length ?? 0} output(s) verified` + (missingOutputs.length > 0 ? `; not written by the job: ${missingOutputs.join(', ')}` : '')
      : `outputs rejected: ${detail}`, attempt.provider)
    const now = this.options.now()
    this.feed(active, detail === undefined
      ? { type: 'outputs-verified', now, ...(missingOutputs.length > 0 ? { missingOutputs } : {}) }
      : { type: 'outputs-mismatch', now, detail })
  }

  private async fetchOutputs (active: ActiveJob, attempt: Attempt, manifestCid: CID): Promise<ResultView['outputs']> {
    const blob = this.options.node.services.blob
    const peer = peerIdFromString(attempt.provider)
    const manifestBytes = await blob.fetch(peer, manifestCid, { maxBytes: MAX_MANIFEST_BYTES })
    const manifest: OutputManifest = checkManifest(decodeCanonical(manifestBytes), active.request.payload.workload.outputs)
    const total = manifest.files.reduce((n, f) => n + f.size, 0)
    if (total > MAX_OUTPUT_BYTES) throw new Error(`outputs of ${total} bytes exceed the ${MAX_OUTPUT_BYTES}-byte limit`)
    const files: Array<{ path: string, size: number, cid: CID, bytes: Uint8Array }> = []
    for (const f of manifest.files) {
      // hash-checked by the blob protocol: a tampered file fails here
      const bytes = await blob.fetch(peer, f.cid, { maxBytes: f.size })
      if (bytes.byteLength !== f.size) throw new Error(`${f.path}: ${bytes.byteLength} bytes, the manifest says ${f.size}`)
      files.push({ ...f, bytes })
    }
    // write only a fully verified set, replacing any earlier attempt's
    const dir = join(this.jobDir(active.record.id), 'outputs')
    const staging = `${dir}.partial`
    await rm(staging, { recursive: true, force: true })
    for (const f of files) {
      const target = join(staging, f.path)
      await mkdir(dirname(target), { recursive: true, mode: 0o700 })
      await writeFile(target, f.bytes, { mode: 0o600 })
    }
    await mkdir(staging, { recursive: true, mode: 0o700 })
    await rm(dir, { recursive: true, force: true })
    await rename(staging, dir)
    return files.map((f) => ({ path: f.path, size: f.size, cid: f.cid.toString(), file: join(dir, f.path) }))
  }

  private async sendCancel (active: ActiveJob, reason: string, now: number): Promise<void> {
    const attempt = active.attempts.get(active.state.attempt)
    if (attempt?.channel === undefined) return
    const cancel = sealMessage(this.options.signer, 'job-cancel', {
      v: 1, issuedAt: now, expiresAt: now + HOUR_MS, job: active.request.cid, award: attempt.award.cid, reason: reason.slice(0, 200)
    })
    await attempt.channel.sendMessage(cancel.bytes).catch(() => {})
  }

  private async pay (active: ActiveJob, effect: Extract<RequesterEffect, { type: 'pay' }>, now: number): Promise<void> {
    const attempt = active.attempts.get(effect.attempt)
    if (attempt === undefined) throw new Error(`no award for attempt ${effect.attempt}`)
    attempt.paySeq++
    const payment = sealMessage(this.options.signer, 'payment', {
      v: 1,
      issuedAt: now,
      expiresAt: now + 30 * DAY_MS,
      job: active.request.cid,
      award: attempt.award.cid,
      payee: effect.payee,
      seq: attempt.paySeq,
      interval: effect.interval,
      cumulative: effect.cumulative,
      gpuSeconds: effect.gpuSeconds
    })
    attempt.evidence['last-payment'] = payment.bytes
    await this.options.store.putEnvelope(payment.cid.toString(), payment.bytes)
    const previous = (await this.options.store.get<{ cumulative: number }>('ledger', attempt.award.cid.toString()))?.cumulative ?? 0
    active.record.paid += Math.max(0, effect.cumulative - previous)
    await this.options.store.putLedger({
      job: active.record.id,
      award: attempt.award.cid.toString(),
      role: 'requester',
      counterparty: effect.payee,
      price: attempt.price,
      cumulative: effect.cumulative,
      seq: attempt.paySeq,
      gpuSeconds: effect.gpuSeconds,
      ...(effect.final ? { owed: effect.cumulative } : {}),
      state: effect.final ? (effect.ending ?? 'final') : 'open',
      updatedAt: now
    })
    if (effect.final) this.event(active, 'paid', `paid ${credits(effect.cumulative)} in all to ${short(effect.payee)} (${effect.gpuSeconds} GPU-s)`, effect.payee)
    await attempt.channel?.sendMessage(payment.bytes).catch((err: unknown) => {
      this.options.log.debug('payment not delivered', { job: active.record.id, error: (err as Error).message })
    })
    this.feed(active, { type: 'payment-sent', now, cumulative: effect.cumulative })
  }

  private async recordFailure (active: ActiveJob, effect: Extract<RequesterEffect, { type: 'record-failure' }>, now: number): Promise<void> {
    const attempt = active.attempts.get(active.state.attempt)
    const evidence = effect.evidence.map((ref) => attempt?.evidence[ref]).filter((b): b is Uint8Array => b !== undefined).slice(0, 4)
    const report = sealMessage(this.options.signer, 'failure-report', {
      v: 1,
      issuedAt: now,
      expiresAt: now + 30 * DAY_MS,
      job: active.request.cid,
      subject: effect.subject,
      reason: effect.reason,
      observedAt: now,
      evidence,
      ...(effect.detail !== undefined ? { detail: effect.detail.slice(0, 500) } : {})
    })
    this.reputation.record(effect.subject, false)
    await this.options.store.putEnvelope(report.cid.toString(), report.bytes)
    // the failed award's ledger entry ends here, at what was committed (the provider holds that payment)
    const entry = attempt === undefined ? undefined : await this.options.store.get<LedgerEntry>('ledger', attempt.award.cid.toString())
    if (entry?.state === 'open') await this.options.store.putLedger({ ...entry, state: 'failed', updatedAt: now })
    this.event(active, 'failure', `${effect.reason}${effect.detail !== undefined ? `: ${effect.detail}` : ''}`, effect.subject)
    attempt?.channel?.abort(new Error(`attempt failed: ${effect.reason}`))
    await this.options.gossip.publish(report, [EVIDENCE_TOPIC])
  }

  /** A final status: stop timers, close streams. */
  private finish (active: ActiveJob): void {
    for (const timer of active.timers.values()) clearTimeout(timer)
    active.timers.clear()
    for (const attempt of active.attempts.values()) void attempt.channel?.close()
  }

  private event (active: ActiveJob, type: string, text: string, peer?: string): void {
    const events = active.record.events
    events.push({ at: this.options.now(), type, text, ...(peer !== undefined ? { peer } : {}) })
    if (events.length > MAX_EVENTS) events.splice(0, events.length - MAX_EVENTS)
    this.options.log.info(text, { job: active.record.id, event: type })
  }

  private jobDir (id: string): string {
    return join(this.options.jobsDir, id)
  }
}

function credits (micros: number): string {
  return `${formatMicros(micros)} cr`
}

function short (peer: string): string {
  return `…${peer.slice(-8)}`
}
