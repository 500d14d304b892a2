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
 *  - `replicate k` and a drawn `spotcheck` run one lifecycle per replica and compare their receipts
 *    (replica-runs.ts); a job without verification is accepted on its verified outputs;
 *  - every award that ends gets a ledger ending: a final payment (settled, cancelled or preempted
 *    with work done) or `end-award` (before the run, or failed), so both ledgers hold every award.
 */
import type { CID } from '../../crypto/index.js'
import type { JobRequest } from '../messages/job-request.js'
import { peerNetworks, type AddressLookup, type ClusterLookup, type NetworkLookup } from '../trust/replicate.js'
import { decideAward, screenBids, tooFarScreen, type AuctionBid } from './award.js'
import { assessBid } from './bid-store.js'
import { cachedSummary } from './input-cache.js'
import { defaultMarketParams, type MarketParams } from './params.js'
import {
  isRequesterFinal, reduceRequester, requesterInitFromJob, resumeRequesterJob, startRequesterJob,
  type RequesterEffect, type RequesterEvent, type RequesterJob, type RequesterStatus, type RequesterTransition
} from './requester-lifecycle.js'
import { Reputation } from './reputation.js'
import {
  advanceReplication, biddingRun, cancelReplicas, closeReplicas, exclusionsOf, nextRound, onReexecuted, replicationView, runOf, runsOf,
  spotcheckDrawn, startSpotcheck, summarise, verificationOf, type ReplicaHost
} from './replica-runs.js'
import { HELD_BACK, heldBackText, selectByStanding, standingOf, type Standing, type StandingRecord, type StandingSelection } from './standing.js'
import { awardKey, credits, note, short, type AgentJob, type Run } from './requester-agent-job.js'
import { isDeterministic } from '../trust/fraud-proof.js'
import { InvalidResultAuditParamsError, ResultAudits, createResultAuditParams, type AcceptedResult, type AuditStep, type ResultAuditParams } from './result-audit.js'
import type { AgentJobView, RequesterAgentEffect, RequesterAgentEvent } from './requester-agent-types.js'
import { estimateRttMs, type NodeLocation } from './rtt-estimate.js'
import { RttView, type RttViewParams } from './rtt-view.js'

export * from './requester-agent-types.js'
export { awardKey } from './requester-agent-job.js'

/** What a replicated or spot-checked job needs beyond the market's parameters (all optional). */
export interface RequesterTrustOptions {
  /** Addresses of a provider beyond those its bids came with (`bid-seen`'s `addrs`). */
  addresses?: AddressLookup
  /** The node's trust clusters; absent: none. */
  cluster?: ClusterLookup
  /**
   * What makes two replicas independent: `subnet` (default) — no shared IPv4 /16 or IPv6 /48;
   * `peer` — distinct peer ids only, the owner's opt-out for providers that share one address range.
   */
  independence?: 'subnet' | 'peer'
  /** The 32-byte secret seed of the spotcheck draw (the daemon keeps it in the data dir); absent: no spotchecks. */
  spotcheckSeed?: Uint8Array
  /**
   * Share (per mille, 0 … 1000) of deterministic replicated jobs whose agreeing replicas are re-executed
   * all the same (drawn with `spotcheckSeed`; default 0): two colluders that agree are caught only so.
   */
  agreementAuditPerMille?: number
  /** Bounds of the retroactive audit after a conviction (result-audit.ts). */
  audit?: Partial<ResultAuditParams>
  /**
   * The proof audit (replica-runs.ts `unprovenAgreement`): re-execute an agreement of deterministic
   * replicas none of whose providers is proven to this node (default true; false: an agreement of
   * strangers is accepted as it is, and two colluders that agree are caught only by the agreement audit).
   */
  auditUnproven?: boolean
  /** The longest run this node re-executes, ms (the daemon's wall cap); the proof audit skips jobs whose replicas ran longer. Absent: no limit. */
  reexecuteLimitMs?: number
  /**
   * Where this node is (its config's provider.region / provider.country): bidders it has not measured
   * are scored at the RTT estimated from their bid's region and country (rtt-estimate.ts). Absent: no
   * estimates, only measurements (`rtt.measured`, fed by the shell).
   */
  location?: NodeLocation
  /** The RTT view's bounds (rtt-view.ts). */
  rtt?: Partial<RttViewParams>
}

/** Providers remembered as proven (the oldest proven is forgotten first: forgetting only costs an audit). */
export const MAX_PROVEN_PROVIDERS = 4096

/** Bidders' addresses kept from `bid-seen` (oldest dropped first). */
const MAX_BIDDER_ADDRESSES = 4096

