/**
 * Builds this node's capability ad (DESIGN §4) from its provider config and its GPUs: detected ones
 * (nvidia-smi) first, then declared ones (config), which is how CPU-only machines and tests sell.
 */
import { modelSlug, type CapabilityAd, type GpuInfo } from '../protocol/index.js'
import type { Config, DeclaredGpu } from './config/schema.js'
import { parseWindows } from './config/windows.js'

/** Declared GPUs as ad entries, indexed after the `first` detected ones. */
export function declaredGpuInfos (declared: readonly DeclaredGpu[], first = 0): GpuInfo[] {
  const out: GpuInfo[] = []
  for (const gpu of declared) {
    for (let n = 0; n < gpu.count; n++) {
      const index = first + out.length
      out.push({ index, uuid: `GPU-declared-${index}`, name: gpu.name, model: modelSlug(gpu.name), vramMiB: gpu.vramMiB, provenance: 'declared' })
    }
  }
  return out
}

export interface HostInfo { cpuCores: number, memoryMiB: number, diskGiB: number }

export interface AdParams {
  provider: Config['provider']
  gpus: GpuInfo[]
  host: HostInfo
  /** Strictly increasing across restarts (NodeStore.nextAdSeq). */
  seq: number
  addrs: string[]
  now: number
}

const micros = (credits: number): number => Math.round(credits * 1e6)

export function buildCapabilityAd ({ provider, gpus, host, seq, addrs, now }: AdParams): CapabilityAd {
  return {
    v: 1,
    issuedAt: now,
    expiresAt: now + provider.adTtlMs,
    seq,
    gpus,
    host,
    region: provider.region,
    ...(provider.country !== undefined ? { country: provider.country } : {}),
    price: {
      floor: micros(provider.priceFloor),
      ...(provider.peak !== undefined ? { peak: { price: micros(provider.peak.price), windows: parseWindows(provider.peak.windows) } } : {})
    },
    availability: { timeZone: provider.availability.timeZone, windows: parseWindows(provider.availability.windows) },
    workloads: [...new Set(provider.workloads)],
    limits: {
      ...(provider.limits.maxPowerW !== undefined ? { maxPowerW: provider.limits.maxPowerW } : {}),
      ...(provider.limits.maxTempC !== undefined ? { maxTempC: provider.limits.maxTempC } : {})
    },
    attestations: [],
    addrs: addrs.slice(0, 16)
  }
}
