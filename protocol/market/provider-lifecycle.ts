/**
 * The provider's side of one job it bid on (DESIGN §5–§6) as a pure reducer:
 * `reduceProvider(state, event) → { state, effects }`.
 *
 * ```
 *  start ──▶ offered ──award──▶ awarded ──accept──▶ accepted ──started──▶ running ──finished──▶ completed ──paid──▶ settled
 *             │                   │                   │                     │                      │
 *             ├─▶ lost            ├─▶ declined        ├─▶ preempted         ├─▶ preempted           └─▶ stopped-unpaid
 *             └─▶ cancelled       └─▶ cancelled       ├─▶ failed (exit −1)  ├─▶ failed (exit −1)        (final payment late)
 *                                                     └─▶ cancelled         ├─▶ cancelled
 *                                                                           └─▶ stopped-unpaid (payment late)
 * ```
 *
 * Rules:
 * - `offered`: the bid is out; no award by the bid's expiry → `lost`.
 * - `award-received` moves to `awarded` and asks node/ to re-check the award against the calendar
 *   and load (`review-award`); node/ answers with `accept-award` or `decline-award`, within one
 *   lease (after that the requester counts a no-show, so the award is declined).
 * - From acceptance on, a heartbeat (`job-status`) goes out every `leaseMs / HEARTBEATS_PER_LEASE`,
 *   and right away on every change of state: `accepted` then `fetching-inputs` at acceptance (the
 *   fetch starts at once; the state holds until the run starts, GPU wait included), `running` at
 *   `started`, `preempted` at a preemption notice (and on every heartbeat of the notice), then one
 *   final `completed`, `failed`, `cancelled` or `preempted` (protocol/README.md §5.7).
 * - Billing starts at `started`. The requester pays each interval in arrears; the payment for
 *   interval k (due when k ends, at `startedAt + k × interval`) must arrive within the payment grace
 *   (paymentGraceMs: a tenth of the interval, at least 2 s), else the provider stops work and
 *   records `nonpayment` → `stopped-unpaid` (see paidUntil). So unpaid work never exceeds one
 *   interval plus the grace. A payment counts for the intervals its `cumulative` actually pays for,
 *   whatever its `interval` field claims.
 * - After `finished` the receipt goes out; the requester fetches the outputs before it pays, so the
 *   final payment (the receipt's GPU-seconds) is due within one billing interval plus the output
 *   fetch allowance (outputFetchAllowanceMs: one lease plus the output bytes at 1 MiB/s), else
 *   `nonpayment` → `stopped-unpaid` (unless what was paid before already covers the receipt: then the
 *   job is settled when that deadline comes). A `cancel` after the receipt ends the wait at once:
 *   `settled` if the receipt is paid, else `stopped-unpaid` with the non-payment (a final payment
 *   that still comes counts, as after any paid ending).
 * - `preempt(noticeMs)`: a gold/silver job displaces this bronze one. The requester is told at
 *   once (`notify-preemption`), the work stops when the notice runs out (→ `preempted`).
 */
import { MAX_AWARD_ATTEMPTS, MAX_BILLING_INTERVAL_SEC, MAX_JOB_GPUS, MAX_LEASE_MS, MIN_BILLING_INTERVAL_SEC, MIN_LEASE_MS } from '../limits.js'
import type { JobState } from '../messages/award.js'
import {
  HEARTBEATS_PER_LEASE,
  advanceDeadlines, assertIntIn, reduceMachine, outputFetchAllowanceMs, paymentGraceMs, billedGpus, chargeFor, earliest, finalStatuses, ignore, intervalsPaidBy, isCount, isId, isTime, scheduleWake,
  type Deadline, type EvidenceRef, type IgnoredEffect, type RecordFailureEffect, type Transition, type TransitionTable, type WakeEffect
} from './lifecycle-shared.js'

