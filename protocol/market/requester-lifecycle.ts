/**
 * The requester's side of one job (DESIGN §5–§6) as a pure reducer:
 * `reduceRequester(state, event) → { state, effects }`.
 *
 * ```
 *                 ┌──── no bids: explain, re-open once ───┐
 *                 ▼                                       │
 *  start ──▶ bidding ──close + winner──▶ awarded ──accept──▶ running ──receipt ok──▶ verifying ──outputs ok──▶ completed ──verified──▶ verified ──paid──▶ settled
 *             │  ▲                          │                  │                        │                        │
 *             │  └──── re-auction ──────────┴──────────────────┴────────────────────────┴────────────────────────┘
 *             │        (decline, no-show, lost lease, crash, bad output, timeout: a failed attempt,
 *             │         the provider excluded; preemption: a new attempt, nobody blamed)
 *             ├─▶ expired  (job.expiresAt passed before an award, or no bids after the re-opened round)
 *             └─▶ cancelled (from bidding, awarded or running)      failed: MAX_FAILED_ATTEMPTS failed awards
 * ```
 *
 * Rules:
 * - The bid window closes at `opened + bidWindowMs` (a `wake`). With bids, a `close-auction` effect
 *   asks the award logic for a decision, which comes back as `bidding-closed` (a decision is taken
 *   only then, and only for the round asked about). Without bids, or with no acceptable one, an
 *   `explain` effect asks for the no-bids explanation and the round is re-opened once per attempt
 *   (`re-auction`, reason `no-bids`); a second empty round (the first, with `reopenOnNoBids: false`)
 *   expires the job.
 * - Job expiry (`job.expiresAt`) ends a job that has no award yet; once a provider works on it, the
 *   award stands, but a job needing a re-auction after its expiry expires instead (its request can
 *   no longer be gossiped).
 * - The award must be answered within one lease (else `no-show`); after acceptance a heartbeat
 *   (`job-status`) must come at least once per lease (else `no-heartbeat`). A failed attempt records
 *   a failure against the provider, excludes it and re-auctions, until MAX_FAILED_ATTEMPTS failures
 *   (→ failed); a newcomer's failure before it answered the award is recorded and excluded but not
 *   counted (AwardChoice.newcomer). A preemption re-auctions without blaming the provider and without counting as a
 *   failure, but it uses an award attempt number; AWARD_ATTEMPT_LIMIT (the schema's 16) caps those.
 * - Billing starts when the provider reports the job running (its first `running`, `uploading` or
 *   `completed` status). At each interval boundary the requester commits, in arrears, the cumulative
 *   `chargeFor(price, gpus, k intervals)`, never beyond the job's max runtime, and never for a
 *   boundary after the lease ran out. It pays at once: the provider stops unless interval k's payment
 *   reaches it within the payment grace (paymentGraceMs) after k ends by its own clock. On a verified receipt it pays the receipt's GPU-seconds, capped
 *   by the time it saw the job run (whole seconds) and the max runtime; on cancel or preemption it
 *   pays the time run so far. Payments are cumulative, so they never go down.
 * - The exec stream failing before the receipt ends the attempt at once (`stream-failed`): a remote
 *   fault (the provider broke the framing, overran its log credit, reset or dropped the stream) fails
 *   the attempt against it like a lost lease; a local one (this node's own limit or disk) ends the
 *   job as failed with the reason, blames nobody, and pays for the time run so far.
 * - A valid receipt moves to `verifying` and asks node/ to fetch and check the outputs
 *   (`fetch-outputs`). The lease no longer runs there: the provider's part is done, and however long
 *   the fetch takes (a large output, a slow link) is not a missing heartbeat. node/ answers with
 *   `outputs-verified` (→ `completed`, then the `verify` step) or `outputs-mismatch` (a failed
 *   attempt against the provider, `output-mismatch`) or `outputs-unsaved` (right outputs this node
 *   could not store: the job fails here, the receipt is paid, nobody is blamed). Billing is fixed by
 *   the receipt's arrival, so the fetch costs the requester nothing either.
 * - A valid receipt whose manifest lacks a declared output is the job's own failure
 *   (`missing-output: <paths>`, given with `outputs-verified`): the receipt is paid like a completed
 *   one, nobody is blamed, nothing is re-auctioned.
 * - Cancel works in bidding, awarded and running (a `cancel` to the provider, and the time run so
 *   far paid); once the receipt is in, the job is settled instead.
 */
import { MAX_BILLING_INTERVAL_SEC, MAX_EXCLUDED_PEERS, MAX_JOB_GPUS, MAX_LEASE_MS, MAX_RUNTIME_SEC, MIN_BILLING_INTERVAL_SEC, MIN_LEASE_MS } from '../limits.js'
import type { FailureReason } from '../messages/evidence.js'
import type { JobRequest } from '../messages/job-request.js'
import { jobStates, type JobState } from '../messages/award.js'
import {
  AWARD_ATTEMPT_LIMIT, DEFAULT_BILLING_INTERVAL_SEC, DEFAULT_LEASE_MS, MAX_FAILED_ATTEMPTS,
  advanceDeadlines, assertIntIn, reduceMachine, billedGpus, ceilSeconds, chargeFor, earliest, finalStatuses, ignore, intervalsCharge,
  isCount, isId, isTime, scheduleWake,
  type Deadline, type EvidenceRef, type IgnoredEffect, type RecordFailureEffect, type Transition, type TransitionTable, type WakeEffect
} from './lifecycle-shared.js'
import { admitBid, storeBid, type BidRefusal, type HeldBid } from './bid-store.js'

export type RequesterStatus =
  | 'bidding' | 'awarded' | 'running' | 'verifying' | 'completed' | 'verified' | 'settled'
  | 'failed' | 'cancelled' | 'expired'

