/**
 * The provider side of the market above a single job (DESIGN §5–§6), pure: one `ProviderAgent` per
 * node decides which jobs it bids on and when (bid policy, bid window, damping delay and silence), which
 * awards it takes (the award's names, a re-check against the calendar and load, the price), which bronze
 * jobs it preempts for them, when an accepted job may really start (early when GPUs come free), which
 * payment and cancel frames count, and drives each offer's lifecycle (`reduceProvider`).
 *
 * `handle(event) → effects` is its one entry point: synchronous, with time only from `event.now`. The
 * daemon's shell (node/market/provider*.ts) and the simulator carry the effects out (seal, send, fetch,
 * run, store) and feed back what happened. Deadlines that fall due are handled before each event.
 */
import type { JobCancel } from '../messages/auction.js'
import type { CapabilityAd } from '../messages/capability-ad.js'
import type { PaymentCommitment } from '../messages/settlement.js'
import type { CID } from '../../crypto/index.js'
import type { AuctionBid } from './award.js'
import { cachedInputs } from './input-cache.js'
import { SeenBids } from './seen-bids.js'
import { reviewAward, startNow } from './award-review.js'
import { BusyJobs, Reservations, UNFINISHED_AWARD_HORIZON_MS, allocationFor } from './reservations.js'
import { decideBid } from './bid-policy.js'
import { bidWindowClosesAt } from './bid-window.js'
import { dampingDelayMs, shouldStaySilent, tieBreakUniform } from './damping.js'
import type { MarketParams } from './params.js'
import { DEFAULT_MIN_REQUESTER_TRUST, RequesterRefusal, RequesterView, refusesRequester, validateMinRequesterTrust } from './requester-view.js'
import {
  AwardRefusal, FrameDrop,
  type AgentAward, type AgentJob, type AuctionRoundInfo, type OfferEffect, type OwnerHold, type ProviderAgentEffect, type ProviderAgentEvent, type ProviderOfferView
} from './provider-agent-types.js'
import { isProviderFinal, reduceProvider, restartProviderJob, startProviderJob, type ProviderEvent, type ProviderJob, type ProviderStatus } from './provider-lifecycle.js'
import type { Allocation, BidDecision } from './types.js'

export interface ProviderAgentOptions {
  /** This node's peer id. */
  peerId: string
  /** Its parameters; `damping: false` bids at once and never stays silent (benchmarks compare). */
  params: MarketParams
  /** 0..1: job requests from a requester scoring below this in `requesters` get no bid (default DEFAULT_MIN_REQUESTER_TRUST). */
  minRequesterTrust?: number
}

/** A requester refused for its score, as the status views show it. */
export interface RefusedRequester { requester: string, score: number, min: number, reason: RequesterRefusal, jobs: number, at: number }

/** Refused requesters remembered for the status view; the one refused longest ago is forgotten first. */
export const MAX_REFUSED_SHOWN = 256

type BidTerms = Extract<BidDecision, { kind: 'bid' }>

interface Pending { job: AgentJob, round: number, info?: AuctionRoundInfo, decision: BidTerms, closesAt: number, at: number, cached: CID[] }

interface Offer {
  job: AgentJob
  id: string
  round: number
  bid: string
  bidGpus: string[]
  ask: number
  state: ProviderJob
  award?: { id: string, price: number }
  allocation?: Allocation
  /** Bids (of this node) whose jobs this one preempts. */
  displaces: string[]
  /** Set once the lifecycle asked to start: wait for the preempted GPUs until `preemptedBy`, and retry at `until`. */
  start?: { preemptedBy: number, until?: number }
  payment: { seq: number, cumulative: number, gpuSeconds: number }
  note?: string
  endedAt?: number
  /** A payment from the requester bounced: reported once, and counted as this node's own failure. */
  bounced?: boolean
}

type LifecycleInput = ProviderEvent extends infer E ? (E extends { now: number } ? Omit<E, 'now'> : never) : never

const key = (job: string, round: number): string => `${job}#${round}`
/** The job of a `key` (a CID string has no `#`). */
const jobOfKey = (k: string): string => k.slice(0, k.lastIndexOf('#'))

