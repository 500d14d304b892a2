import { z } from 'zod'
import { MAX_JOB_FILES, MAX_JOB_GPUS } from '../limits.js'
import { bytes, cborCid as cid, gpuUuid, header, nonce, peerId, slug, text, timestampMs, uint } from './common.js'

/** Signed envelopes carried inside another message, up to the largest award (32 KiB). */
const embeddedEnvelope = bytes(1, 32 * 1024)
/** Embedded receipts, up to a receipt's limit (16 KiB). */
const embeddedReceipt = bytes(1, 16 * 1024)
/** An embedded job request, up to a job request's limit (64 KiB). */
const embeddedRequest = bytes(1, 64 * 1024)

export const failureReasons = ['no-heartbeat', 'declined', 'no-show', 'crashed', 'output-mismatch', 'bad-receipt', 'nonpayment', 'preempted', 'cancelled', 'timeout'] as const

/** Signed by whoever saw a failure: the requester (provider vanished) or the provider (requester stopped paying). */
export const failureReportSchema = z.strictObject({
  ...header,
  job: cid,
  subject: peerId,
  reason: z.enum(failureReasons),
  observedAt: timestampMs,
  /** Signed envelopes that back the report (award, last status, receipt…). */
  evidence: z.array(embeddedEnvelope).max(4),
  detail: text(512).optional()
})

/**
 * Reserved for a confidential-computing attestation report (NVIDIA CC on H100/H200-class parts): the
 * scheme and its evidence bytes, as the vendor's tooling returns them. No verifier exists yet, so
 * protocol/trust/attestation.ts never trusts it (it reports the evidence as `unverified`).
 */
export const confidentialEvidenceSchema = z.strictObject({
  scheme: z.literal('nvidia-cc'),
  evidence: bytes(1, 8 * 1024)
})

/** A provider's signed statement of its hardware and a benchmark it ran (protocol/README.md "Attestations and probes"). */
export const attestationSchema = z.strictObject({
  ...header,
  /** The signer: a copy re-signed by another key is refused. */
  provider: peerId,
  gpus: z.array(z.strictObject({
    uuid: gpuUuid,
    name: text(96),
    vramMiB: uint,
    driver: text(32).optional(),
    /** `detected` by nvidia-smi or `declared` in config, as in the capability ad. */
    provenance: z.enum(['detected', 'declared'])
  })).max(MAX_JOB_GPUS),
  host: z.strictObject({ cpuCores: uint, memoryMiB: uint }),
  benchmark: z.strictObject({
    name: slug(),
    value: uint,
    unit: slug(),
    durationMs: uint
  }),
  confidential: confidentialEvidenceSchema.optional()
})

export const probeKinds = ['ping', 'capability', 'freivalds-matmul'] as const

/** Signed by the prober: what it measured when it challenged `subject`. */
export const probeResultSchema = z.strictObject({
  ...header,
  subject: peerId,
  /** The challenge the subject had to answer. */
  nonce,
  kind: z.enum(probeKinds),
  ok: z.boolean(),
  rttMs: uint.optional(),
  durationMs: uint,
  /** Problem size (matrix dimension for freivalds-matmul). */
  size: uint.optional(),
  /** Where the subject said it computed (freivalds-matmul): `cpu` or `gpu`. */
  device: z.enum(['cpu', 'gpu']).optional(),
  /** The claimed model the probe was sized for (`cpu` when none). */
  model: slug().optional(),
  /** What the claim implies for this probe; flagged when durationMs > 2 × expectedMs. */
  expectedMs: uint.optional(),
  detail: text(256).optional()
})

/** The kinds of fraud proof (protocol/README.md §5.9). */
export const fraudProofKinds = ['conflicting-receipts', 'wrong-output'] as const

/**
 * Evidence that `subject` signed a wrong result of a deterministic job (protocol/trust/fraud-proof.ts).
 * Layout 2 (payload type 0x3f670f; 0x3f670c, layout 1 without `request`, is retired): the job request
 * rides along, because a verifier needs it to know that the job is deterministic and which inputs it has.
 * - `conflicting-receipts`: two to five receipts of the subject for the job naming different outputs;
 *   self-contained, any node checks it without asking anyone.
 * - `wrong-output`: exactly one receipt of the subject; a verifier re-executes the job and convicts
 *   when its own output differs. `inputs` optionally carries the job's input blobs (the bytes of each
 *   `workload.inputs[i].cid`, in that order); without them the verifier fetches them by CID.
 * The `wrong-output` kind and `inputs` were added to layout 2 (additive: a verifier that knows only
 * `conflicting-receipts` refuses the other kind value, INVALID_FIELD).
 */
export const fraudProofSchema = z.strictObject({
  ...header,
  subject: peerId,
  job: cid,
  kind: z.enum(fraudProofKinds),
  /** The complete signed job-request envelope whose payload CID is `job`. */
  request: embeddedRequest,
  receipts: z.array(embeddedReceipt).min(1).max(5),
  /** wrong-output only: the bytes of the job's inputs, in its order (within the envelope's limit). */
  inputs: z.array(bytes(0, 152 * 1024)).max(MAX_JOB_FILES).optional()
})

export type FailureReport = z.infer<typeof failureReportSchema>
export type FailureReason = typeof failureReasons[number]
export type HardwareAttestation = z.infer<typeof attestationSchema>
export type ProbeResult = z.infer<typeof probeResultSchema>
export type ConfidentialEvidence = z.infer<typeof confidentialEvidenceSchema>
export type FraudProof = z.infer<typeof fraudProofSchema>
export type FraudProofKind = typeof fraudProofKinds[number]