export type ProviderStatus =
  | 'offered' | 'awarded' | 'accepted' | 'running' | 'completed' | 'settled'
  | 'lost' | 'declined' | 'preempted' | 'failed' | 'cancelled' | 'stopped-unpaid'

/** Where the provider's job may go from each status (staying put is always allowed). */
export const PROVIDER_TRANSITIONS: TransitionTable<ProviderStatus> = Object.freeze({
  offered: ['awarded', 'lost', 'cancelled'],
  awarded: ['accepted', 'declined', 'cancelled'],
  accepted: ['running', 'failed', 'preempted', 'cancelled'],
  running: ['completed', 'failed', 'preempted', 'cancelled', 'stopped-unpaid'],
  completed: ['settled', 'stopped-unpaid'],
  settled: [],
  lost: [],
  declined: [],
  preempted: [],
  failed: [],
  cancelled: [],
  'stopped-unpaid': []
})

const FINAL: ReadonlySet<ProviderStatus> = new Set(finalStatuses(PROVIDER_TRANSITIONS))

// ---------------------------------------------------------------------------------------------
// State, events, effects
// ---------------------------------------------------------------------------------------------

export interface ProviderJobInit {
  /** Job id (CID string). */
  job: string
  /** The job's requester (signer of the job request). */
  requester: string
  /** CID of the bid this provider sent. */
  bid: string
  /** GPUs the bid allocates (billed as at least one). */
  gpus: number
  /** The bid's `expiresAt`: no award by then → lost. */
  offerExpiresAt: number
  /** Heartbeats per lease (integer 1 … 10; default HEARTBEATS_PER_LEASE): MarketParams.heartbeatsPerLease. */
  heartbeatsPerLease?: number
}

/** The award as the provider reads it (from a verified `award` message). */
export interface AwardTerms {
  /** The award's payload CID. */
  award: string
  bid: string
  attempt: number
  price: number
  leaseMs: number
  billingIntervalSec: number
}

export interface ProviderJob {
  status: ProviderStatus
  job: string
  requester: string
  bid: string
  gpus: number
  offerExpiresAt: number
  /** Set when not the default HEARTBEATS_PER_LEASE. */
  heartbeatsPerLease?: number
  now: number
  wakeAt?: number
  award?: AwardTerms & { receivedAt: number }
  acceptedAt?: number
  inputsReady: boolean
  /** Billing anchor. */
  startedAt?: number
  /** Work stops here (preemption notice). */
  preemptAt?: number
  /** Seq of the last status sent (0 before the first). */
  statusSeq: number
  lastStatusAt?: number
  /** Best payment received: its cumulative micros, the whole intervals it pays for, when it came. */
  paid: { cumulative: number, intervals: number, at?: number }
  /** The run's end, and what the receipt is worth. */
  finished?: { at: number, exitCode: number, gpuSeconds: number, owed: number, outputBytes: number }
  /** Why the job ended, in a final status. */
  reason?: string
  /**
   * When the requester's exec stream ended while the job ran or waited for its final payment: the
   * requester may re-open it with the same award within one lease (a restart, a dropped connection;
   * protocol/README.md §7.7 "Resuming"). Cleared when it does.
   */
  requesterGoneAt?: number
  /**
   * Read back after this node's restart (restartProviderJob): the run was lost with the process and
   * starts again, from fetching the inputs, once the requester has re-opened the stream.
   */
  restarted?: boolean
  /** When the run that produces the receipt started, when that is not the billing anchor (a run started again after a restart). */
  runFrom?: number
}

