/**
 * A harness provider: a `ProviderAgent` and the shell around it, doing with each effect what
 * node/market/provider*.ts does over libp2p — publish bids on the job's topics, answer on the exec
 * stream, fetch inputs, run the job (the world's execution model: a duration, an exit code, an
 * output size), send statuses and the receipt, report failures — with counters for CIDs and no
 * signatures. Adversarial behaviour is opt-in (`behaviour`): a no-show takes the award's stream and
 * never answers; a staller accepts the award and then says nothing; an undercutter bids far below the
 * market on every job it could take instead of running its agent's bidding; a spammer floods each job
 * with bids (adversaries.ts); a cheat returns outputs that do not match its receipt; a colluding cheater
 * returns a self-consistent wrong output (outputs.ts: the same one as every other colluder); a Sybil
 * (`noShowAfter`) delivers its first awards and then vanishes.
 */
import { EventQueue } from './event-queue.js'
import type { Cancel } from '../../protocol/market/scheduler.js'
import { EVIDENCE_TOPIC } from '../../protocol/constants.js'
import { jobTopics, providerTopics } from '../../protocol/discovery.js'
import type { CapabilityAd } from '../../protocol/messages/capability-ad.js'
import { billedGpus, ceilSeconds } from '../../protocol/market/lifecycle-shared.js'
import { isProviderFinal } from '../../protocol/market/provider-lifecycle.js'
import { ProviderAgent } from '../../protocol/market/provider-agent.js'
import type { OfferEffect, OwnerHold, ProviderAgentEffect, ProviderAgentEvent } from '../../protocol/market/provider-agent-types.js'
import type { CID } from '../../crypto/index.js'
import { NO_KINDS, type Message, type StreamEnd } from './bus.js'
import { peerIdOf } from './ids.js'
import { bodyOf, message, type Opened, type RoundBody } from './messages.js'
import { bidPayload, capabilityAd, header, type AdSpec } from './payloads.js'
import { AdversaryBidder, type SpamBehaviour, type UndercutBehaviour } from './adversaries.js'
import { transferMs, type World } from './world.js'
import { colludedOutput, trueOutput } from './outputs.js'
import type { Award, JobState } from '../../protocol/messages/award.js'

/** The provider shell lingers this long on an ended job's stream for a late payment (node/market: LINGER_MS). */
export const LINGER_MS = 30_000
/** A requester that opens an exec stream must send its award within this (node/market: AWARD_WAIT_MS). */
export const AWARD_WAIT_MS = 10_000
/** Statuses, responses and receipts are valid this long. */
const STATUS_LIFETIME_MS = 10 * 60_000

export interface ProviderBehaviour {
  /** Take the award's stream and never answer it (a no-show: a stranger that underbids and vanishes). */
  noShow?: boolean
  /** Accept the award, then never start nor send a status: the requester waits out the lease. */
  stall?: boolean
  /** Bid this price on every job it could plausibly take, without its agent (adversaries.ts); pair with noShow or stall. */
  undercut?: UndercutBehaviour
  /** Flood each job request and round seen with bids (adversaries.ts); its agent still bids and delivers. */
  spam?: SpamBehaviour
  /** Return outputs that do not match the receipt. */
  tamperOutputs?: boolean
  /**
   * Run the job, and sign a receipt for the colluders' shared wrong output (outputs.ts colludedOutput)
   * instead of the true one: the outputs match their CIDs, so the requester's check passes.
   */
  collude?: boolean
  /** Deliver the first this many awards honestly, then take every later award's stream and never answer (a no-show). */
  noShowAfter?: number
}

export interface ProviderNodeSpec extends AdSpec {
  /** Bid damping (default on). */
  damping?: boolean
  behaviour?: ProviderBehaviour
}

interface Work { cancel: Cancel[] }

/** The gossip a provider's shell always takes (onGossip): failure reports on its topics are not for it; bids and awards only at times (`takes`). */
const GOSSIP_KINDS = ['job-request', 'auction-round']