export class ProviderAgent {
  readonly peerId: string
  /** This node's view of requesters (requester-view.ts): own endings recorded here, others' reports added by the shell. */
  readonly requesters: RequesterView
  readonly minRequesterTrust: number
  private readonly params: MarketParams
  private readonly damping: boolean
  private ad: CapabilityAd | undefined
  /** The owner's own work as allocations (`holds-changed`). */
  private ownerHolds: Allocation[] = []
  private readonly pending = new Map<string, Pending>()
  /** The earliest `at` of the pending bids (undefined: none), and how many are pending per job. */
  private pendingMin: number | undefined
  private readonly pendingJobs = new Map<string, number>()
  /** Bids asked for (send-bid) and not yet sealed. */
  private readonly sealing = new Map<string, Pending>()
  /** Live offers by bid id; an offer leaves in its final status. */
  private readonly live = new Map<string, Offer>()
  /** Ended offers with an award, kept for late payments until their stream ends. */
  private readonly closed = new Map<string, Offer>()
  /** Jobs this node preempted (job id → the request's expiry): no bid on their next rounds. */
  private readonly preempted = new Map<string, number>()
  private readonly seen: SeenBids
  /** GPUs held by this node's outstanding bids, by job#round (reservations.ts). */
  private readonly holds = new Reservations()
  /** Jobs declined BUSY while bids held GPUs: decided again when a hold is released. */
  private readonly busy = new BusyJobs<{ job: AgentJob, round: AuctionRoundInfo | undefined, receivedAt: number, held: readonly string[] | undefined }>()
  private readonly endedCounts: Partial<Record<ProviderStatus, number>> = {}
  /** Ended offers whose stream ended: forgotten at the start of the next event (onRequesterGone). */
  private readonly forgetting: string[] = []
  /** Requesters refused for their score, in the order of their latest refusal. */
  private readonly refused = new Map<string, RefusedRequester>()
  private lastWake: number | undefined
  private out: ProviderAgentEffect[] = []
  private readonly queue: Array<[Offer, LifecycleInput]> = []
  private now = 0

  constructor (options: ProviderAgentOptions) {
    this.peerId = options.peerId
    this.params = options.params
    this.damping = options.params.damping
    this.seen = new SeenBids(options.params.seenBids)
    this.requesters = new RequesterView(options.peerId)
    this.minRequesterTrust = validateMinRequesterTrust(options.minRequesterTrust ?? DEFAULT_MIN_REQUESTER_TRUST)
  }

  // -------------------------------------------------------------------------------------------
  // The entry point
  // -------------------------------------------------------------------------------------------

  /** Apply one event (after every deadline due by `event.now`); returns the effects, in order. */
  handle (event: ProviderAgentEvent): ProviderAgentEffect[] {
    this.out = []
    if (this.forgetting.length > 0) {
      for (const bid of this.forgetting) this.closed.delete(bid)
      this.forgetting.length = 0
    }
    this.now = Math.max(this.now, event.now)
    // lastWake is the earliest deadline as the last event left things: before it nothing is due
    if (this.lastWake !== undefined && this.lastWake <= this.now) this.advance()
    this.dispatch(event)
    this.drain()
    this.advance()
    this.sweep()
    const next = this.nextWake()
    if (next !== undefined && next !== this.lastWake) this.out.push({ type: 'wake', at: next })
    this.lastWake = next
    return this.out
  }

  private dispatch (e: ProviderAgentEvent): void {
    switch (e.type) {
      case 'ad-changed': this.ad = e.ad; return
      case 'holds-changed': this.ownerHolds = e.holds.map(ownerAllocation); return
      case 'job-seen': return this.considerJob(e.job, e.round, this.now, e.held)
      case 'bid-seen': return this.onBidSeen(e.bid)
      case 'bid-sealed': return this.onBidSealed(e.job, e.round, e.bid, e.payload.expiresAt)
      case 'award-seen': return this.onAwardSeen(e.award)
      case 'award': return this.onAward(e.award, e.from)
      case 'payment': return this.onPayment(e.bid, e.signer, e.payload)
      case 'cancel': return this.onCancel(e.bid, e.signer, e.payload)
      case 'requester-gone': return this.onRequesterGone(e.bid)
      case 'inputs-fetched': return this.feedBid(e.bid, { type: 'inputs-fetched' })
      case 'started': return this.feedBid(e.bid, { type: 'started' })
      case 'finished': {
        const offer = this.live.get(e.bid)
        if (offer !== undefined && e.note !== undefined) offer.note = e.note
        return this.feedBid(e.bid, { type: 'finished', exitCode: e.exitCode, gpuSeconds: e.gpuSeconds, ...(e.outputBytes !== undefined ? { outputBytes: e.outputBytes } : {}) })
      }
      case 'offer-restored': return this.onRestored(e)
      case 'tick': return
    }
  }

  // -------------------------------------------------------------------------------------------
  // Queries (read-only, for status views)
  // -------------------------------------------------------------------------------------------

  /** An offer, live or ended (while kept for a late payment). */
  offer (bid: string): ProviderOfferView | undefined {
    const o = this.live.get(bid) ?? this.closed.get(bid)
    return o === undefined ? undefined : view(o)
  }

  /** The live offers. */
  offers (): ProviderOfferView[] {
    return [...this.live.values()].map(view)
  }

  /** Bids waiting out their damping delay. */
  get pendingBids (): number {
    return this.pending.size
  }

  /**
   * Offers not yet awarded: bids out and waiting, bids waiting out their damping delay, bids being
   * sealed. The shell bounds them (protocol/trust/budget.ts, MAX_OPEN_OFFERS).
   */
  get openOffers (): number {
    let n = this.pending.size + this.sealing.size
    for (const o of this.live.values()) if (o.state.status === 'offered') n++
    return n
  }

  /** Offers that ended, by final status. */
  get ended (): Readonly<Partial<Record<ProviderStatus, number>>> {
    return { ...this.endedCounts }
  }

  /** Outstanding bids holding GPUs (a shell may skip `award-seen` while there are none). */
  get heldBids (): number {
    return this.holds.size
  }