export type ProviderEvent =
  | { type: 'award-received', now: number, from: string, award: AwardTerms }
  | { type: 'accept-award', now: number }
  | { type: 'decline-award', now: number, reason?: string }
  | { type: 'inputs-fetched', now: number }
  | { type: 'started', now: number }
  | { type: 'tick', now: number }
  /** `outputBytes`: the outputs' total size (the requester fetches them before its final payment). */
  | { type: 'finished', now: number, exitCode: number, gpuSeconds: number, outputBytes?: number }
  | { type: 'payment-received', now: number, from: string, cumulative: number, interval: number }
  | { type: 'cancel', now: number, from: string }
  | { type: 'preempt', now: number, noticeMs: number }
  | { type: 'requester-gone', now: number }
  /** The requester re-opened the exec stream with this job's award (§7.7 "Resuming"). */
  | { type: 'requester-back', now: number }

export type StopReason = 'cancelled' | 'preempted' | 'nonpayment' | 'requester-gone'

export type ProviderEffect =
  | { type: 'review-award', award: AwardTerms }
  | { type: 'respond-award', decision: 'accept' | 'decline', reason?: string }
  | { type: 'fetch-inputs' }
  | { type: 'start-job' }
  | { type: 'heartbeat', seq: number, state: JobState, gpuSeconds: number }
  | { type: 'send-receipt', exitCode: number, gpuSeconds: number, startedAt: number, endedAt: number }
  | { type: 'notify-preemption', noticeMs: number }
  | { type: 'stop-work', reason: StopReason }
  | RecordFailureEffect
  | WakeEffect
  | IgnoredEffect

export type ProviderTransition = Transition<ProviderJob, ProviderEffect>

// ---------------------------------------------------------------------------------------------
// Entry points
// ---------------------------------------------------------------------------------------------

/** A job this provider just bid on, in `offered`; wakes at the bid's expiry. */
export function startProviderJob (init: ProviderJobInit, now: number): ProviderTransition {
  assertIntIn(init.gpus, 0, MAX_JOB_GPUS, 'gpus')
  assertIntIn(init.offerExpiresAt, 0, Number.MAX_SAFE_INTEGER, 'offerExpiresAt')
  if (init.heartbeatsPerLease !== undefined) assertIntIn(init.heartbeatsPerLease, 1, 10, 'heartbeatsPerLease')
  if (!isTime(now)) throw new RangeError('now must be a finite number')
  const state: ProviderJob = {
    status: 'offered',
    job: init.job,
    requester: init.requester,
    bid: init.bid,
    gpus: billedGpus(init.gpus),
    offerExpiresAt: init.offerExpiresAt,
    ...(init.heartbeatsPerLease !== undefined && init.heartbeatsPerLease !== HEARTBEATS_PER_LEASE ? { heartbeatsPerLease: init.heartbeatsPerLease } : {}),
    now,
    inputsReady: false,
    statusSeq: 0,
    paid: { cumulative: 0, intervals: 0 }
  }
  return finish(state, [], now)
}

/** True in a status the job never leaves. */
export function isProviderFinal (status: ProviderStatus): boolean {
  return FINAL.has(status)
}

/**
 * How far `seq` jumps when a job is read back after a restart: statuses sent but not yet recorded
 * when the node stopped are skipped over, since `seq` need only increase (protocol/README.md §5.7).
 */
export const RESTART_SEQ_GAP = 8

/**
 * A job read back after this node restarted (protocol/README.md §7.7 "Resuming"), or undefined when
 * it cannot go on. The process that ran it is gone, so an accepted or running job goes back to
 * `accepted` and runs again from the start once the requester re-opens the stream (its inputs are
 * kept on disk), keeping its billing anchor and payments; a completed one waits for its final
 * payment (its outputs are kept, the shell grants them again). Either way the requester has one
 * lease to come back (`requesterGoneAt`), and `seq` jumps by RESTART_SEQ_GAP.
 */
export function restartProviderJob (s: ProviderJob, now: number): ProviderTransition | undefined {
  if (!isTime(now) || s.award === undefined) return undefined
  const at = Math.max(s.now, now)
  const base = { ...s, now: at, requesterGoneAt: at, statusSeq: s.statusSeq + RESTART_SEQ_GAP }
  switch (s.status) {
    case 'accepted':
    case 'running': {
      const { preemptAt: _notice, ...rest } = base
      return finish({ ...rest, status: 'accepted', inputsReady: false, restarted: true }, [], at)
    }
    case 'completed':
      return finish(base, [], at)
    default:
      return undefined
  }
}