/** What a restarted job does next, by the status it was saved in (resumeRequesterJob). */
const RESUMING: Partial<Record<RequesterStatus, string>> = {
  awarded: 're-opening the stream to the provider',
  running: 're-opening the stream to the provider',
  verifying: 'fetching the outputs again',
  bidding: 'its bids were lost; opening a new round'
}

export class RequesterAgent implements ReplicaHost {
  private readonly jobs = new Map<string, AgentJob>()
  private readonly bidderAddrs = new Map<string, readonly string[]>()
  readonly reputation: Reputation
  /**
   * This node's own outcomes as the standing rule reads them (standing.ts): the reputation's own records
   * but declines, in memory only (a restart forgets them: less holding back, never more).
   */
  private readonly standingRecords: Reputation
  readonly cluster?: ClusterLookup
  readonly networks?: NetworkLookup
  readonly spotcheckSeed?: Uint8Array
  readonly agreementAuditPerMille?: number
  readonly auditUnproven: boolean
  readonly reexecuteLimitMs?: number
  /** Providers whose output matched this node's own re-execution or a proven provider's, oldest first. */
  private readonly provenPeers = new Set<string>()
  /** The retroactive audits of this node's accepted results after convictions. */
  readonly audits: ResultAudits
  /** This node's RTT to each provider: the shell feeds measurements (`rtt.measured`), bids feed estimates. */
  readonly rtt: RttView
  readonly location?: NodeLocation

  constructor (readonly peerId: string, readonly params: MarketParams = defaultMarketParams, private readonly trust: RequesterTrustOptions = {}) {
    this.reputation = new Reputation(params.scoring, peerId)
    this.standingRecords = new Reputation(params.scoring, peerId)
    if (trust.cluster !== undefined) this.cluster = trust.cluster
    if (trust.independence === 'peer') this.networks = peerNetworks
    if (trust.spotcheckSeed !== undefined) this.spotcheckSeed = trust.spotcheckSeed
    const share = trust.agreementAuditPerMille
    if (share !== undefined) {
      if (!Number.isFinite(share) || share < 0 || share > 1000) throw new InvalidResultAuditParamsError('agreementAuditPerMille', `expected a number in 0 … 1000, got ${String(share)}`)
      this.agreementAuditPerMille = share
    }
    this.audits = new ResultAudits(createResultAuditParams(trust.audit))
    this.rtt = new RttView(trust.rtt)
    if (trust.location !== undefined) this.location = trust.location
    this.auditUnproven = trust.auditUnproven ?? true
    if (trust.reexecuteLimitMs !== undefined) this.reexecuteLimitMs = trust.reexecuteLimitMs
  }

  readonly proven = (peer: string): boolean => this.provenPeers.has(peer) && !this.convicted(peer)
  readonly prove = (peer: string): void => {
    this.provenPeers.delete(peer)
    this.provenPeers.add(peer)
    if (this.provenPeers.size > MAX_PROVEN_PROVIDERS) this.provenPeers.delete(this.provenPeers.values().next().value as string)
  }
  readonly unprove = (peer: string): void => { this.provenPeers.delete(peer) }

  /** A provider's addresses: those its bids came with and the lookup's (undefined: neither knows any). */
  readonly addresses: AddressLookup = (provider) => {
    const seen = this.bidderAddrs.get(provider)
    const looked = this.trust.addresses?.(provider)
    return seen === undefined ? looked : looked === undefined ? seen : [...seen, ...looked]
  }
  readonly reliability = (peer: string, now: number): number | undefined => this.reputation.reliability(peer, now)
  readonly rttMs = (peer: string, now: number): number | undefined => this.rtt.rttMs(peer, now)
  readonly convicted = (peer: string): boolean => this.reputation.convictionOf(peer) !== undefined
  readonly newcomer = (peer: string): boolean => (this.reputation.history(peer)?.ok ?? 0) === 0
  readonly record = (peer: string, ok: boolean, now: number): void => {
    this.reputation.record(peer, ok, now)
    this.standingRecords.record(peer, ok, now)
  }
  /** `bids` that screening leaves split by the standing rule (standing.ts) under this node's own records at `now`. */
  readonly byStanding = (job: AgentJob, bids: readonly AuctionBid[], now: number, excluded: readonly string[], mayReopen = false): StandingSelection & { screenedOut: AuctionBid[] } => {
    // standing splits only the bids screening leaves (a convicted, excluded or too far bidder is in no standing)
    const auctionJob = { cid: job.cid, payload: job.request }
    const { valid } = screenBids(auctionJob, bids, new Set(excluded), now, this.convicted, tooFarScreen(auctionJob, (peer) => this.rtt.rttMs(peer, now)))
    const screenedOut = bids.filter((b) => !valid.has(b.cid.toString()))
    let unfinished: Map<string, number> | undefined
    const selection = selectByStanding([...valid.values()], (provider) => {
      unfinished ??= this.unfinishedAwards(now - this.params.standing.exposureGraceMs)
      return this.standingRecord(provider, now, unfinished)
    }, mayReopen, this.params.standing)
    return { ...selection, screenedOut }
  }

