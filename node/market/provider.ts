/**
 * The provider side of the market (DESIGN §5–§6), the shell around the provider agent
 * (protocol/market/provider-agent.ts): every decision — which jobs to bid on and when, damping, which
 * awards to take, preemption, early start, which frames count, each offer's lifecycle — is the agent's;
 * this file opens and seals messages, feeds the agent what arrives, and carries out its effects
 * (provider-jobs.ts runs the per-offer ones). This file is the market's way in:
 *
 * - `onJob` / `onBid`: job requests, re-opened rounds and other providers' bids from gossip;
 * - `handleChannel`: an exec stream from a requester — the award first, then payments and cancels,
 *   each opened here and judged by the agent; the end of the stream is the requester gone;
 * - `status()` / `stop()`.
 *
 * Time comes from `options.scheduler` (the agent's wakes, the award wait, the linger, the stop wait).
 * Nothing one job does may escape into libp2p or the daemon: every entry point catches and logs.
 */
import {
  MessageRejectedError, ProviderAgent, defaultMarketParams, isProviderFinal, jobTopics, openMessage,
  type AuctionRoundInfo, type Cancel, type OpenedMessage, type ProviderAgentEffect, type ProviderAgentEvent, type ProviderStatus,
  type Scheduler, type SealedMessage
} from '../../protocol/index.js'
import { BudgetRefusal, RequesterBudget, offerAdmitted } from '../../protocol/trust/budget.js'
import { InvalidEvidenceError, type Evidence } from '../../protocol/trust/reputation-evidence.js'
import type { RefusedRequester } from '../../protocol/market/provider-agent.js'
import type { RequesterView } from '../../protocol/market/requester-view.js'
import { ReputationSaver } from './reputation-saver.js'
import type { LogsView } from './views.js'
import { BidLog, type BidLogEntry } from './bid-log.js'
import { messageKindOf } from './message-kind.js'
import type { Logger } from '../logger.js'
import type { ExecChannel, ExecFrame } from '../services/exec.js'
import { sealBid } from './provider-messages.js'
import { ProviderJobs } from './provider-jobs.js'
import { idOf, newOffer, type Offer, type ProviderMarketOptions, type ProviderRecord } from './provider-offer.js'
import { restoreOffer } from './provider-restore.js'
import { createRealScheduler } from './real-scheduler.js'

export { DEFAULT_MAX_INPUT_BYTES } from './provider-jobs.js'
export { DEFAULT_PREEMPT_NOTICE_MS } from '../../protocol/index.js'
export type { AuctionRoundInfo } from '../../protocol/index.js'
export type { ProviderMarketOptions } from './provider-offer.js'

/**
 * A requester that opens an exec stream must send its award within this. A shell constant, not a
 * MarketParams field: it frees a stream that carries nothing, and the award, when it comes, is judged
 * by the agent whatever the wait (the market's own award wait is `MarketParams.bidHoldMs`).
 */
export const AWARD_WAIT_MS = 10_000

/** For `gpumesh status` and `/v1/market`. */
export interface ProviderMarketStatus {
  selling: boolean
  /** Bids waiting out their damping delay. */
  pending: number
  /** Bids out, waiting for an award. */
  offers: number
  /** Awarded jobs: from the award to their final status. */
  jobs: Array<{ job: string, bid: string, status: ProviderStatus, gpus: string[], price?: number, startedAt?: number }>
  /** Jobs that ran and were paid in full. */
  completed: number
  /** Offers that ended, by final status. */
  ended: Partial<Record<ProviderStatus, number>>
  /** Requesters whose job requests get no bid for their score (latest refusal last). */
  refused: RefusedRequester[]
}

/** What the effects of the event being handled refer to: the exec stream and the message it came with. */
interface Context { channel?: ExecChannel, message?: OpenedMessage<'award' | 'payment' | 'job-cancel'> }

