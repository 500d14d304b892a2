/**
 * The requester agent (DESIGN §1, §5–§6): every market decision a requester node takes, above and
 * around each job's lifecycle (`reduceRequester`), as one pure object per node. It holds the node's
 * jobs, each round's bid store, the award decision at the close (decideAward with the exclusions and
 * this node's reliability view), the reputation it keeps (protocol/trust/reputation.ts: what it saw
 * itself — a verified receipt is a success, a failure it blamed a provider for is a failure — counted
 * fully, others' evidence as far as it trusts them, decayed to the event's time), re-auctions and cancels.
 *
 * One entry point, `handle(event) → effects`: synchronous, no I/O, no clock, no timers (time only
 * from `event.now`). The daemon's shell (node/market/requester*.ts) and the scenario harness turn
 * messages into events and carry out the effects; the same code decides in both.
 *
 * What the agent decides beyond the lifecycle:
 *  - a bid is screened on arrival (`assessBid`: job, price cap, expiry, hardware, VRAM, model,
 *    region, start) at the round's close, scored under this node's reliability view, and kept in the
 *    bounded store (bid-store.ts);
 *  - at the close the award is decided over the held bids; a winner that has never delivered to this node
 *    is marked a newcomer: its failure before answering the award does not use up the job's attempts
 *    (issue 9, bug 10) — a throw-away identity that failed before is no more trusted than a new one —
 *    while the exclusion and the failure recorded make later rounds prefer others;
 *  - verification beyond the receipt (replicate/spotcheck) needs a second provider's run (the trust
 *    layer): a verified set of outputs is accepted;
 *  - every award that ends gets a ledger ending: a final payment (settled, cancelled or preempted
 *    with work done) or `end-award` (before the run, or failed), so both ledgers hold every award.
 */
import type { CID } from '../../crypto/index.js'
import type { JobRequest } from '../messages/job-request.js'
import { decideAward, type AuctionBid } from './award.js'
import { assessBid } from './bid-store.js'
import { defaultMarketParams, type MarketParams } from './params.js'
import { formatMicros } from './pricing.js'
import {
  isRequesterFinal, reduceRequester, requesterInitFromJob, startRequesterJob,
  type RequesterEffect, type RequesterEvent, type RequesterJob, type RequesterTransition
} from './requester-lifecycle.js'
import { Reputation } from './reputation.js'
import type { AgentAwardView, AgentBidView, AgentJobView, RequesterAgentEffect, RequesterAgentEvent } from './requester-agent-types.js'

export * from './requester-agent-types.js'

/** Bid views kept per job (the round's store holds at most 256 bids). */
interface AgentJob {
  id: string
  cid: CID
  request: JobRequest
  state: RequesterJob
  /** The current round's held bids, by CID string. */
  bids: Map<string, AuctionBid>
  bidViews: AgentBidView[]
  /** The decision of the last close, sent as the award. */
  decision?: Extract<RequesterAgentEffect, { type: 'send-award' }>
  award?: AgentAwardView
  /** Highest cumulative committed per attempt; attempts whose ledger has ended. */
  committed: Map<number, number>
  ended: Set<number>
}

export class RequesterAgent {
  private readonly jobs = new Map<string, AgentJob>()
  readonly reputation: Reputation

  constructor (readonly peerId: string, readonly params: MarketParams = defaultMarketParams) {
    this.reputation = new Reputation(params.scoring, peerId)
  }

  /** Apply one event; returns what the shell must do, in order. Never throws on bad input. */
  handle (event: RequesterAgentEvent): RequesterAgentEffect[] {
    const out: RequesterAgentEffect[] = []
    switch (event.type) {
      case 'job-submitted': this.onSubmitted(event, out); break
      case 'job-restored': this.onRestored(event, out); break
      case 'bid-seen': this.onBidSeen(event, out); break
      case 'tick':
        if (event.job === undefined) for (const job of this.jobs.values()) this.step(job, { type: 'tick', now: event.now }, out)
        else this.withJob(event.job, out, (job) => { this.step(job, { type: 'tick', now: event.now }, out) })
        break
      case 'cancel': this.withJob(event.job, out, (job) => { this.step(job, { type: 'cancel', now: event.now }, out) }); break
      case 'payment-sent':
        this.withJob(event.job, out, (job) => {
          if (event.attempt !== job.state.attempt) return
          this.step(job, { type: 'payment-sent', now: event.now, cumulative: event.cumulative }, out)
        })
        break
      case 'award-sealed': this.withJob(event.job, out, (job) => { this.onAwardSealed(job, event) }); break
      case 'provider-convicted': this.onConvicted(event); break
      default: this.withAttempt(event, out)
    }
    return out
  }

