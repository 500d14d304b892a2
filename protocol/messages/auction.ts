import { z } from 'zod'
import { MAX_AUCTION_ROUND, MAX_AWARD_ATTEMPTS, MAX_EXCLUDED_PEERS } from '../limits.js'
import { bytes, cborCid as cid, header, peerId, text } from './common.js'

/** The largest job-request envelope (its kind's limit), embedded whole in a round. */
const embeddedJobRequest = bytes(1, 64 * 1024)

/**
 * A re-opened auction for a job, signed by its requester and gossiped on the job's market topics
 * (protocol/README §5.4). The first round is the job request itself; a round ≥ 2 follows a failed
 * or preempted award, or a round without acceptable bids. It carries the original signed job request,
 * so a provider that missed it (or already forgot it) can bid, and the providers excluded from now on.
 * A job request cannot simply be gossiped again: receivers refuse its nonce as a replay.
 */
export const auctionRoundSchema = z.strictObject({
  ...header,
  job: cid,
  /** 2 for the first re-opened round, +1 for each after. */
  round: z.int().min(2).max(MAX_AUCTION_ROUND),
  /** The award attempt this round is for. */
  attempt: z.int().min(1).max(MAX_AWARD_ATTEMPTS),
  /** Providers that failed an earlier attempt: they must not bid. */
  excluded: z.array(peerId).max(MAX_EXCLUDED_PEERS),
  /** The complete signed job-request envelope: its payload CID must be `job`, its signer this round's. */
  request: embeddedJobRequest
})

/** The requester calls off an awarded job (on the exec stream); the provider stops and is paid for the time run. */
export const jobCancelSchema = z.strictObject({
  ...header,
  job: cid,
  award: cid,
  reason: text(256)
})

export type AuctionRound = z.infer<typeof auctionRoundSchema>
export type JobCancel = z.infer<typeof jobCancelSchema>