  /**
   * The jobs this node may still act on a gossiped bid or award of without seeing the job again: those it
   * waits to bid on, holds GPUs for with a bid (or is about to), or declined BUSY and will decide again when
   * a hold is released. A bid or award of any other job leaves the agent as it was (onBidSeen, onAwardSeen),
   * so a simulator may deliver those without handing them over. Read-only; a new array each call.
   */
  watchedJobs (): string[] {
    if (this.pendingJobs.size === 0 && this.holds.size === 0 && this.busy.size === 0) return []
    const out = new Set(this.pendingJobs.keys())
    for (const k of this.holds.keys()) out.add(jobOfKey(k))
    for (const k of this.busy.keys()) out.add(jobOfKey(k))
    return [...out]
  }

  /** Whether `job` is one of `watchedJobs()` (read-only). */
  watches (job: string): boolean {
    if (this.pendingJobs.has(job)) return true
    if (this.holds.size > 0) for (const k of this.holds.keys()) if (jobOfKey(k) === job) return true
    if (this.busy.size > 0) for (const k of this.busy.keys()) if (jobOfKey(k) === job) return true
    return false
  }

  /** GPUs committed to awarded jobs, and the owner's holds (gold, never preempted). */
  allocations (): Allocation[] {
    const out: Allocation[] = [...this.ownerHolds]
    for (const o of this.live.values()) if (o.allocation !== undefined) out.push(o.allocation)
    return out
  }

  /** Requesters refused for their score (latest refusal last), for `gpumesh status`. */
  refusedRequesters (): RefusedRequester[] {
    return [...this.refused.values()].map((r) => ({ ...r }))
  }

  /** Whether this node preempted `job` (and so will not bid on its next rounds). */
  hasPreempted (job: string): boolean {
    return this.preempted.has(job)
  }

  /** The earliest instant the agent has something to do at (its last `wake`). */
  nextWake (): number | undefined {
    // after every event: plain comparisons, no closure
    let next = this.pendingMin
    if (this.busy.size > 0) {
      const until = this.holds.nextUntil()
      if (until !== undefined && (next === undefined || until < next)) next = until
    }
    for (const o of this.live.values()) {
      const w = o.state.wakeAt
      if (w !== undefined && w > o.state.now && (next === undefined || w < next)) next = w
      const until = o.start?.until
      if (until !== undefined && (next === undefined || until < next)) next = until
    }
    return next
  }

  // -------------------------------------------------------------------------------------------
  // Bidding
  // -------------------------------------------------------------------------------------------

  /** Decide on a job seen at `receivedAt` (now, or earlier for a job decided again: its window stays as it was). */
  private considerJob (job: AgentJob, round: AuctionRoundInfo | undefined, receivedAt = this.now, held?: readonly string[]): void {
    const id = job.cid.toString()
    const roundNo = round?.round ?? 1
    const ad = this.ad
    if (ad === undefined || job.signer === this.peerId) return
    if (this.refuseRequester(job.signer, id, roundNo)) return
    if (round?.excluded.includes(this.peerId) === true) return this.pass(id, roundNo, 'EXCLUDED', 'excluded from the round')
    // the key is built only when something is pending or sealing (most providers, most jobs: nothing)
    const k = this.pending.size > 0 || this.sealing.size > 0 ? key(id, roundNo) : undefined
    if ((k !== undefined && (this.pending.has(k) || this.sealing.has(k))) || this.offerFor(id, roundNo)) return
    // this node displaced the job for better-paying work: bidding on its next round would only make
    // it wait for that work to end, when another provider could run it now
    if (this.preempted.has(id)) return this.pass(id, roundNo, 'PREEMPTED_HERE', 'not bidding on a job this node preempted')
    const now = this.now
    const p = job.payload
    // timed from receipt (bounded by the skew allowance), so a clock running ahead still gets the window
    const closesAt = bidWindowClosesAt(round?.opensAt ?? p.issuedAt, p.auction.bidWindowMs, receivedAt)
    if (now >= closesAt) return this.pass(id, roundNo, 'WINDOW_CLOSED', 'the bid window has closed')
    const decision = decideBid(p, { ad, allocations: this.committed(now), preemptExactLimit: this.params.preemptExactLimit }, now)
    if (decision.kind === 'decline') {
      if (decision.reason === 'BUSY' && this.holds.size > 0) this.busy.add(k ?? key(id, roundNo), { job, round, receivedAt, held }, closesAt)
      return this.pass(id, roundNo, decision.reason, 'not bidding', { detail: decision.detail })
    }
    const kk = k ?? key(id, roundNo)
    const have = held === undefined || held.length === 0 ? undefined : new Set(held)
    const cached = have === undefined ? [] : cachedInputs(p.workload.inputs, (cid) => have.has(cid))
    this.holds.hold(kk, { job: id, request: job, round: roundNo, attempt: round?.attempt ?? 1, requester: job.signer, hold: allocationFor(id, p, decision), ...(cached.length > 0 ? { cached } : {}), opensAt: round?.opensAt, closesAt, excluded: round?.excluded, until: closesAt + this.params.bidHoldMs })
    const delay = this.damping
      ? dampingDelayMs(decision.fit, tieBreakUniform(this.peerId, id, roundNo), p.auction.bidWindowMs, this.params.bidDelayFraction, this.params.bidSpreadShare, this.params.dampingGroupSize)
      : 0
    this.pending.set(kk, { job, round: roundNo, ...(round !== undefined ? { info: round } : {}), decision, closesAt, at: now + delay, cached })
    this.pendingJobs.set(id, (this.pendingJobs.get(id) ?? 0) + 1)
    this.pendingMin = Math.min(this.pendingMin ?? Infinity, now + delay)
  }