/** Where the requester's job may go from each status (staying put is always allowed). */
export const REQUESTER_TRANSITIONS: TransitionTable<RequesterStatus> = Object.freeze({
  bidding: ['awarded', 'expired', 'cancelled'],
  awarded: ['running', 'bidding', 'failed', 'expired', 'cancelled'],
  running: ['verifying', 'bidding', 'failed', 'expired', 'cancelled'],
  verifying: ['completed', 'bidding', 'failed', 'expired'],
  completed: ['verified', 'bidding', 'failed', 'expired'],
  verified: ['settled'],
  settled: [],
  failed: [],
  cancelled: [],
  expired: []
})

const FINAL: ReadonlySet<RequesterStatus> = new Set(finalStatuses(REQUESTER_TRANSITIONS))


// ---------------------------------------------------------------------------------------------
// Configuration
// ---------------------------------------------------------------------------------------------

export interface RequesterJobInit {
  /** Job id (the job request's payload CID, as a string). */
  job: string
  /** `job.auction.bidWindowMs`. */
  bidWindowMs: number
  /** `job.expiresAt`: no award after this. */
  expiresAt: number
  /** `job.resources.gpus` (billed as at least one, see billedGpus). */
  gpus: number
  /** `job.workload.maxRuntimeSec`: nothing is paid beyond it. */
  maxRuntimeSec: number
  leaseMs?: number
  billingIntervalSec?: number
  maxFailedAttempts?: number
  /** Re-open an auction once when it closes without an acceptable bid (default true). */
  reopenOnNoBids?: boolean
}

/** Plain data (survives structuredClone), validated. */
export interface RequesterConfig {
  bidWindowMs: number
  expiresAt: number
  gpus: number
  maxRuntimeMs: number
  leaseMs: number
  billingIntervalMs: number
  maxFailedAttempts: number
  reopenOnNoBids: boolean
}

/** The init fields a job request determines; the caller adds options (lease, interval, …). */
export function requesterInitFromJob (jobId: string, job: JobRequest, options: Partial<RequesterJobInit> = {}): RequesterJobInit {
  return {
    job: jobId,
    bidWindowMs: job.auction.bidWindowMs,
    expiresAt: job.expiresAt,
    gpus: job.resources.gpus,
    maxRuntimeSec: job.workload.maxRuntimeSec,
    ...options
  }
}

/** Defaults applied and checked; throws InvalidLifecycleConfigError on values no job can have. */
export function createRequesterConfig (init: RequesterJobInit): RequesterConfig {
  const leaseMs = init.leaseMs ?? DEFAULT_LEASE_MS
  const billingIntervalSec = init.billingIntervalSec ?? DEFAULT_BILLING_INTERVAL_SEC
  const maxFailedAttempts = init.maxFailedAttempts ?? MAX_FAILED_ATTEMPTS
  assertIntIn(init.bidWindowMs, 50, 600_000, 'bidWindowMs')
  assertIntIn(init.expiresAt, 0, Number.MAX_SAFE_INTEGER, 'expiresAt')
  assertIntIn(init.gpus, 0, MAX_JOB_GPUS, 'gpus')
  assertIntIn(init.maxRuntimeSec, 1, MAX_RUNTIME_SEC, 'maxRuntimeSec')
  assertIntIn(leaseMs, MIN_LEASE_MS, MAX_LEASE_MS, 'leaseMs')
  assertIntIn(billingIntervalSec, MIN_BILLING_INTERVAL_SEC, MAX_BILLING_INTERVAL_SEC, 'billingIntervalSec')
  assertIntIn(maxFailedAttempts, 1, AWARD_ATTEMPT_LIMIT, 'maxFailedAttempts')
  return {
    bidWindowMs: init.bidWindowMs,
    expiresAt: init.expiresAt,
    gpus: billedGpus(init.gpus),
    maxRuntimeMs: init.maxRuntimeSec * 1000,
    leaseMs,
    billingIntervalMs: billingIntervalSec * 1000,
    maxFailedAttempts,
    reopenOnNoBids: init.reopenOnNoBids ?? true
  }
}

// ---------------------------------------------------------------------------------------------
// State, events, effects
// ---------------------------------------------------------------------------------------------

/** A bid as the lifecycle tracks it: its CID and its signer. */
/** A bid of the round, as the bid store holds it (bid-store.ts). */
export type BidRef = HeldBid

/**
 * The award logic's choice, passed in with `bidding-closed`. `newcomer`: the winner has never delivered to
 * this requester (no verified receipt seen; failures do not make it known): a failure before it ever answered the award (no-show, decline,
 * a dropped stream) excludes it and costs it reputation, but does not use up the job's attempts, so
 * throw-away identities cannot exhaust a job (issue 9, bug 10); the job then ends on its own
 * deadline (expiry) or the award attempt limit.
 */
export interface AwardChoice { bid: string, provider: string, price: number, newcomer?: boolean }

export interface Auction {
  /** Rounds opened for this job so far (first auction, re-opened rounds and re-auctions). */
  round: number
  closesAt: number
  /** `close-auction` was sent; waiting for `bidding-closed`. */
  closing: boolean
  /** This attempt's auction was already re-opened for lack of bids. */
  reopened: boolean
  bids: BidRef[]
}

/** The current award and what happened under it. */
export interface Engagement extends AwardChoice {
  attempt: number
  awardedAt: number
  acceptedAt?: number
  lastHeartbeatAt?: number
  lastSeq?: number
  lastState?: JobState
  /** Billing anchor: when the provider first reported the job running. */
  runStartedAt?: number
  /** Whole intervals committed so far. */
  paidIntervals: number
  /** Cumulative micros committed to this provider. */
  committed: number
  receipt?: { at: number, exitCode: number, gpuSeconds: number }
  /** The final payment, fixed when the receipt is verified. */
  due?: PayEffect
  /**
   * Set when the job was read back after this node restarted with the award in flight: the provider
   * has until then (one lease from the restart) to be heard again on a re-opened exec stream
   * (protocol/README.md §7.7 "Resuming"); its first status clears it. Not heard by then: the award is
   * called off and the job re-auctioned, blaming nobody (the requester was the one away).
   */
  resumeBy?: number
  /** The exec stream dropped (a reset, a vanished connection) and is being re-opened; cleared by the next status. */
  reconnecting?: boolean
}

