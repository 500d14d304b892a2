/**
 * What a claimed device should do on the probe task, in one place: mod-p multiply-adds per second
 * (MAC/s), per GPU model, and the sizing and flag rules built on it (protocol/README.md "Attestations
 * and probes"). Pure.
 *
 * Source of the GPU rows: NVIDIA's datasheets, peak FP32 (non-tensor) TFLOPS — H200 and H100 SXM 67,
 * H100 NVL 60, H100 PCIe 51, A100 19.5, L40S 91.6, L4 30.3, A10 31.2, T4 8.1, RTX 4090 82.6, RTX 3090 35.6.
 * A probe MAC over u16 entries mod p needs an INT32 multiply-add (half the FP32 issue rate on these
 * parts) plus a reduction, so the table assumes one probe MAC per 4 FP32 FLOPs:
 * MAC/s = TFLOPS · 10¹² / 4. No GPU kernel exists yet (node/trust/probe-compute.ts is the seam), so this
 * factor is an assumption, not a measurement; the 2× flag rule is its safety margin.
 * The CPU row is the JavaScript kernel (multiplyRows) on one core, set below what `npm run bench:probe`
 * measured on a loaded shared 2-core machine: 5.9·10⁷ to 1.4·10⁸ MAC/s warm at load 10 to 18, 9.4·10⁶ for the
 * first (not yet optimised) 128³ call at load 17, and a 192³ probe took 722 ms inside a 4-daemon test process at
 * load 20. With expectedMs = n³/rate + 50 and the 2× margin, an honest CPU is not flagged even then.
 */
import { modelInFamily } from '../constants.js'
import { PROBE_MAX_N, PROBE_MIN_N, PROBE_N_STEP } from './probe.js'

export interface ThroughputEntry {
  /** A model family (protocol/README.md §7.4a `modelInFamily`): `h100-pcie` matches `nvidia-h100-pcie`. */
  readonly family: string
  readonly macPerSec: number
}

const TFLOPS = 1e12
const FLOPS_PER_MAC = 4

/** Most specific family first: the first that matches a model wins. */
export const PROBE_THROUGHPUT: readonly ThroughputEntry[] = [
  { family: 'h200', macPerSec: 67 * TFLOPS / FLOPS_PER_MAC },
  { family: 'h100-nvl', macPerSec: 60 * TFLOPS / FLOPS_PER_MAC },
  { family: 'h100-pcie', macPerSec: 51 * TFLOPS / FLOPS_PER_MAC },
  { family: 'h100', macPerSec: 67 * TFLOPS / FLOPS_PER_MAC },
  { family: 'a100', macPerSec: 19.5 * TFLOPS / FLOPS_PER_MAC },
  { family: 'l40s', macPerSec: 91.6 * TFLOPS / FLOPS_PER_MAC },
  { family: 'l4', macPerSec: 30.3 * TFLOPS / FLOPS_PER_MAC },
  { family: 'a10', macPerSec: 31.2 * TFLOPS / FLOPS_PER_MAC },
  { family: 't4', macPerSec: 8.1 * TFLOPS / FLOPS_PER_MAC },
  { family: 'rtx-4090', macPerSec: 82.6 * TFLOPS / FLOPS_PER_MAC },
  { family: 'rtx-3090', macPerSec: 35.6 * TFLOPS / FLOPS_PER_MAC }
]

/** One CPU core running multiplyRows: a floor an honest provider clears even on a busy machine. */
export const PROBE_CPU_MAC_PER_SEC = 1e7

/** How long the claimed device should compute one probe (before the cap on n). */
export const PROBE_TARGET_MS = 250
/** Fixed allowance on top of the compute: deriving A and B, moving them to the device and back. */
export const PROBE_OVERHEAD_MS = 50
/** A claim is flagged when the measured time is more than this many times the expected time. */
export const PROBE_FLAG_FACTOR = 2

export interface ProbeClaim {
  /** The claimed model's slug, or `cpu` when the ad claims no GPU (or one the table does not know). */
  readonly model: string
  readonly device: 'gpu' | 'cpu'
  readonly macPerSec: number
}

/** The claim a probe checks for `model` (a GpuInfo.model slug), or the CPU claim without one. */
export function probeClaim (model: string | undefined): ProbeClaim {
  if (model !== undefined) {
    for (const entry of PROBE_THROUGHPUT) {
      if (modelInFamily(model, entry.family)) return { model, device: 'gpu', macPerSec: entry.macPerSec }
    }
  }
  return { model: 'cpu', device: 'cpu', macPerSec: PROBE_CPU_MAC_PER_SEC }
}

/**
 * The matrix dimension for a claim: the largest multiple of PROBE_N_STEP whose n³ MACs take at most
 * PROBE_TARGET_MS at the claimed rate, within [PROBE_MIN_N, PROBE_MAX_N].
 */
export function probeSizeFor (claim: Pick<ProbeClaim, 'macPerSec'>): number {
  const n = Math.floor(Math.cbrt(claim.macPerSec * PROBE_TARGET_MS / 1000) / PROBE_N_STEP) * PROBE_N_STEP
  return Math.min(PROBE_MAX_N, Math.max(PROBE_MIN_N, n))
}

/** Whole ms the claimed device should take for dimension n: ⌈n³ / rate⌉ + PROBE_OVERHEAD_MS. */
export function expectedProbeMs (claim: Pick<ProbeClaim, 'macPerSec'>, n: number): number {
  return Math.ceil(n ** 3 * 1000 / claim.macPerSec) + PROBE_OVERHEAD_MS
}

/** The flag rule: the claim is more than PROBE_FLAG_FACTOR× faster than what was measured. */
export function isFlagged (expectedMs: number, measuredMs: number): boolean {
  return measuredMs > PROBE_FLAG_FACTOR * expectedMs
}