/**
 * Apply one event: first every deadline due by `event.now`, oldest first, then the event. Never
 * throws; an event that does not apply returns the state unchanged with an `ignored` effect.
 */
export function reduceProvider (state: ProviderJob, event: ProviderEvent): ProviderTransition {
  return reduceMachine({ final: FINAL, nextDeadline: nextProviderDeadline, onDeadline, handle, afterEnd }, state, event) as ProviderTransition
}

function finish (state: ProviderJob, effects: ProviderEffect[], now: number): ProviderTransition {
  const after = advance(state, now)
  const all = [...effects, ...after.effects]
  return { state: scheduleWake(after.state, nextProviderDeadline(after.state)?.at, all), effects: all }
}

function handle (s: ProviderJob, e: ProviderEvent, now: number): ProviderTransition {
  // a tick's work is the deadlines, handled before; it may have ended the job, which is no news
  if (e.type === 'tick') return { state: s, effects: [] }
  if (FINAL.has(s.status)) return ignore(s, `job is ${s.status}`)
  switch (e.type) {
    case 'award-received': return onAward(s, e.from, e.award, now)
    case 'accept-award': return onAccept(s, now)
    case 'decline-award': return onDecline(s, e.reason)
    case 'inputs-fetched': return onInputsFetched(s)
    case 'started': return onStarted(s, now)
    case 'finished': return onFinished(s, e.exitCode, e.gpuSeconds, e.outputBytes, now)
    case 'payment-received': return onPayment(s, e, now)
    case 'cancel': return e.from === s.requester ? onCancel(s) : ignore(s, 'cancel not from the requester')
    case 'preempt': return onPreempt(s, e.noticeMs, now)
    case 'requester-gone': return onRequesterGone(s, now)
    case 'requester-back': return onRequesterBack(s, now)
    default: return ignore(s, `unknown event ${String((e as { type?: unknown }).type)}`)
  }
}

// ---------------------------------------------------------------------------------------------
// Award
// ---------------------------------------------------------------------------------------------

/** Terms an award can carry (the award schema's ranges). */
function validTerms (t: AwardTerms | undefined): t is AwardTerms {
  return t != null && isId(t.award) && isId(t.bid) && isCount(t.price) &&
    isCount(t.attempt) && t.attempt >= 1 && t.attempt <= MAX_AWARD_ATTEMPTS &&
    isCount(t.leaseMs) && t.leaseMs >= MIN_LEASE_MS && t.leaseMs <= MAX_LEASE_MS &&
    isCount(t.billingIntervalSec) && t.billingIntervalSec >= MIN_BILLING_INTERVAL_SEC && t.billingIntervalSec <= MAX_BILLING_INTERVAL_SEC
}

function onAward (s: ProviderJob, from: string, terms: AwardTerms, now: number): ProviderTransition {
  if (s.status !== 'offered') return ignore(s, `no bid waiting for an award while ${s.status}`)
  if (from !== s.requester) return ignore(s, 'award not from the requester')
  if (!validTerms(terms)) return ignore(s, 'malformed award terms')
  if (terms.bid !== s.bid) return ignore(s, 'award for another bid')
  return { state: { ...s, status: 'awarded', award: { ...terms, receivedAt: now } }, effects: [{ type: 'review-award', award: terms }] }
}

function onAccept (s: ProviderJob, now: number): ProviderTransition {
  if (s.status !== 'awarded') return ignore(s, `no award to accept while ${s.status}`)
  const accepted: ProviderJob = { ...s, status: 'accepted', acceptedAt: now }
  // the fetch starts at once, and every change of state goes out (protocol/README.md §5.7 "Job states")
  const [acked, beat] = heartbeat(accepted, 'accepted', now)
  const [next, fetching] = heartbeat(acked, 'fetching-inputs', now)
  return { state: next, effects: [{ type: 'respond-award', decision: 'accept' }, beat, { type: 'fetch-inputs' }, fetching] }
}