export interface RequesterJob {
  status: RequesterStatus
  job: string
  config: RequesterConfig
  /** Latest time seen. */
  now: number
  /** Earliest wake requested and still ahead. */
  wakeAt?: number
  /** Attempt number of the latest award (0 before the first). */
  attempt: number
  /** Failed awards so far. */
  failures: number
  /** Providers excluded after failing this job. */
  excluded: string[]
  auction: Auction
  award?: Engagement
  /** Why the job ended, in a final status. */
  reason?: string
}

export type RequesterEvent =
  /** A bid that passed screening on arrival (`assessBid`), with its price and effective price. */
  | { type: 'bid-received', now: number, bid: string, provider: string, price: number, effectivePrice: number }
  /**
   * The award logic's answer to `close-auction` (for that `round`, when given); no winner = none acceptable.
   * `holdBack` (with no winner): every bid's provider is held back by the requester's standing rule
   * (standing.ts): re-open the round once, excluding them, without an explanation.
   */
  | { type: 'bidding-closed', now: number, round?: number, winner?: AwardChoice, holdBack?: string[] }
  | { type: 'award-accepted', now: number, provider: string }
  | { type: 'award-declined', now: number, provider: string, reason?: string }
  | { type: 'heartbeat', now: number, provider: string, seq: number, state: JobState, gpuSeconds: number }
  | { type: 'tick', now: number }
  /** `outputsValid`: the receipt itself checks out (names this requester); its outputs are fetched after (`fetch-outputs`). */
  | { type: 'receipt-received', now: number, provider: string, exitCode: number, gpuSeconds: number, outputsValid: boolean }
  /** The receipt's outputs were fetched and every CID recomputed. `missingOutputs`: declared outputs its manifest does not list — the job's own failure. */
  | { type: 'outputs-verified', now: number, missingOutputs?: string[] }
  /** The outputs could not be fetched, or do not match the receipt (`detail` says how). */
  | { type: 'outputs-mismatch', now: number, detail: string }
  /** The outputs were fetched and checked but this node could not store them (its own disk; `detail` says how). */
  | { type: 'outputs-unsaved', now: number, detail: string }
  /**
   * The exec stream of the current award failed before the receipt. `remote`: the provider's doing
   * (it broke the framing, overran its log credit, reset or dropped the stream); `local`: this node's
   * own limit or doing (never the provider's fault). `detail` says what happened. `resumable`: the
   * stream merely dropped (a reset, a vanished connection, a close), with no frame broken: while the
   * job runs the requester re-opens it (`reconnect`) and the lease decides, as for a missed heartbeat.
   */
  | { type: 'stream-failed', now: number, provider: string, fault: 'local' | 'remote', detail: string, resumable?: boolean }
  | { type: 'verification-done', now: number, ok: boolean }
  | { type: 'payment-sent', now: number, cumulative: number }
  | { type: 'cancel', now: number }
  | { type: 'preempted-notice', now: number, provider: string, noticeMs: number }

/** Sign and send a cumulative `payment` to the payee. */
export interface PayEffect {
  type: 'pay'
  payee: string
  attempt: number
  cumulative: number
  /** Billing intervals covered (a started interval counts in a final payment). */
  interval: number
  gpuSeconds: number
  /** The last payment under this award (completion, cancel, preemption). */
  final: boolean
  /**
   * On a final payment: how the award ended, in the provider's words (its ledger state), so both
   * ledgers record the same ending: `settled` (completed), `cancelled` (this side sent a cancel),
   * `preempted`.
   */
  ending?: AwardEnding
}

/** How an award ended, as both sides' ledgers record it. */
export type AwardEnding = 'settled' | 'cancelled' | 'preempted'

export type RequesterEffect =
  | { type: 'publish-job' }
  | { type: 're-auction', attempt: number, exclude: string[], reason: ReauctionReason | 'no-bids' | 'held-back' }
  | { type: 'close-auction', round: number, bids: BidRef[], exclude: string[] }
  | { type: 'explain', round: number, bids: number }
  | {
    type: 'send-award'
    attempt: number
    bid: string
    provider: string
    price: number
    considered: string[]
    excluded: string[]
    leaseMs: number
    billingIntervalSec: number
  }
  /** Fetch the receipt's outputs from the provider and check them; answer `outputs-verified` or `outputs-mismatch`. */
  | { type: 'fetch-outputs', provider: string }
  /** Re-open the award's exec stream to the provider (the award again, §7.7 "Resuming"); repeated while it drops. */
  | { type: 'reconnect', provider: string }
  | { type: 'verify', provider: string }
  | { type: 'cancel', provider: string, reason: string }
  | PayEffect
  | RecordFailureEffect
  | WakeEffect
  | IgnoredEffect

export type RequesterTransition = Transition<RequesterJob, RequesterEffect>

/** Why a job is auctioned again: an attempt's failure, a preemption, or this node's restart before the award was in hand. */
export type ReauctionReason = FailureReason | 'restarted'

// ---------------------------------------------------------------------------------------------
// Entry points
// ---------------------------------------------------------------------------------------------

/** A new job in `bidding`: publish it and wake at the close of the bid window. */
export function startRequesterJob (init: RequesterJobInit, now: number): RequesterTransition {
  const config = createRequesterConfig(init)
  if (!isTime(now)) throw new RangeError('now must be a finite number')
  const state: RequesterJob = {
    status: 'bidding',
    job: init.job,
    config,
    now,
    attempt: 0,
    failures: 0,
    excluded: [],
    auction: openAuction(1, now, config, false)
  }
  return finish(state, [{ type: 'publish-job' }], now)
}

