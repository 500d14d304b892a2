/**
 * What the requester's and the provider's job lifecycles (DESIGN §6) share: the reducer shape, the
 * constants, the billing arithmetic both sides must agree on to the micro, and the timer bookkeeping.
 *
 * Both machines are pure reducers `(state, event) → { state, effects }`. Effects are plain data
 * (commands for node/ or the simulator to carry out); an event that does not apply returns the state
 * unchanged with one `{ type: 'ignored', reason }` effect and never throws, so a peer sending stray
 * messages cannot crash a node.
 *
 * Time: every event carries `now`. Timers are `{ type: 'wake', at }` effects: a request for a `tick`
 * event at or after `at`. Ticks may come late, early, twice or not at all for a superseded wake; the
 * machines re-check all their deadlines on every event, oldest first, so a late tick (or any event
 * that arrives after a deadline) sees the same outcome as a punctual one. A node that restarts with a
 * stored state schedules one tick at `nextRequesterDeadline(state)` / `nextProviderDeadline(state)`.
 * `now` never runs backwards inside a machine: an event older than the last one seen is handled at
 * the last time seen.
 */
import type { FailureReason } from '../messages/evidence.js'
import { HOUR_MS, MAX_AWARD_ATTEMPTS } from '../limits.js'

/** Failed awards (no-show, decline, lost lease, crash, bad output, timeout) before a job is given up. */
export const MAX_FAILED_ATTEMPTS = 3
/**
 * The award schema's upper bound on `attempt` (protocol/limits.ts): preemptions count here, so a job
 * cannot bounce forever.
 */
export const AWARD_ATTEMPT_LIMIT = MAX_AWARD_ATTEMPTS
/** Lease used when the requester does not choose one (award schema: 1 s … 1 h). */
export const DEFAULT_LEASE_MS = 30_000
/** Billing interval used when the requester does not choose one: the provider risks at most this much work. */
export const DEFAULT_BILLING_INTERVAL_SEC = 300
/** The provider sends a heartbeat every `leaseMs / HEARTBEATS_PER_LEASE`, so two may be lost without harm. */
export const HEARTBEATS_PER_LEASE = 3

/**
 * The slowest output fetch the market allows for: the requester fetches a receipt's outputs before it
 * pays the final payment, so the provider waits this much longer for it (1 MiB/s).
 */
export const MIN_FETCH_BYTES_PER_SEC = 1024 * 1024

/**
 * How long the requester may take to fetch a receipt's outputs: one lease (to open the streams and
 * the manifest) plus the output bytes at MIN_FETCH_BYTES_PER_SEC. Both sides use it: the provider
 * adds it to its final-payment deadline (protocol/README.md §7.7).
 */
export function outputFetchAllowanceMs (leaseMs: number, outputBytes: number): number {
  const bytes = Number.isSafeInteger(outputBytes) && outputBytes > 0 ? outputBytes : 0
  return Math.max(0, leaseMs) + Math.ceil(bytes * 1000 / MIN_FETCH_BYTES_PER_SEC)
}

/**
 * How late an interval's payment may arrive after the interval ends before the provider stops:
 * a tenth of the interval, at least 2 s (network delay). So unpaid work never exceeds one billing
 * interval plus this grace (DESIGN §6: a provider risks at most one interval).
 */
export function paymentGraceMs (intervalMs: number): number {
  return Math.max(2_000, Math.floor(intervalMs / 10))
}

const HOUR = BigInt(HOUR_MS)
const MAX_SAFE = BigInt(Number.MAX_SAFE_INTEGER)

/** A reducer's answer: the next state and what to do about it. */
export interface Transition<S, E> {
  state: S
  effects: E[]
}

/** A request for a `tick` event at or after `at`. */
export interface WakeEffect { type: 'wake', at: number }
/** The event did not apply in this state; nothing changed. */
export interface IgnoredEffect { type: 'ignored', reason: string }

/** Signed envelopes node/ keeps for a job, named so a failure report can embed them. */
/** The signed envelopes an offer keeps for failure reports; `bounced-payment`: a payment that did not hold against the award. */
export type EvidenceRef = 'award' | 'award-response' | 'last-status' | 'receipt' | 'last-payment' | 'bounced-payment'

/** Publish a signed `failure-report` about `subject`, embedding the named envelopes. */
export interface RecordFailureEffect {
  type: 'record-failure'
  subject: string
  reason: FailureReason
  evidence: EvidenceRef[]
  detail?: string
}

/** Allowed status changes, as data: staying in the same status is always allowed and not listed. */
export type TransitionTable<S extends string> = Readonly<Record<S, readonly S[]>>

