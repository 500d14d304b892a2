/**
 * Builds this node's capability ad from what it sells. GPU detection and the config file arrive with
 * the daemon (issue 3); today GPUs are declared (`declared` provenance), as CPU-only machines and
 * tests will keep doing.
 */
import type { CapabilityAd, GpuInfo } from '../protocol/index.js'
import { modelSlug } from '../protocol/index.js'

export class DeclaredGpuError extends Error {
  override readonly name = 'DeclaredGpuError'
}

/** Parse `"NVIDIA H100 80GB HBM3:81559"` (name, then VRAM in MiB) into a declared GPU. */
export function parseDeclaredGpu (spec: string, index: number): GpuInfo {
  const at = spec.lastIndexOf(':')
  const name = spec.slice(0, at).trim()
  const vram = spec.slice(at + 1).trim()
  if (at <= 0 || name === '' || !/^\d+$/.test(vram) || Number(vram) === 0) {
    throw new DeclaredGpuError(`--declare-gpu expects "NAME:VRAM_MIB" (e.g. "NVIDIA H100 80GB HBM3:81559"), got "${spec}"`)
  }
  if (modelSlug(name) === '') throw new DeclaredGpuError(`GPU name "${name}" has no letters or digits`)
  return { index, uuid: `GPU-declared-${index}`, name, model: modelSlug(name), vramMiB: Number(vram), provenance: 'declared' }
}

export interface AdInput {
  gpus: GpuInfo[]
  region: string
  country?: string
  /** micros per GPU-hour */
  priceFloor: number
  cpuCores: number
  memoryMiB: number
  diskGiB: number
  seq: number
  /** ad lifetime */
  ttlMs: number
}

export function buildCapabilityAd (input: AdInput, now: number): CapabilityAd {
  return {
    v: 1,
    issuedAt: now,
    expiresAt: now + input.ttlMs,
    seq: input.seq,
    gpus: input.gpus,
    host: { cpuCores: input.cpuCores, memoryMiB: input.memoryMiB, diskGiB: input.diskGiB },
    region: input.region,
    ...(input.country !== undefined ? { country: input.country } : {}),
    price: { floor: input.priceFloor },
    // every hour of every day until the calendar arrives with the provider policy (issue 3)
    availability: { timeZone: 'UTC', windows: [1, 2, 3, 4, 5, 6, 7].map((day) => ({ day, start: 0, end: 1440 })) },
    workloads: ['process', 'wasm'],
    limits: {},
    attestations: [],
    addrs: []
  }
}