/** True in a status the job never leaves. */
export function isRequesterFinal (status: RequesterStatus): boolean {
  return FINAL.has(status)
}

/**
 * A job read back after this node restarted, in the state it was saved in: how it goes on, or
 * undefined when it cannot (its status is final, or a step that lasts no time — `completed`,
 * `verified` — was cut). An award in flight (`awarded`, `running`) is resumed: the stream is
 * re-opened (`reconnect`) and the provider has one lease from now to be heard (`resumeBy`). A
 * receipt being checked (`verifying`) has its outputs fetched again. An open round (`bidding`) lost
 * its bids with the restart: a new round opens. Deadlines that passed while the node was down are
 * then handled as usual (a billing boundary is paid at once).
 */
export function resumeRequesterJob (s: RequesterJob, now: number): RequesterTransition | undefined {
  if (!isTime(now)) return undefined
  const at = Math.max(s.now, now)
  const a = s.award
  switch (s.status) {
    case 'awarded':
    case 'running':
      if (a === undefined) return undefined
      return finish({ ...s, now: at, award: { ...a, resumeBy: at + s.config.leaseMs, reconnecting: true } }, [{ type: 'reconnect', provider: a.provider }], at)
    case 'verifying':
      if (a === undefined) return undefined
      return finish({ ...s, now: at }, [{ type: 'fetch-outputs', provider: a.provider }], at)
    case 'bidding': {
      if (at >= s.config.expiresAt) return undefined
      const { state, effects } = reauction({ ...s, now: at }, at, 'restarted')
      return finish(state, effects, at)
    }
    default:
      return undefined
  }
}

/**
 * Apply one event: first every deadline due by `event.now`, oldest first, then the event. Never
 * throws; an event that does not apply returns the state unchanged with an `ignored` effect.
 */
export function reduceRequester (state: RequesterJob, event: RequesterEvent): RequesterTransition {
  return reduceMachine({ final: FINAL, nextDeadline: nextRequesterDeadline, onDeadline, handle }, state, event) as RequesterTransition
}

/** Handle deadlines the event made due at once, then ask for a wake at the next one. */
function finish (state: RequesterJob, effects: RequesterEffect[], now: number): RequesterTransition {
  const after = advance(state, now)
  const all = [...effects, ...after.effects]
  const next = nextRequesterDeadline(after.state)?.at
  return { state: scheduleWake(after.state, next, all), effects: all }
}

function handle (s: RequesterJob, e: RequesterEvent, now: number): RequesterTransition {
  // a tick's work is the deadlines, handled before; it may have ended the job, which is no news
  if (e.type === 'tick') return { state: s, effects: [] }
  if (FINAL.has(s.status)) return ignore(s, `job is ${s.status}`)
  switch (e.type) {
    case 'bid-received': return onBid(s, e)
    case 'bidding-closed': return onBiddingClosed(s, e.round, e.winner, now, e.holdBack)
    case 'award-accepted': return onAccepted(s, e.provider, now)
    case 'award-declined': return onDeclined(s, e.provider, e.reason, now)
    case 'heartbeat': return onHeartbeat(s, e, now)
    case 'receipt-received': return onReceipt(s, e, now)
    case 'outputs-verified': return onOutputsVerified(s, e.missingOutputs)
    case 'outputs-mismatch': return onOutputsMismatch(s, e.detail, now)
    case 'outputs-unsaved': return onOutputsUnsaved(s, e.detail)
    case 'verification-done': return onVerification(s, e.ok, now)
    case 'payment-sent': return onPaymentSent(s, e.cumulative)
    case 'cancel': return onCancel(s, now)
    case 'preempted-notice': return onPreemptedNotice(s, e.provider, now)
    case 'stream-failed': return onStreamFailed(s, e, now)
    default: return ignore(s, `unknown event ${String((e as { type?: unknown }).type)}`)
  }
}

// ---------------------------------------------------------------------------------------------
// Auction
// ---------------------------------------------------------------------------------------------

function openAuction (round: number, now: number, config: RequesterConfig, reopened: boolean): Auction {
  return { round, closesAt: now + config.bidWindowMs, closing: false, reopened, bids: [] }
}

const REFUSALS: Record<BidRefusal, string> = {
  DUPLICATE: 'duplicate bid',
  PEER_HAS_BETTER: 'the provider has a better bid this round',
  OUTRANKED: 'the round\'s bids are full and all rank before it'
}

/** A screened bid: into the round's bounded store (bid-store.ts), maybe in place of a worse one. */
function onBid (s: RequesterJob, e: HeldBid): RequesterTransition {
  if (s.status !== 'bidding') return ignore(s, `not taking bids while ${s.status}`)
  if (s.auction.closing) return ignore(s, 'bid window closed')
  if (!isId(e.bid) || !isId(e.provider) || !isCount(e.price) || !Number.isFinite(e.effectivePrice) || e.effectivePrice < 0) return ignore(s, 'malformed bid')
  if (s.excluded.includes(e.provider)) return ignore(s, 'provider excluded after a failed attempt')
  const arriving: HeldBid = { bid: e.bid, provider: e.provider, price: e.price, effectivePrice: e.effectivePrice }
  const admission = admitBid(s.auction.bids, arriving)
  if (admission.kind === 'refuse') return ignore(s, REFUSALS[admission.reason])
  return { state: { ...s, auction: { ...s.auction, bids: [...storeBid(s.auction.bids, arriving, admission)] } }, effects: [] }
}

/** The bid window closed: ask for a decision, or handle an empty round at once. */
function closeAuction (s: RequesterJob, now: number): RequesterTransition {
  if (s.auction.bids.length === 0) return noWinner(s, now)
  const auction = { ...s.auction, closing: true }
  return { state: { ...s, auction }, effects: [{ type: 'close-auction', round: auction.round, bids: auction.bids, exclude: s.excluded }] }
}

