/**
 * The provider side of the market (DESIGN §5–§6): bid on the jobs this node can run, and take the
 * awards it wins. The decisions are protocol/'s: `decideBid` (bid or decline), `bidWindowClosesAt` (until when), `bidDelayMs` and
 * `shouldStaySilent` (damping); each bid sent becomes an `Offer` whose provider lifecycle
 * (`reduceProvider`) provider-jobs.ts drives. This file is the market's way in:
 *
 * - `onJob` / `onBid`: job requests, re-opened rounds and other providers' bids from gossip;
 * - `handleChannel`: an exec stream from a requester — the award first (checked against the bid it
 *   names), then payments and cancels, each checked before it reaches the job's machine; the end of
 *   the stream is the requester gone;
 * - `status()` / `stop()`.
 *
 * Nothing one job does may escape into libp2p or the daemon: every entry point catches and logs.
 */
import {
  MessageRejectedError, bidDelayMs, bidWindowClosesAt, decideBid, jobTopics, openMessage, shouldStaySilent, startProviderJob,
  type AwardTerms, type BidDecision, type OpenedMessage, type ProviderStatus
} from '../../protocol/index.js'
import type { Logger } from '../logger.js'
import type { ExecChannel, ExecFrame } from '../services/exec.js'
import { SeenBids } from './provider-damping.js'
import { sealBid } from './provider-messages.js'
import { ProviderJobs } from './provider-jobs.js'
import { gpusOf, idOf, newOffer, type Offer, type ProviderMarketOptions } from './provider-offer.js'

export { DEFAULT_MAX_INPUT_BYTES, DEFAULT_PREEMPT_NOTICE_MS } from './provider-jobs.js'
export type { ProviderMarketOptions } from './provider-offer.js'

/** A requester that opens an exec stream must send its award within this. */
export const AWARD_WAIT_MS = 10_000

/** A re-opened auction (round ≥ 2): who may not bid, and when its window opened. */
export interface AuctionRoundInfo { round: number, attempt: number, excluded: string[], opensAt: number }

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
}

const isRejection = (err: unknown): err is MessageRejectedError => err instanceof MessageRejectedError

export class ProviderMarket {
  private readonly jobs: ProviderJobs
  private readonly pending = new Map<string, NodeJS.Timeout>()
  /** Other providers' bids, for damping. */
  private readonly seen = new SeenBids()
  private stopped = false

  constructor (private readonly options: ProviderMarketOptions) {
    this.jobs = new ProviderJobs(options)
  }

  private get log (): Logger { return this.options.log }
  private now (): number { return this.options.now() }

  // -------------------------------------------------------------------------------------------
  // Bidding
  // -------------------------------------------------------------------------------------------

  /** A job request (round 1) or a re-opened round of one: decide, wait out the damping delay, bid. */
  onJob (request: OpenedMessage<'job-request'>, round?: AuctionRoundInfo): void {
    try {
      this.considerJob(request, round)
    } catch (err) {
      this.log.error('handling a job request failed', { job: request.cid.toString(), error: err })
    }
  }

  private considerJob (request: OpenedMessage<'job-request'>, round: AuctionRoundInfo | undefined): void {
    const ad = this.options.ad()
    const id = request.cid.toString()
    const roundNo = round?.round ?? 1
    if (this.stopped || ad === undefined || request.signer === this.options.peerId) return
    if (round?.excluded.includes(this.options.peerId) === true) return this.log.debug('excluded from the round', { job: id, round: roundNo })
    const mine = [...this.jobs.offers.values()].filter((o) => idOf(o) === id)
    if (this.pending.has(`${id}#${roundNo}`) || mine.some((o) => o.round === roundNo)) return
    // this node displaced the job for better-paying work: bidding on its next round would only make
    // it wait for that work to end, when another provider could run it now
    if (this.jobs.preempted.has(id)) return this.log.debug('not bidding on a job this node preempted', { job: id, round: roundNo })
    const job = request.payload
    const now = this.now()
    // timed from receipt (bounded by the skew allowance), so a clock running ahead still gets the window
    const closesAt = bidWindowClosesAt(round?.opensAt ?? job.issuedAt, job.auction.bidWindowMs, now)
    if (now >= closesAt) return this.log.debug('the bid window has closed', { job: id, round: roundNo })
    const decision = decideBid(job, { ad: ad.payload, allocations: this.jobs.allocations() }, now)
    if (decision.kind === 'decline') return this.log.debug('not bidding', { job: id, round: roundNo, reason: decision.reason, detail: decision.detail })
    const key = `${id}#${roundNo}`
    const timer = setTimeout(() => {
      this.pending.delete(key)
      try {
        this.sendBid(request, roundNo, decision, round, closesAt)
      } catch (err) {
        this.log.error('bidding failed', { job: id, error: err })
      }
    }, this.options.damping === false ? 0 : bidDelayMs(decision.fit, job.auction.bidWindowMs))
    timer.unref()
    this.pending.set(key, timer)
  }