/** True when `table` lets a machine go from `from` to `to` (staying put is always allowed). */
export function isAllowedTransition<S extends string> (table: TransitionTable<S>, from: S, to: S): boolean {
  return from === to || table[from].includes(to)
}

/** The statuses a machine never leaves: those with no way out in its table. */
export function finalStatuses<S extends string> (table: TransitionTable<S>): S[] {
  return (Object.keys(table) as S[]).filter((s) => table[s].length === 0)
}

/** The unchanged state with an `ignored` effect. */
export function ignore<S, E> (state: S, reason: string): Transition<S, E | IgnoredEffect> {
  return { state, effects: [{ type: 'ignored', reason }] }
}

// ---------------------------------------------------------------------------------------------
// Billing arithmetic (both sides call these, so they agree to the micro)
// ---------------------------------------------------------------------------------------------

/** A non-negative integer from anything: NaN, negatives and fractions never reach BigInt. */
function whole (n: number): bigint {
  if (!Number.isFinite(n) || n <= 0) return 0n
  return BigInt(Math.min(Math.floor(n), Number.MAX_SAFE_INTEGER))
}

function toSafe (n: bigint): number {
  return Number(n > MAX_SAFE ? MAX_SAFE : n)
}

/**
 * The market's one cost formula, exact: ⌈price × gpus × ms / 3.6e6⌉ micros for `gpus` GPUs over `ms` at
 * `price` micros per GPU-hour (non-negative integers). Every amount the market computes — what a
 * requester pays, what a provider expects, pricing's `cost` estimate — is this, so both sides agree to
 * the micro.
 */
export function exactCharge (price: bigint, gpus: bigint, ms: bigint): bigint {
  return (price * gpus * ms + HOUR - 1n) / HOUR
}

/**
 * Micros owed for `gpus` GPUs over `durationMs` at `pricePerGpuHour`: `exactCharge` on whatever a peer
 * sent. Never throws (a lifecycle must survive any input): NaN, negatives and fractions are floored to
 * a whole count (negatives and NaN to 0), and a result beyond 2⁵³ − 1 is clamped.
 */
export function chargeFor (pricePerGpuHour: number, gpus: number, durationMs: number): number {
  return toSafe(exactCharge(whole(pricePerGpuHour), whole(gpus), whole(durationMs)))
}

/** Micros owed for `k` whole billing intervals of `intervalMs` (chargeFor of k × intervalMs, exact). */
export function intervalsCharge (price: number, gpus: number, intervalMs: number, k: number): number {
  return toSafe(exactCharge(whole(price), whole(gpus), whole(intervalMs) * whole(k)))
}

/**
 * How many whole intervals a cumulative payment pays for: the largest k with
 * intervalsCharge(k) ≤ cumulative. Infinity when an interval costs nothing.
 */
export function intervalsPaidBy (cumulative: number, price: number, gpus: number, intervalMs: number): number {
  const perInterval = whole(price) * whole(gpus) * whole(intervalMs)
  if (perInterval === 0n) return Number.POSITIVE_INFINITY
  return toSafe((whole(cumulative) * HOUR) / perInterval)
}

/**
 * The GPU count a job is billed for. A job that asks for no GPU is billed as one unit (its price is
 * then per machine-hour), so CPU-only work is not free.
 */
export function billedGpus (gpus: number): number {
  return Math.max(1, Math.floor(Number.isFinite(gpus) ? gpus : 0))
}

/** Whole seconds in `ms`, rounded up (what a partial second is billed as). */
export function ceilSeconds (ms: number): number {
  return Number.isFinite(ms) && ms > 0 ? Math.ceil(ms / 1000) : 0
}

// ---------------------------------------------------------------------------------------------
// Timers
// ---------------------------------------------------------------------------------------------

/** A named moment a machine must act at. */
export interface Deadline<K extends string> { kind: K, at: number }

/** The earliest of `deadlines` (the first listed wins a tie, so list them by priority). */
export function earliest<K extends string> (deadlines: ReadonlyArray<Deadline<K> | undefined>): Deadline<K> | undefined {
  let best: Deadline<K> | undefined
  for (const d of deadlines) if (d !== undefined && Number.isFinite(d.at) && (best === undefined || d.at < best.at)) best = d
  return best
}

/** The part of a state the timer bookkeeping reads. */
export interface Timed { now: number, wakeAt?: number }

/**
 * Add a `wake` effect for `next` unless a pending wake already comes at or before it. A wake that
 * lies in the past has fired (or will not be relied on) and is forgotten. Superseded later wakes
 * stay scheduled in node/; their ticks find nothing due, which is harmless.
 */