function onBiddingClosed (s: RequesterJob, round: number | undefined, winner: AwardChoice | undefined, now: number, holdBack?: readonly string[]): RequesterTransition {
  if (s.status !== 'bidding' || !s.auction.closing) return ignore(s, 'no award decision awaited')
  if (round !== undefined && round !== s.auction.round) return ignore(s, 'decision for another round')
  if (winner == null) return holdBack !== undefined && holdBack.length > 0 ? heldBack(s, now, holdBack) : noWinner(s, now)
  const known = s.auction.bids.some((b) => b.bid === winner.bid && b.provider === winner.provider)
  if (!known) return ignore(s, 'the winner is not among the bids received')
  if (!isCount(winner.price)) return ignore(s, 'the award price is not a whole number of micros')
  return awardTo(s, winner, now)
}

/** Send the award; wait one lease for the answer. */
function awardTo (s: RequesterJob, winner: AwardChoice, now: number): RequesterTransition {
  const attempt = s.attempt + 1
  const considered = [...new Set(s.auction.bids.map((b) => b.bid))].sort()
  const award: Engagement = { ...pickChoice(winner), attempt, awardedAt: now, paidIntervals: 0, committed: 0 }
  const effect: RequesterEffect = {
    type: 'send-award',
    attempt,
    bid: winner.bid,
    provider: winner.provider,
    price: winner.price,
    considered,
    excluded: s.excluded,
    leaseMs: s.config.leaseMs,
    billingIntervalSec: s.config.billingIntervalMs / 1000
  }
  return { state: { ...s, status: 'awarded', attempt, award, auction: { ...s.auction, closing: false } }, effects: [effect] }
}

/** The award choice's own fields (a caller's object may carry more). */
function pickChoice (w: AwardChoice): AwardChoice {
  return { bid: w.bid, provider: w.provider, price: w.price, ...(w.newcomer === true ? { newcomer: true } : {}) }
}

/**
 * Every bidder held back (standing.ts): re-open once per attempt, the new round's message excluding them
 * (after the job's own exclusions, up to the schema's MAX_EXCLUDED_PEERS) so honest providers' damping
 * does not count their bids. The job's `excluded` stays as it was (held back is no failure of this job),
 * and the held-back bids stay in the round: if it hears no better, the award falls back on them. When the
 * round was re-opened already, as no winner.
 */
function heldBack (s: RequesterJob, now: number, providers: readonly string[]): RequesterTransition {
  if (s.auction.reopened || now >= s.config.expiresAt) return noWinner(s, now)
  const exclude = [...new Set([...s.excluded, ...providers])].slice(0, MAX_EXCLUDED_PEERS)
  const effects: RequesterEffect[] = [{ type: 're-auction', attempt: s.attempt + 1, exclude, reason: 'held-back' }]
  return { state: { ...s, auction: { ...openAuction(s.auction.round + 1, now, s.config, true), bids: s.auction.bids } }, effects }
}

/** No acceptable bid: explain, then re-open once per attempt or expire. */
function noWinner (s: RequesterJob, now: number): RequesterTransition {
  const effects: RequesterEffect[] = [{ type: 'explain', round: s.auction.round, bids: s.auction.bids.length }]
  if (s.config.reopenOnNoBids && !s.auction.reopened && now < s.config.expiresAt) {
    effects.push({ type: 're-auction', attempt: s.attempt + 1, exclude: s.excluded, reason: 'no-bids' })
    return { state: { ...s, auction: openAuction(s.auction.round + 1, now, s.config, true) }, effects }
  }
  return { state: end(s, 'expired', 'no acceptable bids'), effects }
}

// ---------------------------------------------------------------------------------------------
// Award, lease and failures
// ---------------------------------------------------------------------------------------------

/** The current award when `provider` holds it in one of `statuses`, else why not. */
function current (s: RequesterJob, provider: string, statuses: readonly RequesterStatus[]): Engagement | string {
  if (!statuses.includes(s.status) || s.award === undefined) return `nothing awaited from a provider while ${s.status}`
  if (provider !== s.award.provider) return 'not from the provider holding the award'
  return s.award
}

function onAccepted (s: RequesterJob, provider: string, now: number): RequesterTransition {
  const a = current(s, provider, ['awarded'])
  if (typeof a === 'string') return ignore(s, a)
  return { state: { ...s, status: 'running', award: { ...a, acceptedAt: now, lastHeartbeatAt: now } }, effects: [] }
}

function onDeclined (s: RequesterJob, provider: string, reason: string | undefined, now: number): RequesterTransition {
  const a = current(s, provider, ['awarded'])
  if (typeof a === 'string') return ignore(s, a)
  return failAttempt(s, now, 'declined', ['award', 'award-response'], reason)
}

type HeartbeatEvent = Extract<RequesterEvent, { type: 'heartbeat' }>

function onHeartbeat (s: RequesterJob, e: HeartbeatEvent, now: number): RequesterTransition {
  // after a restart the award's answer may have been missed: a status on the resumed stream says it was accepted
  const a = current(s, e.provider, s.award?.resumeBy !== undefined ? ['awarded', 'running'] : ['running'])
  if (typeof a === 'string') return ignore(s, a)
  if (!isCount(e.seq) || (a.lastSeq !== undefined && e.seq <= a.lastSeq)) return ignore(s, 'stale or malformed status seq')
  if (!(jobStates as readonly string[]).includes(e.state)) return ignore(s, 'unknown job state')
  const running = e.state === 'running' || e.state === 'uploading' || e.state === 'completed'
  const { resumeBy: _heard, reconnecting: _back, ...kept } = a
  const award: Engagement = {
    ...kept,
    acceptedAt: a.acceptedAt ?? now,
    lastHeartbeatAt: now,
    lastSeq: e.seq,
    lastState: e.state,
    runStartedAt: a.runStartedAt ?? (running ? now : undefined)
  }
  const next: RequesterJob = { ...s, status: 'running', award }
  if (e.state === 'failed') return failAttempt(next, now, 'crashed', ['award', 'last-status'], 'the provider reported the job failed')
  if (e.state === 'cancelled') return failAttempt(next, now, 'cancelled', ['award', 'last-status'], 'the provider cancelled the job')
  if (e.state === 'preempted') return preempted(next, now)
  return { state: next, effects: [] }
}

