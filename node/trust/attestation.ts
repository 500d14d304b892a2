/**
 * The daemon's hardware attestation (issue 11): at start it times the probe kernel on this machine
 * (its own benchmark, labelled with the device that ran it) and signs what detection found or the
 * config declared, so the attestation's id can go into its capability ad and receipts.
 */
import { cpus, totalmem } from 'node:os'
import type { Signer } from '../../crypto/index.js'
import { sealMessage, type GpuInfo, type HardwareAttestation, type SealedMessage } from '../../protocol/index.js'
import { attestationPayload } from '../../protocol/trust/attestation.js'
import { randomNonce } from '../random.js'
import { cpuProbeDevice, type ProbeDevice } from './probe-compute.js'

/** The self-benchmark's matrix dimension: 128³ ≈ 2·10⁶ MACs, tens of ms on one core. */
export const SELF_BENCHMARK_N = 128

/** Time one probe product of dimension n on `device`: MAC/s as the benchmark value. */
export async function selfBenchmark (device: ProbeDevice = cpuProbeDevice, n = SELF_BENCHMARK_N, monotonic: () => number = () => performance.now()): Promise<HardwareAttestation['benchmark']> {
  const start = monotonic()
  await device.multiply(randomNonce(), n)
  const durationMs = Math.max(1, Math.round(monotonic() - start))
  return { name: `freivalds-matmul-${device.device}`, value: Math.round(n ** 3 * 1000 / durationMs), unit: 'mac-per-s', durationMs }
}

/** Benchmark this machine and sign its attestation for `gpus`. */
export async function signAttestation (signer: Signer, gpus: readonly GpuInfo[], now: number, device: ProbeDevice = cpuProbeDevice): Promise<SealedMessage<'attestation'>> {
  const benchmark = await selfBenchmark(device)
  const host = { cpuCores: cpus().length, memoryMiB: Math.floor(totalmem() / 2 ** 20) }
  return sealMessage(signer, 'attestation', attestationPayload({ provider: signer.peerId, gpus, host, benchmark, now }))
}