  /**
   * The reference rule (protocol/README §5.6 "Refusing requesters"): no bid for a requester whose score
   * in this node's view is below minRequesterTrust. Remembered (bounded) for the status view.
   */
  private refuseRequester (requester: string, job: string, round: number): boolean {
    // a requester no one reported on costs one map lookup
    const score = this.requesters.decisionScore(requester, this.now)
    if (!refusesRequester(score, this.minRequesterTrust)) return false
    const jobs = (this.refused.get(requester)?.jobs ?? 0) + 1
    this.refused.delete(requester)
    this.refused.set(requester, { requester, score, min: this.minRequesterTrust, reason: RequesterRefusal.LOW_TRUST, jobs, at: this.now })
    if (this.refused.size > MAX_REFUSED_SHOWN) this.refused.delete(this.refused.keys().next().value as string)
    this.out.push({ type: 'passed', job, round, reason: RequesterRefusal.LOW_TRUST })
    this.note('info', 'refusing a requester', { job, round, requester, reason: RequesterRefusal.LOW_TRUST, score, min: this.minRequesterTrust })
    return true
  }

  /** What a new decision must leave alone: the allocations and the GPUs held by outstanding bids. */
  private committed (now: number): Allocation[] {
    const held = this.holds.active(now)
    return held.length === 0 ? this.allocations() : [...this.allocations(), ...held]
  }

  /** Holds were released: decide again on the jobs declined BUSY for them, while their windows are open. */
  private released (keys: readonly string[] | boolean): void {
    if (keys === false || (Array.isArray(keys) && keys.length === 0) || this.busy.size === 0) return
    for (const w of this.busy.take(this.now)) this.considerJob(w.job, w.round, w.receivedAt, w.held)
  }

  private offerFor (job: string, round: number): boolean {
    for (const o of this.live.values()) if (o.id === job && o.round === round) return true
    return false
  }

  /** After the damping delay: stay silent if enough bids at least as good were seen, else bid. */
  private sendBid (k: string, p: Pending): void {
    this.pending.delete(k)
    const id = p.job.cid.toString()
    const left = (this.pendingJobs.get(id) ?? 1) - 1
    if (left > 0) this.pendingJobs.set(id, left)
    else this.pendingJobs.delete(id)
    const now = this.now
    const drop = (reason: string, message: string): void => { this.pass(id, p.round, reason, message); this.released(this.holds.release(k)) }
    if (this.ad === undefined) return drop('NOT_SELLING', 'not bidding: this node no longer sells')
    if (now >= p.closesAt) return drop('WINDOW_CLOSED', 'the bid window closed during the delay')
    // screened and scored as the award will be, at the round's close (protocol/README §5.6 "Damping")
    if (this.damping) {
      const seen = this.seen.bids(id, p.info?.opensAt, now)
      const silent = shouldStaySilent({ job: p.job, price: p.decision.price, cached: p.cached, seen, decidedAt: Math.max(now, p.closesAt), excluded: p.info?.excluded, enough: this.params.enoughBetterBids, params: this.params.scoring })
      if (silent) return drop('DAMPED', 'staying silent: enough better bids seen')
    }
    this.sealing.set(k, p)
    this.out.push({ type: 'send-bid', job: id, round: p.round, request: p.job, decision: p.decision, closesAt: p.closesAt, expiresAt: p.closesAt + this.params.bidGraceMs, ...(p.cached.length > 0 ? { cached: p.cached } : {}) })
  }

  /** The shell signed the bid: track it as an offer (before it is published, so an award that comes back at once finds it). */
  private onBidSealed (job: string, round: number, bid: string, expiresAt: number): void {
    const k = key(job, round)
    const p = this.sealing.get(k)
    if (p === undefined) return this.note('warn', 'a sealed bid that was not asked for', { job, round, bid })
    this.sealing.delete(k)
    this.holds.sealed(k, bid)
    const init = startProviderJob({ job, requester: p.job.signer, bid, gpus: p.job.payload.resources.gpus, offerExpiresAt: expiresAt, heartbeatsPerLease: this.params.heartbeatsPerLease }, this.now)
    const offer: Offer = { job: p.job, id: job, round, bid, bidGpus: p.decision.gpus, ask: p.decision.price, state: init.state, displaces: [], payment: { seq: 0, cumulative: 0, gpuSeconds: 0 } }
    this.live.set(bid, offer)
    this.out.push({ type: 'offer-updated', bid, job })
    this.note('info', 'bid', { job, round, bid, price: p.decision.price, gpus: p.decision.gpus, preempts: p.decision.preempts })
  }