export class ProviderNode {
  readonly peerId: string
  readonly behaviour: ProviderBehaviour
  private current: ProviderAgent
  private ad: CapabilityAd | undefined
  private adCid: CID
  /** The exec stream of each awarded bid. */
  private readonly streams = new Map<string, StreamEnd>()
  /** Streams whose award is being handled, by award id. */
  private readonly arriving = new Map<string, StreamEnd>()
  private readonly awards = new Map<string, Opened<Award>>()
  private readonly statusSeq = new Map<string, number>()
  private readonly work = new Map<string, Work>()
  private readonly started = new Map<string, number>()
  private wake: Cancel | undefined
  private wakeAt = 0
  /** The latest wake the agent asked for. */
  private wantWake: number | undefined
  private readonly events = new EventQueue<ProviderAgentEvent>((e) => {
    for (const effect of this.agent.handle(e)) this.carryOut(effect)
    if (this.keyed) this.syncWatched()
    else this.takeBids(this.agent.pendingBids > 0 || this.agent.heldBids > 0, this.agent.heldBids > 0)
  })

  /**
   * Under the bus's keyed delivery (keyed-delivery.ts): the shell takes every kind it may act on, hands a bid
   * or award over only when the agent watches its job (ProviderAgent.watches), and tells the bus which jobs
   * the agent watches after each event (`watched`: what it last told).
   */
  private readonly keyed: boolean
  private readonly watched = new Set<string>()

  /**
   * The kinds the bus hands this shell, read live: bids only while the agent waits to bid or holds GPUs
   * for outstanding bids (with neither it drops every bid, so the bus need not call the shell for the
   * ~8 bids of each job that reach all providers: bench:pipeline), awards only while it holds GPUs (an
   * award for another bid releases them). Only `handle` changes either, so the set is exact.
   */
  private readonly takes: Set<string>
  private gone = false
  /** What an undercutter or spammer publishes for each job it sees (undefined: an honest bidder). */
  private readonly adversary: AdversaryBidder | undefined
  /** Bumped by each restart: callbacks of an earlier life (its streams' handlers) are ignored. */
  private life = 0
  /** The owner's holds last given (setHolds): the owner's calendar, which a restarted daemon reads again. */
  private holds: readonly OwnerHold[] = []
  /** Exec streams this node has been opened (awards arriving), for `noShowAfter`. */
  private streamsTaken = 0

  constructor (private readonly world: World, readonly name: string, private readonly spec: ProviderNodeSpec) {
    this.peerId = peerIdOf(name)
    this.keyed = world.bus.isKeyed
    this.takes = new Set(this.keyed ? [...GOSSIP_KINDS, 'bid', 'award'] : GOSSIP_KINDS)
    this.behaviour = spec.behaviour ?? {}
    const b = this.behaviour
    this.adversary = b.undercut === undefined && b.spam === undefined ? undefined : new AdversaryBidder(world, this.peerId, b.undercut, b.spam)
    this.current = this.newAgent()
    this.adCid = world.ids.cid('ad')
    this.ad = capabilityAd(name, spec, world.scheduler.now())
    if (this.ad.addrs.length > 0) world.addresses.set(this.peerId, this.ad.addrs)
    this.connect()
  }

  /** The market agent of this life (a restart makes a fresh one). */
  get agent (): ProviderAgent {
    return this.current
  }

  private newAgent (): ProviderAgent {
    return new ProviderAgent({ peerId: this.peerId, params: this.spec.damping === false ? { ...this.world.params, damping: false } : this.world.params })
  }

  /** Join the bus, subscribe, listen for exec streams, hand the agent the ad (and the owner's holds). */
  private connect (): void {
    const bus = this.world.bus
    bus.join(this.peerId, this.spec.region, this.spec.country)
    for (const topic of providerTopics(this.spec.region)) bus.subscribe(this.peerId, topic, (from, m) => { this.onGossip(from, m) }, this.takes)
    // every daemon subscribes to the evidence topic too (node/market/market.ts): its receipts and failure
    // reports reach every node and are counted; no market decision reads them yet (the trust layer will)
    bus.subscribe(this.peerId, EVIDENCE_TOPIC, () => {}, NO_KINDS)
    bus.listen(this.peerId, (stream) => { this.onStream(stream) })
    this.feed({ type: 'ad-changed', now: this.now(), ad: this.ad })
    if (this.holds.length > 0) this.feed({ type: 'holds-changed', now: this.now(), holds: this.holds })
  }

  private now (): number {
    return this.world.scheduler.now()
  }

  /** Whether the node is down (crashed and not restarted). */
  get down (): boolean {
    return this.gone
  }

  /** Tell the bus the jobs the agent watches now (keyed delivery). */
  private syncWatched (): void {
    const now = this.agent.watchedJobs()
    if (now.length === 0 && this.watched.size === 0) return
    const keep = new Set(now)
    for (const job of this.watched) if (!keep.has(job)) { this.watched.delete(job); this.world.bus.watch(this.peerId, job, false) }
    for (const job of now) if (!this.watched.has(job)) { this.watched.add(job); this.world.bus.watch(this.peerId, job, true) }
  }