  /** After the damping delay: stay silent if enough bids at least as good were seen, else bid. */
  private sendBid (request: OpenedMessage<'job-request'>, round: number, decision: Extract<BidDecision, { kind: 'bid' }>, info: AuctionRoundInfo | undefined, closesAt: number): void {
    const ad = this.options.ad()
    const id = request.cid.toString()
    const now = this.now()
    if (this.stopped || ad === undefined) return
    if (now >= closesAt) return this.log.debug('the bid window closed during the delay', { job: id, round })
    // screened and scored as the award will be, at the round's close (protocol/README §5.6 "Damping")
    const seen = this.seen.bids(id, info?.opensAt, now)
    if (this.options.damping !== false && shouldStaySilent({ job: request, price: decision.price, seen, decidedAt: Math.max(now, closesAt), excluded: info?.excluded })) return this.log.debug('staying silent: enough better bids seen', { job: id, round })
    const bid = sealBid(this.options.signer, request, decision, ad, closesAt, now)
    const init = startProviderJob({ job: id, requester: request.signer, bid: bid.cid.toString(), gpus: request.payload.resources.gpus, offerExpiresAt: bid.payload.expiresAt }, now)
    const offer = newOffer(request, round, bid, init.state)
    // tracked before it is published, so an award that comes back at once finds it
    this.jobs.add(offer, init.effects)
    this.log.info('bid', { job: id, round, bid: bid.cid.toString(), price: decision.price, gpus: decision.gpus, preempts: decision.preempts })
    void this.options.gossip.publish(bid, jobTopics(request.payload.placement)).catch((err: unknown) => {
      this.log.warn('publishing a bid failed', { job: id, error: err })
    })
  }

  /**
   * A bid seen on gossip: it counts for damping while it is valid (if it passes screening then). Kept
   * only while this node waits to bid on its job: no other job's bids can silence it, and a bid that
   * overtook its job request in gossip is not counted (damping then errs towards bidding).
   */
  onBid (bid: OpenedMessage<'bid'>): void {
    try {
      if (bid.signer !== this.options.peerId && this.waitingToBid(bid.payload.job.toString())) this.seen.add(bid, this.now())
    } catch (err) {
      this.log.error('handling a bid failed', { error: err })
    }
  }

  /** Whether a bid of this node on `job` (any round) is waiting out its damping delay. */
  private waitingToBid (job: string): boolean {
    for (const key of this.pending.keys()) if (key.startsWith(`${job}#`)) return true
    return false
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
    let timer: NodeJS.Timeout | undefined
    const timeout = new Promise<'timeout'>((resolve) => { timer = setTimeout(() => { resolve('timeout') }, AWARD_WAIT_MS); timer.unref() })
    // a bad first frame has the channel abort the stream (with its reason, counted) before it throws
    const first = await Promise.race([frames.next(), timeout]).catch((err: unknown) => {
      this.log.warn('exec stream refused', { peer: channel.remotePeer, error: err })
    }).finally(() => { clearTimeout(timer) })
    if (first === 'timeout') return this.refuse(channel, 'NO_AWARD', `no award within ${AWARD_WAIT_MS} ms`)
    if (first === undefined || first.done === true) return
    if (first.value.type !== 'message') return this.refuse(channel, 'NO_AWARD', 'the first frame must be an award')
    let award: OpenedMessage<'award'>
    try {
      award = openMessage(first.value.bytes, 'award', { now: this.now() })
    } catch (err) {
      if (!isRejection(err)) throw err
      return this.refuse(channel, err.reason, `the first frame is not a valid award: ${err.message}`)
    }
    const offer = this.jobs.offers.get(award.payload.bid.toString())
    const problem = offer === undefined ? 'no bid of this node waits for this award' : this.awardProblem(offer, award, channel)
    if (offer === undefined || problem !== undefined) return this.refuse(channel, 'UNEXPECTED_AWARD', problem ?? '')
    offer.channel = channel
    offer.award = award
    offer.requesterId = this.options.node.getConnections().find((c) => c.remotePeer.toString() === award.signer)?.remotePeer
    this.jobs.keepEnvelope(offer, award, 'award')
    const a = award.payload
    const terms: AwardTerms = { award: award.cid.toString(), bid: a.bid.toString(), attempt: a.attempt, price: a.price, leaseMs: a.leaseMs, billingIntervalSec: a.billingIntervalSec }
    this.log.info('award received', { job: idOf(offer), award: terms.award, price: a.price, attempt: a.attempt })
    this.jobs.feed(offer, { type: 'award-received', from: award.signer, award: terms })
    try {
      for (let next = await frames.next(); next.done !== true; next = await frames.next()) {
        try {
          this.onFrame(offer, next.value)
        } catch (err) {
          // one frame must not end a running job
          this.log.error('handling an exec frame failed', { job: idOf(offer), error: err })
        }
      }
    } catch (err) {
      this.log.debug('exec stream broke', { job: idOf(offer), error: err })
    }
    offer.streamEnded = true
    clearTimeout(offer.linger)
    if (!offer.finalized) this.jobs.feed(offer, { type: 'requester-gone' })
  }

