/**
 * The limits that both the wire schemas (protocol/messages/) and the decisions (protocol/market/) rely
 * on, and the units of time they are written in, each defined once. A schema bounds what a peer may send;
 * a decision (an award, a lifecycle, the market params) must never produce more than the schema lets a
 * peer accept, so both read the same constant here. Changing a value that appears in a schema changes
 * the protocol (protocol/README.md).
 *
 * Limits that only one schema uses (argv entries, environment variables, text lengths) stay beside it.
 */

// ---------------------------------------------------------------------------------------------
// Units of time
// ---------------------------------------------------------------------------------------------

export const SECOND_MS = 1_000
export const MINUTE_MS = 60 * SECOND_MS
export const HOUR_MS = 60 * MINUTE_MS
export const DAY_MS = 24 * HOUR_MS
export const WEEK_MS = 7 * DAY_MS
/** Seconds in a day: the unit of the billing-interval bound. */
export const DAY_SEC = DAY_MS / SECOND_MS

// ---------------------------------------------------------------------------------------------
// Auctions and awards
// ---------------------------------------------------------------------------------------------

/** Most award attempts for one job (`attempt` in awards and rounds: 1 … 16); preemptions count too. */
export const MAX_AWARD_ATTEMPTS = 16
/** Most providers an award or a round lists as excluded. */
export const MAX_EXCLUDED_PEERS = 64
/** Most bids an award names as considered, so the most a round's bid store holds. */
export const MAX_CONSIDERED_BIDS = 256
/** Highest auction round number (the job request is round 1, a re-opened round is 2 … 64). */
export const MAX_AUCTION_ROUND = 64

// ---------------------------------------------------------------------------------------------
// Jobs
// ---------------------------------------------------------------------------------------------

/** Most GPUs one job asks for, one bid offers and one ad or receipt lists. */
export const MAX_JOB_GPUS = 64
/** Longest runtime a job may ask for: 30 days. */
export const MAX_RUNTIME_SEC = 30 * DAY_SEC
/** A job's `placement.maxRttMs` is 1 … 10,000 ms (a round trip beyond 10 s is no network path). */
export const MAX_PLACEMENT_RTT_MS = 10_000
/** Most input files (and output paths) of a job, and input CIDs a receipt names. */
export const MAX_JOB_FILES = 256

// ---------------------------------------------------------------------------------------------
// Leases and billing (the award's `leaseMs` and `billingIntervalSec`)
// ---------------------------------------------------------------------------------------------

/** Shortest lease an award may set: no heartbeat for this long ends an attempt. */
export const MIN_LEASE_MS = SECOND_MS
/** Longest lease an award may set. */
export const MAX_LEASE_MS = HOUR_MS
/** Shortest billing interval an award may set, s. */
export const MIN_BILLING_INTERVAL_SEC = 1
/** Longest billing interval an award may set, s: a provider risks at most one interval of work. */
export const MAX_BILLING_INTERVAL_SEC = DAY_SEC