  private takeBids (bids: boolean, awards: boolean): void {
    if (this.keyed) return
    if (bids) this.takes.add('bid')
    else this.takes.delete('bid')
    if (awards) this.takes.add('award')
    else this.takes.delete('award')
  }

  /** The owner changes what is for sale (undefined: stops selling); a new ad id. */
  setAd (spec: AdSpec | undefined): void {
    this.adCid = this.world.ids.cid('ad')
    this.ad = spec === undefined ? undefined : capabilityAd(this.name, spec, this.now(), (this.ad?.seq ?? 0) + 1)
    this.feed({ type: 'ad-changed', now: this.now(), ad: this.ad })
  }

  /** The owner's own work ahead on this node's GPUs (replaces the previous list). */
  setHolds (holds: readonly OwnerHold[]): void {
    this.holds = holds
    this.feed({ type: 'holds-changed', now: this.now(), holds })
  }

  /** The node crashes: it leaves the network, its streams reset, its work and timers stop. */
  crash (): void {
    if (this.gone) return
    this.gone = true
    this.wake?.()
    this.wake = undefined
    this.wantWake = undefined
    for (const w of this.work.values()) for (const c of w.cancel) c()
    for (const s of this.streams.values()) s.reset('provider crashed')
    for (const s of this.arriving.values()) s.reset('provider crashed')
    for (const job of this.watched) this.world.bus.watch(this.peerId, job, false)
    this.watched.clear()
    this.world.bus.leave(this.peerId)
  }

  /**
   * The daemon starts again after a crash, as node/market does at start: its level store keeps the
   * offers' records and ledger, but no offer is resumed — the agent starts empty (node/market rebuilds
   * only the requester's jobs), work in flight at the stop is lost and its open ledger lines become
   * `interrupted` (market.ts marks them so at start). The node rejoins the bus, re-subscribes, listens
   * again and hands the fresh agent its ad and the owner's holds; it bids on the next job it sees.
   */
  restart (): void {
    if (!this.gone) return
    for (const line of this.world.recorder.ledgers) {
      if (line.node === this.peerId && line.role === 'provider' && line.state === 'open') this.world.recorder.ledger(this.peerId, line.award, line, { state: 'interrupted' })
    }
    this.life++
    this.gone = false
    this.streams.clear()
    this.arriving.clear()
    this.awards.clear()
    this.statusSeq.clear()
    this.work.clear()
    this.started.clear()
    this.takeBids(false, false)
    this.current = this.newAgent()
    this.connect()
  }

  /** Hand an event to the agent and carry out its effects (events the effects cause queue behind). */
  feed (event: ProviderAgentEvent): void {
    if (this.gone) return
    this.events.push(event)
  }

  // -------------------------------------------------------------------------------------------
  // Gossip in
  // -------------------------------------------------------------------------------------------

  private onGossip (_from: string, m: Message): void {
    // bids first: most of a job's gossip (each bid reaches every provider)
    const bid = bodyOf(m, 'bid')
    if (bid !== undefined) {
      // the agent keeps a bid only while it waits to bid on its job, and weighs it against its own bids
      // that hold GPUs; with neither it drops every bid, so the shell need not hand it over (the same
      // outcome, without the call: bench:pipeline)
      if (this.keyed ? this.agent.watches(bid.payload.job.toString()) : this.agent.pendingBids > 0 || this.agent.heldBids > 0) this.feed({ type: 'bid-seen', now: this.now(), bid })
      return
    }
    const job = bodyOf(m, 'job-request')
    if (job !== undefined) {
      this.adversary?.seen(job, this.ad, this.adCid)
      // an undercutter does not run its agent's bidding
      if (this.behaviour.undercut !== undefined) return
      return this.feed({ type: 'job-seen', now: this.now(), job })
    }
    const round = bodyOf(m, 'auction-round')
    if (round !== undefined) {
      if (!this.gone && !round.excluded.includes(this.peerId)) this.adversary?.seen(round.request, this.ad, this.adCid)
      if (this.behaviour.undercut !== undefined) return
      return this.onRound(round)
    }
    // an award naming another bid frees the GPUs this node's bid on the job held (reservations.ts)
    const award = bodyOf(m, 'award')
    if (award !== undefined && (this.keyed ? this.agent.watches(award.payload.job.toString()) : this.agent.heldBids > 0)) this.feed({ type: 'award-seen', now: this.now(), award: { id: award.cid.toString(), signer: award.signer, payload: award.payload } })
  }