const isRejection = (err: unknown): err is MessageRejectedError => err instanceof MessageRejectedError

export class ProviderMarket {
  private readonly agent: ProviderAgent
  /** Job requests per requester: a stranger's rate, growing with the requester's trust (requester-view.ts). */
  private readonly budget: RequesterBudget
  private readonly saver: ReputationSaver
  private readonly jobs: ProviderJobs
  /** Recent bids and their outcomes (`GET /v1/bids`). */
  private readonly bids: BidLog
  private readonly scheduler: Scheduler
  private ad: SealedMessage<'capability-ad'> | undefined
  private wakeAt: number | undefined
  private cancelWake: Cancel | undefined
  private stopped = false

  constructor (private readonly options: ProviderMarketOptions) {
    const params = options.params ?? defaultMarketParams
    this.scheduler = options.scheduler ?? createRealScheduler(options.now)
    this.agent = new ProviderAgent({ peerId: options.peerId, params, ...(options.minRequesterTrust !== undefined ? { minRequesterTrust: options.minRequesterTrust } : {}) })
    this.budget = new RequesterBudget({ rateFor: (requester) => this.agent.requesters.rate(requester, this.now()) })
    this.saver = new ReputationSaver({
      view: this.agent.requesters,
      put: async (snapshot) => { await options.store.putReputation(snapshot, 'requesters') },
      get: async () => await options.store.getReputation('requesters'),
      scheduler: this.scheduler,
      log: options.log,
      name: 'view of requesters'
    })
    const metrics = options.metrics
    this.bids = new BidLog({
      ...(options.seenBid !== undefined ? { seenBid: options.seenBid } : {}),
      onDecided: (outcome, reason) => {
        if (outcome === 'won') metrics?.awardsWon.inc()
        else metrics?.awardsLost.inc({ reason: reason ?? 'unknown' })
      }
    })
    if (metrics !== undefined) {
      metrics.jobStates.provider = () => {
        const counts: Record<string, number> = {}
        for (const o of this.agent.offers()) counts[o.state.status] = (counts[o.state.status] ?? 0) + 1
        return counts
      }
    }
    this.jobs = new ProviderJobs(options, this.scheduler, (event) => { this.drive(event) }, (bid) => this.agent.offer(bid))
  }

  private get log (): Logger { return this.options.log }
  private now (): number { return this.scheduler.now() }

  /** This node's view of requesters (read-only use: status views and tests). */
  get requesters (): RequesterView {
    return this.agent.requesters
  }

  /**
   * Read back the view of requesters kept before a restart, and the awarded jobs that may go on
   * (provider-restore.ts): each waits one lease for its requester to re-open the stream, then runs
   * again. Returns the CIDs of the awards taken up (their ledger entries stay open).
   */
  async load (): Promise<Set<string>> {
    await this.saver.load()
    const resumed = new Set<string>()
    for (const record of await this.options.store.list<ProviderRecord>('provider')) {
      const offer = await restoreOffer(record, this.options.store, this.options.blobs, this.now(), this.log).catch((err: unknown) => {
        this.log.warn('a job record could not be read back', { job: record.job, error: err })
        return undefined
      })
      if (offer === undefined || offer.award === undefined) continue
      // paid before the restart: not earned again in this process's counters
      offer.earned = record.machine.paid.cumulative
      const bid = offer.bid.cid.toString()
      this.jobs.offers.set(bid, offer)
      this.drive({
        type: 'offer-restored', now: this.now(), job: offer.request, round: offer.round, bid, gpus: offer.gpus, price: offer.bid.payload.price,
        award: { id: offer.award.cid.toString(), price: offer.award.payload.price }, state: record.machine
      })
      if (this.agent.offer(bid) === undefined) {
        this.jobs.offers.delete(bid)
        continue
      }
      resumed.add(offer.award.cid.toString())
      this.log.info('a job read back after the restart waits for its requester to re-open the stream', { job: record.job, status: record.machine.status })
    }
    return resumed
  }