  // ------------------------------------------------------------------------------------------
  // Queries (read-only)
  // ------------------------------------------------------------------------------------------

  has (job: string): boolean {
    return this.jobs.has(job)
  }

  /** The job's state and what the job view shows of its auction; undefined for an unknown job. */
  view (job: string): AgentJobView | undefined {
    const j = this.jobs.get(job)
    if (j === undefined) return undefined
    let paid = 0
    for (const c of j.committed.values()) paid += c
    return { id: j.id, state: j.state, bids: j.bidViews.map((b) => ({ ...b })), ...(j.award !== undefined ? { award: { ...j.award } } : {}), paid }
  }

  /** Ids of every job this agent holds. */
  jobIds (): string[] {
    return [...this.jobs.keys()]
  }

  /** The bid of the job's current round with this CID string (the shell seals awards with it). */
  heldBid (job: string, bid: string): AuctionBid | undefined {
    return this.jobs.get(job)?.bids.get(bid)
  }

  // ------------------------------------------------------------------------------------------
  // Events
  // ------------------------------------------------------------------------------------------

  private onSubmitted (e: Extract<RequesterAgentEvent, { type: 'job-submitted' }>, out: RequesterAgentEffect[]): void {
    const id = e.cid.toString()
    if (this.jobs.has(id)) { out.push({ type: 'ignored', job: id, reason: 'job already submitted' }); return }
    let transition: RequesterTransition
    try {
      transition = startRequesterJob(requesterInitFromJob(id, e.request, {
        leaseMs: this.params.leaseMs,
        billingIntervalSec: this.params.billingIntervalSec,
        maxFailedAttempts: this.params.maxFailedAttempts
      }), e.now)
    } catch (err) {
      out.push({ type: 'ignored', job: id, reason: `the job cannot start: ${(err as Error).message}` })
      return
    }
    const job = this.newJob(id, e.cid, e.request, transition.state)
    const r = e.request
    out.push(note(job, 'submitted', `${r.sla.tier} job for ${r.resources.gpus} GPU(s), cap ${credits(r.sla.maxPrice)}/GPU-h, bid window ${r.auction.bidWindowMs} ms`))
    this.carry(job, transition.effects, out)
  }

  private onRestored (e: Extract<RequesterAgentEvent, { type: 'job-restored' }>, out: RequesterAgentEffect[]): void {
    const id = e.cid.toString()
    if (this.jobs.has(id)) return
    const job = this.newJob(id, e.cid, e.request, e.state)
    if (isRequesterFinal(e.state.status)) return
    job.state = { ...e.state, status: 'failed', reason: `interrupted: the daemon stopped while the job was ${e.state.status}` }
    out.push(note(job, 'failed', job.state.reason as string))
    out.push({ type: 'finished', job: id, status: 'failed', reason: job.state.reason })
  }

  private newJob (id: string, cid: CID, request: JobRequest, state: RequesterJob): AgentJob {
    const job: AgentJob = { id, cid, request, state, bids: new Map(), bidViews: [], committed: new Map(), ended: new Set() }
    this.jobs.set(id, job)
    return job
  }

  private onBidSeen (e: Extract<RequesterAgentEvent, { type: 'bid-seen' }>, out: RequesterAgentEffect[]): void {
    const job = this.jobs.get(e.bid.payload.job.toString())
    if (job === undefined) return
    const s = job.state
    const cid = e.bid.cid.toString()
    if (s.status !== 'bidding' || s.auction.closing) { out.push({ type: 'ignored', job: job.id, reason: `not taking bids while ${s.status}` }); return }
    if (job.bids.has(cid)) return
    const assessed = assessBid({ cid: job.cid, payload: job.request }, e.bid, {
      at: Math.max(e.now, s.auction.closesAt),
      reliability: (peer) => this.reputation.reliability(peer, Math.max(e.now, s.auction.closesAt)),
      params: this.params.scoring
    })
    if ('fault' in assessed) { out.push({ type: 'ignored', job: job.id, reason: `bid ${cid} refused on arrival: ${assessed.fault}` }); return }
    this.step(job, { type: 'bid-received', now: e.now, ...assessed.held }, out)
    const held = new Set(job.state.auction.bids.map((b) => b.bid))
    if (!held.has(cid)) return
    // a bid it replaced (the peer's worse one, or the worst of a full round) is gone from the round
    for (const kept of job.bids.keys()) if (!held.has(kept)) job.bids.delete(kept)
    job.bidViews = job.bidViews.filter((v) => held.has(v.cid))
    job.bids.set(cid, e.bid)
    job.bidViews.push({ cid, provider: e.bid.signer, price: e.bid.payload.price, model: e.model, region: e.region })
    out.push(note(job, 'bid', `bid ${credits(e.bid.payload.price)}/GPU-h (${e.model}, ${e.region})`, e.bid.signer))
  }