type StreamFailedEvent = Extract<RequesterEvent, { type: 'stream-failed' }>

/**
 * The exec stream failed before the receipt: no heartbeat can come on it, so the attempt ends now
 * instead of at the lease. A remote fault fails the attempt against the provider (and re-auctions);
 * a local one ends the job with the reason, blaming nobody, and pays for the time run so far.
 */
function onStreamFailed (s: RequesterJob, e: StreamFailedEvent, now: number): RequesterTransition {
  const a = current(s, e.provider, ['awarded', 'running'])
  if (typeof a === 'string') return ignore(s, a)
  const detail = typeof e.detail === 'string' ? e.detail.slice(0, 400) : 'the exec stream failed'
  // a dropped stream of a job the provider took on is re-opened; the lease (or the restart's window) decides
  const taken = s.status === 'running' || a.resumeBy !== undefined
  if (e.fault === 'remote' && e.resumable === true && taken) {
    return { state: { ...s, award: { ...a, reconnecting: true } }, effects: [{ type: 'reconnect', provider: a.provider }] }
  }
  if (e.fault === 'remote') return failAttempt(s, now, 'no-heartbeat', ['award', 'last-status'], `exec stream: ${detail}`)
  const effects: RequesterEffect[] = [{ type: 'cancel', provider: a.provider, reason: `the requester's exec stream failed: ${detail}`.slice(0, 200) }]
  const pay = payForWorkDone(a, s.config, now, 'cancelled')
  if (pay !== undefined) effects.push(pay)
  return { state: end(s, 'failed', `exec stream (this node): ${detail}`), effects }
}

function onPreemptedNotice (s: RequesterJob, provider: string, now: number): RequesterTransition {
  const a = current(s, provider, ['running'])
  if (typeof a === 'string') return ignore(s, a)
  return preempted(s, now)
}

/** A gold/silver job displaced ours: pay for the time run, re-auction, blame nobody. */
function preempted (s: RequesterJob, now: number): RequesterTransition {
  const pay = s.award === undefined ? undefined : payForWorkDone(s.award, s.config, now, 'preempted')
  const next = reauction(s, now, 'preempted')
  return { state: next.state, effects: [...(pay === undefined ? [] : [pay]), ...next.effects] }
}

/** A failed attempt: record it against the provider, exclude it, re-auction (or give up). */
function failAttempt (s: RequesterJob, now: number, reason: FailureReason, evidence: EvidenceRef[], detail?: string): RequesterTransition {
  const a = s.award
  if (a === undefined) return ignore(s, 'no award to fail')
  const refs = evidence.filter((r) => r !== 'last-status' || a.lastSeq !== undefined)
  const failure: RecordFailureEffect = { type: 'record-failure', subject: a.provider, reason, evidence: refs }
  if (detail !== undefined) failure.detail = detail
  const excluded = s.excluded.includes(a.provider) || s.excluded.length >= MAX_EXCLUDED_PEERS ? s.excluded : [...s.excluded, a.provider]
  // a stranger that never answered the award does not use up the job's attempts (AwardChoice.newcomer)
  const counted = !(a.newcomer === true && s.status === 'awarded')
  const next = reauction({ ...s, failures: s.failures + (counted ? 1 : 0), excluded }, now, reason)
  return { state: next.state, effects: [failure, ...next.effects] }
}

/**
 * The provider was not heard within one lease of this node's restart: the award is called off (a
 * `cancel`, in case it still listens) and the job re-auctioned. Nobody is blamed and the provider is
 * not excluded: it may have ended the job because this node was away.
 */
function abandonAfterRestart (s: RequesterJob, now: number): RequesterTransition {
  const a = s.award as Engagement
  const next = reauction(s, now, 'restarted')
  return { state: next.state, effects: [{ type: 'cancel', provider: a.provider, reason: 'the requester restarted and could not resume the award' }, ...next.effects] }
}

/** Open a new auction for the next attempt, unless the job has run out of attempts or time. */
function reauction (s: RequesterJob, now: number, reason: ReauctionReason): RequesterTransition {
  const base = { ...s, award: undefined }
  if (s.failures >= s.config.maxFailedAttempts) return { state: end(base, 'failed', `${s.failures} failed attempts`), effects: [] }
  if (s.attempt >= AWARD_ATTEMPT_LIMIT) return { state: end(base, 'failed', `award attempt limit (${AWARD_ATTEMPT_LIMIT}) reached`), effects: [] }
  if (now >= s.config.expiresAt) return { state: end(base, 'expired', 'job expired before it could be re-auctioned'), effects: [] }
  const state: RequesterJob = { ...base, status: 'bidding', auction: openAuction(s.auction.round + 1, now, s.config, false) }
  return { state, effects: [{ type: 're-auction', attempt: s.attempt + 1, exclude: s.excluded, reason }] }
}

// ---------------------------------------------------------------------------------------------
// Receipt, verification, settlement
// ---------------------------------------------------------------------------------------------

type ReceiptEvent = Extract<RequesterEvent, { type: 'receipt-received' }>