export function scheduleWake<S extends Timed, E> (state: S, next: number | undefined, effects: Array<E | WakeEffect>): S {
  const pending = state.wakeAt !== undefined && state.wakeAt > state.now ? state.wakeAt : undefined
  if (next === undefined || (pending !== undefined && pending <= next)) {
    if (pending === state.wakeAt) return state
    const { wakeAt: _fired, ...rest } = state
    return rest as S
  }
  effects.push({ type: 'wake', at: next })
  return { ...state, wakeAt: next }
}

/** Upper bound on deadlines handled for one event; each handler moves its deadline, so this is a guard. */
export const MAX_DEADLINES_PER_EVENT = 64

/**
 * Handle every deadline due at `now`, oldest first, with `handle`; `next` gives the earliest
 * deadline of a state (undefined when none).
 */
export function advanceDeadlines<S, K extends string, E> (
  state: S,
  now: number,
  next: (s: S) => Deadline<K> | undefined,
  handle: (s: S, d: Deadline<K>, now: number) => Transition<S, E>
): Transition<S, E> {
  const effects: E[] = []
  for (let i = 0; i < MAX_DEADLINES_PER_EVENT; i++) {
    const due = next(state)
    if (due === undefined || due.at > now) break
    const step = handle(state, due, now)
    state = step.state
    effects.push(...step.effects)
  }
  return { state, effects }
}

// ---------------------------------------------------------------------------------------------
// Inputs
// ---------------------------------------------------------------------------------------------

/** A lifecycle was created with settings no job can have (a programming error, not a peer's). */
export class InvalidLifecycleConfigError extends Error {
  override name = 'InvalidLifecycleConfigError'
}

/** Throw InvalidLifecycleConfigError unless `value` is an integer in [min, max]. */
export function assertIntIn (value: number, min: number, max: number, what: string): void {
  if (!Number.isSafeInteger(value) || value < min || value > max) {
    throw new InvalidLifecycleConfigError(`${what} must be an integer in [${min}, ${max}], got ${String(value)}`)
  }
}

/** A usable event time: a finite number. */
export function isTime (t: unknown): t is number {
  return typeof t === 'number' && Number.isFinite(t)
}

/** A usable id (CID or peer id string) from a peer's message. */
export function isId (s: unknown): s is string {
  return typeof s === 'string' && s.length > 0 && s.length <= 256
}

/** A usable amount or counter: a non-negative safe integer. */
export function isCount (n: unknown): n is number {
  return typeof n === 'number' && Number.isSafeInteger(n) && n >= 0
}

// ---------------------------------------------------------------------------------------------
// The reducer skeleton both machines share
// ---------------------------------------------------------------------------------------------

/** What a machine supplies to `reduceMachine`. */
export interface MachineSpec<S extends Timed & { status: string }, V extends { type: string, now: unknown }, E, K extends string> {
  final: ReadonlySet<string>
  nextDeadline: (s: S) => Deadline<K> | undefined
  onDeadline: (s: S, d: Deadline<K>, now: number) => Transition<S, E>
  handle: (s: S, e: V, now: number) => Transition<S, E>
  /** The events a final status still takes (a late final payment); none when absent. No deadlines run. */
  afterEnd?: (s: S, e: V, now: number) => Transition<S, E> | undefined
}

/**
 * Apply one event: first every deadline due by `event.now`, oldest first, then the event, then any
 * deadline the event made due, and ask for a wake at the next one. Never throws; an event that does
 * not apply returns the very same state with an `ignored` effect.
 */
export function reduceMachine<S extends Timed & { status: string }, V extends { type: string, now: unknown }, E extends { type: string }, K extends string> (
  spec: MachineSpec<S, V, E, K>,
  state: S,
  event: V
): Transition<S, E | WakeEffect | IgnoredEffect> {
  if (event == null || !isTime(event.now)) return ignore(state, 'event without a valid time')
  if (spec.final.has(state.status)) {
    const late = spec.afterEnd?.(state, event, Math.max(state.now, event.now))
    return late ?? ignore(state, `job is ${state.status}`)
  }
  const now = Math.max(state.now, event.now)
  const timed = { ...state, now }
  const before = advanceDeadlines(timed, now, spec.nextDeadline, spec.onDeadline)
  const handled = spec.handle(before.state, event, now)
  // nothing was due and the event did not apply: the state is returned untouched
  if (before.state === timed && handled.state === timed && handled.effects.some((e) => e.type === 'ignored')) {
    return { state, effects: handled.effects }
  }
  const after = advanceDeadlines(handled.state, now, spec.nextDeadline, spec.onDeadline)
  const effects: Array<E | WakeEffect> = [...before.effects, ...handled.effects, ...after.effects]
  return { state: scheduleWake(after.state, spec.nextDeadline(after.state)?.at, effects), effects }
}