  /** Evidence from others' gossip (verified and admitted): nonpayment reports and payments go to the view of requesters. */
  onEvidence (evidence: Evidence): void {
    try {
      if (!this.agent.requesters.addReport(evidence)) return
    } catch (err) {
      if (!(err instanceof InvalidEvidenceError)) throw err
      this.log.debug('evidence not taken by the view of requesters', { error: err })
      return
    }
    this.saver.save()
  }

  /**
   * Hand one event to the agent (after the ad, when it changed) and carry out its effects. Never
   * throws: one event's failure is logged.
   */
  private drive (event: ProviderAgentEvent, context: Context = {}): void {
    if (this.stopped) return
    try {
      const ad = this.options.ad()
      if (ad !== this.ad) {
        this.ad = ad
        this.perform(this.agent.handle({ type: 'ad-changed', now: event.now, ad: ad?.payload }), {})
      }
      this.perform(this.agent.handle(event), context)
      // an offer's ending or a bounced payment may have changed the view of requesters
      this.saver.save()
    } catch (err) {
      this.log.error('provider event failed', { event: event.type, error: err })
    }
  }

  private perform (effects: readonly ProviderAgentEffect[], context: Context): void {
    for (const effect of effects) {
      try {
        this.carryOut(effect, context)
      } catch (err) {
        this.log.error('provider effect failed', { effect: effect.type, error: err })
      }
    }
  }

  private carryOut (effect: ProviderAgentEffect, context: Context): void {
    switch (effect.type) {
      case 'send-bid': return this.sendBid(effect)
      case 'refuse-award': return context.channel === undefined ? undefined : this.refuse(context.channel, effect.reason, effect.message)
      case 'award-taken': {
        this.bids.won(effect.bid)
        const offer = this.jobs.offers.get(effect.bid)
        const award = context.message as OpenedMessage<'award'> | undefined
        if (offer === undefined || award === undefined || context.channel === undefined) return
        offer.channel = context.channel
        offer.award = award
        offer.requesterId = this.options.node.getConnections().find((c) => c.remotePeer.toString() === award.signer)?.remotePeer
        return this.jobs.keepEnvelope(offer, award, 'award')
      }
      case 'resume-stream': {
        const offer = this.jobs.offers.get(effect.bid)
        if (offer === undefined || context.channel === undefined) return
        // the peer inputs are fetched from (after a restart this node had no connection to it)
        offer.requesterId = this.options.node.getConnections().find((c) => c.remotePeer.toString() === context.channel?.remotePeer)?.remotePeer ?? offer.requesterId
        this.jobs.resume(offer, context.channel)
        return
      }
      case 'frame-accepted': {
        const offer = this.jobs.offers.get(effect.bid)
        if (offer !== undefined && context.message?.kind === 'payment') this.earned(offer, (context.message as OpenedMessage<'payment'>).payload.cumulative)
        if (offer !== undefined && context.message !== undefined) this.jobs.keepEnvelope(offer, context.message, effect.ref)
        return
      }
      case 'drop-frame': {
        // a bounced payment is kept as the evidence its failure report embeds
        const offer = effect.ref === undefined ? undefined : this.jobs.offers.get(effect.bid)
        if (offer !== undefined && context.message !== undefined) this.jobs.keepEnvelope(offer, context.message, effect.ref)
        return this.dropFrame(effect.job, effect.kind, effect.reason, effect.message)
      }
      case 'wake': return this.wake(effect.at)
      case 'passed': return void this.options.metrics?.bidsDeclined.inc({ reason: effect.reason })
      case 'note': return this.log[effect.level](effect.message, effect.fields)
      case 'offer-ended':
        this.bids.ended(effect.bid, effect.status, effect.reason)
        return this.jobs.onEffect(effect)
      default: return this.jobs.onEffect(effect)
    }
  }