  private onRound (r: RoundBody): void {
    const job = r.request
    this.feed({ type: 'job-seen', now: this.now(), job, round: { round: r.round, attempt: r.attempt, excluded: r.excluded, opensAt: r.opensAt } })
  }

  // -------------------------------------------------------------------------------------------
  // The exec stream
  // -------------------------------------------------------------------------------------------

  private onStream (stream: StreamEnd): void {
    // a no-show takes the stream and says nothing: it neither answers nor closes it
    this.streamsTaken++
    if (this.behaviour.noShow === true) return
    if (this.behaviour.noShowAfter !== undefined && this.streamsTaken > this.behaviour.noShowAfter) return
    if (this.behaviour.stall === true) return this.stallOn(stream)
    let bid: string | undefined
    const life = this.life
    const timer = this.world.scheduler.at(this.now() + AWARD_WAIT_MS, () => { if (bid === undefined) stream.reset('no award in time') })
    stream.onMessage((m) => {
      if (life !== this.life) return
      if (bid === undefined) {
        const award = bodyOf(m, 'award')
        if (award === undefined) return stream.reset('the first frame must be an award')
        timer()
        const id = award.cid.toString()
        this.arriving.set(id, stream)
        this.awards.set(award.payload.bid.toString(), award)
        this.feed({ type: 'award', now: this.now(), award: { id, signer: award.signer, payload: award.payload }, from: stream.remote })
        this.arriving.delete(id)
        bid = [...this.streams.entries()].find(([, s]) => s === stream)?.[0]
        return
      }
      const payment = bodyOf(m, 'payment')
      if (payment !== undefined) {
        return this.feed({ type: 'payment', now: this.now(), bid, signer: payment.signer, payload: payment.payload })
      }
      const cancel = bodyOf(m, 'job-cancel')
      if (cancel !== undefined) this.feed({ type: 'cancel', now: this.now(), bid, signer: cancel.signer, payload: cancel.payload })
    })
    stream.onClose(() => {
      timer()
      if (bid === undefined || life !== this.life) return
      if (this.streams.get(bid) === stream) this.streams.delete(bid)
      this.feed({ type: 'requester-gone', now: this.now(), bid })
    })
  }

  /** A staller accepts the award on the stream, then says nothing more (nor closes it). */
  private stallOn (stream: StreamEnd): void {
    let answered = false
    stream.onMessage((m) => {
      const award = bodyOf(m, 'award')
      if (award === undefined || answered) return
      answered = true
      const payload = { ...header(this.now(), STATUS_LIFETIME_MS), job: award.payload.job, award: award.cid, decision: 'accept' as const }
      stream.send(message('award-response', { cid: this.world.ids.cid('resp'), signer: this.peerId, payload }))
    })
  }

  private send (bid: string, m: Message): void {
    this.streams.get(bid)?.send(m)
  }

  // -------------------------------------------------------------------------------------------
  // Effects
  // -------------------------------------------------------------------------------------------

  private carryOut (effect: ProviderAgentEffect): void {
    switch (effect.type) {
      case 'send-bid': return this.sendBid(effect)
      case 'refuse-award': {
        const stream = this.arriving.get(effect.award)
        this.world.recorder.note(`${this.name} refused award: ${effect.message}`)
        return stream?.reset(effect.message)
      }
      case 'award-taken': {
        const stream = this.arriving.get(effect.award)
        if (stream !== undefined) this.streams.set(effect.bid, stream)
        return this.ledger(effect.bid, false)
      }
      case 'frame-accepted':
        if (effect.kind === 'payment') this.ledger(effect.bid, true)
        return
      case 'drop-frame': return this.world.recorder.note(`${this.name} dropped ${effect.kind}: ${effect.reason}`)
      case 'offer-updated': return this.ledger(effect.bid, false)
      case 'offer-ended': return this.onOfferEnded(effect)
      case 'wake': return this.setWake(effect.at)
      case 'note': return
      case 'passed': return
      // the simulated network has no exec streams to drop: a requester never resumes one
      case 'resume-stream': return
      default: return this.carryOutOffer(effect)
    }
  }

