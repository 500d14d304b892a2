import { z } from 'zod'
import { MAX_JOB_FILES, MAX_JOB_GPUS } from '../limits.js'
import { blobCid, cborCid, contentCid, executor, gpuUuid, header, micros, peerId, timestampMs, uint } from './common.js'

/** Signed by the provider when a job ends: what ran, on what, for how long, producing what. */
export const receiptSchema = z.strictObject({
  ...header,
  job: cborCid,
  award: cborCid,
  requester: peerId,
  /** Input CIDs, in the job's order. */
  inputs: z.array(contentCid).max(MAX_JOB_FILES),
  /** CID of the dag-cbor output manifest {files:[{path,size,cid}]}. */
  outputs: cborCid,
  logs: blobCid.optional(),
  /** Process exit code; 128 + n for signal n; -1 when the executor could not start the job. */
  exitCode: z.int().min(-1).max(255),
  startedAt: timestampMs,
  endedAt: timestampMs,
  gpuSeconds: uint,
  gpus: z.array(gpuUuid).max(MAX_JOB_GPUS),
  executor,
  attestation: cborCid.optional()
}).refine((r) => r.endedAt >= r.startedAt, { message: 'endedAt before startedAt', path: ['endedAt'] })

/**
 * Signed by the requester: the total it owes the payee for the job so far (cumulative, so the latest
 * commitment supersedes the earlier ones, as in a payment channel).
 */
export const paymentSchema = z.strictObject({
  ...header,
  job: cborCid,
  award: cborCid,
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