  /** A verified fraud proof: the provider scores 0 and decideAward screens its bids out (CONVICTED). */
  private onConvicted (e: Extract<RequesterAgentEvent, { type: 'provider-convicted' }>): void {
    this.reputation.convict(e.provider, e.proof)
  }

  private onAwardSealed (job: AgentJob, e: Extract<RequesterAgentEvent, { type: 'award-sealed' }>): void {
    const d = job.decision
    if (d === undefined || d.attempt !== e.attempt) return
    job.award = {
      attempt: e.attempt,
      cid: e.award,
      provider: d.provider,
      bid: d.fields.bid.toString(),
      price: d.price,
      paymentRule: e.paymentRule,
      considered: d.fields.considered.length,
      why: d.why,
      awardedAt: e.now
    }
  }

  /** An event from the exec stream of one attempt: only the current attempt's provider speaks for it. */
  private withAttempt (e: Extract<RequesterAgentEvent, { attempt: number, provider: string }>, out: RequesterAgentEffect[]): void {
    const job = this.jobs.get(e.job)
    if (job === undefined) { out.push({ type: 'ignored', job: e.job, reason: 'unknown job' }); return }
    if (e.attempt !== job.state.attempt || job.state.award?.provider !== e.provider) {
      out.push({ type: 'ignored', job: job.id, reason: `${e.type} from an earlier attempt or another provider` })
      return
    }
    const { now, provider } = e
    switch (e.type) {
      case 'award-response':
        if (e.decision === 'accept') {
          out.push(note(job, 'accepted', `${short(provider)} accepted`, provider))
          this.step(job, { type: 'award-accepted', now, provider }, out)
        } else {
          out.push(note(job, 'declined', `${short(provider)} declined: ${e.reason ?? 'no reason given'}`, provider))
          this.step(job, { type: 'award-declined', now, provider, ...(e.reason !== undefined ? { reason: e.reason } : {}) }, out)
        }
        return
      case 'job-status':
        if (e.state !== 'running' && e.state !== 'accepted') {
          out.push(note(job, e.state, `provider reports ${e.state}${e.message !== undefined ? `: ${e.message}` : ''}`, provider))
        }
        this.step(job, { type: 'heartbeat', now, provider, seq: e.seq, state: e.state, gpuSeconds: e.gpuSeconds }, out)
        return
      case 'receipt':
        out.push(note(job, 'receipt', e.forThisRequester
          ? `receipt: exit ${e.exitCode}, ${e.gpuSeconds} GPU-s; fetching the outputs`
          : 'receipt rejected: the receipt names another requester', provider))
        this.step(job, { type: 'receipt-received', now, provider, exitCode: e.exitCode, gpuSeconds: e.gpuSeconds, outputsValid: e.forThisRequester }, out)
        return
      case 'outputs-verified': {
        if (job.state.status !== 'verifying') { out.push({ type: 'ignored', job: job.id, reason: `no outputs awaited while ${job.state.status}` }); return }
        const missing = (e.missingOutputs ?? []).filter((p) => typeof p === 'string')
        this.reputation.record(provider, true, now)
        out.push(note(job, 'outputs', `${e.files} output(s) verified` + (missing.length > 0 ? `; not written by the job: ${missing.join(', ')}` : ''), provider))
        this.step(job, { type: 'outputs-verified', now, ...(missing.length > 0 ? { missingOutputs: missing } : {}) }, out)
        return
      }
      case 'outputs-mismatch':
        if (job.state.status !== 'verifying') { out.push({ type: 'ignored', job: job.id, reason: `no outputs awaited while ${job.state.status}` }); return }
        out.push(note(job, 'outputs', `outputs rejected: ${e.detail}`, provider))
        this.step(job, { type: 'outputs-mismatch', now, detail: e.detail }, out)
        return
      case 'stream-failed':
        if (job.state.status !== 'awarded' && job.state.status !== 'running') return
        out.push(note(job, 'stream-failed', `exec stream failed (${e.fault === 'local' ? 'this node' : 'the provider'}): ${e.detail}`, provider))
        this.step(job, { type: 'stream-failed', now, provider, fault: e.fault, detail: e.detail }, out)
        return
      case 'unreachable':
        // no answer within one lease counts as a no-show: the lifecycle's deadline handles it
        out.push(note(job, 'unreachable', `cannot reach ${short(provider)}: ${e.detail}`, provider))
        this.step(job, { type: 'tick', now }, out)
    }
  }

