import { z } from 'zod'
import { MAX_JOB_FILES, MAX_JOB_GPUS, MAX_PLACEMENT_RTT_MS, MAX_RUNTIME_SEC } from '../limits.js'
import { bytes, contentCid, executor, header, micros, nonce, paymentRule, region, relativePath, slug, text, tier, uint } from './common.js'

export const workload = z.strictObject({
  executor,
  /** argv, run without a shell. For `wasm`, argv[0] is the module's path among the inputs. */
  argv: z.array(text(4096)).min(1).max(256),
  /** Container image (docker). */
  image: text(256).optional(),
  env: z.record(z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/).max(128), text(4096))
    .refine((env) => Object.keys(env).length <= 64, { message: 'at most 64 environment variables' }),
  inputs: z.array(z.strictObject({ path: relativePath, cid: contentCid, size: uint })).max(MAX_JOB_FILES),
  outputs: z.array(relativePath).max(MAX_JOB_FILES),
  maxRuntimeSec: z.int().min(1).max(MAX_RUNTIME_SEC),
  /** Network access for the job; off unless asked for. */
  network: z.boolean()
})

export const resources = z.strictObject({
  gpus: z.int().min(0).max(MAX_JOB_GPUS),
  /** Per GPU, nominal GB (see vramMeetsGB). */
  minVramGB: uint,
  /** Allowed GPU model slugs; empty = any. */
  models: z.array(slug()).max(16),
  cpuCores: uint,
  memoryMiB: uint,
  diskMiB: uint
})

export const sla = z.strictObject({
  /** gold reserved, silver on-demand, bronze preemptible. */
  tier,
  /** Price cap, micros per GPU-hour. */
  maxPrice: micros,
  maxStartDelaySec: uint
})

export const placement = z.strictObject({
  /** Acceptable regions (a region includes its sub-regions); empty = anywhere. */
  regions: z.array(region).max(16),
  residency: z.enum(['strict', 'prefer']),
  /**
   * Weigh network distance heavily when scoring bids (protocol/market/scoring.ts, LATENCY_SENSITIVE_*).
   * Only `true` is written: absent means not sensitive, so one meaning has one encoding (and one job id).
   */
  latencySensitive: z.literal(true).optional(),
  /** The requester considers only providers whose RTT in its view (measured or estimated) is at most this, ms. */
  maxRttMs: z.int().min(1).max(MAX_PLACEMENT_RTT_MS).optional()
})

export const verification = z.discriminatedUnion('mode', [
  z.strictObject({ mode: z.literal('none') }),
  /** Run on k independent providers and compare output CIDs. */
  z.strictObject({ mode: z.literal('replicate'), k: z.int().min(2).max(5) }),
  /** Re-execute a sample of jobs: probability in per-mille. */
  z.strictObject({ mode: z.literal('spotcheck'), perMille: z.int().min(1).max(1000) })
])

/** A job offered to the market. Its id is the CID of this payload (DESIGN §3). */
export const jobRequestSchema = z.strictObject({
  ...header,
  nonce,
  workload,
  resources,
  sla,
  placement,
  verification,
  auction: z.strictObject({
    bidWindowMs: z.int().min(50).max(600_000),
    paymentRule
  }),
  /** Free-form label shown in listings. */
  label: text(128).optional(),
  /** Opaque requester data (e.g. a budget reference); bounded. */
  meta: bytes(0, 1024).optional()
})

export type Workload = z.infer<typeof workload>
export type Resources = z.infer<typeof resources>
export type Sla = z.infer<typeof sla>
export type Placement = z.infer<typeof placement>
export type Verification = z.infer<typeof verification>
export type JobRequest = z.infer<typeof jobRequestSchema>
