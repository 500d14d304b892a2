/**
 * Builders for the payloads the harness's nodes exchange: capability ads, job requests, and the
 * messages the shell seals (bids, awards, statuses, receipts, payments, cancels). They fill every
 * schema field with what a daemon would put there, from a short spec, so scenarios stay readable.
 */
import type { CID } from '../../crypto/index.js'
import { PROTOCOL_VERSION, modelSlug } from '../../protocol/constants.js'
import type { CapabilityAd, GpuInfo } from '../../protocol/messages/capability-ad.js'
import type { JobRequest, Verification } from '../../protocol/messages/job-request.js'
import type { Bid } from '../../protocol/messages/bid.js'
import type { Tier } from '../../protocol/market/types.js'
import type { WeeklyWindow } from '../../protocol/market/calendar.js'

/** Free all week. */
export const ALWAYS: readonly WeeklyWindow[] = Object.freeze([1, 2, 3, 4, 5, 6, 7].map((day) => ({ day, start: 0, end: 1440 })))

/** The driver's name and memory of a GPU model the scenarios use (memory as nvidia-smi reports it). */
export const GPU_MODELS = Object.freeze({
  h100: { name: 'NVIDIA H100 80GB HBM3', vramMiB: 81_559 },
  a100: { name: 'NVIDIA A100-SXM4-80GB', vramMiB: 81_920 },
  l40s: { name: 'NVIDIA L40S', vramMiB: 46_068 },
  rtx4090: { name: 'NVIDIA GeForce RTX 4090', vramMiB: 24_564 },
  t4: { name: 'Tesla T4', vramMiB: 15_360 }
})
export type GpuModel = keyof typeof GPU_MODELS

/** Micros per GPU-hour from credits per GPU-hour. */
export function credits (c: number): number {
  return Math.round(c * 1_000_000)
}

export interface AdSpec {
  region: string
  /** GPUs for sale, e.g. { h100: 2 }. */
  gpus: Partial<Record<GpuModel, number>>
  /** More GPUs for sale, of any model: the driver's name, its memory, how many (the simulator's fleets). */
  hardware?: ReadonlyArray<{ name: string, vramMiB: number, count: number }>
  /** Price floor, micros per GPU-hour. */
  floor: number
  peak?: { price: number, windows: WeeklyWindow[] }
  timeZone?: string
  windows?: readonly WeeklyWindow[]
  workloads?: Array<'process' | 'docker' | 'wasm'>
  country?: string
  /** Multiaddrs the ad lists (default none): replicate's independence rule reads their networks (protocol/trust/subnet.ts). */
  addrs?: readonly string[]
}

/** A provider's capability ad payload (`name` makes its GPU UUIDs unique). */
export function capabilityAd (name: string, spec: AdSpec, now: number, seq = 1): CapabilityAd {
  const gpus: GpuInfo[] = []
  for (const [model, count] of Object.entries(spec.gpus) as Array<[GpuModel, number]>) {
    const m = GPU_MODELS[model]
    for (let i = 0; i < count; i++) {
      gpus.push({ index: gpus.length, uuid: `GPU-${name}-${gpus.length}`, name: m.name, model: modelSlug(m.name), vramMiB: m.vramMiB, provenance: 'declared' })
    }
  }
  for (const h of spec.hardware ?? []) {
    for (let i = 0; i < h.count; i++) {
      gpus.push({ index: gpus.length, uuid: `GPU-${name}-${gpus.length}`, name: h.name, model: modelSlug(h.name), vramMiB: h.vramMiB, provenance: 'declared' })
    }
  }
  return {
    v: PROTOCOL_VERSION,
    issuedAt: now,
    expiresAt: now + 2 * 24 * 3_600_000 - 1,
    seq,
    gpus,
    host: { cpuCores: 32, memoryMiB: 262_144, diskGiB: 2_000 },
    region: spec.region,
    ...(spec.country !== undefined ? { country: spec.country } : {}),
    price: { floor: spec.floor, ...(spec.peak !== undefined ? { peak: spec.peak } : {}) },
    availability: { timeZone: spec.timeZone ?? 'UTC', windows: [...(spec.windows ?? ALWAYS)] },
    workloads: spec.workloads ?? ['process', 'wasm'],
    processSandbox: 'bwrap',
    limits: {},
    attestations: [],
    addrs: [...(spec.addrs ?? [])]
  }
}