function onReceipt (s: RequesterJob, e: ReceiptEvent, now: number): RequesterTransition {
  const a = current(s, e.provider, ['running'])
  if (typeof a === 'string') return ignore(s, a)
  if (e.exitCode === -1) return failAttempt(s, now, 'crashed', ['award', 'receipt'], 'the executor could not start the job')
  if (e.outputsValid !== true) return failAttempt(s, now, 'output-mismatch', ['award', 'receipt'], 'the outputs do not match the receipt')
  const award: Engagement = {
    ...a,
    runStartedAt: a.runStartedAt ?? a.acceptedAt ?? now,
    receipt: { at: now, exitCode: e.exitCode, gpuSeconds: isCount(e.gpuSeconds) ? e.gpuSeconds : 0 }
  }
  // no deadline runs in `verifying`: the fetch's own limits (node/) end it with a mismatch
  return { state: { ...s, status: 'verifying', award }, effects: [{ type: 'fetch-outputs', provider: a.provider }] }
}

function onOutputsVerified (s: RequesterJob, missingOutputs: unknown): RequesterTransition {
  const award = s.award
  if (s.status !== 'verifying' || award?.receipt === undefined) return ignore(s, `no outputs awaited while ${s.status}`)
  const missing = Array.isArray(missingOutputs) ? missingOutputs.filter((p): p is string => typeof p === 'string') : []
  if (missing.length > 0) {
    // the job's command did not write what it declared: the job failed, the provider did the work
    // asked of it — it is paid for it as for a completed job, not blamed, and nothing is re-run
    const due = finalPayment(award, s.config)
    const exitCode = award.receipt.exitCode
    const exit = exitCode === 0 ? '' : ` (exit ${exitCode})`
    const reason = `missing-output: ${missing.join(', ')}`.slice(0, 480) + exit
    return { state: end({ ...s, award: { ...award, due, committed: due.cumulative } }, 'failed', reason), effects: [due] }
  }
  return { state: { ...s, status: 'completed' }, effects: [{ type: 'verify', provider: award.provider }] }
}

function onOutputsMismatch (s: RequesterJob, detail: unknown, now: number): RequesterTransition {
  if (s.status !== 'verifying' || s.award === undefined) return ignore(s, `no outputs awaited while ${s.status}`)
  const why = typeof detail === 'string' && detail !== '' ? detail.slice(0, 400) : 'the outputs do not match the receipt'
  return failAttempt(s, now, 'output-mismatch', ['award', 'receipt'], why)
}

/**
 * Right outputs that this node could not keep (its disk, not the provider): the job failed here, and
 * the provider, which delivered, is paid for the receipt as for a completed job and blamed for nothing.
 */
function onOutputsUnsaved (s: RequesterJob, detail: unknown): RequesterTransition {
  const award = s.award
  if (s.status !== 'verifying' || award?.receipt === undefined) return ignore(s, `no outputs awaited while ${s.status}`)
  const why = typeof detail === 'string' && detail !== '' ? detail.slice(0, 400) : 'unknown error'
  const due = finalPayment(award, s.config)
  return { state: end({ ...s, award: { ...award, due, committed: due.cumulative } }, 'failed', `outputs-unsaved: ${why}`), effects: [due] }
}

function onVerification (s: RequesterJob, ok: boolean, now: number): RequesterTransition {
  if (s.status !== 'completed' || s.award === undefined) return ignore(s, `nothing to verify while ${s.status}`)
  if (ok !== true) return failAttempt(s, now, 'output-mismatch', ['award', 'receipt'], 'verification failed')
  const due = finalPayment(s.award, s.config)
  return { state: { ...s, status: 'verified', award: { ...s.award, due, committed: due.cumulative } }, effects: [due] }
}

function onPaymentSent (s: RequesterJob, cumulative: number): RequesterTransition {
  const a = s.award
  if (s.status === 'verified' && a?.due !== undefined && isCount(cumulative) && cumulative >= a.due.cumulative) {
    return { state: end(s, 'settled', 'paid in full'), effects: [] }
  }
  if (a !== undefined && isCount(cumulative) && cumulative <= a.committed) return { state: s, effects: [] }
  return ignore(s, 'no such payment was due')
}

function onCancel (s: RequesterJob, now: number): RequesterTransition {
  if (s.status === 'verifying' || s.status === 'completed' || s.status === 'verified') return ignore(s, 'the job has completed: settle it instead')
  const a = s.award
  if (a === undefined) return { state: end(s, 'cancelled', 'cancelled by the requester'), effects: [] }
  const effects: RequesterEffect[] = [{ type: 'cancel', provider: a.provider, reason: 'cancelled by the requester' }]
  const pay = payForWorkDone(a, s.config, now, 'cancelled')
  if (pay !== undefined) effects.push(pay)
  return { state: end(s, 'cancelled', 'cancelled by the requester'), effects }
}

/** A final status with its reason. */
function end (s: RequesterJob, status: RequesterStatus, reason: string): RequesterJob {
  return { ...s, status, reason }
}

// ---------------------------------------------------------------------------------------------
// Billing
// ---------------------------------------------------------------------------------------------

/** Whole intervals that fit in the max runtime, rounded up: no boundary is paid beyond them. */
function intervalCap (c: RequesterConfig): number {
  return Math.ceil(c.maxRuntimeMs / c.billingIntervalMs)
}

/** The payment commitment for `k` whole intervals (capped by the max runtime). */
function intervalPayment (a: Engagement, c: RequesterConfig, k: number): PayEffect {
  const ms = Math.min(k * c.billingIntervalMs, c.maxRuntimeMs)
  const cumulative = Math.max(a.committed, chargeFor(a.price, c.gpus, ms))
  return { type: 'pay', payee: a.provider, attempt: a.attempt, cumulative, interval: k, gpuSeconds: c.gpus * (ms / 1000), final: false }
}

/**
 * What the time run so far costs, as a final payment; undefined when the run never started. When
 * the interval payments already cover it, the final payment repeats what was committed: it closes
 * the award on both ledgers with its ending.
 */