  private sendBid (e: Extract<ProviderAgentEffect, { type: 'send-bid' }>): void {
    const job = this.world.jobs.get(e.job)
    const ad = this.ad
    if (job === undefined || ad === undefined) return
    const now = this.now()
    const held = ad.gpus.filter((g) => e.decision.gpus.includes(g.uuid))
    const payload = bidPayload({ now, expiresAt: e.expiresAt, job: job.cid, provider: this.peerId, price: e.decision.price, gpus: e.decision.gpus, hardware: held, ad, adCid: this.adCid, startBy: e.decision.startBy })
    const cid = this.world.ids.cid('bid')
    this.feed({ type: 'bid-sealed', now, job: e.job, round: e.round, bid: cid.toString(), payload })
    this.world.bus.publish(this.peerId, jobTopics(job.payload.placement), message('bid', { cid, signer: this.peerId, payload }))
  }

  private carryOutOffer (e: OfferEffect): void {
    const now = this.now()
    const award = this.awards.get(e.bid)
    const ref = award === undefined ? undefined : { job: award.payload.job, award: award.cid }
    switch (e.type) {
      case 'respond-award':
        if (ref === undefined) return
        return this.send(e.bid, message('award-response', { cid: this.world.ids.cid('resp'), signer: this.peerId, payload: { ...header(now, STATUS_LIFETIME_MS), ...ref, decision: e.decision, ...(e.reason !== undefined ? { reason: e.reason.slice(0, 256) } : {}) } }))
      case 'fetch-inputs': {
        const bytes = this.world.execution(e.job, this.name).inputBytes
        this.world.recorder.blob('input-blob', bytes)
        const from = this.world.jobs.get(e.job)?.signer ?? ''
        const at = now + transferMs(this.world, bytes, from, this.peerId) + (bytes > 0 ? 2 * this.world.bus.latencyMs(this.peerId, from) : 0)
        return this.track(e.bid, this.world.scheduler.at(at, () => { this.feed({ type: 'inputs-fetched', now: this.now(), bid: e.bid }) }))
      }
      case 'start-job': return this.startJob(e.bid, e.job)
      case 'heartbeat':
        return this.status(e.bid, e.seq, e.state, e.gpuSeconds, e.message)
      case 'notify-preemption':
        return this.status(e.bid, 0, 'preempted', e.gpuSeconds, e.message)
      case 'send-receipt': {
        if (ref === undefined) return
        const ex = this.world.execution(e.job, this.name)
        const job = this.world.jobs.get(e.job)
        const payload = {
          ...header(now, 400 * 24 * 3_600_000 - 1),
          ...ref,
          requester: job?.signer ?? '',
          inputs: [],
          outputs: this.behaviour.collude === true ? colludedOutput(e.job) : trueOutput(e.job),
          exitCode: e.exitCode,
          startedAt: e.startedAt,
          endedAt: Math.max(e.startedAt, e.endedAt),
          gpuSeconds: e.gpuSeconds,
          gpus: [...(this.agent.offer(e.bid)?.gpus ?? [])],
          executor: job?.payload.workload.executor ?? 'process'
        }
        const receipt = message('receipt', { cid: this.world.ids.cid('receipt'), signer: this.peerId, payload, outputBytes: e.exitCode === -1 ? 0 : ex.outputBytes, tampered: this.behaviour.tamperOutputs === true })
        this.world.recorder.receipt({ job: e.job, provider: this.peerId, outputs: payload.outputs.toString(), exitCode: e.exitCode, gpuSeconds: e.gpuSeconds, at: now })
        this.send(e.bid, receipt)
        // and on the evidence topic, as the daemon does (node/market/provider-jobs.ts publishEvidence)
        this.world.bus.publish(this.peerId, [EVIDENCE_TOPIC], receipt)
        return
      }
      case 'stop-work': return this.stopWork(e.bid)
      case 'record-failure': {
        const job = this.world.jobs.get(e.job)
        if (job === undefined) return
        this.world.recorder.failure({ reporter: this.peerId, subject: e.subject, job: e.job, reason: e.reason, at: now, ...(e.detail !== undefined ? { detail: e.detail } : {}) })
        const payload = { ...header(now, 400 * 24 * 3_600_000 - 1), job: job.cid, subject: e.subject, reason: e.reason, observedAt: now, evidence: [], ...(e.detail !== undefined ? { detail: e.detail.slice(0, 512) } : {}) }
        this.world.bus.publish(this.peerId, [EVIDENCE_TOPIC], message('failure-report', { cid: this.world.ids.cid('failure'), signer: this.peerId, payload }, e.evidence.length * 400))
      }
    }
  }

