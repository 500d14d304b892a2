/**
 * Per-peer budgets (issue 11; protocol/README §7.9 "Budgets"), pure: what one identity may make a node
 * spend before it is refused. A provider takes a job request only while its requester has a token in
 * its bucket (a throw-away identity's 1,275 job requests in 10 s drew 3,757 bids and slowed an honest
 * job 12×), holds at most a bounded number of open offers, and keeps other peers' evidence only when it
 * is about something it knows and within a per-signer and a total quota (evidence-budget.ts).
 *
 * Time comes in as an argument (ms); every refusal is a typed reason, used as the metrics label.
 */
import { BoundedCache } from '../../crypto/index.js'

/** Why a budget refused something (the `reason` label of `gpumesh_messages_rejected_total`). */
export const BudgetRefusal = {
  /** The requester has no token left: too many job requests too fast. */
  RATE_LIMITED: 'RATE_LIMITED',
  /** This provider already holds its maximum of open offers. */
  OFFER_LIMIT: 'OFFER_LIMIT',
  /** Evidence about no job, award or provider this node knows. */
  IRRELEVANT: 'IRRELEVANT',
  /** The evidence's signer has used its storage quota. */
  SIGNER_QUOTA: 'SIGNER_QUOTA',
  /** The evidence store is full. */
  STORE_FULL: 'STORE_FULL'
} as const

export type BudgetRefusal = typeof BudgetRefusal[keyof typeof BudgetRefusal]

/** A token bucket's shape: up to `burst` tokens, one more every `refillMs`. */
export interface JobRate {
  readonly burst: number
  readonly refillMs: number
}

/**
 * A stranger's rate: 32 job requests at once (a sweep, a benchmark's run of jobs), then one a
 * second. An honest requester rarely needs more before it has any trust; a throw-away identity's
 * 1,275 requests in 10 s are cut to 41.
 */
export const STRANGER_JOB_RATE: JobRate = Object.freeze({ burst: 32, refillMs: 1_000 })
/** The most trust buys: ten times a stranger's rate (320 at once, one every 100 ms). */
export const TRUSTED_JOB_RATE: JobRate = Object.freeze({ burst: 320, refillMs: 100 })

/** Requesters whose buckets are tracked; the least recently seen is forgotten first (a full bucket, most likely). */
export const MAX_TRACKED_REQUESTERS = 10_000

/**
 * The most open offers a provider holds: bids out and waiting for an award, bids waiting out their
 * damping delay and bids being sealed. Each is a job request, a bid and its GPU holds in memory; 64
 * is far above what one provider's GPUs can win at once, and far below the 1,276 a spammer drew.
 */
export const MAX_OPEN_OFFERS = 64

/** Whether a provider holding `open` offers may make one more, under `cap`. */
export function offerAdmitted (open: number, cap = MAX_OPEN_OFFERS): boolean {
  return open < cap
}

function checkRate (rate: JobRate): void {
  if (!Number.isInteger(rate.burst) || rate.burst < 1) throw new RangeError(`a bucket's burst must be a positive integer, got ${rate.burst}`)
  if (!Number.isInteger(rate.refillMs) || rate.refillMs < 1) throw new RangeError(`a bucket's refill must be a positive whole number of ms, got ${rate.refillMs}`)
}

/**
 * The rate trust buys: a stranger's at `trust` 0, TRUSTED_JOB_RATE at 1, in proportion between
 * (trust outside [0, 1] is clamped). The burst grows and the refill interval shrinks linearly.
 */
export function rateForTrust (trust: number, stranger: JobRate = STRANGER_JOB_RATE, trusted: JobRate = TRUSTED_JOB_RATE): JobRate {
  const t = Number.isFinite(trust) ? Math.min(1, Math.max(0, trust)) : 0
  const burst = Math.round(stranger.burst + (trusted.burst - stranger.burst) * t)
  // the refill rate (tokens per ms) grows linearly, so the interval is its inverse
  const perMs = 1 / stranger.refillMs + (1 / trusted.refillMs - 1 / stranger.refillMs) * t
  return { burst, refillMs: Math.max(1, Math.round(1 / perMs)) }
}

/** One bucket: whole tokens, and the instant from which the next token is counted. */
export interface Bucket {
  tokens: number
  since: number
}

/**
 * Take one token at `now` from `bucket` (undefined: a new, full one). Whole tokens are added for each
 * whole `refillMs` elapsed; the remainder carries over to the next take (a token due at 6 s is not
 * lost to a take at 5.9 s). A full bucket stops counting: time spent full earns nothing.
 */
export function takeToken (bucket: Bucket | undefined, rate: JobRate, now: number): { ok: boolean, bucket: Bucket } {
  checkRate(rate)
  let tokens = bucket?.tokens ?? rate.burst
  let since = bucket?.since ?? now
  // a clock that went back earns nothing and loses nothing
  const elapsed = Math.max(0, now - since)
  const earned = Math.floor(elapsed / rate.refillMs)
  if (tokens + earned >= rate.burst) {
    tokens = rate.burst
    since = now
  } else {
    tokens += earned
    since += earned * rate.refillMs
  }
  if (tokens < 1) return { ok: false, bucket: { tokens, since } }
  // the first token taken from a full bucket starts its refill clock now
  return { ok: true, bucket: { tokens: tokens - 1, since } }
}

export interface RequesterBudgetOptions {
  /** The rate a requester gets (a trust hook); default: a stranger's, for everyone. */
  rateFor?: (requester: string) => JobRate
  maxTracked?: number
}

/** Job requests per requester (its peer id), one token bucket each. */
export class RequesterBudget {
  private readonly buckets: BoundedCache<string, Bucket>
  private readonly rateFor: (requester: string) => JobRate

  constructor (options: RequesterBudgetOptions = {}) {
    this.rateFor = options.rateFor ?? (() => STRANGER_JOB_RATE)
    this.buckets = new BoundedCache(options.maxTracked ?? MAX_TRACKED_REQUESTERS)
  }

  /** Charge one job request by `requester` at `now`: undefined when admitted, else the refusal. */
  admit (requester: string, now: number): BudgetRefusal | undefined {
    const { ok, bucket } = takeToken(this.buckets.get(requester), this.rateFor(requester), now)
    this.buckets.set(requester, bucket)
    return ok ? undefined : BudgetRefusal.RATE_LIMITED
  }

  get tracked (): number {
    return this.buckets.size
  }
}