function payForWorkDone (a: Engagement, c: RequesterConfig, now: number, ending: AwardEnding): PayEffect | undefined {
  if (a.runStartedAt === undefined) return undefined
  const seconds = Math.min(ceilSeconds(now - a.runStartedAt), c.maxRuntimeMs / 1000)
  const cumulative = Math.max(a.committed, chargeFor(a.price, c.gpus, seconds * 1000))
  const interval = Math.max(a.paidIntervals, Math.ceil(seconds * 1000 / c.billingIntervalMs))
  return { type: 'pay', payee: a.provider, attempt: a.attempt, cumulative, interval, gpuSeconds: c.gpus * seconds, final: true, ending }
}

/** The receipt's GPU-seconds, capped by the time seen running and the max runtime; never below what is committed. */
function finalPayment (a: Engagement, c: RequesterConfig): PayEffect {
  const receipt = a.receipt ?? { at: a.awardedAt, gpuSeconds: 0 }
  const seenSeconds = Math.min(ceilSeconds(receipt.at - (a.runStartedAt ?? receipt.at)), c.maxRuntimeMs / 1000)
  const gpuSeconds = Math.min(receipt.gpuSeconds, c.gpus * seenSeconds)
  const cumulative = Math.max(a.committed, chargeFor(a.price, 1, gpuSeconds * 1000))
  const interval = Math.max(a.paidIntervals, Math.ceil(gpuSeconds * 1000 / (c.gpus * c.billingIntervalMs)))
  return { type: 'pay', payee: a.provider, attempt: a.attempt, cumulative, interval, gpuSeconds, final: true, ending: 'settled' }
}

// ---------------------------------------------------------------------------------------------
// Deadlines
// ---------------------------------------------------------------------------------------------

export type RequesterDeadline = Deadline<'expiry' | 'close' | 'no-show' | 'lease' | 'timeout' | 'billing'>

/** The earliest deadline of the state; at a tie the first listed wins (expiry before close, lease before billing). */
export function nextRequesterDeadline (s: RequesterJob): RequesterDeadline | undefined {
  const a = s.award
  const c = s.config
  switch (s.status) {
    case 'bidding':
      return earliest<RequesterDeadline['kind']>([
        { kind: 'expiry', at: c.expiresAt },
        s.auction.closing ? undefined : { kind: 'close', at: s.auction.closesAt }
      ])
    case 'awarded':
      return a === undefined ? undefined : { kind: 'no-show', at: Math.max(a.awardedAt + c.leaseMs, a.resumeBy ?? 0) }
    case 'running': {
      if (a === undefined) return undefined
      const started = a.runStartedAt
      // no payment goes out while the stream is down: it could not arrive, and the provider may be gone; the
      // boundaries passed are paid at once when it is heard again
      const billing = started === undefined || a.paidIntervals >= intervalCap(c) || a.reconnecting === true ? undefined : started + (a.paidIntervals + 1) * c.billingIntervalMs
      return earliest<RequesterDeadline['kind']>([
        { kind: 'lease', at: leaseEndsAt(a, c) },
        started === undefined ? undefined : { kind: 'timeout', at: started + c.maxRuntimeMs + c.leaseMs },
        billing === undefined ? undefined : { kind: 'billing', at: billing }
      ])
    }
    default:
      return undefined
  }
}

function advance (s: RequesterJob, now: number): RequesterTransition {
  return advanceDeadlines(s, now, nextRequesterDeadline, onDeadline)
}

function onDeadline (s: RequesterJob, d: RequesterDeadline, now: number): RequesterTransition {
  switch (d.kind) {
    case 'expiry': return { state: end(s, 'expired', 'job expired before an award'), effects: [] }
    case 'close': return closeAuction(s, now)
    case 'no-show':
      if (s.award?.resumeBy !== undefined) return abandonAfterRestart(s, now)
      return failAttempt(s, now, 'no-show', ['award'], 'no answer to the award within one lease')
    case 'lease':
      if (s.award?.resumeBy !== undefined) return abandonAfterRestart(s, now)
      return failAttempt(s, now, 'no-heartbeat', ['award', 'last-status'], 'no heartbeat within one lease')
    case 'timeout': return onTimeout(s, now)
    case 'billing': return payIntervals(s, now)
  }
}

/** When the lease runs out: one lease after the last status (or the award), or the restart's window (`resumeBy`) when later. */
function leaseEndsAt (a: Engagement, c: RequesterConfig): number {
  return Math.max((a.lastHeartbeatAt ?? a.awardedAt) + c.leaseMs, a.resumeBy ?? 0)
}

/** The job ran past its max runtime (plus a lease for the receipt): stop it and try elsewhere. */
function onTimeout (s: RequesterJob, now: number): RequesterTransition {
  const a = s.award as Engagement
  const failed = failAttempt(s, now, 'timeout', ['award', 'last-status'], 'no receipt within the max runtime')
  return { state: failed.state, effects: [{ type: 'cancel', provider: a.provider, reason: 'max runtime exceeded' }, ...failed.effects] }
}

/**
 * Commit every whole interval elapsed by `now` whose boundary came while the lease held (one
 * cumulative payment covers them all).
 */
function payIntervals (s: RequesterJob, now: number): RequesterTransition {
  const a = s.award as Engagement
  const c = s.config
  const start = a.runStartedAt as number
  const leaseEnds = leaseEndsAt(a, c)
  const byNow = Math.floor((now - start) / c.billingIntervalMs)
  const beforeLease = Math.ceil((leaseEnds - start) / c.billingIntervalMs) - 1
  const k = Math.max(a.paidIntervals + 1, Math.min(byNow, beforeLease, intervalCap(c)))
  const pay = intervalPayment(a, c, k)
  return { state: { ...s, award: { ...a, paidIntervals: k, committed: pay.cumulative } }, effects: [pay] }
}

/** The bound the requester keeps: never more than the whole intervals elapsed plus one. */
export function requesterCommitBound (price: number, gpus: number, billingIntervalMs: number, elapsedMs: number): number {
  return intervalsCharge(price, gpus, billingIntervalMs, Math.floor(Math.max(0, elapsedMs) / billingIntervalMs) + 1)
}