function onDecline (s: ProviderJob, reason: string | undefined): ProviderTransition {
  if (s.status !== 'awarded') return ignore(s, `no award to decline while ${s.status}`)
  const effect: ProviderEffect = { type: 'respond-award', decision: 'decline' }
  if (reason !== undefined) effect.reason = reason
  return { state: end(s, 'declined', reason ?? 'declined the award'), effects: [effect] }
}

// ---------------------------------------------------------------------------------------------
// Execution
// ---------------------------------------------------------------------------------------------

function onInputsFetched (s: ProviderJob): ProviderTransition {
  if (s.status !== 'accepted' || s.inputsReady) return ignore(s, `no inputs awaited while ${s.status}`)
  return { state: { ...s, inputsReady: true }, effects: [{ type: 'start-job' }] }
}

function onStarted (s: ProviderJob, now: number): ProviderTransition {
  if (s.status !== 'accepted') return ignore(s, `cannot start while ${s.status}`)
  // a run started again after a restart keeps the billing anchor: the payments made count from it
  const run: ProviderJob = s.startedAt === undefined ? { ...s, status: 'running', startedAt: now } : { ...s, status: 'running', runFrom: now }
  const [next, beat] = heartbeat(run, 'running', now)
  return { state: next, effects: [beat] }
}

function onFinished (s: ProviderJob, exitCode: number, gpuSeconds: number, outputBytes: number | undefined, now: number): ProviderTransition {
  if (s.status !== 'running' && !(s.status === 'accepted' && exitCode === -1)) return ignore(s, `nothing running while ${s.status}`)
  if (!Number.isInteger(exitCode) || exitCode < -1 || exitCode > 255 || !isCount(gpuSeconds)) return ignore(s, 'malformed exit code or GPU-seconds')
  if (outputBytes !== undefined && !isCount(outputBytes)) return ignore(s, 'malformed output size')
  const startedAt = s.runFrom ?? s.startedAt ?? now
  const receipt: ProviderEffect = { type: 'send-receipt', exitCode, gpuSeconds, startedAt, endedAt: now }
  if (exitCode === -1) {
    const [next, beat] = heartbeat(s, 'failed', now)
    return { state: end(next, 'failed', 'the executor could not start the job'), effects: [beat, receipt] }
  }
  const owed = chargeFor(s.award?.price ?? 0, 1, gpuSeconds * 1000)
  // settled only by a payment received after the receipt: the requester always sends a final one
  const [next, beat] = heartbeat({ ...s, status: 'completed', finished: { at: now, exitCode, gpuSeconds, owed, outputBytes: outputBytes ?? 0 } }, 'completed', now)
  return { state: next, effects: [beat, receipt] }
}

function onPreempt (s: ProviderJob, noticeMs: number, now: number): ProviderTransition {
  if (!isCount(noticeMs)) return ignore(s, 'malformed notice')
  if (s.status === 'accepted') {
    const [next, beat] = heartbeat(s, 'preempted', now)
    const effects: ProviderEffect[] = [{ type: 'notify-preemption', noticeMs: 0 }, { type: 'stop-work', reason: 'preempted' }, beat]
    return { state: end(next, 'preempted', 'preempted before it started'), effects }
  }
  if (s.status !== 'running') return ignore(s, `nothing to preempt while ${s.status}`)
  if (s.preemptAt !== undefined) return ignore(s, 'already being preempted')
  return { state: { ...s, preemptAt: now + noticeMs }, effects: [{ type: 'notify-preemption', noticeMs }] }
}

