import { z } from 'zod'
import { cid, executor, gpuUuid, header, micros, peerId, timestampMs, uint } from './common.js'

/** Signed by the provider when a job ends: what ran, on what, for how long, producing what. */
export const receiptSchema = z.strictObject({
  ...header,
  job: cid,
  award: cid,
  requester: peerId,
  /** Input blob CIDs, in the job's order. */
  inputs: z.array(cid).max(256),
  /** CID of the dag-cbor output manifest {files:[{path,size,cid}]}. */
  outputs: cid,
  logs: cid.optional(),
  /** Process exit code; 128 + n for signal n; -1 when the executor could not start the job. */
  exitCode: z.int().min(-1).max(255),
  startedAt: timestampMs,
  endedAt: timestampMs,
  gpuSeconds: uint,
  gpus: z.array(gpuUuid).max(64),
  executor,
  attestation: cid.optional()
}).refine((r) => r.endedAt >= r.startedAt, { message: 'endedAt before startedAt', path: ['endedAt'] })

/**
 * Signed by the requester: the total it owes the payee for the job so far (cumulative, so the latest
 * commitment supersedes the earlier ones, as in a payment channel).
 */
export const paymentSchema = z.strictObject({
  ...header,
  job: cid,
  award: cid,
  payee: peerId,
  /** Strictly increasing per (job, payee). */
  seq: uint,
  /** Billing intervals covered so far. */
  interval: uint,
  cumulative: micros,
  gpuSeconds: uint
})

export type Receipt = z.infer<typeof receiptSchema>
export type PaymentCommitment = z.infer<typeof paymentSchema>