  /**
   * An awarded offer read back after a restart: live again, on its GPUs from when it was recorded (its
   * calendar slot committed, so no other award takes them), waiting for the requester to re-open the
   * stream. One the lifecycle cannot take up, or already known, is left alone.
   */
  private onRestored (e: Extract<ProviderAgentEvent, { type: 'offer-restored' }>): void {
    if (this.live.has(e.bid) || this.closed.has(e.bid)) return
    const resumed = restartProviderJob(e.state, this.now)
    if (resumed === undefined) return this.note('info', 'a job read back cannot go on', { job: e.state.job, status: e.state.status })
    const id = e.state.job
    const gpus = [...e.gpus]
    const startedAt = e.state.startedAt ?? this.now
    const allocation: Allocation = { job: id, gpus, tier: e.job.payload.sla.tier, price: e.award.price, startedAt, endsAt: Math.max(this.now, startedAt) + e.job.payload.workload.maxRuntimeSec * 1000 }
    const offer: Offer = {
      job: e.job, id, round: e.round, bid: e.bid, bidGpus: gpus, ask: e.price, state: resumed.state, award: { ...e.award },
      ...(resumed.state.status === 'completed' ? {} : { allocation }),
      displaces: [],
      payment: { seq: 0, cumulative: e.state.paid.cumulative, gpuSeconds: 0 }
    }
    this.live.set(e.bid, offer)
    this.out.push({ type: 'offer-updated', bid: e.bid, job: id })
    this.note('info', 'a job read back after a restart waits for its requester', { job: id, status: resumed.state.status })
  }

  /**
   * A bid seen on gossip: it counts for damping while it is valid (if it passes screening then). Kept
   * only while this node waits to bid on its job: no other job's bids can silence it, and a bid that
   * overtook its job request in gossip is not counted (damping then errs towards bidding).
   */
  private onBidSeen (bid: AuctionBid): void {
    if (bid.signer === this.peerId) return
    if (this.pendingJobs.has(bid.payload.job.toString())) this.seen.add(bid, this.now)
    // a bid the award will prefer shows this node's bid on the round lost: its GPUs come free
    if (this.holds.size > 0) this.released(this.holds.bidSeen(bid, this.params.scoring))
  }

  // -------------------------------------------------------------------------------------------
  // Awards
  // -------------------------------------------------------------------------------------------

  private onAward (award: AgentAward, from: string): void {
    const bid = award.payload.bid.toString()
    const offer = this.live.get(bid)
    if (offer !== undefined && offer.award?.id === award.id) return this.onResume(offer, award, from)
    const problem = offer === undefined ? 'no bid of this node waits for this award' : this.awardProblem(offer, award, from)
    if (offer === undefined || problem !== undefined) {
      this.out.push({ type: 'refuse-award', award: award.id, reason: AwardRefusal.UNEXPECTED_AWARD, message: problem ?? '' })
      return
    }
    const a = award.payload
    // the hold ends here: the review commits the allocation (or declines)
    this.holds.release(key(offer.id, offer.round))
    offer.award = { id: award.id, price: a.price }
    this.out.push({ type: 'award-taken', bid, job: offer.id, award: award.id })
    this.note('info', 'award received', { job: offer.id, award: award.id, price: a.price, attempt: a.attempt })
    this.feed(offer, { type: 'award-received', from: award.signer, award: { award: award.id, bid, attempt: a.attempt, price: a.price, leaseMs: a.leaseMs, billingIntervalSec: a.billingIntervalSec } })
  }

  /**
   * The award this node took on, again, on a new stream: the requester resumes (a restart, a dropped
   * connection). Only its signer may, on its own connection, while the job is not final (a final
   * offer is not live: refused above as no bid waiting).
   */
  private onResume (offer: Offer, award: AgentAward, from: string): void {
    if (from !== award.signer || award.signer !== offer.job.signer) {
      this.out.push({ type: 'refuse-award', award: award.id, reason: AwardRefusal.UNEXPECTED_AWARD, message: 'only the requester may resume its award' })
      return
    }
    if (offer.state.status !== 'accepted' && offer.state.status !== 'running' && offer.state.status !== 'completed') {
      this.out.push({ type: 'refuse-award', award: award.id, reason: AwardRefusal.UNEXPECTED_AWARD, message: `the award cannot be resumed while ${offer.state.status}` })
      return
    }
    this.out.push({ type: 'resume-stream', bid: offer.bid, job: offer.id, award: award.id })
    this.note('info', 'the requester resumed its award', { job: offer.id, award: award.id, status: offer.state.status })
    this.feed(offer, { type: 'requester-back' })
  }

  /** An award on gossip: this node's bids on the job that it shows lost release their GPUs. */
  private onAwardSeen (award: AgentAward): void {
    const a = award.payload
    const job = a.job.toString()
    const maxRuntimeSec = this.holds.requestFor(job)?.workload.maxRuntimeSec
    const unfinishedUntil = a.issuedAt + (maxRuntimeSec !== undefined ? maxRuntimeSec * 1000 + a.leaseMs : UNFINISHED_AWARD_HORIZON_MS)
    const released = this.holds.awardSeen({ job, bid: a.bid.toString(), attempt: a.attempt, signer: award.signer, winner: a.winner, unfinishedUntil })
    if (released.length > 0) this.note('debug', 'bid lost: GPUs released', { job: a.job.toString(), winner: a.winner })
    this.released(released)
  }

