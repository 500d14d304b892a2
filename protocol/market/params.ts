/**
 * The market's tunable parameters in one plain-data object (the params trio: `MarketParams`,
 * `defaultMarketParams`, `createMarketParams`). The daemon builds one from config.json's `market`
 * section; the simulator varies them per scenario. Every component that decides something takes the
 * params it needs from here, so a node and a simulated node with the same params decide alike.
 *
 * What is on the wire (the award's lease and billing interval) is bounded by the award schema; the
 * rest is each node's own policy, which peers cannot see and need not share.
 */
import { DEFAULT_CLOCK_SKEW_MS } from '../constants.js'
import { DAY_MS, HOUR_MS, MAX_AWARD_ATTEMPTS, MAX_BILLING_INTERVAL_SEC, MAX_LEASE_MS, MINUTE_MS, MIN_BILLING_INTERVAL_SEC, MIN_LEASE_MS } from '../limits.js'
import { PREEMPT_EXACT_LIMIT } from './bid-policy.js'
import { BID_DELAY_FRACTION, BID_SPREAD_SHARE, DAMPING_GROUP_SIZE, ENOUGH_BETTER_BIDS } from './damping.js'
import { DEFAULT_BILLING_INTERVAL_SEC, DEFAULT_LEASE_MS, HEARTBEATS_PER_LEASE, MAX_FAILED_ATTEMPTS } from './lifecycle-shared.js'
import { InvalidScoringParamsError, createScoringParams, defaultScoringParams, type ScoringParams, type ScoringParamsInit } from './scoring.js'
import { defaultStandingParams, type StandingParams } from './standing.js'

/** Notice a preempted bronze job gets before its work stops. */
export const DEFAULT_PREEMPT_NOTICE_MS = 2_000
/** A bid stays valid this long after its round's window closes (must exceed the clock-skew allowance). */
export const DEFAULT_BID_GRACE_MS = 60_000
/** Damping memory: at most this many jobs' bids, and this many providers' bids per job. */
export const DEFAULT_SEEN_BID_JOBS = 4096
export const DEFAULT_SEEN_BIDS_PER_JOB = 64
/** An outstanding bid holds its GPUs this long past its round's close, waiting for the award (reservations.ts). */
export const DEFAULT_BID_HOLD_MS = 1_000
/** An accepted job waits at most this long past the notice for the jobs it preempts to give their GPUs up. */
export const PREEMPT_MARGIN_MS = 5_000
/** An ended offer with an award is kept this long for a late payment if its stream does not end first. */
export const ENDED_RETENTION_MS = 10 * MINUTE_MS

export interface MarketParams {
  /** Lease put in awards, ms: no heartbeat for this long ends an attempt (award schema: 1,000 … 3,600,000). */
  leaseMs: number
  /** Billing interval put in awards, s: a provider risks at most one interval of unpaid work (1 … 86,400). */
  billingIntervalSec: number
  /** Heartbeats per lease (integer 1 … 10): two may be lost without harm at the default 3. */
  heartbeatsPerLease: number
  /** Bid damping on the provider side (default true; off, a provider bids at once: tests and benchmarks). */
  damping: boolean
  /** Share of the bid window over which damping delays spread (0 … 1). */
  bidDelayFraction: number
  /** Share of the damping span (bidDelayFraction of the window) given to tied providers' suppression timers (0 … 1). */
  bidSpreadShare: number
  /** The number of tied providers the suppression timers are tuned for (integer 2 … 10⁹). */
  dampingGroupSize: number
  /** A provider stays silent after seeing this many bids at least as good as its own (integer ≥ 1). */
  enoughBetterBids: number
  /** Notice a preempted bronze job gets, ms (0 … 600,000). */
  preemptNoticeMs: number
  /** An accepted job waits at most the notice + this long for the jobs it preempts to stop, ms (0 … 600,000). */
  preemptMarginMs: number
  /** Preemption is chosen exactly among up to this many jobs in the way, greedily beyond (integer 0 … 16). */
  preemptExactLimit: number
  /** A bid stays valid this long after its window closes, ms (more than the 30 s clock-skew allowance, ≤ 1 h). */
  bidGraceMs: number
  /**
   * An outstanding bid holds its GPUs from the bid decision until its round's award is seen, or this
   * long past the round's close, ms (0 … the bid grace): later bids see those GPUs as taken (0: held
   * only until the close). No overbooking: a GPU is held by at most one outstanding bid at a time.
   */
  bidHoldMs: number
  /** Damping memory bounds (integers ≥ 1). */
  seenBids: { maxJobs: number, maxPerJob: number }
  /**
   * A provider keeps an ended awarded offer this long for a late payment, ms (60,000 … 86,400,000: at
   * least the shell's 30 s linger on the ended job's stream, where such a payment arrives).
   */
  endedRetentionMs: number
  /** Failed awards before a job is given up (integer 1 … 16). */
  maxFailedAttempts: number
  /** How bids are scored (scoring.ts). */
  scoring: ScoringParams
  /** Which bidders the requester's own history lets take another award (standing.ts). */
  standing: StandingParams
}