  /** One provider's standing with this node at `now` (standing.ts). */
  standingOf (provider: string, now: number): Standing {
    return standingOf(this.standingRecord(provider, now, this.unfinishedAwards(now - this.params.standing.exposureGraceMs)), this.params.standing)
  }

  private standingRecord (provider: string, now: number, unfinished: ReadonlyMap<string, number>): StandingRecord {
    const own = this.standingRecords.ownAt(provider, now)
    return { ok: own.ok, failed: own.failed, okCount: own.okCount, unfinished: unfinished.get(provider) ?? 0 }
  }

  /** This node's awards not yet ended (awarded or running) and made at or before `madeBy`, per provider. */
  unfinishedAwards (madeBy = Infinity): Map<string, number> {
    const out = new Map<string, number>()
    for (const job of this.jobs.values()) {
      for (const run of runsOf(job)) {
        const award = run.state.award
        if (award !== undefined && award.awardedAt <= madeBy && (run.state.status === 'awarded' || run.state.status === 'running')) out.set(award.provider, (out.get(award.provider) ?? 0) + 1)
      }
    }
    return out
  }


  /** Apply one event; returns what the shell must do, in order. Never throws on bad input. */
  handle (event: RequesterAgentEvent): RequesterAgentEffect[] {
    const out: RequesterAgentEffect[] = []
    switch (event.type) {
      case 'job-submitted': this.onSubmitted(event, out); break
      case 'job-restored': this.onRestored(event, out); break
      case 'bid-seen': this.onBidSeen(event, out); break
      case 'tick':
        if (event.job === undefined) for (const job of this.jobs.values()) this.tick(job, event.now, out)
        else this.withJob(event.job, out, (job) => { this.tick(job, event.now, out) })
        break
      case 'cancel':
        this.withJob(event.job, out, (job) => {
          if (job.replication !== undefined) cancelReplicas(this, job, event.now, out)
          else this.step(job, job, { type: 'cancel', now: event.now }, out)
        })
        break
      case 'payment-sent':
        this.withJob(event.job, out, (job) => {
          const run = runOf(job, event.attempt, event.provider)
          if (run !== undefined) this.step(job, run, { type: 'payment-sent', now: event.now, cumulative: event.cumulative }, out)
        })
        break
      case 'award-sealed': this.withJob(event.job, out, (job) => { this.onAwardSealed(job, event) }); break
      case 'provider-convicted': this.onConvicted(event, out); break
      case 'reexecuted':
        if (this.audits.isRunning(event.job)) this.carryAudit(this.audits.onReexecuted(event.job, event.output, this.convicted), out)
        else this.withJob(event.job, out, (job) => { onReexecuted(job, event.output, '', out) })
        break
      case 'reexecute-failed':
        if (this.audits.isRunning(event.job)) this.carryAudit(this.audits.onReexecuted(event.job, undefined, this.convicted, event.detail), out)
        else this.withJob(event.job, out, (job) => { onReexecuted(job, undefined, event.detail, out) })
        break
      default: this.withAttempt(event, out)
    }
    const id = event.type === 'job-submitted' || event.type === 'job-restored' || event.type === 'provider-convicted' ? undefined : event.type === 'bid-seen' ? event.bid.payload.job.toString() : event.job
    for (const job of id === undefined ? (event.type === 'tick' ? this.jobs.values() : []) : [this.jobs.get(id)]) if (job !== undefined) this.afterEvent(job, out)
    return out
  }

  /** Deadlines of every run of the job. */
  private tick (job: AgentJob, now: number, out: RequesterAgentEffect[]): void {
    for (const run of runsOf(job)) this.step(job, run, { type: 'tick', now }, out)
  }

  /** A spotcheck to start, a comparison to decide, a replicated job to end. */
  private afterEvent (job: AgentJob, out: RequesterAgentEffect[]): void {
    if (job.spotcheckDue === true) {
      job.spotcheckDue = false
      startSpotcheck(job, out)
    }
    advanceReplication(this, job, out)
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
    const award = j.replication === undefined ? j.award : j.replication.slots.find((s) => s.award !== undefined)?.award
    const audit = this.audits.recordOf(job)
    return {
      id: j.id,
      state: j.state,
      bids: j.bidViews.map((b) => ({ ...b })),
      ...(award !== undefined ? { award: { ...award } } : {}),
      paid,
      ...(j.replication !== undefined ? { replication: replicationView(j.replication) } : {}),
      ...(audit !== undefined ? { audit } : {})
    }
  }

