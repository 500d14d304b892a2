/**
 * The GPU models a workload's fleet is made of, by the name the daemon would see (nvidia-smi's name and
 * memory.total), so a simulated node's slug, VRAM buckets and family matches are the daemon's own
 * (`modelSlug`, `nominalVramGB`). The Alibaba trace codes its models (`T4`, `V100M16`, `G2`…); ALIBABA_MODELS
 * maps each to one of these. G1–G3 are undisclosed: what we assumed and why is in workloads/README.md.
 */
import { modelSlug } from '../../protocol/constants.js'

export interface GpuModel {
  /** The driver's name, as nvidia-smi prints it. */
  gpuName: string
  /** memory.total in MiB, as nvidia-smi prints it. */
  vramMiB: number
}

export const GPU_MODELS = {
  p100: { gpuName: 'Tesla P100-PCIE-16GB', vramMiB: 16_384 },
  t4: { gpuName: 'Tesla T4', vramMiB: 15_360 },
  v100_16: { gpuName: 'Tesla V100-SXM2-16GB', vramMiB: 16_384 },
  v100_32: { gpuName: 'Tesla V100-SXM2-32GB', vramMiB: 32_768 },
  a10: { gpuName: 'NVIDIA A10', vramMiB: 23_028 },
  a100_pcie_40: { gpuName: 'NVIDIA A100-PCIE-40GB', vramMiB: 40_960 },
  a100_40: { gpuName: 'NVIDIA A100-SXM4-40GB', vramMiB: 40_960 },
  a100_80: { gpuName: 'NVIDIA A100-SXM4-80GB', vramMiB: 81_920 }
} as const satisfies Record<string, GpuModel>

/**
 * The trace's model codes → GPU models. The public ones are what the code says (V100M16 = V100 16 GB);
 * G1–G3 are an assumption (A100 generation, see the README), which a caller can replace.
 */
export const ALIBABA_MODELS: Readonly<Record<string, GpuModel>> = {
  P100: GPU_MODELS.p100,
  T4: GPU_MODELS.t4,
  V100M16: GPU_MODELS.v100_16,
  V100M32: GPU_MODELS.v100_32,
  A10: GPU_MODELS.a10,
  G1: GPU_MODELS.a100_pcie_40,
  G2: GPU_MODELS.a100_40,
  G3: GPU_MODELS.a100_80
}

/** The daemon's slug of a model. */
export function slugOf (m: GpuModel): string {
  return modelSlug(m.gpuName)
}