function onCancel (s: ProviderJob): ProviderTransition {
  if (s.status === 'offered' || s.status === 'awarded') return { state: end(s, 'cancelled', 'cancelled by the requester'), effects: [] }
  // after the receipt the requester refuses the result (e.g. outputs that do not match): nothing is left
  // to wait for — what it paid covers the receipt (settled), or what is missing is its non-payment
  if (s.status === 'completed') {
    if (s.finished !== undefined && s.paid.cumulative >= s.finished.owed) return { state: end(s, 'settled', 'paid in full'), effects: [] }
    return {
      state: end(s, 'stopped-unpaid', 'cancelled by the requester after the receipt'),
      effects: [nonpayment(s, ['award', 'receipt'], 'the requester cancelled after the receipt without paying for it')]
    }
  }
  const [next, beat] = heartbeat(s, 'cancelled', s.now)
  return { state: end(next, 'cancelled', 'cancelled by the requester'), effects: [{ type: 'stop-work', reason: 'cancelled' }, beat] }
}

/**
 * The requester's stream ended before the job was final. Before the run, the job ends (its inputs
 * come from the requester). A running job goes on for one lease in case the requester re-opens the
 * stream (a restart, a dropped connection), then stops unpaid; a completed one waits for its final
 * payment until the usual deadline, since the requester may come back for the outputs.
 */
function onRequesterGone (s: ProviderJob, now: number): ProviderTransition {
  switch (s.status) {
    case 'offered':
    case 'awarded':
      return { state: end(s, 'cancelled', 'the requester is gone'), effects: [] }
    case 'accepted':
      return { state: end(s, 'cancelled', 'the requester is gone'), effects: [{ type: 'stop-work', reason: 'requester-gone' }] }
    default:
      return s.requesterGoneAt !== undefined ? { state: s, effects: [] } : { state: { ...s, requesterGoneAt: now }, effects: [] }
  }
}

/** One lease after the requester's stream ended, it has not come back: the running work stops unpaid. */
function requesterLost (s: ProviderJob): ProviderTransition {
  return {
    state: end(s, 'stopped-unpaid', 'the requester is gone'),
    effects: [{ type: 'stop-work', reason: 'requester-gone' }, nonpayment(s, ['award'], 'the requester is gone with work unpaid')]
  }
}

/** The requester re-opened the stream: the wait ends, and a running job's status goes out at once. */
function onRequesterBack (s: ProviderJob, now: number): ProviderTransition {
  if (s.status !== 'running' && s.status !== 'completed' && s.status !== 'accepted') return ignore(s, `nothing to resume while ${s.status}`)
  const { requesterGoneAt: _back, restarted, ...kept } = s
  if (s.status === 'completed') return { state: kept, effects: [] }
  const [next, beat] = heartbeat(kept, s.status === 'accepted' ? 'fetching-inputs' : s.preemptAt !== undefined ? 'preempted' : 'running', now)
  // after a restart the run starts again: from the inputs (kept on disk, fetched only when missing)
  return { state: next, effects: restarted === true ? [beat, { type: 'fetch-inputs' }] : [beat] }
}

/** A status message now; the next heartbeat is due one heartbeat interval later. */
function heartbeat (s: ProviderJob, state: JobState, now: number): [ProviderJob, ProviderEffect] {
  const seq = s.statusSeq + 1
  const gpuSeconds = s.startedAt === undefined ? 0 : s.gpus * Math.floor(Math.max(0, now - s.startedAt) / 1000)
  return [{ ...s, statusSeq: seq, lastStatusAt: now }, { type: 'heartbeat', seq, state, gpuSeconds }]
}

function heartbeatMs (s: ProviderJob): number {
  return Math.max(1, Math.floor((s.award?.leaseMs ?? 3_000) / (s.heartbeatsPerLease ?? HEARTBEATS_PER_LEASE)))
}

function end (s: ProviderJob, status: ProviderStatus, reason: string): ProviderJob {
  return { ...s, status, reason }
}

