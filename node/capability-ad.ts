/**
 * Builds this node's capability ad (DESIGN §4) from its provider config and its GPUs: detected ones
 * (nvidia-smi) first, then declared ones (config), which is how CPU-only machines and tests sell.
 */
import { createHash } from 'node:crypto'
import type { CID } from '../crypto/index.js'
import { modelSlug, type CapabilityAd, type GpuInfo, type ProcessSandbox } from '../protocol/index.js'
import type { Config, DeclaredGpu } from './config/schema.js'
import { parseWindows } from './config/windows.js'

/**
 * The UUID of declared GPU `index` on node `peerId`: `GPU-declared-<16 hex of sha2-256(peer id)>-<index>`.
 * Unique per node (two providers never bid the same UUID) and the same at every start (the peer id is).
 */
export function declaredGpuUuid (peerId: string, index: number): string {
  const tag = createHash('sha256').update(`gpumesh/declared-gpu/${peerId}`).digest('hex').slice(0, 16)
  return `GPU-declared-${tag}-${index}`
}

/** Declared GPUs of node `peerId` as ad entries, indexed after the `first` detected ones. */
export function declaredGpuInfos (declared: readonly DeclaredGpu[], peerId: string, first = 0): GpuInfo[] {
  const out: GpuInfo[] = []
  for (const gpu of declared) {
    for (let n = 0; n < gpu.count; n++) {
      const index = first + out.length
      out.push({ index, uuid: declaredGpuUuid(peerId, index), name: gpu.name, model: modelSlug(gpu.name), vramMiB: gpu.vramMiB, provenance: 'declared' })
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
  /** The workloads this node can run now (default: provider.workloads); e.g. without `process` when its sandbox is missing. */
  workloads?: CapabilityAd['workloads']
  /** How `process` jobs are isolated, stated in the ad when it offers `process`. */
  processSandbox?: ProcessSandbox
  /** Ids of this node's hardware attestations (protocol/trust/attestation.ts). */
  attestations?: CID[]
}

const micros = (credits: number): number => Math.round(credits * 1e6)

export function buildCapabilityAd ({ provider, gpus, host, seq, addrs, now, workloads = provider.workloads, processSandbox, attestations = [] }: AdParams): CapabilityAd {
  const offered = [...new Set(workloads)]
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
    workloads: offered,
    ...(processSandbox !== undefined && offered.includes('process') ? { processSandbox } : {}),
    limits: {
      ...(provider.limits.maxPowerW !== undefined ? { maxPowerW: provider.limits.maxPowerW } : {}),
      ...(provider.limits.maxTempC !== undefined ? { maxTempC: provider.limits.maxTempC } : {})
    },
    attestations: attestations.slice(0, 8),
    addrs: adAddresses(addrs)
  }
}

/** The addresses an ad holds: the first 16 (protocol/README §4, `addrs`). */
export function adAddresses (addrs: string[]): string[] {
  return addrs.slice(0, 16)
}
