import { z } from 'zod'
import { MAX_JOB_FILES, MAX_JOB_GPUS } from '../limits.js'
import { cborCid, contentCid, country, gpuUuid, header, micros, peerId, region, slug, timestampMs, uint } from './common.js'

/** A provider's offer to run a job, gossiped on the job's market topic (DESIGN §5). */
export const bidSchema = z.strictObject({
  ...header,
  job: cborCid,
  /**
   * The bidder's peer id; it must be the signer. Without it, a copy of an honest bid re-signed by
   * another peer would carry the same CID, and the award names bids by CID.
   */
  provider: peerId,
  /** Asked price, micros per GPU-hour. */
  price: micros,
  /** The GPUs the provider would allocate. */
  gpus: z.array(gpuUuid).max(MAX_JOB_GPUS),
  model: slug(),
  vramMiB: uint,
  region,
  country: country.optional(),
  /** The provider promises to start by this time. */
  startBy: timestampMs,
  /** CID of the capability ad the bid stands on. */
  ad: cborCid,
  attestation: cborCid.optional(),
  /**
   * The job's inputs (`workload.inputs[].cid`) this provider already holds, so it will not fetch them
   * (protocol/market/input-cache.ts): distinct, in the order they first appear in the job. Absent when
   * none (never empty), so a bid without cached inputs keeps its encoding. Checked against the job by
   * screening (BAD_CACHED), since the schema cannot see the job.
   */
  cached: z.array(contentCid).min(1).max(MAX_JOB_FILES).optional()
})

export type Bid = z.infer<typeof bidSchema>