  /** Why `award` cannot be taken on for `offer`, or undefined when it can. */
  private awardProblem (offer: Offer, award: OpenedMessage<'award'>, channel: ExecChannel): string | undefined {
    if (award.signer !== offer.request.signer) return 'the award is not signed by the job\'s requester'
    if (channel.remotePeer !== award.signer) return 'the award was handed over by a peer other than its signer'
    if (award.payload.winner !== this.options.peerId) return 'the award names another winner'
    if (!award.payload.job.equals(offer.request.cid)) return 'the award is for another job'
    if (offer.channel !== undefined || offer.state.status !== 'offered') return `the bid is no longer waiting for an award (${offer.state.status})`
    return undefined
  }

  private refuse (channel: ExecChannel, reason: string, message: string): void {
    this.options.metrics?.messagesRejected.inc({ kind: 'exec:award', reason })
    this.log.warn('exec stream refused', { peer: channel.remotePeer, reason, error: message })
    channel.abort(new Error(message))
  }

  /** One frame after the award: payments and cancels count; anything else is dropped with a warning. */
  private onFrame (offer: Offer, frame: ExecFrame): void {
    if (frame.type === 'log') return this.log.debug('log frame from the requester ignored', { job: idOf(offer) })
    if (frame.type === 'credit') return this.jobs.onLogCredit(offer, frame.upTo)
    let message: OpenedMessage<'payment' | 'job-cancel'>
    try {
      message = openMessage(frame.bytes, ['payment', 'job-cancel'], { now: this.now() })
    } catch (err) {
      if (!isRejection(err)) throw err
      if (offer.finalized) return
      return this.dropFrame(offer, 'exec', err.reason, err.message)
    }
    // after the end only the requester's payment for the time run counts (the lifecycle decides)
    if (offer.finalized && message.kind !== 'payment') return
    const award = offer.award as OpenedMessage<'award'>
    const p = message.payload
    if (message.signer !== offer.request.signer) return this.dropFrame(offer, message.kind, 'NOT_REQUESTER', 'not signed by the requester')
    if (!p.award.equals(award.cid) || !p.job.equals(offer.request.cid)) return this.dropFrame(offer, message.kind, 'WRONG_AWARD', 'for another award')
    if (message.kind === 'job-cancel') {
      offer.note = `cancelled by the requester: ${(p as OpenedMessage<'job-cancel'>['payload']).reason}`
      return this.jobs.feed(offer, { type: 'cancel', from: message.signer })
    }
    const pay = p as OpenedMessage<'payment'>['payload']
    if (pay.payee !== this.options.peerId) return this.dropFrame(offer, 'payment', 'WRONG_PAYEE', `pays ${pay.payee}`)
    if (pay.seq <= offer.payment.seq) return this.dropFrame(offer, 'payment', 'STALE_SEQ', `seq ${pay.seq} after ${offer.payment.seq}`)
    offer.payment = { seq: pay.seq, cumulative: Math.max(offer.payment.cumulative, pay.cumulative), gpuSeconds: pay.gpuSeconds }
    this.jobs.keepEnvelope(offer, message, 'last-payment')
    this.jobs.feed(offer, { type: 'payment-received', from: message.signer, cumulative: pay.cumulative, interval: pay.interval })
  }

  private dropFrame (offer: Offer, kind: string, reason: string, message: string): void {
    this.options.metrics?.messagesRejected.inc({ kind: `exec:${kind}`, reason })
    this.log.warn('exec frame dropped', { job: idOf(offer), kind, reason, error: message })
  }

  // -------------------------------------------------------------------------------------------
  // Lifecycle of the component
  // -------------------------------------------------------------------------------------------

  status (): ProviderMarketStatus {
    const live = [...this.jobs.offers.values()]
    return {
      selling: this.options.ad() !== undefined,
      pending: this.pending.size,
      offers: live.filter((o) => o.state.status === 'offered').length,
      jobs: live.filter((o) => o.state.status !== 'offered').map((o) => ({
        job: idOf(o),
        bid: o.bid.cid.toString(),
        status: o.state.status,
        gpus: gpusOf(o),
        ...(o.award !== undefined ? { price: o.award.payload.price } : {}),
        ...(o.state.startedAt !== undefined ? { startedAt: o.state.startedAt } : {})
      })),
      completed: this.jobs.ended.settled ?? 0,
      ended: { ...this.jobs.ended }
    }
  }

  /** Stop bidding, abort every run, clear every timer, drop every stream. */
  async stop (): Promise<void> {
    this.stopped = true
    for (const timer of this.pending.values()) clearTimeout(timer)
    this.pending.clear()
    await this.jobs.stop()
  }
}
