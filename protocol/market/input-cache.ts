/**
 * Cached inputs (issue 12, data-aware placement; protocol/README §5.4 `cached`, §5.6 "Cached inputs").
 * A provider that already holds some of a job's input blobs (by CID, from earlier jobs) names them in
 * its bid's `cached` list and does not fetch them; the requester counts the transfer time saved in the
 * score. Pure and view-independent: the saving depends on the job and the bid alone, so every node
 * that audits an award computes the same factor.
 *
 *     inputSec    = inputBytes / INPUT_TRANSFER_BYTES_PER_SEC     (every input of the job, in job order)
 *     savedSec    = cachedBytes / INPUT_TRANSFER_BYTES_PER_SEC    (the inputs whose CID the bid lists)
 *     cacheFactor = 1 − min(MAX_CACHE_DISCOUNT, savedSec / (maxRuntimeSec + inputSec))
 *
 * The job holds a provider's GPUs for at most its runtime plus the time to fetch its inputs; the
 * factor is the share of that time a cached input saves, valued at the bid's own price (a provider
 * that skips 10 % of the job's time is scored as if it asked 10 % less). It multiplies the effective
 * price like the distance factor (scoring.ts), and equals 1 exactly when nothing is cached, so bids
 * without `cached` score bit for bit as before.
 */
import type { CID } from '../../crypto/index.js'
import type { JobRequest } from '../messages/job-request.js'
import { MIN_FETCH_BYTES_PER_SEC } from './lifecycle-shared.js'

/**
 * The transfer rate the saving assumes: 1 MiB/s, the rate §7.7 allows for fetching outputs. No node
 * models its bandwidth to a bidder (the RTT view holds round-trip times only), and a per-bidder
 * estimate would be the requester's private view, which an auditor cannot check; one network-wide
 * constant keeps the factor auditable. It is a floor, not a forecast: over faster links a cached
 * input saves less time than counted, over slower ones more.
 */
export const INPUT_TRANSFER_BYTES_PER_SEC = MIN_FETCH_BYTES_PER_SEC

/**
 * At most half of a bid's price is discounted for cached inputs: a provider holding the inputs of a
 * transfer-bound job may ask up to twice another's price and still win, never more (the requester pays
 * the asked price; the saving is time, and a cap keeps time from costing it without bound).
 */
export const MAX_CACHE_DISCOUNT = 0.5

type Inputs = JobRequest['workload']['inputs']
type Workload = Pick<JobRequest['workload'], 'inputs' | 'maxRuntimeSec'>

/** The job's input CIDs as strings, each once, in the order they first appear. */
function distinctInputs (inputs: Inputs): string[] {
  return [...new Set(inputs.map((i) => i.cid.toString()))]
}

/**
 * Whether a bid's `cached` fits its job: every CID is one of the job's inputs, each once, in the order
 * they first appear in `workload.inputs` (absent is fine; the schema forbids an empty list).
 */
export function cachedFitsJob (inputs: Inputs, cached: readonly CID[] | undefined): boolean {
  if (cached === undefined) return true
  const order = distinctInputs(inputs)
  let at = 0
  for (const cid of cached) {
    const i = order.indexOf(cid.toString(), at)
    if (i < 0) return false
    at = i + 1
  }
  return cached.length > 0
}

/** The job's input CIDs for which `held` is true, in `cached` order (distinct, job order); empty when none. */
export function cachedInputs (inputs: Inputs, held: (cid: string) => boolean): CID[] {
  const seen = new Set<string>()
  const out: CID[] = []
  for (const input of inputs) {
    const key = input.cid.toString()
    if (seen.has(key)) continue
    seen.add(key)
    if (held(key)) out.push(input.cid)
  }
  return out
}

/** What cached inputs save a bid, as scoring and the job view read it. */
export interface TransferSaving {
  /** Bytes of the job's inputs the bid holds (each input entry whose CID it lists). */
  cachedBytes: number
  /** Bytes of all the job's inputs. */
  inputBytes: number
  /** cachedBytes at the assumed rate, seconds. */
  savedSec: number
  /** The effective-price multiplier, MAX_CACHE_DISCOUNT…1 (1: nothing cached). */
  factor: number
}

/**
 * The saving of a bid listing `cached` for a job (see the file comment), in IEEE-754 binary64 exactly
 * as written there. CIDs that are not the job's inputs count nothing (screening refuses such bids).
 */
export function transferSaving (workload: Workload, cached: readonly CID[] | undefined): TransferSaving {
  let inputBytes = 0
  for (const input of workload.inputs) inputBytes += input.size
  if (cached === undefined || cached.length === 0) return { cachedBytes: 0, inputBytes, savedSec: 0, factor: 1 }
  const listed = new Set(cached.map((c) => c.toString()))
  let cachedBytes = 0
  for (const input of workload.inputs) if (listed.has(input.cid.toString())) cachedBytes += input.size
  const inputSec = inputBytes / INPUT_TRANSFER_BYTES_PER_SEC
  const savedSec = cachedBytes / INPUT_TRANSFER_BYTES_PER_SEC
  const factor = 1 - Math.min(MAX_CACHE_DISCOUNT, savedSec / (workload.maxRuntimeSec + inputSec))
  return { cachedBytes, inputBytes, savedSec, factor }
}

/** The cache factor alone: what scoring multiplies a bid's price by (1 when nothing is cached). */
export function cacheFactor (workload: Workload, cached: readonly CID[] | undefined): number {
  return cached === undefined ? 1 : transferSaving(workload, cached).factor
}

/** What a job view shows of a bid's cached inputs: their paths (job order) and the seconds saved; undefined when none. */
export function cachedSummary (workload: Workload, cached: readonly CID[] | undefined): { paths: string[], savedSec: number } | undefined {
  if (cached === undefined || cached.length === 0) return undefined
  const listed = new Set(cached.map((c) => c.toString()))
  const paths = workload.inputs.filter((i) => listed.has(i.cid.toString())).map((i) => i.path)
  return { paths, savedSec: transferSaving(workload, cached).savedSec }
}