  private status (bid: string, seq: number, state: JobState, gpuSeconds: number, note: string | undefined): void {
    const award = this.awards.get(bid)
    if (award === undefined) return
    const next = Math.max(seq, (this.statusSeq.get(bid) ?? 0) + 1)
    this.statusSeq.set(bid, next)
    const payload = { ...header(this.now(), STATUS_LIFETIME_MS), job: award.payload.job, award: award.cid, seq: next, state, gpuSeconds, ...(note !== undefined ? { message: note.slice(0, 512) } : {}) }
    this.send(bid, message('job-status', { cid: this.world.ids.cid('status'), signer: this.peerId, payload }))
  }

  /** The executor model: run for the scenario's duration, then exit with its code. */
  private startJob (bid: string, job: string): void {
    const ex = this.world.execution(job, this.name)
    const request = this.world.jobs.get(job)
    if (ex.exitCode === -1) {
      this.track(bid, this.world.scheduler.at(this.now(), () => { this.feed({ type: 'finished', now: this.now(), bid, exitCode: -1, gpuSeconds: 0, note: 'the executor could not start the job' }) }))
      return
    }
    const startedAt = this.now()
    this.started.set(bid, startedAt)
    this.world.recorder.started({ job, provider: this.peerId, at: startedAt })
    this.feed({ type: 'started', now: startedAt, bid })
    this.track(bid, this.world.scheduler.at(startedAt + ex.durationMs, () => {
      const now = this.now()
      const gpuSeconds = billedGpus(request?.payload.resources.gpus ?? 1) * ceilSeconds(now - startedAt)
      this.feed({ type: 'finished', now, bid, exitCode: ex.exitCode, gpuSeconds, outputBytes: ex.outputBytes })
    }))
  }

  private track (bid: string, cancel: Cancel): void {
    const w = this.work.get(bid) ?? { cancel: [] }
    w.cancel.push(cancel)
    this.work.set(bid, w)
  }

  private stopWork (bid: string): void {
    for (const c of this.work.get(bid)?.cancel ?? []) c()
    this.work.delete(bid)
  }

  private onOfferEnded (e: Extract<ProviderAgentEffect, { type: 'offer-ended' }>): void {
    this.stopWork(e.bid)
    this.world.recorder.offerEnded({ node: this.peerId, job: e.job, bid: e.bid, status: e.status, ...(e.reason !== undefined ? { reason: e.reason } : {}), awarded: e.awarded, at: this.now() })
    if (e.awarded) this.ledger(e.bid, false, e.status)
    const stream = this.streams.get(e.bid)
    if (stream !== undefined) this.world.scheduler.at(this.now() + LINGER_MS, () => { stream.close('the job has ended') })
  }

  /**
   * The offer's ledger line, as node/market's offerLedgerEntry writes it: once awarded, the latest
   * valid payment the agent accepted, and the lifecycle's final status (or open).
   */
  private ledger (bid: string, payment: boolean, ending?: string): void {
    const award = this.awards.get(bid)
    if (award === undefined) return
    const view = this.agent.offer(bid)
    const init = { role: 'provider' as const, job: award.payload.job.toString(), counterparty: award.signer, price: award.payload.price }
    if (view?.award === undefined) {
      // the agent forgets an offer whose requester is gone as it ends it (no late payment can come on a
      // closed stream), before the shell sees the ending: the line still records how it ended
      if (ending !== undefined && this.world.recorder.ledgerOf(this.peerId, award.cid.toString()) !== undefined) this.world.recorder.ledger(this.peerId, award.cid.toString(), init, { state: ending })
      return
    }
    const state = ending ?? (isProviderFinal(view.state.status) ? view.state.status : 'open')
    this.world.recorder.ledger(this.peerId, award.cid.toString(), init, { cumulative: view.payment.cumulative, state, payment })
  }


  /**
   * The agent's wake replaces the earlier one. A timer already set for an earlier time is kept and
   * re-armed when it fires early (a tick before the wake would find nothing due): this saves the
   * scheduler a cancelled entry per reschedule, which 1,000 providers make often.
   */
  private setWake (at: number): void {
    this.wantWake = at
    if (this.wake !== undefined && this.wakeAt <= at) return
    this.wake?.()
    this.arm(at)
  }

  private arm (at: number): void {
    this.wakeAt = at
    this.wake = this.world.scheduler.at(at, () => {
      this.wake = undefined
      const want = this.wantWake
      if (want !== undefined && want > this.now()) return this.arm(want)
      this.wantWake = undefined
      this.feed({ type: 'tick', now: this.now() })
    })
  }
}