export const defaultMarketParams: Readonly<MarketParams> = Object.freeze({
  leaseMs: DEFAULT_LEASE_MS,
  billingIntervalSec: DEFAULT_BILLING_INTERVAL_SEC,
  heartbeatsPerLease: HEARTBEATS_PER_LEASE,
  damping: true,
  bidDelayFraction: BID_DELAY_FRACTION,
  bidSpreadShare: BID_SPREAD_SHARE,
  dampingGroupSize: DAMPING_GROUP_SIZE,
  enoughBetterBids: ENOUGH_BETTER_BIDS,
  preemptNoticeMs: DEFAULT_PREEMPT_NOTICE_MS,
  preemptMarginMs: PREEMPT_MARGIN_MS,
  preemptExactLimit: PREEMPT_EXACT_LIMIT,
  bidGraceMs: DEFAULT_BID_GRACE_MS,
  bidHoldMs: DEFAULT_BID_HOLD_MS,
  seenBids: Object.freeze({ maxJobs: DEFAULT_SEEN_BID_JOBS, maxPerJob: DEFAULT_SEEN_BIDS_PER_JOB }),
  endedRetentionMs: ENDED_RETENTION_MS,
  maxFailedAttempts: MAX_FAILED_ATTEMPTS,
  scoring: defaultScoringParams,
  standing: defaultStandingParams
})

/** Overrides for createMarketParams: any subset; nested objects merge field by field. */
export type MarketParamsInit = Partial<Omit<MarketParams, 'seenBids' | 'scoring' | 'standing'>> & {
  seenBids?: Partial<MarketParams['seenBids']>
  standing?: Partial<StandingParams>
  scoring?: ScoringParamsInit
}

/** One market parameter out of range: `field` is its dotted path (`seenBids.maxJobs`, `scoring.unknownReliability`). */
export interface MarketParamsProblem { field: string, message: string }

/**
 * Market parameters out of range: every one of them in `problems`, the first also as `field` and at
 * the head of the message (one problem per field; `scoring.*` gives its first only).
 */
export class InvalidMarketParamsError extends Error {
  override readonly name = 'InvalidMarketParamsError'
  readonly code = 'INVALID_MARKET_PARAMS'
  readonly field: string
  readonly problems: readonly MarketParamsProblem[]
  constructor (problems: readonly MarketParamsProblem[]) {
    super(problems.map((p) => `market.${p.field}: ${p.message}`).join('; '))
    this.problems = problems
    this.field = problems[0]?.field ?? ''
  }
}

type Rule = [field: string, value: unknown, min: number, max: number, integer: boolean]

function check ([field, value, min, max, integer]: Rule): MarketParamsProblem | undefined {
  const ok = typeof value === 'number' && Number.isFinite(value) && value >= min && value <= max && (!integer || Number.isInteger(value))
  return ok ? undefined : { field, message: `expected ${integer ? 'an integer' : 'a number'} in ${min} … ${max}, got ${String(value)}` }
}

/** Throw InvalidMarketParamsError, naming every parameter out of range, unless all are in range. */
export function validateMarketParams (p: MarketParams): void {
  const problems = marketParamsProblems(p)
  if (problems.length > 0) throw new InvalidMarketParamsError(problems)
}

