/**
 * The requester's side of the market (DESIGN §5–§6), as a shell around the pure requester agent
 * (protocol/market/requester-agent.ts), which takes every decision: screening bids, the award, the
 * lifecycle, payments, blame, re-auctions. This file is the registry and API (submit, cancel, views,
 * load, stop) and carries out the agent's effects, one job's in order; the exec stream, the outputs,
 * the payments and the sealing live beside it (requester-exec.ts, requester-outputs.ts,
 * requester-payments.ts, requester-messages.ts). Time comes from `options.scheduler`.
 */
import { mkdir, readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { peerIdFromString } from '@libp2p/peer-id'
import {
  RequesterAgent, awardKey, defaultMarketParams, explainNoBids, isRequesterFinal, jobTopics, openMessage,
  type OpenedMessage, type RequesterAgentEffect, type RequesterAgentEvent, type Scheduler, type SealedMessage
} from '../../protocol/index.js'
import { InvalidEvidenceError, type Evidence } from '../../protocol/trust/reputation-evidence.js'
import { LOG_WINDOW } from '../services/exec.js'
import { createRealScheduler } from './real-scheduler.js'
import { openStream, reconnect, talk } from './requester-exec.js'
import type { ActiveJob, Attempt, RequesterOptions, RequesterShell } from './requester-job.js'
import { sealAuctionRound, sealAward, sealJobCancel } from './requester-messages.js'
import { fetchAndVerify, keepMatchedOutputs } from './requester-outputs.js'
import { reexecuteAndTell } from './requester-reexecute.js'
import { restoreAttempt } from './requester-resume.js'
import { ReputationSaver } from './reputation-saver.js'
import { RttMeter } from './requester-rtt.js'
import { endAward, pay, recordFailure } from './requester-payments.js'
import { jobView, type JobRecord } from './requester-views.js'
import type { JobView, LogsView, ResultView } from './views.js'

export type { RequesterOptions } from './requester-job.js'
export { MAX_JOB_LOG_BYTES } from './requester-exec.js'
export { MAX_OUTPUT_BYTES } from './requester-outputs.js'

const MAX_EVENTS = 200

export class RequesterMarket implements RequesterShell {
  private readonly jobs = new Map<string, ActiveJob>()
  readonly agent: RequesterAgent
  readonly scheduler: Scheduler
  stopping = false
  /** Writes the reputation view to level, throttled (reputation-saver.ts). */
  private readonly reputationSaver: ReputationSaver
  /** Measures bidders' RTT over existing connections into the agent's RTT view. */
  private readonly rttMeter: RttMeter

  constructor (readonly options: RequesterOptions) {
    const params = options.params ?? defaultMarketParams
    this.scheduler = options.scheduler ?? createRealScheduler(options.now)
    this.agent = new RequesterAgent(options.signer.peerId, params, options.trust ?? {})
    if (options.metrics !== undefined) {
      options.metrics.jobStates.requester = () => {
        const counts: Record<string, number> = {}
        for (const a of this.jobs.values()) counts[a.record.state.status] = (counts[a.record.state.status] ?? 0) + 1
        return counts
      }
    }
    this.reputationSaver = new ReputationSaver({
      view: this.agent.reputation,
      put: async (snapshot) => { await options.store.putReputation(snapshot) },
      get: async () => await options.store.getReputation(),
      scheduler: this.scheduler,
      log: options.log,
      name: 'reputation view'
    })
    this.rttMeter = new RttMeter({ node: options.node, view: this.agent.rtt, now: () => this.scheduler.now(), log: options.log })
  }

  get peerId (): string {
    return this.options.signer.peerId
  }

  /**
   * Read back the jobs submitted before a restart, so `job list|status|result` and the ledger still
   * show them. A job still in flight goes on where the agent can take it up (protocol/README.md §7.7
   * "Resuming": the award's stream re-opened, a receipt's outputs fetched again, an open round opened
   * anew); the rest the agent marks failed, with the reason, and its provider stops when payments stop.
   */
  async load (): Promise<number> {
    await this.loadReputation()
    let loaded = 0
    for (const record of await this.options.store.list<JobRecord>('requester')) {
      if (this.jobs.has(record.id)) continue
      const bytes = await this.options.store.getEnvelope(record.request)
      if (bytes === undefined) continue
      let request: OpenedMessage<'job-request'>
      try {
        request = openMessage(bytes, 'job-request', { now: this.scheduler.now(), historical: true })
      } catch (err) {
        this.options.log.warn('a stored job request does not open; skipped', { job: record.id, error: err })
        continue
      }
      const active = this.newJob(record, request)
      active.restored = true
      loaded++
      const wasFinal = isRequesterFinal(record.state.status)
      if (!wasFinal) {
        await restoreAttempt(this, active)
        this.options.gossip.subscribe(jobTopics(request.payload.placement))
      }
      const now = this.scheduler.now()
      // a verified job's comparison reads the opened request: the one read back here
      const envelope = wasFinal || request.payload.verification.mode === 'none' ? undefined : request
      this.dispatch(active, {
        type: 'job-restored', now, cid: request.cid, request: request.payload, state: record.state,
        ...(record.award !== undefined ? { award: record.award } : {}), bids: record.bids, ...(envelope !== undefined ? { envelope } : {})
      })
      if (!wasFinal) {
        // a job that goes on is the agent's again: its record follows the agent's view
        if (!isRequesterFinal(active.record.state.status)) active.restored = false
        await active.effects
        await this.options.store.put('requester', record.id, record)
      }
    }
    return loaded
  }

  /** The awards of jobs that are not final (after load: the ones taken up again), as CID strings. */
  awardsInFlight (): string[] {
    const out: string[] = []
    for (const active of this.jobs.values()) {
      if (isRequesterFinal(active.record.state.status)) continue
      for (const attempt of active.attempts.values()) out.push(attempt.award.cid.toString())
    }
    return out
  }

  /** Offer a sealed job request to the market; returns the job id. */
  async submit (request: SealedMessage<'job-request'>): Promise<string> {
    const id = request.cid.toString()
    if (this.jobs.has(id)) return id
    const now = this.scheduler.now()
    const job = request.payload
    const record: JobRecord = {
      id, request: id, submittedAt: now, updatedAt: now, bids: [], paid: 0, events: [], logBytes: 0, state: undefined as unknown as JobRecord['state']
    }
    await this.options.store.putEnvelope(id, request.bytes)
    await mkdir(this.jobDir(id), { recursive: true, mode: 0o700 })
    this.options.gossip.subscribe(jobTopics(job.placement))
    const active = this.newJob(record, request)
    // the opened request: a replicated or spot-checked job's comparison reads it
    const envelope = job.verification.mode === 'none' ? undefined : openMessage(request.bytes, 'job-request', { now, historical: true })
    this.dispatch(active, { type: 'job-submitted', now, cid: request.cid, request: job, ...(envelope !== undefined ? { envelope } : {}) })
    if (record.state === undefined) {
      this.jobs.delete(id)
      throw new Error('the job request cannot start an auction')
    }
    await active.effects
    return id
  }

  /** A bid seen on gossip: the agent screens it on arrival and keeps it when it can win. */
  onBid (bid: OpenedMessage<'bid'>): void {
    const active = this.jobs.get(bid.payload.job.toString())
    if (active === undefined) return
    const addrs = active.request.payload.verification.mode === 'none' ? undefined : this.addressesOf(bid.signer)
    this.rttMeter.observe(bid.signer)
    this.dispatch(active, { type: 'bid-seen', now: this.scheduler.now(), bid, model: bid.payload.model, region: bid.payload.region, ...(addrs !== undefined ? { addrs } : {}) })
  }

  /** Where this node reaches a bidder: the remote addresses of its connections to it (the agent's lookup adds the ad's). */
  private addressesOf (peer: string): string[] | undefined {
    try {
      const addrs = this.options.node.getConnections(peerIdFromString(peer)).map((c) => c.remoteAddr.toString())
      return addrs.length > 0 ? addrs : undefined
    } catch {
      return undefined
    }
  }

  /** When the open round of job `id` (one submitted here) closes; undefined unless it is taking bids. */
  biddingClosesAt (id: string): number | undefined {
    const state = this.jobs.get(id)?.record.state
    return state?.status === 'bidding' && !state.auction.closing ? state.auction.closesAt : undefined
  }

  async cancel (id: string): Promise<JobView | undefined> {
    const active = this.jobs.get(id)
    if (active === undefined) return undefined
    this.dispatch(active, { type: 'cancel', now: this.scheduler.now(), job: id })
    await active.effects
    return this.view(id)
  }

  view (id: string): JobView | undefined {
    const active = this.jobs.get(id)
    if (active === undefined) return undefined
    const view = jobView(active.record, active.request.payload, active.record.state)
    if (view.award !== undefined) view.providerReputation = this.agent.reputation.explain(view.award.provider, this.scheduler.now())
    return view
  }

  list (): JobView[] {
    return [...this.jobs.values()].map((a) => jobView(a.record, a.request.payload, a.record.state)).sort((a, b) => b.submittedAt - a.submittedAt)
  }

  async logs (id: string, from: number): Promise<LogsView | undefined> {
    const active = this.jobs.get(id)
    if (active === undefined) return undefined
    const bytes = await readFile(join(this.jobDir(id), 'log')).catch(() => new Uint8Array(0))
    const start = Math.min(Math.max(0, from), bytes.byteLength)
    return {
      text: new TextDecoder().decode(bytes.subarray(start)),
      next: bytes.byteLength,
      done: isRequesterFinal(active.record.state.status),
      ...(active.record.logCut !== undefined ? { cut: active.record.logCut } : {})
    }
  }

  result (id: string): ResultView | undefined {
    const active = this.jobs.get(id)
    if (active === undefined) return undefined
    const r = active.record
    return {
      id,
      status: r.state.status,
      ...(r.receipt !== undefined ? { exitCode: r.receipt.exitCode, receipt: r.receipt } : {}),
      outputs: r.outputs ?? []
    }
  }

  /** Stop wakes and streams, and wait for the last record writes. */
  async stop (): Promise<void> {
    this.stopping = true
    for (const active of this.jobs.values()) {
      for (const cancel of active.wakes.values()) cancel()
      active.wakes.clear()
      for (const attempt of active.attempts.values()) attempt.channel?.abort(new Error('the requester is shutting down'))
    }
    await Promise.all([...this.jobs.values()].map(async (active) => { await active.saving }))
    await this.reputationSaver.flush()
  }

  /** Evidence from others' gossip (already verified and admitted): into the reputation view, which weighs it by trust in its signer. */
  onEvidence (evidence: Evidence): void {
    try {
      this.agent.reputation.add(evidence)
    } catch (err) {
      if (!(err instanceof InvalidEvidenceError)) throw err
      this.options.log.debug('evidence not taken by the reputation view', { error: err })
      return
    }
    this.saveReputation()
  }

  /**
   * A verified fraud proof (`proof`: its id) convicts `provider`: the agent never awards it again, and
   * audits this node's settled results it signed (protocol/market/result-audit.ts): the re-executions and
   * proofs that asks for are carried out under each job, its view shows the audit.
   */
  onConvicted (provider: string, proof: string): void {
    const effects = this.agent.handle({ type: 'provider-convicted', now: this.scheduler.now(), provider, proof })
    const byJob = new Map<string, RequesterAgentEffect[]>()
    for (const e of effects) {
      const job = 'job' in e ? e.job : undefined
      if (job !== undefined) byJob.set(job, [...(byJob.get(job) ?? []), e])
    }
    for (const [job, list] of byJob) {
      const active = this.jobs.get(job)
      if (active !== undefined) this.take(active, list)
    }
    this.saveReputation()
  }

  /**
   * Set by the market once the trust layer exists (it needs this object first): builds, checks and
   * publishes the `wrong-output` fraud proof for an outvoted replica's receipt.
   */
  proveWrongReplica?: (job: string, receipt: string) => Promise<void>

  /** Whether `provider` is convicted in this node's view. */
  convicted (provider: string): boolean {
    return this.agent.reputation.convictionOf(provider) !== undefined
  }

  /** A job of this node with a receipt: its request and the receipt's id, for `job verify`. */
  verifiable (id: string): { request: SealedMessage<'job-request'>, receipt?: string } | undefined {
    const active = this.jobs.get(id)
    if (active === undefined) return undefined
    return { request: active.request, ...(active.record.receipt !== undefined ? { receipt: active.record.receipt.cid } : {}) }
  }

  /** Read back the reputation view kept before a restart, then the convictions kept on their own. */
  private async loadReputation (): Promise<void> {
    await this.reputationSaver.load()
    // convictions are kept on their own too: one made just before a crash is not lost with the view's last interval
    for (const c of await this.options.store.convictions()) this.agent.reputation.convict(c.subject, c.proof)
  }

  /** Write the reputation view when it changed, at most every few seconds (ReputationSaver); at stop at once. */
  private saveReputation (): void {
    this.reputationSaver.save()
  }


  // -------------------------------------------------------------------------------------------
  // The agent and its effects
  // -------------------------------------------------------------------------------------------

  private newJob (record: JobRecord, request: SealedMessage<'job-request'>): ActiveJob {
    const active: ActiveJob = { id: record.id, record, request, attempts: new Map(), wakes: new Map(), effects: Promise.resolve(), logQueue: Promise.resolve(), dirty: false }
    this.jobs.set(record.id, active)
    return active
  }

  awaitingOutputs (active: ActiveJob, attempt: Attempt): boolean {
    return this.agent.awaitingOutputs(active.id, attempt.number, attempt.provider)
  }

  /** Feed one event to the agent; notes and wakes are taken at once, the rest is carried out in order. */
  dispatch (active: ActiveJob, event: RequesterAgentEvent): void {
    this.take(active, this.agent.handle(event))
  }

  /** The agent's effects for one job: the record updated from its view, notes and wakes at once, the rest in order. */
  private take (active: ActiveJob, effects: RequesterAgentEffect[]): void {
    const before = active.record.state
    const view = this.agent.view(active.id)
    // nothing happened (e.g. a finished job read back at start): the record stays as it was written
    if (effects.length === 0 && view?.state === before) return
    if (view?.audit !== undefined) active.record.audit = view.audit
    if (view !== undefined) {
      active.record.state = view.state
      if (active.restored !== true) {
        active.record.bids = view.bids
        if (view.award !== undefined) active.record.award = view.award
        if (view.replication !== undefined) active.record.replication = view.replication
        active.record.paid = view.paid
      }
    }
    active.record.updatedAt = this.scheduler.now()
    for (const effect of effects) {
      if (effect.type === 'note') this.note(active, effect.kind, effect.text, effect.peer)
      else if (effect.type === 'wake') this.wake(active, effect.at)
      else if (effect.type === 'ignored') this.options.log.debug('job event ignored', { job: active.id, reason: effect.reason })
      else this.enqueue(active, effect)
    }
    this.save(active)
    this.saveReputation()
  }

  private enqueue (active: ActiveJob, effect: RequesterAgentEffect): void {
    active.effects = active.effects.then(async () => { await this.carryOut(active, effect) }).catch((err: unknown) => {
      this.options.log.error('job effect failed', { job: active.id, effect: effect.type, error: err })
    })
  }

  private wake (active: ActiveJob, at: number): void {
    if (this.stopping || active.wakes.has(at)) return
    active.wakes.set(at, this.scheduler.at(at, () => {
      active.wakes.delete(at)
      this.dispatch(active, { type: 'tick', now: Math.max(this.scheduler.now(), at), job: active.id })
    }))
  }

  private async carryOut (active: ActiveJob, effect: RequesterAgentEffect): Promise<void> {
    const now = this.scheduler.now()
    const { gossip, signer } = this.options
    const topics = jobTopics(active.request.payload.placement)
    switch (effect.type) {
      case 'publish-job':
        await gossip.publish(active.request, topics)
        return
      case 'publish-round':
        await gossip.publish(sealAuctionRound(signer, active.request, effect, now), topics)
        return
      case 'send-award':
        await this.sendAward(active, effect, now)
        return
      case 'send-cancel': {
        // a cancel right after the award waits for its stream: the provider must hear it to agree on the ending
        const channel = await active.attempts.get(awardKey(effect.attempt, effect.provider))?.opened
        const attempt = active.attempts.get(awardKey(effect.attempt, effect.provider))
        if (channel === undefined || attempt === undefined) return
        await channel.sendMessage(sealJobCancel(signer, active.request, attempt.award, effect.reason, now).bytes).catch(() => {})
        return
      }
      case 'pay':
        await pay(this, active, effect)
        return
      case 'end-award':
        await endAward(this, active, effect)
        return
      case 'record-failure':
        await recordFailure(this, active, effect)
        return
      case 'reconnect': {
        const attempt = active.attempts.get(awardKey(effect.attempt, effect.provider))
        if (attempt !== undefined) void reconnect(this, active, attempt, () => this.agent.awardInFlight(active.id, effect.attempt, effect.provider))
        return
      }
      case 'fetch-outputs': {
        // off the effects' queue: the fetch may take long, and the agent waits for it in `verifying`
        const attempt = active.attempts.get(awardKey(effect.attempt, effect.provider))
        if (attempt !== undefined) void fetchAndVerify(this, active, attempt)
        return
      }
      case 'reexecute':
        // off the effects' queue: the run takes as long as the job (`audit`: a settled result revisited after a conviction)
        if (effect.audit === true) this.options.log.warn('a settled result was signed by a convicted provider: re-executing it', { job: active.id })
        void reexecuteAndTell(this, active)
        return
      case 'result-audited':
        if (effect.status === 'disproved' || effect.status === 'suspect') this.options.log.warn('a settled result audited after a conviction', { job: active.id, status: effect.status, by: effect.by, detail: effect.detail })
        return
      case 'publish-fraud-proof':
        // off the effects' queue: the trust layer re-executes before it signs (node/trust/convictions.ts)
        this.options.log.warn('a replica was shown wrong: proving it', { job: active.id, subject: effect.subject, receipt: effect.receipt })
        void this.proveWrongReplica?.(active.id, effect.receipt)
        return
      case 'explain':
        this.explain(active, now)
        return
      case 'finished':
        keepMatchedOutputs(active)
        this.save(active)
        for (const cancel of active.wakes.values()) cancel()
        active.wakes.clear()
        for (const attempt of active.attempts.values()) void attempt.opened?.then(async (channel) => { await channel?.close() })
        return
      default:
    }
  }

  /** Seal the award the agent decided, keep it, tell the agent, gossip it, grant the inputs, open the stream. */
  private async sendAward (active: ActiveJob, effect: Extract<RequesterAgentEffect, { type: 'send-award' }>, now: number): Promise<void> {
    const award = sealAward(this.options.signer, effect.fields, now)
    // the auction's time to award: the job's first award, from its request (re-auctions are failures' business)
    if (effect.attempt === 1) this.options.metrics?.auctionSeconds.observe(Math.max(0, now - active.request.payload.issuedAt) / 1000)
    const attempt: Attempt = {
      number: effect.attempt, award, provider: effect.provider, price: effect.price, evidence: { award: award.bytes },
      paySeq: 0, logReceived: 0, logBytes: 0, logCredit: LOG_WINDOW, grants: new Set([LOG_WINDOW])
    }
    active.attempts.set(awardKey(effect.attempt, effect.provider), attempt)
    // where this award's log starts in the job's log file, for a resume after a restart (requester-resume.ts)
    active.record.logStart = active.record.logBytes
    this.dispatch(active, { type: 'award-sealed', now, job: active.id, attempt: effect.attempt, award: award.cid.toString(), paymentRule: award.payload.paymentRule, provider: effect.provider })
    await this.options.store.putEnvelope(award.cid.toString(), award.bytes)
    // third parties can recompute it (protocol/market/award.ts auditAward)
    await this.options.gossip.publish(award, jobTopics(active.request.payload.placement))
    for (const input of active.request.payload.workload.inputs) this.options.blobs.grant(input.cid, effect.provider)
    attempt.opened = openStream(this, active, attempt)
    void talk(this, active, attempt)
  }

  /** Ask the network which providers exist, and say why none of them bid. */
  private explain (active: ActiveJob, now: number): void {
    const knownAds = this.options.knownAds
    if (knownAds === undefined) return
    void knownAds(active.request.payload).then((ads) => {
      active.record.explanation = explainNoBids(active.request.payload, ads, now)
      for (const line of active.record.explanation.summary) this.note(active, 'explanation', line)
      this.save(active)
    }).catch((err: unknown) => { this.options.log.warn('no-bids explanation failed', { job: active.id, error: err }) })
  }

  /** Write the job record; writes are coalesced and never hold up the job's effects. */
  save (active: ActiveJob): void {
    active.dirty = true
    if (active.saving !== undefined || active.record.state === undefined) return
    active.saving = (async () => {
      while (active.dirty) {
        active.dirty = false
        await this.options.store.put('requester', active.id, active.record).catch((err: unknown) => {
          this.options.log.error('cannot save the job record', { job: active.id, error: err })
        })
      }
      active.saving = undefined
    })()
  }

  note (active: ActiveJob, kind: string, text: string, peer?: string): void {
    const events = active.record.events
    events.push({ at: this.scheduler.now(), type: kind, text, ...(peer !== undefined ? { peer } : {}) })
    if (events.length > MAX_EVENTS) events.splice(0, events.length - MAX_EVENTS)
    this.options.log.info(text, { job: active.id, event: kind })
  }

  jobDir (id: string): string {
    return join(this.options.jobsDir, id)
  }
}