  /** The agent's next tick; one timer, replaced by each wake. */
  private wake (at: number): void {
    if (this.wakeAt === at) return
    this.cancelWake?.()
    this.wakeAt = at
    this.cancelWake = this.scheduler.at(at, () => {
      this.wakeAt = undefined
      this.cancelWake = undefined
      this.drive({ type: 'tick', now: this.now() })
    })
  }

  // -------------------------------------------------------------------------------------------
  // Bidding
  // -------------------------------------------------------------------------------------------

  /** A job request (round 1) or a re-opened round of one, within this provider's budgets. */
  onJob (request: OpenedMessage<'job-request'>, round?: AuctionRoundInfo): void {
    this.options.metrics?.jobsSeen.inc({ round: round === undefined ? 'first' : 'reopened' })
    const refusal = this.admitJob(request.signer)
    if (refusal !== undefined) {
      this.options.metrics?.messagesRejected.inc({ kind: 'job-request', reason: refusal, via: 'gossip' })
      this.log.debug('job request refused', { job: request.cid.toString(), requester: request.signer, reason: refusal })
      return
    }
    const held = this.options.blobs.heldInputs(request.payload.workload.inputs.map((i) => i.cid))
    this.drive({ type: 'job-seen', now: this.now(), job: request, ...(round !== undefined ? { round } : {}), ...(held.length > 0 ? { held } : {}) })
  }

  /**
   * The budgets (protocol/trust/budget.ts): no more open offers than the cap (checked first, so a
   * job refused for it costs its requester nothing), and a token from the requester's bucket. This
   * node's own jobs are not charged, nor is anyone while it does not sell.
   */
  private admitJob (requester: string): BudgetRefusal | undefined {
    // a node that does not sell decides nothing on jobs: nothing to charge
    if (requester === this.options.peerId || this.options.ad() === undefined) return undefined
    if (!offerAdmitted(this.agent.openOffers)) return BudgetRefusal.OFFER_LIMIT
    return this.budget.admit(requester, this.now())
  }

  /** A bid seen on gossip (for damping). */
  onBid (bid: OpenedMessage<'bid'>): void {
    this.drive({ type: 'bid-seen', now: this.now(), bid })
  }

  /** An award seen on gossip: a lost bid's GPUs come free (protocol/README §5.6, "Reservations"). */
  onAwardSeen (award: OpenedMessage<'award'>): void {
    this.bids.awardSeen(award)
    if (this.agent.heldBids > 0) this.drive({ type: 'award-seen', now: this.now(), award: { id: award.cid.toString(), signer: award.signer, payload: award.payload } })
  }

  /** Seal the bid the agent decided on, tell the agent (so an award that comes back at once finds it), publish it. */
  private sendBid (effect: Extract<ProviderAgentEffect, { type: 'send-bid' }>): void {
    const ad = this.ad
    if (ad === undefined) return
    const request = effect.request as OpenedMessage<'job-request'>
    const now = this.now()
    const bid = sealBid(this.options.signer, request, effect.decision, ad, effect.expiresAt, now, effect.cached)
    const offer = newOffer(request, effect.round, bid)
    // the inputs the bid says are cached stay so until the offer ends (won and run, or lost): the
    // requester scored the bid for them
    for (const cid of effect.cached ?? []) {
      this.options.blobs.pinInput(cid)
      ;(offer.pinned ??= []).push(cid)
    }
    this.jobs.add(offer)
    this.bids.sent(request, bid, now)
    this.options.metrics?.bidsSent.inc()
    this.drive({ type: 'bid-sealed', now, job: effect.job, round: effect.round, bid: bid.cid.toString(), payload: bid.payload })
    void this.options.gossip.publish(bid, jobTopics(request.payload.placement)).catch((err: unknown) => {
      this.log.warn('publishing a bid failed', { job: effect.job, error: err })
    })
  }

  // -------------------------------------------------------------------------------------------
  // The exec stream
  // -------------------------------------------------------------------------------------------