export interface JobSpec {
  gpus?: number
  minVramGB?: number
  models?: string[]
  tier?: Tier
  /** Price cap, micros per GPU-hour. */
  maxPrice?: number
  maxStartDelaySec?: number
  regions?: string[]
  residency?: 'strict' | 'prefer'
  /** Score distance heavily (placement.latencySensitive, protocol/README.md §5.6). */
  latencySensitive?: boolean
  /** Consider only providers within this RTT in the requester's view (placement.maxRttMs). */
  maxRttMs?: number
  maxRuntimeSec?: number
  bidWindowMs?: number
  paymentRule?: 'first-price' | 'second-score'
  /** How long the request stays valid (expiresAt − issuedAt), ms. */
  lifetimeMs?: number
  outputs?: string[]
  label?: string
  /** How the requester verifies the outputs (default `none`). */
  verification?: Verification
  /** The workload's executor (default `process`); `wasm` is deterministic: a split of its replicas is settled by re-execution and fraud proofs. */
  executor?: 'process' | 'wasm'
}

/** A job request payload with a daemon's defaults for whatever the spec leaves out. */
export function jobRequest (spec: JobSpec, now: number, nonce: Uint8Array): JobRequest {
  return {
    v: PROTOCOL_VERSION,
    issuedAt: now,
    expiresAt: now + (spec.lifetimeMs ?? 3_600_000),
    nonce,
    workload: {
      executor: spec.executor ?? 'process',
      argv: ['/bin/true'],
      env: {},
      inputs: [],
      outputs: spec.outputs ?? ['result.txt'],
      maxRuntimeSec: spec.maxRuntimeSec ?? 3_600,
      network: false
    },
    resources: { gpus: spec.gpus ?? 1, minVramGB: spec.minVramGB ?? 0, models: spec.models ?? [], cpuCores: 0, memoryMiB: 0, diskMiB: 0 },
    sla: { tier: spec.tier ?? 'silver', maxPrice: spec.maxPrice ?? credits(5), maxStartDelaySec: spec.maxStartDelaySec ?? 600 },
    placement: { regions: spec.regions ?? [], residency: spec.residency ?? 'prefer', ...(spec.latencySensitive === true ? { latencySensitive: true as const } : {}), ...(spec.maxRttMs !== undefined ? { maxRttMs: spec.maxRttMs } : {}) },
    verification: spec.verification ?? { mode: 'none' },
    auction: { bidWindowMs: spec.bidWindowMs ?? 2_000, paymentRule: spec.paymentRule ?? 'first-price' },
    ...(spec.label !== undefined ? { label: spec.label } : {})
  }
}

/** The message header a daemon puts on what it seals at `now`, valid for `lifetimeMs`. */
export function header (now: number, lifetimeMs: number): { v: typeof PROTOCOL_VERSION, issuedAt: number, expiresAt: number } {
  return { v: PROTOCOL_VERSION, issuedAt: now, expiresAt: now + lifetimeMs }
}

/** A job and award reference, as the exec messages carry it. */
export interface AwardRef { job: CID, award: CID }

/** What a bid says beside its job and price: the GPUs it offers (their UUIDs) and their hardware. */
export interface BidTerms {
  now: number
  expiresAt: number
  job: CID
  provider: string
  price: number
  /** The GPUs' UUIDs, in the bid's order. */
  gpus: readonly string[]
  /** Those GPUs as the ad lists them: the bid names the first one's model and the least memory. */
  hardware: ReadonlyArray<{ model: string, vramMiB: number }>
  ad: CapabilityAd
  adCid: CID
  startBy: number
}

/** A bid payload as node/market seals it (the honest shell and the adversaries build theirs alike). */
export function bidPayload (t: BidTerms): Bid {
  return {
    ...header(t.now, t.expiresAt - t.now),
    job: t.job,
    provider: t.provider,
    price: t.price,
    gpus: [...t.gpus],
    model: (t.hardware[0] ?? t.ad.gpus[0])?.model ?? 'cpu',
    vramMiB: t.hardware.length === 0 ? 0 : Math.min(...t.hardware.map((g) => g.vramMiB)),
    region: t.ad.region,
    ...(t.ad.country !== undefined ? { country: t.ad.country } : {}),
    startBy: t.startBy,
    ad: t.adCid
  }
}