  /** Ids of every job this agent holds. */
  jobIds (): string[] {
    return [...this.jobs.keys()]
  }

  /** Whether the award (`attempt`, `provider`) of the job is still being worked on: its stream is worth re-opening. */
  awardInFlight (job: string, attempt: number, provider: string): boolean {
    const j = this.jobs.get(job)
    const run = j === undefined ? undefined : runOf(j, attempt, provider)
    const s = run?.state
    return s !== undefined && (s.status === 'awarded' || s.status === 'running') && s.award?.attempt === attempt && s.award.provider === provider
  }

  /** Whether the award's receipt is in and its outputs awaited (`verifying`): the shell's output fetch still matters. */
  awaitingOutputs (job: string, attempt: number, provider: string): boolean {
    const j = this.jobs.get(job)
    const s = j === undefined ? undefined : runOf(j, attempt, provider)?.state
    return s?.status === 'verifying' && s.award?.attempt === attempt && s.award.provider === provider
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
    if (e.envelope !== undefined && e.envelope.cid.equals(e.cid)) job.envelope = e.envelope
    const r = e.request
    out.push(note(job, 'submitted', `${r.sla.tier} job for ${r.resources.gpus} GPU(s), cap ${credits(r.sla.maxPrice)}/GPU-h, bid window ${r.auction.bidWindowMs} ms`))
    if (r.verification.mode !== 'none' && job.envelope === undefined) out.push(note(job, 'verification', `${r.verification.mode} cannot run without the opened request: the job runs unverified`))
    this.carry(job, job, transition.effects, out)
  }

  private onRestored (e: Extract<RequesterAgentEvent, { type: 'job-restored' }>, out: RequesterAgentEffect[]): void {
    const id = e.cid.toString()
    if (this.jobs.has(id)) return
    const job = this.newJob(id, e.cid, e.request, e.state)
    if (isRequesterFinal(e.state.status)) return
    // a replicated job's runs are not kept apart in the record: it cannot resume
    const resumed = e.request.verification.mode === 'replicate' ? undefined : resumeRequesterJob(e.state, e.now)
    if (resumed !== undefined) {
      if (e.envelope !== undefined && e.envelope.cid.equals(e.cid)) job.envelope = e.envelope
      if (e.award !== undefined && e.state.award !== undefined && e.award.attempt === e.state.award.attempt) job.award = { ...e.award }
      if (e.state.award !== undefined) job.committed.set(awardKey(e.state.award.attempt, e.state.award.provider), e.state.award.committed)
      job.bidViews = e.state.status === 'bidding' ? [] : (e.bids ?? []).map((b) => ({ ...b }))
      out.push(note(job, 'restarted', `the daemon restarted while the job was ${e.state.status}: ${RESUMING[e.state.status] ?? 'resuming'}`))
      job.state = resumed.state
      this.carry(job, job, resumed.effects, out)
      return
    }
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
    const run = biddingRun(job)
    const cid = e.bid.cid.toString()
    if (run === undefined) { out.push({ type: 'ignored', job: job.id, reason: `not taking bids while ${job.state.status}` }); return }
    const s = run.state
    if (job.bids.has(cid)) return
    if (e.addrs !== undefined) this.keepAddrs(e.bid.signer, e.addrs)
    if (this.location !== undefined) this.rtt.estimated(e.bid.signer, estimateRttMs(this.location, { region: e.bid.payload.region, country: e.bid.payload.country }))
    const at = Math.max(e.now, s.auction.closesAt)
    const assessed = assessBid({ cid: job.cid, payload: job.request }, e.bid, {
      at,
      reliability: (peer) => this.reputation.reliability(peer, at),
      rtt: (peer) => this.rtt.rttMs(peer, e.now),
      params: this.params.scoring
    })
    if ('fault' in assessed) { out.push({ type: 'ignored', job: job.id, reason: `bid ${cid} refused on arrival: ${assessed.fault}` }); return }
    this.step(job, run, { type: 'bid-received', now: e.now, ...assessed.held }, out)
    const held = new Set(runsOf(job).flatMap((r) => r.state.status === 'bidding' ? r.state.auction.bids.map((b) => b.bid) : []))
    if (!held.has(cid)) return
    // a bid it replaced (the peer's worse one, or the worst of a full round) is gone from the round
    for (const kept of job.bids.keys()) if (!held.has(kept)) job.bids.delete(kept)
    job.bidViews = job.bidViews.filter((v) => held.has(v.cid))
    job.bids.set(cid, e.bid)
    const cached = cachedSummary(job.request.workload, e.bid.payload.cached)
    job.bidViews.push({ cid, provider: e.bid.signer, price: e.bid.payload.price, model: e.model, region: e.region, ...(cached !== undefined ? { cached: cached.paths.length } : {}) })
    out.push(note(job, 'bid', `bid ${credits(e.bid.payload.price)}/GPU-h (${e.model}, ${e.region}${cached !== undefined ? `, ${cached.paths.length} of ${job.request.workload.inputs.length} inputs cached` : ''})`, e.bid.signer))
  }