  /** An inbound exec stream: the requester's award first, then payments and cancels. */
  handleChannel (channel: ExecChannel): void {
    if (this.stopped) return channel.abort(new Error('the provider is stopping'))
    this.serve(channel).catch((err: unknown) => {
      this.log.error('exec stream failed', { peer: channel.remotePeer, error: err })
      channel.abort(err as Error)
    })
  }

  private async serve (channel: ExecChannel): Promise<void> {
    const frames = channel.frames()
    let cancel: Cancel | undefined
    const timeout = new Promise<'timeout'>((resolve) => { cancel = this.scheduler.at(this.now() + AWARD_WAIT_MS, () => { resolve('timeout') }) })
    // a bad first frame has the channel abort the stream (with its reason, counted) before it throws
    const first = await Promise.race([frames.next(), timeout]).catch((err: unknown) => {
      this.log.warn('exec stream refused', { peer: channel.remotePeer, error: err })
    }).finally(() => { cancel?.() })
    if (first === 'timeout') return this.refuse(channel, 'NO_AWARD', `no award within ${AWARD_WAIT_MS} ms`)
    if (first === undefined || first.done === true) return
    if (first.value.type !== 'message') return this.refuse(channel, 'NO_AWARD', 'the first frame must be an award')
    let award: OpenedMessage<'award'>
    try {
      award = this.openAward(first.value.bytes)
    } catch (err) {
      if (!isRejection(err)) throw err
      return this.refuse(channel, err.reason, `the first frame is not a valid award: ${err.message}`)
    }
    const bid = award.payload.bid.toString()
    this.drive({ type: 'award', now: this.now(), award: { id: award.cid.toString(), signer: award.signer, payload: award.payload }, from: channel.remotePeer }, { channel, message: award })
    const offer = this.jobs.offers.get(bid)
    // bound to this stream: a new award taken (award-taken) or one resumed (resume-stream)
    if (offer === undefined || offer.channel !== channel) return
    try {
      for (let next = await frames.next(); next.done !== true; next = await frames.next()) {
        try {
          this.onFrame(offer, next.value, channel)
        } catch (err) {
          // one frame must not end a running job
          this.log.error('handling an exec frame failed', { job: idOf(offer), error: err })
        }
      }
    } catch (err) {
      this.log.debug('exec stream broke', { job: idOf(offer), error: err })
    }
    // the requester resumed on another stream meanwhile: this one's end is no news
    if (offer.channel !== channel) return
    offer.streamEnded = true
    offer.linger?.()
    this.drive({ type: 'requester-gone', now: this.now(), bid })
    this.jobs.streamEnded(offer)
  }

  /**
   * The award that opens a stream, with every §6 check; but an award this node already took on is
   * let past its expiry (its signature is still checked): a requester resuming a job that runs
   * longer than the award's lifetime sends the same award again (§7.7 "Resuming").
   */
  private openAward (bytes: Uint8Array): OpenedMessage<'award'> {
    try {
      return openMessage(bytes, 'award', { now: this.now() })
    } catch (err) {
      if (!isRejection(err)) throw err
      let held: OpenedMessage<'award'> | undefined
      try {
        held = openMessage(bytes, 'award', { now: this.now(), historical: true })
      } catch {
        throw err
      }
      if (this.jobs.offers.get(held.payload.bid.toString())?.award?.cid.equals(held.cid) !== true) throw err
      return held
    }
  }

  private refuse (channel: ExecChannel, reason: string, message: string): void {
    this.options.metrics?.messagesRejected.inc({ kind: 'award', reason, via: 'exec' })
    this.log.warn('exec stream refused', { peer: channel.remotePeer, reason, error: message })
    channel.abort(new Error(message))
  }