  private withJob (id: string, out: RequesterAgentEffect[], fn: (job: AgentJob) => void): void {
    const job = this.jobs.get(id)
    if (job === undefined) out.push({ type: 'ignored', job: id, reason: 'unknown job' })
    else fn(job)
  }

  // ------------------------------------------------------------------------------------------
  // The lifecycle and its effects
  // ------------------------------------------------------------------------------------------

  /** Feed one lifecycle event and carry out what it asks (some effects the agent answers itself). */
  private step (job: AgentJob, event: RequesterEvent, out: RequesterAgentEffect[]): void {
    const before = job.state
    const { state, effects } = reduceRequester(before, event)
    job.state = state
    if (state.status !== before.status) {
      out.push(note(job, state.status, state.reason !== undefined && isRequesterFinal(state.status) ? `${state.status}: ${state.reason}` : state.status))
    }
    this.carry(job, effects, out, before)
    if (isRequesterFinal(state.status) && !isRequesterFinal(before.status)) {
      out.push({ type: 'finished', job: job.id, status: state.status, ...(state.reason !== undefined ? { reason: state.reason } : {}) })
    }
  }

  private carry (job: AgentJob, effects: RequesterEffect[], out: RequesterAgentEffect[], before?: RequesterJob): void {
    const ended = before?.award
    let failure: string | undefined
    let cancelled = false
    for (const effect of effects) {
      switch (effect.type) {
        case 'publish-job':
          out.push({ type: 'publish-job', job: job.id })
          break
        case 're-auction':
          job.bids.clear()
          job.bidViews = []
          out.push(note(job, 're-auction', `round ${job.state.auction.round} (${effect.reason}${effect.exclude.length > 0 ? `, excluding ${effect.exclude.length}` : ''})`))
          out.push({ type: 'publish-round', job: job.id, round: job.state.auction.round, attempt: effect.attempt, excluded: [...effect.exclude], reason: effect.reason })
          break
        case 'close-auction':
          this.close(job, effect.round, effect.exclude, out)
          break
        case 'explain':
          out.push(note(job, 'no-bids', effect.bids === 0 ? 'no bids in the window' : `none of ${effect.bids} bid(s) acceptable`))
          out.push({ type: 'explain', job: job.id, round: effect.round, bids: effect.bids })
          break
        case 'send-award': {
          const d = job.decision
          if (d === undefined || d.fields.bid.toString() !== effect.bid) { out.push({ type: 'ignored', job: job.id, reason: 'no award decision for this bid' }); break }
          const decided = { ...d, attempt: effect.attempt, fields: { ...d.fields, attempt: effect.attempt, leaseMs: effect.leaseMs, billingIntervalSec: effect.billingIntervalSec } }
          job.decision = decided
          out.push(note(job, 'award', `awarded to ${short(effect.provider)} at ${credits(effect.price)}/GPU-h: ${d.why}`, effect.provider))
          out.push(decided)
          break
        }
        case 'fetch-outputs':
          out.push({ type: 'fetch-outputs', job: job.id, attempt: job.state.attempt, provider: effect.provider })
          break
        case 'verify':
          // replicate/spotcheck need a second provider's run (the trust layer): accepted on the verified outputs
          this.step(job, { type: 'verification-done', now: job.state.now, ok: true }, out)
          break
        case 'cancel':
          cancelled = true
          out.push({ type: 'send-cancel', job: job.id, attempt: ended?.attempt ?? job.state.attempt, provider: effect.provider, reason: effect.reason })
          break
        case 'pay': {
          job.committed.set(effect.attempt, Math.max(job.committed.get(effect.attempt) ?? 0, effect.cumulative))
          if (effect.final) job.ended.add(effect.attempt)
          if (effect.final) out.push(note(job, 'paid', `paid ${credits(effect.cumulative)} in all to ${short(effect.payee)} (${effect.gpuSeconds} GPU-s)`, effect.payee))
          out.push({
            type: 'pay', job: job.id, attempt: effect.attempt, payee: effect.payee, interval: effect.interval, cumulative: effect.cumulative,
            gpuSeconds: effect.gpuSeconds, final: effect.final, ...(effect.ending !== undefined ? { ending: effect.ending } : {})
          })
          break
        }
        case 'record-failure': {
          const counted = job.state.failures > (before?.failures ?? 0)
          failure = effect.subject
          this.reputation.record(effect.subject, false, job.state.now)
          out.push(note(job, 'failure', `${effect.reason}${effect.detail !== undefined ? `: ${effect.detail}` : ''}`, effect.subject))
          out.push({
            type: 'record-failure', job: job.id, attempt: ended?.attempt ?? job.state.attempt, subject: effect.subject, reason: effect.reason,
            evidence: [...effect.evidence], ...(effect.detail !== undefined ? { detail: effect.detail } : {}), counted
          })
          break
        }
        case 'wake':
          out.push({ type: 'wake', job: job.id, at: effect.at })
          break
        case 'ignored':
          out.push({ type: 'ignored', job: job.id, reason: effect.reason })
      }
    }
    // an award that ended here without a final payment still gets its ledger ending
    if (ended !== undefined && !job.ended.has(ended.attempt) && (job.state.award?.attempt !== ended.attempt || isRequesterFinal(job.state.status))) {
      job.ended.add(ended.attempt)
      const ending = failure === ended.provider ? 'failed' : cancelled ? 'cancelled' : 'preempted'
      out.push({ type: 'end-award', job: job.id, attempt: ended.attempt, payee: ended.provider, ending, cumulative: job.committed.get(ended.attempt) ?? 0 })
    }
  }