// ---------------------------------------------------------------------------------------------
// Payments
// ---------------------------------------------------------------------------------------------

type PaymentEvent = Extract<ProviderEvent, { type: 'payment-received' }>

/** Ended after work began: the requester's final payment for the time run may still come (and counts). */
const PAYABLE_ENDINGS: ReadonlySet<ProviderStatus> = new Set(['cancelled', 'preempted', 'failed', 'stopped-unpaid'])

/** After the end only a late payment counts (see onLatePayment). */
function afterEnd (s: ProviderJob, e: ProviderEvent, now: number): ProviderTransition | undefined {
  return e.type === 'payment-received' && PAYABLE_ENDINGS.has(s.status) && s.startedAt !== undefined ? onLatePayment(s, e, now) : undefined
}

function onPayment (s: ProviderJob, e: PaymentEvent, now: number): ProviderTransition {
  if (s.status !== 'accepted' && s.status !== 'running' && s.status !== 'completed') return ignore(s, `no payment expected while ${s.status}`)
  if (e.from !== s.requester) return ignore(s, 'payment not from the requester')
  if (!isCount(e.cumulative) || !isCount(e.interval)) return ignore(s, 'malformed payment')
  if (e.cumulative < s.paid.cumulative) return ignore(s, 'payment below an earlier one')
  const a = s.award as AwardTerms
  const covered = Math.min(e.interval, intervalsPaidBy(e.cumulative, a.price, s.gpus, a.billingIntervalSec * 1000))
  const paid = { cumulative: e.cumulative, intervals: Math.max(s.paid.intervals, covered), at: now }
  const next = { ...s, paid }
  const settled = s.status === 'completed' && s.finished !== undefined && e.cumulative >= s.finished.owed
  return { state: settled ? end(next, 'settled', 'paid in full') : next, effects: [] }
}

/**
 * A payment after the job ended (cancel, preemption, a stop): the requester pays for the time run
 * after its cancel or on the notice, so it arrives after the end. It is recorded (both ledgers then
 * hold the same amount); the status stays.
 */
function onLatePayment (s: ProviderJob, e: PaymentEvent, now: number): ProviderTransition {
  if (e.from !== s.requester) return ignore(s, 'payment not from the requester')
  if (!isCount(e.cumulative) || !isCount(e.interval)) return ignore(s, 'malformed payment')
  if (e.cumulative < s.paid.cumulative) return ignore(s, 'payment below an earlier one')
  const a = s.award as AwardTerms
  const covered = Math.min(e.interval, intervalsPaidBy(e.cumulative, a.price, s.gpus, a.billingIntervalSec * 1000))
  return { state: { ...s, now, paid: { cumulative: e.cumulative, intervals: Math.max(s.paid.intervals, covered), at: now } }, effects: [] }
}

/** A failure report against the requester for not paying. */
function nonpayment (s: ProviderJob, evidence: EvidenceRef[], detail: string): RecordFailureEffect {
  const refs: EvidenceRef[] = s.paid.at === undefined ? evidence : [...evidence, 'last-payment']
  return { type: 'record-failure', subject: s.requester, reason: 'nonpayment', evidence: refs, detail }
}

/**
 * The latest time the provider keeps running: the end of the first unpaid interval plus the payment
 * grace (the payment for interval k is due when k ends).
 */
export function paidUntil (s: ProviderJob): number | undefined {
  if (s.startedAt === undefined || s.award === undefined) return undefined
  const interval = s.award.billingIntervalSec * 1000
  return s.startedAt + (s.paid.intervals + 1) * interval + paymentGraceMs(interval)
}

// ---------------------------------------------------------------------------------------------
// Deadlines
// ---------------------------------------------------------------------------------------------

export type ProviderDeadline = Deadline<'offer' | 'decide' | 'unpaid' | 'requester-lost' | 'final-payment' | 'preempt' | 'heartbeat'>