  /** One frame after the award: payments and cancels go to the agent; anything else is dropped with a warning. */
  private onFrame (offer: Offer, frame: ExecFrame, channel: ExecChannel): void {
    if (offer.channel !== channel) return
    const bid = offer.bid.cid.toString()
    if (frame.type === 'log') return this.log.debug('log frame from the requester ignored', { job: idOf(offer) })
    if (frame.type === 'credit') return this.jobs.onLogCredit(offer, frame.upTo)
    let message: OpenedMessage<'payment' | 'job-cancel'>
    try {
      message = openMessage(frame.bytes, ['payment', 'job-cancel'], { now: this.now() })
    } catch (err) {
      if (!isRejection(err)) throw err
      if (offer.finalized) return
      return this.dropFrame(idOf(offer), messageKindOf(frame.bytes), err.reason, err.message)
    }
    const now = this.now()
    const context = { channel, message }
    if (message.kind === 'payment') this.drive({ type: 'payment', now, bid, signer: message.signer, payload: (message as OpenedMessage<'payment'>).payload }, context)
    else this.drive({ type: 'cancel', now, bid, signer: message.signer, payload: (message as OpenedMessage<'job-cancel'>).payload }, context)
  }

  private dropFrame (job: string, kind: string, reason: string, message: string): void {
    this.options.metrics?.messagesRejected.inc({ kind, reason, via: 'exec' })
    this.log.warn('exec frame dropped', { job, kind, reason, error: message })
  }

  /** A payment accepted: its growth over the last one counted is earned (a commitment is cumulative). */
  private earned (offer: Offer, cumulative: number): void {
    const grown = cumulative - (offer.earned ?? 0)
    if (grown <= 0) return
    offer.earned = cumulative
    this.options.metrics?.creditsEarned.inc(grown)
  }

  // -------------------------------------------------------------------------------------------
  // Lifecycle of the component
  // -------------------------------------------------------------------------------------------

  status (): ProviderMarketStatus {
    const live = this.agent.offers()
    return {
      selling: this.options.ad() !== undefined,
      pending: this.agent.pendingBids,
      offers: live.filter((o) => o.state.status === 'offered').length,
      jobs: live.filter((o) => o.state.status !== 'offered').map((o) => ({
        job: o.job,
        bid: o.bid,
        status: o.state.status,
        gpus: [...o.gpus],
        ...(o.award !== undefined ? { price: o.award.price } : {}),
        ...(o.state.startedAt !== undefined ? { startedAt: o.state.startedAt } : {})
      })),
      completed: this.agent.ended.settled ?? 0,
      ended: { ...this.agent.ended },
      refused: this.agent.refusedRequesters()
    }
  }

  /**
   * The log of a job this node runs or ran, from offset `from` (`GET /v1/market/logs`): what it keeps for
   * the receipt (up to its cap, provider-io.ts MAX_LOG_BYTES), while the offer is held and for the last runs after they end
   * (ProviderJobs.runLog). The newest award's run when the job was awarded here more than once;
   * undefined when none is held.
   */
  logs (job: string, from: number): LogsView | undefined {
    const run = this.jobs.runLog(job)
    if (run === undefined) return undefined
    const { log, offer } = run
    const start = Math.min(Math.max(log.base, from), log.size)
    const status = offer === undefined ? undefined : this.agent.offer(offer.bid.cid.toString())?.state.status
    return {
      text: new TextDecoder().decode(log.slice(start, log.size)),
      next: log.size,
      done: offer === undefined || offer.finalized || status === undefined || isProviderFinal(status),
      ...(log.truncated ? { cut: `this provider keeps ${log.cap} bytes of a job's log` } : {})
    }
  }

  /** This node's recent bids and what became of them, newest first (`GET /v1/bids`). */
  recentBids (): BidLogEntry[] {
    return this.bids.list()
  }

  /** Stop bidding, abort every run, clear every timer, drop every stream. */
  async stop (): Promise<void> {
    this.stopped = true
    this.cancelWake?.()
    await this.jobs.stop()
    await this.saver.flush()
  }
}