  /** Why `award` cannot be taken on for `offer`, or undefined when it can. */
  private awardProblem (offer: Offer, award: AgentAward, from: string): string | undefined {
    if (award.signer !== offer.job.signer) return 'the award is not signed by the job\'s requester'
    if (from !== award.signer) return 'the award was handed over by a peer other than its signer'
    if (award.payload.winner !== this.peerId) return 'the award names another winner'
    if (award.payload.job.toString() !== offer.id) return 'the award is for another job'
    if (offer.award !== undefined || offer.state.status !== 'offered') return `the bid is no longer waiting for an award (${offer.state.status})`
    return undefined
  }

  /** Re-check the award against the calendar and load now; commit the GPUs (and preempt) when it still fits. */
  private review (offer: Offer, price: number): void {
    const now = this.now
    // an award in hand beats a tentative hold: reviewed on what is committed; but on the GPUs other
    // outstanding bids leave free when those serve it as well (no later start, no more preemption),
    // so their awards still fit
    const allocations = this.allocations()
    const committed = this.committed(now)
    let review = reviewAward(offer.id, offer.job.payload, this.ad, allocations, offer.ask, price, now, this.params.preemptExactLimit)
    if (review.kind === 'accept' && committed.length > allocations.length) {
      const around = reviewAward(offer.id, offer.job.payload, this.ad, committed, offer.ask, price, now, this.params.preemptExactLimit)
      if (around.kind === 'accept' && around.allocation.startedAt <= review.allocation.startedAt && around.decision.preempts.length <= review.decision.preempts.length) review = around
    }
    if (review.kind === 'decline') {
      this.note('info', 'declining an award', { job: offer.id, reason: review.reason })
      return this.feed(offer, { type: 'decline-award', reason: review.reason })
    }
    // committed now, before the acceptance is reduced, so a second award cannot take the same GPUs
    offer.allocation = review.allocation
    const displaced = [...this.live.values()].filter((o) => o !== offer && o.allocation !== undefined && review.decision.preempts.includes(o.id))
    offer.displaces = displaced.map((o) => o.bid)
    for (const [id, expiresAt] of this.preempted) if (expiresAt <= now) this.preempted.delete(id)
    for (const other of displaced) {
      this.preempted.set(other.id, other.job.payload.expiresAt)
      this.note('info', 'preempting a bronze job', { job: other.id, for: offer.id })
      this.feed(other, { type: 'preempt', noticeMs: this.params.preemptNoticeMs })
    }
    this.feed(offer, { type: 'accept-award' })
  }

  // -------------------------------------------------------------------------------------------
  // Exec frames
  // -------------------------------------------------------------------------------------------

  private onPayment (bid: string, signer: string, p: PaymentCommitment): void {
    const offer = this.live.get(bid) ?? this.closed.get(bid)
    if (offer?.award === undefined) return this.note('debug', 'payment for no awarded offer', { bid })
    const drop = (reason: FrameDrop, message: string): void => { this.out.push({ type: 'drop-frame', bid, job: offer.id, kind: 'payment', reason, message }) }
    // signed by someone else, it says nothing of the requester (and one that does not verify never reaches here)
    if (signer !== offer.job.signer) return drop(FrameDrop.NOT_REQUESTER, 'not signed by the requester')
    if (p.award.toString() !== offer.award.id || p.job.toString() !== offer.id) return this.bounce(offer, bid, FrameDrop.WRONG_AWARD, 'for another award')
    if (p.payee !== this.peerId) return this.bounce(offer, bid, FrameDrop.WRONG_PAYEE, `pays ${p.payee}`)
    // a replayed or reordered frame, not a new commitment
    if (p.seq <= offer.payment.seq) return drop(FrameDrop.STALE_SEQ, `seq ${p.seq} after ${offer.payment.seq}`)
    if (p.cumulative < offer.payment.cumulative) {
      // its seq is spent (a replay of it is stale), its amount does not count
      offer.payment = { ...offer.payment, seq: p.seq }
      this.out.push({ type: 'offer-updated', bid, job: offer.id })
      return this.bounce(offer, bid, FrameDrop.BELOW_EARLIER, `cumulative ${p.cumulative} after ${offer.payment.cumulative}`)
    }
    offer.payment = { seq: p.seq, cumulative: Math.max(offer.payment.cumulative, p.cumulative), gpuSeconds: p.gpuSeconds }
    this.out.push({ type: 'frame-accepted', bid, job: offer.id, kind: 'payment', ref: 'last-payment' })
    this.feed(offer, { type: 'payment-received', from: signer, cumulative: p.cumulative, interval: p.interval })
  }