/** The earliest deadline of the state; at a tie the first listed wins (nonpayment before preemption before a heartbeat). */
export function nextProviderDeadline (s: ProviderJob): ProviderDeadline | undefined {
  const beat = s.lastStatusAt === undefined ? undefined : { kind: 'heartbeat' as const, at: s.lastStatusAt + heartbeatMs(s) }
  switch (s.status) {
    case 'offered': return { kind: 'offer', at: s.offerExpiresAt }
    case 'awarded': return s.award === undefined ? undefined : { kind: 'decide', at: s.award.receivedAt + s.award.leaseMs }
    case 'accepted':
      return earliest<ProviderDeadline['kind']>([
        s.requesterGoneAt === undefined || s.award === undefined ? undefined : { kind: 'requester-lost', at: s.requesterGoneAt + s.award.leaseMs },
        beat
      ])
    case 'running': {
      const until = paidUntil(s)
      return earliest<ProviderDeadline['kind']>([
        until === undefined ? undefined : { kind: 'unpaid', at: until },
        s.requesterGoneAt === undefined || s.award === undefined ? undefined : { kind: 'requester-lost', at: s.requesterGoneAt + s.award.leaseMs },
        s.preemptAt === undefined ? undefined : { kind: 'preempt', at: s.preemptAt },
        beat
      ])
    }
    case 'completed': {
      const interval = (s.award?.billingIntervalSec ?? 0) * 1000
      const fetch = outputFetchAllowanceMs(s.award?.leaseMs ?? 0, s.finished?.outputBytes ?? 0)
      return s.finished === undefined ? undefined : { kind: 'final-payment', at: s.finished.at + interval + fetch }
    }
    default: return undefined
  }
}

function advance (s: ProviderJob, now: number): ProviderTransition {
  return advanceDeadlines(s, now, nextProviderDeadline, onDeadline)
}

function onDeadline (s: ProviderJob, d: ProviderDeadline, now: number): ProviderTransition {
  switch (d.kind) {
    case 'offer':
      return { state: end(s, 'lost', 'no award before the bid expired'), effects: [] }
    case 'decide':
      return {
        state: end(s, 'declined', 'no decision within one lease'),
        effects: [{ type: 'respond-award', decision: 'decline', reason: 'no decision in time' }]
      }
    case 'unpaid':
      return {
        state: end(s, 'stopped-unpaid', 'interval payment overdue past the grace'),
        effects: [{ type: 'stop-work', reason: 'nonpayment' }, nonpayment(s, ['award'], 'interval payment not received within the grace after the interval ended')]
      }
    case 'final-payment':
      // payments that came before the receipt may already cover it
      if (s.finished !== undefined && s.paid.cumulative >= s.finished.owed) return { state: end(s, 'settled', 'paid in full'), effects: [] }
      return {
        state: end(s, 'stopped-unpaid', 'final payment overdue'),
        effects: [nonpayment(s, ['award', 'receipt'], 'final payment overdue by one billing interval and the output fetch allowance')]
      }
    case 'requester-lost':
      // read back after a restart and never re-opened: no work was done for the requester since, nothing to claim
      if (s.status === 'accepted') return { state: end(s, 'cancelled', 'the requester did not re-open the stream after this node restarted'), effects: [{ type: 'stop-work', reason: 'requester-gone' }] }
      return requesterLost(s)
    case 'preempt': {
      const [next, beat] = heartbeat(s, 'preempted', now)
      return { state: end(next, 'preempted', 'preempted by a better-paying job'), effects: [{ type: 'stop-work', reason: 'preempted' }, beat] }
    }
    case 'heartbeat': {
      // between changes a heartbeat repeats the state last sent: a job under a preemption notice stays `preempted`
      const [next, beat] = heartbeat(s, s.status !== 'running' ? 'fetching-inputs' : s.preemptAt !== undefined ? 'preempted' : 'running', now)
      return { state: next, effects: [beat] }
    }
  }
}