/** Every parameter out of range (scoring's are not checked here: createScoringParams does). */
function marketParamsProblems (p: MarketParams): MarketParamsProblem[] {
  const rules: Rule[] = [
    ['leaseMs', p.leaseMs, MIN_LEASE_MS, MAX_LEASE_MS, true],
    ['billingIntervalSec', p.billingIntervalSec, MIN_BILLING_INTERVAL_SEC, MAX_BILLING_INTERVAL_SEC, true],
    ['heartbeatsPerLease', p.heartbeatsPerLease, 1, 10, true],
    ['bidDelayFraction', p.bidDelayFraction, 0, 1, false],
    ['bidSpreadShare', p.bidSpreadShare, 0, 1, false],
    ['dampingGroupSize', p.dampingGroupSize, 2, 1_000_000_000, true],
    ['enoughBetterBids', p.enoughBetterBids, 1, 1_000_000, true],
    ['preemptNoticeMs', p.preemptNoticeMs, 0, 10 * MINUTE_MS, true],
    ['preemptMarginMs', p.preemptMarginMs, 0, 10 * MINUTE_MS, true],
    ['preemptExactLimit', p.preemptExactLimit, 0, 16, true],
    ['bidGraceMs', p.bidGraceMs, DEFAULT_CLOCK_SKEW_MS + 1, HOUR_MS, true],
    ['bidHoldMs', p.bidHoldMs, 0, typeof p.bidGraceMs === 'number' ? p.bidGraceMs : HOUR_MS, true],
    ['seenBids.maxJobs', p.seenBids?.maxJobs, 1, 1_000_000, true],
    ['seenBids.maxPerJob', p.seenBids?.maxPerJob, 1, 4_096, true],
    ['endedRetentionMs', p.endedRetentionMs, MINUTE_MS, DAY_MS, true],
    ['maxFailedAttempts', p.maxFailedAttempts, 1, MAX_AWARD_ATTEMPTS, true],
    ['standing.minFailureWeight', p.standing?.minFailureWeight, 0, 1_000_000, false],
    ['standing.failureRatio', p.standing?.failureRatio, 0, 1_000_000, false],
    ['standing.exposureBase', p.standing?.exposureBase, 1, 1_000_000, true],
    ['standing.exposurePerDelivery', p.standing?.exposurePerDelivery, 0, 1_000_000, false],
    ['standing.exposureGraceMs', p.standing?.exposureGraceMs, 0, DAY_MS, true],
    ['standing.reopenHeldBack', p.standing?.reopenHeldBack, 1, 1_000_000, true]
  ]
  const problems = rules.flatMap((rule) => check(rule) ?? [])
  if (typeof p.damping !== 'boolean') problems.push({ field: 'damping', message: `expected true or false, got ${String(p.damping)}` })
  if (typeof p.standing?.enabled !== 'boolean') problems.push({ field: 'standing.enabled', message: `expected true or false, got ${String(p.standing?.enabled)}` })
  return problems
}

/**
 * `base` (the defaults unless given) overridden by `init` (nested objects merge field by field),
 * validated; throws InvalidMarketParamsError. A `base` lets one layer of overrides sit on another
 * (config.json's section, then a test's).
 */
export function createMarketParams (init: MarketParamsInit = {}, base: Readonly<MarketParams> = defaultMarketParams): MarketParams {
  let scoring: ScoringParams = base.scoring
  let scoringProblem: MarketParamsProblem | undefined
  try {
    scoring = createScoringParams({ ...base.scoring, ...init.scoring, tierWeights: { ...base.scoring.tierWeights, ...init.scoring?.tierWeights } })
  } catch (err) {
    if (!(err instanceof InvalidScoringParamsError)) throw err
    // scoring names its first bad field only; the rest of the market's are all named
    scoringProblem = { field: `scoring.${err.field}`, message: err.message.slice(err.field.length + 2) }
  }
  const params: MarketParams = {
    ...base,
    ...init,
    seenBids: { ...base.seenBids, ...init.seenBids },
    standing: { ...base.standing, ...init.standing },
    scoring
  }
  const problems = [...marketParamsProblems(params), ...(scoringProblem !== undefined ? [scoringProblem] : [])]
  if (problems.length > 0) throw new InvalidMarketParamsError(problems)
  return params
}