  /**
   * A payment the requester signed that does not hold against the award (another award or job, another
   * payee, a cumulative below an earlier one): dropped, kept as evidence, and — once per offer — a
   * signed `nonpayment` failure report against the requester embedding it, and this node's own failure
   * in its view of requesters. The job goes on: the lifecycle stops it if no valid payment follows.
   */
  private bounce (offer: Offer, bid: string, reason: FrameDrop, message: string): void {
    this.out.push({ type: 'drop-frame', bid, job: offer.id, kind: 'payment', reason, message, ref: 'bounced-payment' })
    if (offer.bounced === true) return
    offer.bounced = true
    this.requesters.record(offer.job.signer, false, this.now)
    this.push({ type: 'record-failure', subject: offer.job.signer, reason: 'nonpayment', evidence: ['award', 'bounced-payment'], detail: `payment bounced (${reason}): ${message}`, bid, job: offer.id })
  }

  private onCancel (bid: string, signer: string, p: JobCancel): void {
    // after the end only the requester's payment for the time run counts
    const offer = this.live.get(bid)
    if (offer?.award === undefined) return
    const drop = (reason: FrameDrop, message: string): void => { this.out.push({ type: 'drop-frame', bid, job: offer.id, kind: 'job-cancel', reason, message }) }
    if (signer !== offer.job.signer) return drop(FrameDrop.NOT_REQUESTER, 'not signed by the requester')
    if (p.award.toString() !== offer.award.id || p.job.toString() !== offer.id) return drop(FrameDrop.WRONG_AWARD, 'for another award')
    offer.note = `cancelled by the requester: ${p.reason}`
    this.out.push({ type: 'frame-accepted', bid, job: offer.id, kind: 'job-cancel' })
    this.feed(offer, { type: 'cancel', from: signer })
  }

  private onRequesterGone (bid: string): void {
    const offer = this.live.get(bid)
    if (offer !== undefined) {
      this.feed(offer, { type: 'requester-gone' })
      this.drain()
    }
    // a running job waits a lease for the requester to resume (provider-lifecycle.ts); one that ended
    // gets no late payment on a stream that ended: forgotten at the next event, so the shell can
    // still read the offer's view while it carries out this event's effects (its ledger entry)
    if (!this.live.has(bid)) this.forgetting.push(bid)
  }

  // -------------------------------------------------------------------------------------------
  // Lifecycles
  // -------------------------------------------------------------------------------------------

  private feedBid (bid: string, input: LifecycleInput): void {
    const offer = this.live.get(bid)
    if (offer === undefined) return this.note('debug', 'event for no live offer', { bid, event: input.type })
    this.feed(offer, input)
  }

  /** Queue a lifecycle event; events are reduced in order, each one's effects before the next. */
  private feed (offer: Offer, input: LifecycleInput): void {
    this.queue.push([offer, input])
  }

  private drain (): void {
    for (let next = this.queue.shift(); next !== undefined; next = this.queue.shift()) this.reduce(next[0], next[1])
  }

  private reduce (offer: Offer, input: LifecycleInput): void {
    if (!this.live.has(offer.bid) && !this.closed.has(offer.bid)) return
    const { state, effects } = reduceProvider(offer.state, { ...input, now: this.now } as ProviderEvent)
    const changed = state !== offer.state
    offer.state = state
    const tag = { bid: offer.bid, job: offer.id }
    for (const effect of effects) {
      switch (effect.type) {
        case 'review-award': this.review(offer, effect.award.price); break
        case 'wake': break
        case 'ignored': this.note('debug', 'provider event ignored', { job: offer.id, reason: effect.reason }); break
        case 'start-job': offer.start = { preemptedBy: this.now + this.params.preemptNoticeMs + this.params.preemptMarginMs }; this.tryStart(offer); break
        case 'heartbeat': {
          const final = effect.state === 'failed' || effect.state === 'cancelled' || (effect.state === 'preempted' && isProviderFinal(state.status))
          const message = final ? offer.note ?? state.reason : undefined
          this.push({ ...effect, ...(message !== undefined ? { message } : {}), ...tag })
          break
        }
        case 'notify-preemption':
          this.push({ ...effect, gpuSeconds: gpuSecondsSoFar(state, this.now), message: `preempted: ${effect.noticeMs} ms notice`, at: this.now, ...tag })
          break
        default: this.push({ ...effect, ...tag })
      }
    }
    if (changed || input.type === 'payment-received') this.out.push({ type: 'offer-updated', ...tag })
    if (isProviderFinal(state.status) && this.live.has(offer.bid)) this.finalize(offer)
  }

  private push (effect: OfferEffect): void {
    this.out.push(effect)
  }