  /** The round closed: decide the award over the held bids, and tell the lifecycle. */
  private close (job: AgentJob, round: number, exclude: string[], out: RequesterAgentEffect[]): void {
    const now = job.state.now
    const bids = job.state.auction.bids.map((b) => job.bids.get(b.bid)).filter((b): b is AuctionBid => b !== undefined)
    let decision
    try {
      decision = decideAward({
        job: { cid: job.cid, payload: job.request },
        bids,
        reliability: (peer) => this.reputation.reliability(peer, now),
        excluded: exclude,
        convicted: (peer) => this.reputation.convictionOf(peer) !== undefined,
        attempt: job.state.attempt + 1,
        now,
        leaseMs: job.state.config.leaseMs,
        billingIntervalSec: job.state.config.billingIntervalMs / 1000,
        params: this.params.scoring
      })
    } catch (err) {
      out.push({ type: 'ignored', job: job.id, reason: `award decision failed: ${(err as Error).message}` })
      this.step(job, { type: 'bidding-closed', now, round }, out)
      return
    }
    for (const view of job.bidViews) {
      const ranked = decision.kind === 'award' ? decision.ranking.find((r) => r.cid === view.cid) : undefined
      if (ranked !== undefined) view.effectivePrice = Math.round(ranked.effectivePrice)
      const rejected = decision.rejected.find((r) => r.cid === view.cid)
      if (rejected !== undefined) view.rejected = rejected.reason
    }
    if (decision.kind === 'none') {
      this.step(job, { type: 'bidding-closed', now, round }, out)
      return
    }
    const { award, ranking } = decision
    const winner = ranking[0]
    const runnerUp = ranking[1]
    const why = winner === undefined
      ? 'the only acceptable bid'
      : `lowest effective price ${credits(Math.round(winner.effectivePrice))}` + (runnerUp !== undefined ? ` vs ${credits(Math.round(runnerUp.effectivePrice))} next of ${ranking.length}` : ' (the only bid)')
    job.decision = { type: 'send-award', job: job.id, attempt: award.attempt, provider: award.winner, price: award.price, fields: award, ranking, why }
    const newcomer = (this.reputation.history(award.winner)?.ok ?? 0) === 0
    this.step(job, { type: 'bidding-closed', now, round, winner: { bid: award.bid.toString(), provider: award.winner, price: award.price, ...(newcomer ? { newcomer } : {}) } }, out)
  }
}

function note (job: AgentJob, kind: string, text: string, peer?: string): RequesterAgentEffect {
  return { type: 'note', job: job.id, kind, text, ...(peer !== undefined ? { peer } : {}) }
}

function credits (micros: number): string {
  return `${formatMicros(micros)} cr`
}

function short (peer: string): string {
  return `…${peer.slice(-8)}`
}
