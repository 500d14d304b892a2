/**
 * How far a provider search goes, and what its answer may claim (protocol/README.md §7.4c), pure.
 *
 * A Kademlia provider lookup stops once it has yielded k providers (kad-dht's `findProviders` returns at
 * `kBucketSize`, 20), so a broad key (`vram/8`, `region/eu`) lists at most k before filtering. Each of the
 * k peers closest to the key holds the records of every provider that placed one there, and answers
 * `GET_PROVIDERS` with all of them: a lookup that may have been cut is continued by asking each of those
 * peers directly (protocol/provider-walk.ts). The node does the lookups; these functions decide when to continue and whether the
 * answer is complete or only "at least N".
 */

/** kad-dht's k (`kBucketSize`): its provider lookup yields at most this many providers, then stops. */
export const DHT_K = 20

/** The most matching providers a search lists unless told otherwise (`--limit`); beyond it, "at least N". */
export const DEFAULT_FIND_LIMIT = 100

/** How long a search runs at most unless told otherwise (`--timeout`), ms; past it the answer is "at least N" (cut at `timeout`). */
export const DEFAULT_FIND_TIMEOUT_MS = 10_000

/** The largest `--limit` accepted: each listed provider costs one ad fetch. */
export const MAX_FIND_LIMIT = 10_000

export interface FindParams {
  /** Stop once this many matching providers are listed (1 … MAX_FIND_LIMIT). */
  limit: number
  /** The DHT's k: a lookup that yielded this many providers may have been cut (≥ 1). */
  k: number
}

export const defaultFindParams: Readonly<FindParams> = Object.freeze({ limit: DEFAULT_FIND_LIMIT, k: DHT_K })

export type FindParamsErrorCode = 'INVALID_LIMIT' | 'INVALID_K'

export class FindParamsError extends Error {
  readonly code: FindParamsErrorCode
  constructor (code: FindParamsErrorCode, message: string) {
    super(message)
    this.name = 'FindParamsError'
    this.code = code
  }
}

export function validateFindParams (params: FindParams): void {
  if (!Number.isInteger(params.limit) || params.limit < 1 || params.limit > MAX_FIND_LIMIT) {
    throw new FindParamsError('INVALID_LIMIT', `limit must be a whole number from 1 to ${MAX_FIND_LIMIT}, got ${String(params.limit)}`)
  }
  if (!Number.isInteger(params.k) || params.k < 1) throw new FindParamsError('INVALID_K', `k must be a whole number ≥ 1, got ${String(params.k)}`)
}

export function createFindParams (partial: Partial<FindParams> = {}): FindParams {
  const params: FindParams = {
    limit: partial.limit ?? defaultFindParams.limit,
    k: partial.k ?? defaultFindParams.k
  }
  validateFindParams(params)
  return params
}

/**
 * True when the DHT's own lookup may have stopped early: it yielded at least k distinct providers (its
 * stopping rule), so more may exist. Below k it ran until no closer peer was left and is taken as whole.
 */
export function lookupMayBeCut (yielded: number, k: number): boolean {
  return yielded >= k
}

/**
 * Why an answer is only "at least N": the search's own limit, its deadline, the DHT's k (a lookup that
 * may have stopped there and could not be continued to every closest peer), or a lookup that failed.
 */
export type CutReason = 'limit' | 'timeout' | 'k' | 'error'

/** What happened during one search, as the node reports it. */
export interface SearchOutcome {
  /** Distinct providers the DHT's own lookup yielded. */
  yielded: number
  /** True when the lookup threw (other than by the deadline) before it ended. */
  lookupFailed: boolean
  /** The continuation past k, when one ran: the k nearest peers it ended with (fewer in a small network), and how many answered. */
  closest?: { found: number, answered: number }
  /** The deadline fired before the search ended. */
  timedOut: boolean
  /** Matching providers listed (before any cut to the limit). */
  matched: number
  /** Providers were still to be fetched, or lookups still running, when the search stopped. */
  pending: boolean
}

export type Completeness = { complete: true } | { complete: false, cut: CutReason }

/** True when the search should stop now: `limit` matching providers are listed. */
export function limitReached (matched: number, params: FindParams): boolean {
  return matched >= params.limit
}

/**
 * Whether a search's answer is every matching provider the DHT holds, or only at least that many. In
 * order: stopped at the limit with work left (or more matches than the limit) → `limit`; the deadline
 * fired → `timeout`; a lookup threw → `error`; a lookup that may have stopped at k and was not continued
 * to every closest peer (none found, or one did not answer) → `k`. Otherwise complete.
 */
export function answerCompleteness (outcome: SearchOutcome, params: FindParams): Completeness {
  if (limitReached(outcome.matched, params) && (outcome.pending || outcome.matched > params.limit)) return { complete: false, cut: 'limit' }
  if (outcome.timedOut) return { complete: false, cut: 'timeout' }
  if (outcome.lookupFailed) return { complete: false, cut: 'error' }
  if (!lookupMayBeCut(outcome.yielded, params.k)) return { complete: true }
  const closest = outcome.closest
  if (closest === undefined || closest.found === 0 || closest.answered < closest.found) return { complete: false, cut: 'k' }
  return { complete: true }
}
