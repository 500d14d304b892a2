import { z } from 'zod'
import { MAX_AWARD_ATTEMPTS, MAX_BILLING_INTERVAL_SEC, MAX_CONSIDERED_BIDS, MAX_EXCLUDED_PEERS, MAX_LEASE_MS, MIN_BILLING_INTERVAL_SEC, MIN_LEASE_MS } from '../limits.js'
import type { CID } from '../../crypto/index.js'
import { cborCid as cid, header, micros, paymentRule, peerId, text, uint } from './common.js'

/**
 * The requester's decision, gossiped so any node can recompute it: `considered` lists every bid
 * scored (sorted CIDs), `winner`/`bid` the choice and `price` what will be paid per GPU-hour.
 */
export const awardSchema = z.strictObject({
  ...header,
  job: cid,
  /** 1 for the first auction, +1 for each re-auction after a failure or preemption. */
  attempt: z.int().min(1).max(MAX_AWARD_ATTEMPTS),
  winner: peerId,
  bid: cid,
  price: micros,
  paymentRule,
  /** Every bid scored, as CIDs sorted by their string form, without duplicates; includes `bid`. */
  considered: z.array(cid).min(1).max(MAX_CONSIDERED_BIDS),
  /** Providers excluded from this attempt (failed earlier attempts). */
  excluded: z.array(peerId).max(MAX_EXCLUDED_PEERS),
  /** No heartbeat for this long → the provider is presumed gone. */
  leaseMs: z.int().min(MIN_LEASE_MS).max(MAX_LEASE_MS),
  /** Length of one payment interval; the provider risks at most one. */
  billingIntervalSec: z.int().min(MIN_BILLING_INTERVAL_SEC).max(MAX_BILLING_INTERVAL_SEC)
}).refine((a) => a.considered.every((c, i) => i === 0 || (a.considered[i - 1] as CID).toString() < c.toString()), {
  message: 'considered must be sorted and unique', path: ['considered']
}).refine((a) => a.considered.some((c) => c.equals(a.bid)), { message: 'the winning bid must be among those considered', path: ['bid'] })

/** The winner's answer on the exec protocol. */
export const awardResponseSchema = z.strictObject({
  ...header,
  job: cid,
  award: cid,
  decision: z.enum(['accept', 'decline']),
  reason: text(256).optional()
})

export const jobStates = ['accepted', 'fetching-inputs', 'running', 'uploading', 'completed', 'failed', 'preempted', 'cancelled'] as const

/** Status and heartbeat from the provider while a job runs. */
export const jobStatusSchema = z.strictObject({
  ...header,
  job: cid,
  award: cid,
  /** Strictly increasing per (job, award). */
  seq: uint,
  state: z.enum(jobStates),
  gpuSeconds: uint,
  message: text(512).optional()
})

export type Award = z.infer<typeof awardSchema>
export type AwardResponse = z.infer<typeof awardResponseSchema>
export type JobState = typeof jobStates[number]
export type JobStatus = z.infer<typeof jobStatusSchema>