  /**
   * A verified fraud proof: the provider scores 0 and decideAward screens its bids out (CONVICTED); the
   * results it signed that this node accepted are revisited (result-audit.ts), once per conviction.
   */
  private onConvicted (e: Extract<RequesterAgentEvent, { type: 'provider-convicted' }>, out: RequesterAgentEffect[]): void {
    const before = this.convicted(e.provider)
    this.reputation.convict(e.provider, e.proof)
    if (before) return
    this.carryAudit(this.audits.onConvicted(e.provider, this.acceptedResults()), out)
  }

  /** Every result this node accepted: the outputs of a settled job and the receipts paid for them. */
  private * acceptedResults (): Generator<AcceptedResult> {
    for (const job of this.jobs.values()) {
      if (job.state.status !== 'settled') continue
      const runs = job.replication === undefined ? [job] : job.replication.slots.filter((s) => s.verdict === 'matched' && s.state.status === 'settled')
      const signers = runs.flatMap((r) => r.receipt === undefined ? [] : [{ provider: r.receipt.signer, receipt: r.receipt.cid.toString(), outputs: r.receipt.payload.outputs.toString() }])
      const first = signers[0]
      if (first === undefined) continue
      yield { job: job.id, deterministic: isDeterministic(job.request), outputs: first.outputs, signers: signers.filter((s) => s.outputs === first.outputs).map(({ provider, receipt }) => ({ provider, receipt })) }
    }
  }

  /** An audit step's effects: the re-executions to start, the proofs to publish, the views changed. */
  private carryAudit (step: AuditStep, out: RequesterAgentEffect[]): void {
    for (const { job, record } of step.changed) {
      out.push({ type: 'note', job, kind: `audit-${record.status}`, text: record.detail, peer: record.by })
      out.push({ type: 'result-audited', job, status: record.status, by: record.by, detail: record.detail })
    }
    for (const job of step.start) out.push({ type: 'reexecute', job, audit: true })
    for (const p of step.prove) out.push({ type: 'publish-fraud-proof', job: p.job, subject: p.subject, receipt: p.receipt })
  }

  private keepAddrs (peer: string, addrs: readonly string[]): void {
    this.bidderAddrs.delete(peer)
    this.bidderAddrs.set(peer, addrs.filter((a) => typeof a === 'string').slice(0, 32))
    if (this.bidderAddrs.size > MAX_BIDDER_ADDRESSES) this.bidderAddrs.delete(this.bidderAddrs.keys().next().value as string)
  }

  private onAwardSealed (job: AgentJob, e: Extract<RequesterAgentEvent, { type: 'award-sealed' }>): void {
    const run = runsOf(job).find((r) => r.decision?.attempt === e.attempt && (e.provider === undefined || r.decision.provider === e.provider))
    const d = run?.decision
    if (run === undefined || d === undefined) return
    const cached = cachedSummary(job.request.workload, job.bids.get(d.fields.bid.toString())?.payload.cached)
    run.award = {
      attempt: e.attempt,
      cid: e.award,
      provider: d.provider,
      bid: d.fields.bid.toString(),
      price: d.price,
      paymentRule: e.paymentRule,
      considered: d.fields.considered.length,
      why: d.why,
      awardedAt: e.now,
      ...(cached !== undefined ? { cached } : {})
    }
  }

