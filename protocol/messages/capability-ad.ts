import { z } from 'zod'
import { MAX_JOB_GPUS } from '../limits.js'
import { cborCid, country, executor, gpuUuid, header, micros, region, slug, text, timeZone, uint, uniqueArray, weeklyWindow } from './common.js'

export const gpuInfo = z.strictObject({
  /** nvidia-smi index on the provider. */
  index: z.int().min(0).max(63),
  uuid: gpuUuid,
  /** As the driver names it: `NVIDIA H100 80GB HBM3`. */
  name: text(96),
  /** modelSlug(name). */
  model: slug(),
  vramMiB: uint,
  driver: text(32).optional(),
  powerLimitW: uint.optional(),
  /** `detected` by nvidia-smi, or `declared` in config (CPU-only machines, tests). */
  provenance: z.enum(['detected', 'declared'])
})

/**
 * How the provider isolates `process` jobs: `bwrap` (bubblewrap: no host files beyond the system's read-only
 * tree, no network unless allowed) or `none` (the owner opted out: the job sees the host). An ad that offers
 * `process` without it states nothing, and a buyer treats that as `none`.
 */
export const processSandbox = z.enum(['bwrap', 'none'])

export const priceSchedule = z.strictObject({
  /** Minimum price, micros per GPU-hour. */
  floor: micros,
  /** Optional higher floor inside peak windows (owner's time zone). */
  peak: z.strictObject({ price: micros, windows: z.array(weeklyWindow).min(1).max(32) }).optional()
})

/** A provider's signed offer, served on /gpumesh/capability/1.0.0 (DESIGN §4). */
export const capabilityAdSchema = z.strictObject({
  ...header,
  /** Increases with every new ad from the same provider; the higher one wins. */
  seq: uint,
  gpus: z.array(gpuInfo).max(MAX_JOB_GPUS),
  host: z.strictObject({ cpuCores: uint, memoryMiB: uint, diskGiB: uint }),
  region,
  country: country.optional(),
  price: priceSchedule,
  /** When the GPUs are for sale, in the owner's time zone. Empty = never. */
  availability: z.strictObject({ timeZone, windows: z.array(weeklyWindow).max(64) }),
  workloads: uniqueArray(executor, 3, 1),
  processSandbox: processSandbox.optional(),
  limits: z.strictObject({ maxPowerW: uint.optional(), maxTempC: uint.optional() }),
  /** CIDs of the provider's hardware attestations. */
  attestations: z.array(cborCid).max(8),
  /** Multiaddrs the provider can be dialed on. */
  addrs: z.array(text(256)).max(16)
})

export type GpuInfo = z.infer<typeof gpuInfo>
export type ProcessSandbox = z.infer<typeof processSandbox>
export type PriceSchedule = z.infer<typeof priceSchedule>
export type CapabilityAd = z.infer<typeof capabilityAdSchema>