  /** A final status: release the GPUs, and let waiting jobs try to start on them. */
  private finalize (offer: Offer): void {
    this.live.delete(offer.bid)
    offer.allocation = undefined
    offer.start = undefined
    offer.endedAt = this.now
    const unheld = this.holds.release(key(offer.id, offer.round))
    const status = offer.state.status
    if (offer.award !== undefined && (status === 'settled' || status === 'failed')) this.holds.outcome(offer.job.signer, status === 'settled')
    // own experience of the requester: paid in full, or stopped unpaid (a bounce was counted already)
    if (offer.award !== undefined && (status === 'settled' || (status === 'stopped-unpaid' && offer.bounced !== true))) this.requesters.record(offer.job.signer, status === 'settled', this.now)
    this.endedCounts[status] = (this.endedCounts[status] ?? 0) + 1
    if (offer.award !== undefined) this.closed.set(offer.bid, offer)
    // its stream had ended (the requester never came back): no late payment can come, forgotten at the next event
    if (offer.state.requesterGoneAt !== undefined) this.forgetting.push(offer.bid)
    this.out.push({ type: 'offer-ended', bid: offer.bid, job: offer.id, status, ...(offer.state.reason !== undefined ? { reason: offer.state.reason } : {}), awarded: offer.award !== undefined })
    if (offer.award !== undefined) this.note('info', 'job ended', { job: offer.id, status, reason: offer.state.reason })
    for (const o of this.live.values()) if (o.start !== undefined) this.tryStart(o)
    this.released(unheld || offer.award !== undefined)
  }

  /**
   * Start the job when it may: once the bronze jobs it preempts have given their GPUs up (at most the
   * notice and a margin later), at its committed start — or earlier, when GPUs it can use come free
   * sooner (an allocation in its way ended early) and the calendar allows it now.
   */
  private tryStart (offer: Offer): void {
    const wait = offer.start
    if (wait === undefined) return
    const now = this.now
    const preempting = now < wait.preemptedBy && offer.displaces.some((bid) => this.live.has(bid))
    if (!preempting && this.mayStart(offer, now)) {
      offer.start = undefined
      this.push({ type: 'start-job', gpus: [...(offer.allocation?.gpus ?? offer.bidGpus)], bid: offer.bid, job: offer.id })
      return
    }
    wait.until = preempting ? wait.preemptedBy : Math.max(now, offer.allocation?.startedAt ?? now)
  }

  /** True when the job may start at `now`; moves its allocation when it starts early. */
  private mayStart (offer: Offer, now: number): boolean {
    const held = offer.allocation
    if (held === undefined) return true
    const start = startNow(offer.job.payload, this.ad, held, this.allocations().filter((a) => a !== held), now, this.params.preemptExactLimit)
    if (start !== undefined) offer.allocation = start
    return start !== undefined
  }

  /** Everything due by now: delayed bids, lifecycle deadlines, start retries. */
  private advance (): void {
    const now = this.now
    if (this.pendingMin !== undefined && this.pendingMin <= now) {
      const due = [...this.pending.entries()].filter(([, p]) => p.at <= now).sort((a, b) => a[1].at - b[1].at)
      for (const [k, p] of due) this.sendBid(k, p)
      let min: number | undefined
      for (const p of this.pending.values()) if (min === undefined || p.at < min) min = p.at
      this.pendingMin = min
    }
    // neither loop changes `live` (feed only queues; tryStart only moves the offer's start): no copies
    for (const o of this.live.values()) {
      if (o.state.wakeAt !== undefined && o.state.wakeAt <= now && o.state.wakeAt > o.state.now) this.feed(o, { type: 'tick' })
    }
    this.drain()
    for (const o of this.live.values()) if (o.start?.until !== undefined && o.start.until <= now) this.tryStart(o)
    if (this.busy.size > 0) this.released(this.holds.expire(now))
  }

  /**
   * Forget ended offers whose stream never ended, after `endedRetentionMs`. `closed` is in the order
   * offers ended (the agent's clock never goes back), so the walk stops at the first one still kept.
   */
  private sweep (): void {
    for (const [bid, o] of this.closed) {
      if ((o.endedAt ?? 0) + this.params.endedRetentionMs > this.now) return
      this.closed.delete(bid)
    }
  }

  private note (level: 'debug' | 'info' | 'warn', message: string, fields: Record<string, unknown>): void {
    this.out.push({ type: 'note', level, message, fields })
  }

  /** Not bidding on `job` in `round`, for `reason`: the effect metrics count, and the log's note. */
  private pass (job: string, round: number, reason: string, message: string, fields: Record<string, unknown> = {}): void {
    this.out.push({ type: 'passed', job, round, reason })
    this.note('debug', message, { job, round, reason, ...fields })
  }
}

/** An owner's hold as the bid policy sees it: gold work at a price no job outbids, so never preempted. */
function ownerAllocation (h: OwnerHold): Allocation {
  return { job: `owner:${h.label}`, gpus: [...h.gpus], tier: 'gold', price: Number.MAX_SAFE_INTEGER, startedAt: h.from, endsAt: h.until }
}

function gpuSecondsSoFar (s: ProviderJob, now: number): number {
  return s.startedAt === undefined ? 0 : s.gpus * Math.floor(Math.max(0, now - s.startedAt) / 1000)
}

function view (o: Offer): ProviderOfferView {
  return {
    job: o.id,
    bid: o.bid,
    round: o.round,
    requester: o.job.signer,
    state: o.state,
    gpus: o.allocation?.gpus ?? o.bidGpus,
    ...(o.award !== undefined ? { award: { ...o.award } } : {}),
    ...(o.allocation !== undefined ? { allocation: o.allocation } : {}),
    payment: { ...o.payment },
    ...(o.note !== undefined ? { note: o.note } : {})
  }
}
