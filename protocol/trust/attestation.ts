/**
 * Hardware attestations (issue 11; protocol/README.md "Attestations and probes"): the provider signs
 * what detection found (or what it declared: each GPU says which) and its own probe benchmark; the
 * attestation's id — the CID of its payload, like every message id — goes into its capability ad and
 * its receipts. `verifyAttestation` checks one against the ad that lists it. Pure.
 *
 * Confidential-computing evidence (NVIDIA CC on H100/H200-class parts) has a slot in the payload
 * (`confidential`), but nothing here can verify such a report yet: the verifier never trusts it and
 * says so (`confidential: 'unverified'`). It is never produced from anything but the vendor's report.
 */
import type { CID } from '../../crypto/index.js'
import { encodePayload } from '../codec.js'
import { DAY_MS } from '../limits.js'
import { openMessage, type OpenOptions, type OpenedMessage } from '../message.js'
import type { CapabilityAd, GpuInfo } from '../messages/capability-ad.js'
import type { ConfidentialEvidence, HardwareAttestation } from '../messages/evidence.js'

/** An attestation lives as long as a kind allows (30 days); the daemon signs a new one at every start. */
export const ATTESTATION_LIFETIME_MS = 30 * DAY_MS

export interface AttestationInput {
  /** The provider's peer id (the signer). */
  readonly provider: string
  readonly gpus: readonly GpuInfo[]
  readonly host: { readonly cpuCores: number, readonly memoryMiB: number }
  readonly benchmark: HardwareAttestation['benchmark']
  readonly confidential?: ConfidentialEvidence
  readonly now: number
  readonly lifetimeMs?: number
}

/** The payload the provider signs as `attestation`. */
export function attestationPayload (input: AttestationInput): HardwareAttestation {
  return {
    v: 1,
    issuedAt: input.now,
    expiresAt: input.now + (input.lifetimeMs ?? ATTESTATION_LIFETIME_MS),
    provider: input.provider,
    gpus: input.gpus.map((g) => ({
      uuid: g.uuid,
      name: g.name,
      vramMiB: g.vramMiB,
      ...(g.driver !== undefined ? { driver: g.driver } : {}),
      provenance: g.provenance
    })),
    host: { cpuCores: input.host.cpuCores, memoryMiB: input.host.memoryMiB },
    benchmark: input.benchmark,
    ...(input.confidential !== undefined ? { confidential: input.confidential } : {})
  }
}

/** The attestation's id: the CID of its canonical payload (what sealMessage returns as `cid`). */
export function attestationId (payload: HardwareAttestation): CID {
  return encodePayload('attestation', payload).cid
}

export type AttestationErrorCode =
  /** The ad does not list this attestation's id. */
  | 'NOT_IN_AD'
  /** Signed by another key than the ad's. */
  | 'WRONG_PROVIDER'
  /** A GPU the ad sells is missing from the attestation or described differently. */
  | 'GPU_MISMATCH'

export class AttestationError extends Error {
  override readonly name = 'AttestationError'
  constructor (readonly code: AttestationErrorCode, message: string) {
    super(`${code}: ${message}`)
  }
}

export interface VerifiedAttestation {
  readonly attestation: OpenedMessage<'attestation'>
  /** `absent`, or `unverified`: CC evidence is carried but never trusted until a verifier exists. */
  readonly confidential: 'absent' | 'unverified'
}

/**
 * Open `bytes` as an attestation and check it against `ad` (an opened capability ad): the envelope and
 * payload rules of every message (a forged signature is BAD_SIGNATURE, a payload re-signed by another
 * key SIGNER_MISMATCH, a replay REPLAY — all MessageRejectedError), then AttestationError when the ad
 * does not list its id, was signed by another provider, or sells a GPU the attestation does not state
 * the same way (uuid, name, VRAM, provenance).
 */
export function verifyAttestation (
  bytes: Uint8Array,
  ad: Pick<OpenedMessage<'capability-ad'>, 'signer'> & { readonly payload: Pick<CapabilityAd, 'attestations' | 'gpus'> },
  options: OpenOptions
): VerifiedAttestation {
  const attestation = openMessage(bytes, 'attestation', options)
  if (attestation.signer !== ad.signer) {
    throw new AttestationError('WRONG_PROVIDER', `attestation signed by ${attestation.signer}, the ad by ${ad.signer}`)
  }
  if (!ad.payload.attestations.some((id) => id.equals(attestation.cid))) {
    throw new AttestationError('NOT_IN_AD', `the ad does not list attestation ${attestation.cid.toString()}`)
  }
  const stated = new Map(attestation.payload.gpus.map((g) => [g.uuid, g]))
  for (const gpu of ad.payload.gpus) {
    const s = stated.get(gpu.uuid)
    if (s === undefined) throw new AttestationError('GPU_MISMATCH', `the ad sells ${gpu.uuid}, which the attestation does not state`)
    if (s.name !== gpu.name || s.vramMiB !== gpu.vramMiB || s.provenance !== gpu.provenance) {
      throw new AttestationError('GPU_MISMATCH', `${gpu.uuid} is ${gpu.name}/${gpu.vramMiB} MiB/${gpu.provenance} in the ad, ${s.name}/${s.vramMiB} MiB/${s.provenance} attested`)
    }
  }
  return { attestation, confidential: attestation.payload.confidential === undefined ? 'absent' : 'unverified' }
}