  /** An event from the exec stream of one attempt: only the current attempt's provider speaks for it. */
  private withAttempt (e: Extract<RequesterAgentEvent, { attempt: number, provider: string }>, out: RequesterAgentEffect[]): void {
    const job = this.jobs.get(e.job)
    if (job === undefined) { out.push({ type: 'ignored', job: e.job, reason: 'unknown job' }); return }
    const run = runOf(job, e.attempt, e.provider)
    if (run === undefined || run.state.award?.provider !== e.provider) {
      out.push({ type: 'ignored', job: job.id, reason: `${e.type} from an earlier attempt or another provider` })
      return
    }
    const { now, provider } = e
    const step = (event: RequesterEvent): void => { this.step(job, run, event, out) }
    switch (e.type) {
      case 'award-response':
        if (e.decision === 'accept') {
          // a provider answering a resumed stream's award again is no news
          if (run.state.status !== 'awarded') return
          out.push(note(job, 'accepted', `${short(provider)} accepted`, provider))
          step({ type: 'award-accepted', now, provider })
        } else {
          out.push(note(job, 'declined', `${short(provider)} declined: ${e.reason ?? 'no reason given'}`, provider))
          step({ type: 'award-declined', now, provider, ...(e.reason !== undefined ? { reason: e.reason } : {}) })
        }
        return
      case 'job-status':
        if (e.state !== 'running' && e.state !== 'accepted') {
          out.push(note(job, e.state, `provider reports ${e.state}${e.message !== undefined ? `: ${e.message}` : ''}`, provider))
        }
        step({ type: 'heartbeat', now, provider, seq: e.seq, state: e.state, gpuSeconds: e.gpuSeconds })
        return
      case 'receipt':
        out.push(note(job, 'receipt', e.forThisRequester
          ? `receipt: exit ${e.exitCode}, ${e.gpuSeconds} GPU-s; fetching the outputs`
          : 'receipt rejected: the receipt names another requester', provider))
        if (e.receipt !== undefined && e.receipt.signer === provider && e.receipt.payload.job.equals(job.cid)) run.receipt = e.receipt
        step({ type: 'receipt-received', now, provider, exitCode: e.exitCode, gpuSeconds: e.gpuSeconds, outputsValid: e.forThisRequester })
        return
      case 'outputs-verified': {
        if (run.state.status !== 'verifying') { out.push({ type: 'ignored', job: job.id, reason: `no outputs awaited while ${run.state.status}` }); return }
        const missing = (e.missingOutputs ?? []).filter((p) => typeof p === 'string')
        this.record(provider, true, now)
        out.push(note(job, 'outputs', `${e.files} output(s) verified` + (missing.length > 0 ? `; not written by the job: ${missing.join(', ')}` : ''), provider))
        step({ type: 'outputs-verified', now, ...(missing.length > 0 ? { missingOutputs: missing } : {}) })
        return
      }
      case 'outputs-unsaved':
        if (run.state.status !== 'verifying') { out.push({ type: 'ignored', job: job.id, reason: `no outputs awaited while ${run.state.status}` }); return }
        // the provider served what its receipt named: a success for it, whatever this node's disk did
        this.record(provider, true, now)
        out.push(note(job, 'outputs', `outputs verified but not stored on this node: ${e.detail}`, provider))
        step({ type: 'outputs-unsaved', now, detail: e.detail })
        return
      case 'outputs-mismatch':
        if (run.state.status !== 'verifying') { out.push({ type: 'ignored', job: job.id, reason: `no outputs awaited while ${run.state.status}` }); return }
        out.push(note(job, 'outputs', `outputs rejected: ${e.detail}`, provider))
        step({ type: 'outputs-mismatch', now, detail: e.detail })
        return
      case 'stream-failed':
        if (run.state.status !== 'awarded' && run.state.status !== 'running') return
        // a drop while re-opening after an earlier one is no news
        if (run.state.award?.reconnecting !== true || e.resumable !== true) {
          out.push(note(job, 'stream-failed', `exec stream ${e.resumable === true ? 'dropped' : 'failed'} (${e.fault === 'local' ? 'this node' : 'the provider'}): ${e.detail}`, provider))
        }
        step({ type: 'stream-failed', now, provider, fault: e.fault, detail: e.detail, ...(e.resumable !== undefined ? { resumable: e.resumable } : {}) })
        return
      case 'unreachable':
        // no answer within one lease counts as a no-show: the lifecycle's deadline handles it
        out.push(note(job, 'unreachable', `cannot reach ${short(provider)}: ${e.detail}`, provider))
        step({ type: 'tick', now })
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

  /**
   * Feed one lifecycle event to one of the job's runs and carry out what it asks (some effects the
   * agent answers itself). A replica's run never ends the job: advanceReplication does.
   */
  step (job: AgentJob, run: Run, event: RequesterEvent, out: RequesterAgentEffect[]): void {
    const before = run.state
    const { state, effects } = reduceRequester(before, event)
    run.state = state
    const own = run === job
    const who = own ? undefined : state.award?.provider ?? before.award?.provider
    if (state.status !== before.status) {
      const text = state.reason !== undefined && isRequesterFinal(state.status) ? `${state.status}: ${state.reason}` : state.status
      out.push(note(job, state.status, own ? text : `replica: ${text}`, who))
    }
    this.carry(job, run, effects, out, before)
    if (own && isRequesterFinal(state.status) && !isRequesterFinal(before.status)) {
      out.push({ type: 'finished', job: job.id, status: state.status, ...(state.reason !== undefined ? { reason: state.reason } : {}) })
    }
    if (!own) summarise(job)
  }

  private carry (job: AgentJob, run: Run, effects: RequesterEffect[], out: RequesterAgentEffect[], before?: RequesterJob): void {
    const ended = before?.award
    let failure: string | undefined
    let cancelled = false
    for (const effect of effects) {
      switch (effect.type) {
        case 'publish-job':
          out.push({ type: 'publish-job', job: job.id })
          break
        case 're-auction': {
          const own = run === job
          if (own && effect.reason !== 'held-back') {
            job.bids.clear()
            job.bidViews = []
          } else if (own) {
            // the held-back bids stay: the re-opened round falls back on them if it hears no better
          } else {
            // rounds are numbered across the job's replicas; a replica's round excludes the others' providers
            run.state = { ...run.state, auction: { ...run.state.auction, round: nextRound(job) } }
          }
          const excluded = own ? [...effect.exclude] : exclusionsOf(job, run, effect.exclude)
          out.push(note(job, 're-auction', `round ${run.state.auction.round} (${own ? '' : 'one replica, '}${effect.reason}${excluded.length > 0 ? `, excluding ${excluded.length}` : ''})`))
          out.push({ type: 'publish-round', job: job.id, round: run.state.auction.round, attempt: effect.attempt, excluded, reason: effect.reason })
          break
        }
        case 'close-auction': {
          const v = verificationOf(job)
          if (run !== job) closeReplicas(this, job, run, effect.round, effect.exclude, 1, out)
          else if (v.mode === 'replicate') closeReplicas(this, job, run, effect.round, effect.exclude, v.k, out)
          else this.close(job, effect.round, effect.exclude, out)
          break
        }
        case 'explain':
          out.push(note(job, 'no-bids', effect.bids === 0 ? 'no bids in the window' : `none of ${effect.bids} bid(s) acceptable`))
          out.push({ type: 'explain', job: job.id, round: effect.round, bids: effect.bids })
          break
        case 'send-award': {
          const d = run.decision
          if (d === undefined || d.fields.bid.toString() !== effect.bid) { out.push({ type: 'ignored', job: job.id, reason: 'no award decision for this bid' }); break }
          const decided = { ...d, attempt: effect.attempt, fields: { ...d.fields, attempt: effect.attempt, leaseMs: effect.leaseMs, billingIntervalSec: effect.billingIntervalSec } }
          run.decision = decided
          out.push(note(job, 'award', `awarded to ${short(effect.provider)} at ${credits(effect.price)}/GPU-h: ${d.why}`, effect.provider))
          out.push(decided)
          break
        }
        case 'fetch-outputs':
          out.push({ type: 'fetch-outputs', job: job.id, attempt: run.state.attempt, provider: effect.provider })
          break
        case 'reconnect':
          out.push({ type: 'reconnect', job: job.id, attempt: run.state.award?.attempt ?? run.state.attempt, provider: effect.provider })
          break
        case 'verify':
          // a replica waits for the others (advanceReplication); a single run is accepted on its verified
          // outputs, unless the spotcheck draws it for a check on another provider
          if (run !== job) out.push(note(job, 'verifying', 'verified outputs: waiting for the other replicas', effect.provider))
          else if (spotcheckDrawn(this, job)) job.spotcheckDue = true
          else this.step(job, run, { type: 'verification-done', now: run.state.now, ok: true }, out)
          break
        case 'cancel':
          cancelled = true
          out.push({ type: 'send-cancel', job: job.id, attempt: ended?.attempt ?? run.state.attempt, provider: effect.provider, reason: effect.reason })
          break
        case 'pay': {
          const key = awardKey(effect.attempt, effect.payee)
          job.committed.set(key, Math.max(job.committed.get(key) ?? 0, effect.cumulative))
          if (effect.final) job.ended.add(key)
          if (effect.final) out.push(note(job, 'paid', `paid ${credits(effect.cumulative)} in all to ${short(effect.payee)} (${effect.gpuSeconds} GPU-s)`, effect.payee))
          out.push({
            type: 'pay', job: job.id, attempt: effect.attempt, payee: effect.payee, interval: effect.interval, cumulative: effect.cumulative,
            gpuSeconds: effect.gpuSeconds, final: effect.final, ...(effect.ending !== undefined ? { ending: effect.ending } : {})
          })
          break
        }
        case 'record-failure': {
          const counted = run.state.failures > (before?.failures ?? 0)
          failure = effect.subject
          this.reputation.record(effect.subject, false, run.state.now)
          // a decline is an honest answer (a BUSY over-commit, a refused requester): no standing failure
          if (effect.reason !== 'declined') this.standingRecords.record(effect.subject, false, run.state.now)
          out.push(note(job, 'failure', `${effect.reason}${effect.detail !== undefined ? `: ${effect.detail}` : ''}`, effect.subject))
          out.push({
            type: 'record-failure', job: job.id, attempt: ended?.attempt ?? run.state.attempt, subject: effect.subject, reason: effect.reason,
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
    const key = ended === undefined ? undefined : awardKey(ended.attempt, ended.provider)
    if (ended !== undefined && key !== undefined && !job.ended.has(key) && (run.state.award?.attempt !== ended.attempt || isRequesterFinal(run.state.status))) {
      job.ended.add(key)
      const ending = failure === ended.provider ? 'failed' : cancelled ? 'cancelled' : 'preempted'
      out.push({ type: 'end-award', job: job.id, attempt: ended.attempt, payee: ended.provider, ending, cumulative: job.committed.get(key) ?? 0 })
    }
  }

  /** The round closed: decide the award over the held bids, and tell the lifecycle. */
  private close (job: AgentJob, round: number, exclude: string[], out: RequesterAgentEffect[]): void {
    const now = job.state.now
    const held = job.state.auction.bids.map((b) => job.bids.get(b.bid)).filter((b): b is AuctionBid => b !== undefined)
    const standing = this.byStanding(job, held, now, exclude, !job.state.auction.reopened && now < job.state.config.expiresAt)
    if (standing.heldBack.length > 0) out.push(note(job, 'held-back', heldBackText(standing)))
    if (standing.reopenExcluding.length > 0) {
      for (const view of job.bidViews) if (standing.heldBack.some((h) => h.bid.cid.toString() === view.cid)) view.rejected = HELD_BACK
      this.step(job, job, { type: 'bidding-closed', now, round, holdBack: standing.reopenExcluding }, out)
      return
    }
    // the screened-out bids go in too, so the decision names why each was dropped
    const bids = [...standing.bids, ...standing.screenedOut]
    let decision
    try {
      decision = decideAward({
        job: { cid: job.cid, payload: job.request },
        bids,
        reliability: (peer) => this.reputation.reliability(peer, now),
        rtt: (peer) => this.rtt.rttMs(peer, now),
        excluded: exclude,
        convicted: this.convicted,
        attempt: job.state.attempt + 1,
        now,
        leaseMs: job.state.config.leaseMs,
        billingIntervalSec: job.state.config.billingIntervalMs / 1000,
        params: this.params.scoring
      })
    } catch (err) {
      out.push({ type: 'ignored', job: job.id, reason: `award decision failed: ${(err as Error).message}` })
      this.step(job, job, { type: 'bidding-closed', now, round }, out)
      return
    }
    for (const view of job.bidViews) {
      const ranked = decision.kind === 'award' ? decision.ranking.find((r) => r.cid === view.cid) : undefined
      if (ranked !== undefined) view.effectivePrice = Math.round(ranked.effectivePrice)
      const rejected = decision.rejected.find((r) => r.cid === view.cid)
      if (rejected !== undefined) view.rejected = rejected.reason
      else if (ranked === undefined && standing.heldBack.some((h) => h.bid.cid.toString() === view.cid)) view.rejected = HELD_BACK
      const rtt = this.rtt.lookup(view.provider, now)
      if (rtt !== undefined) { view.rttMs = Math.round(rtt.ms); view.rttSource = rtt.source }
    }
    if (decision.kind === 'none') {
      this.step(job, job, { type: 'bidding-closed', now, round }, out)
      return
    }
    const { award, ranking } = decision
    const winner = ranking[0]
    const runnerUp = ranking[1]
    const why = winner === undefined
      ? 'the only acceptable bid'
      : `lowest effective price ${credits(Math.round(winner.effectivePrice))}` + (runnerUp !== undefined ? ` vs ${credits(Math.round(runnerUp.effectivePrice))} next of ${ranking.length}` : ' (the only bid)')
    job.decision = { type: 'send-award', job: job.id, attempt: award.attempt, provider: award.winner, price: award.price, fields: award, ranking, why }
    const newcomer = this.newcomer(award.winner)
    this.step(job, job, { type: 'bidding-closed', now, round, winner: { bid: award.bid.toString(), provider: award.winner, price: award.price, ...(newcomer ? { newcomer } : {}) } }, out)
  }
}
