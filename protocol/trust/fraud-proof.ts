/**
 * Fraud proofs (protocol/README.md "Verification and fraud proofs"): two or more receipts signed by one
 * provider, the proof's `subject`, for the same deterministic job and the same inputs, naming different
 * outputs. An honest provider cannot sign such a pair, so any node that verifies the proof, with
 * nothing but the proof, may drop the subject's trust to zero. Receipts signed by anyone else prove
 * nothing about the subject (a Sybil could sign them to frame it) and are refused.
 */
import { bytesEqual, type CID } from '../../crypto/index.js'
import { MessageRejectedError, RejectReason, reject } from '../errors.js'
import { compareStrings } from '../market/scoring.js'
import { openMessage, type OpenOptions, type OpenedMessage } from '../message.js'
import type { FraudProof } from '../messages/evidence.js'
import type { JobRequest } from '../messages/job-request.js'

/** Most receipts one proof carries (the schema's limit). */
export const MAX_PROOF_RECEIPTS = 5

/** Highest exit code of a run that ended on its own; 128 + n is signal n (a timeout, a preemption). */
const MAX_OWN_EXIT_CODE = 127

/**
 * Whether two honest runs of `job` must give the same outputs: a `wasm` job (node:wasi, no clock, no
 * randomness, no network; DESIGN §6). The job request has no "declared deterministic" field in
 * version 1, so `process` and `docker` jobs are never deterministic here.
 */
export function isDeterministic (job: Pick<JobRequest, 'workload'>): boolean {
  return job.workload.executor === 'wasm'
}

/** Whether a receipt's run ended on its own (exit code 0…127), the only runs determinism speaks of. */
export function completedRun (receipt: OpenedMessage<'receipt'>): boolean {
  return receipt.payload.exitCode >= 0 && receipt.payload.exitCode <= MAX_OWN_EXIT_CODE
}

/** The job's input CIDs, in its order: what every receipt of it must list. */
export function jobInputs (job: JobRequest): CID[] {
  return job.workload.inputs.map((input) => input.cid)
}

export function sameCids (a: readonly CID[], b: readonly CID[]): boolean {
  return a.length === b.length && a.every((cid, i) => bytesEqual(cid.bytes, (b[i] as CID).bytes))
}

/** What a verified proof establishes. */
export interface VerifiedFraudProof {
  /** The provider that signed conflicting receipts. */
  readonly subject: string
  readonly job: CID
  /** The distinct output CIDs it signed, sorted by CID string. */
  readonly outputs: CID[]
  /** The embedded receipts, opened. */
  readonly receipts: Array<OpenedMessage<'receipt'>>
}

/** Open an embedded envelope with the historical option; its reason is kept, its path names the field. */
export function openEmbedded<K extends 'receipt' | 'job-request'> (bytes: Uint8Array, kind: K, path: string, options: OpenOptions): OpenedMessage<K> {
  try {
    return openMessage(bytes, kind, { now: options.now, historical: true, ...(options.ed25519 !== undefined ? { ed25519: options.ed25519 } : {}) })
  } catch (err) {
    if (err instanceof MessageRejectedError) throw new MessageRejectedError(err.reason, `${path}: ${err.message}`, path)
    throw err
  }
}

/**
 * The rules a receipt of the subject must pass in any fraud proof (spec §5.9 step 5): signed by the
 * subject, for the job, with the job's inputs, a run that ended on its own.
 */
export function checkSubjectReceipt (subject: string, job: CID, inputs: readonly CID[], receipt: OpenedMessage<'receipt'>, path: string): void {
  if (receipt.signer !== subject) reject(RejectReason.NOT_BY_SUBJECT, `${path} was signed by ${receipt.signer}, not by the subject ${subject}`, path)
  if (!receipt.payload.job.equals(job)) reject(RejectReason.EMBEDDED_MISMATCH, `${path} is a receipt for ${receipt.payload.job.toString()}, not ${String(job)}`, path)
  if (!sameCids(receipt.payload.inputs, inputs)) reject(RejectReason.INPUTS_MISMATCH, `${path} lists other inputs than the job's`, `${path}.inputs`)
  if (!completedRun(receipt)) reject(RejectReason.INCOMPLETE_RUN, `${path} ended with exit code ${receipt.payload.exitCode}`, `${path}.exitCode`)
}

/** Spec §5.9 steps 3–4: the embedded request is the proof's job, and that job is deterministic. */
export function checkProofRequest (job: CID, request: OpenedMessage<'job-request'>): void {
  if (!request.cid.equals(job)) reject(RejectReason.EMBEDDED_MISMATCH, `the proof is for ${String(job)} but embeds the request ${request.cid.toString()}`, 'request')
  if (!isDeterministic(request.payload)) reject(RejectReason.NOT_DETERMINISTIC, `a ${request.payload.workload.executor} job may give different outputs on honest runs`, 'request')
}

/**
 * The rules of the spec's "Checking a fraud proof", steps 2–7, on an opened job request and opened
 * receipts (shared by the builder, so a node never publishes a proof that others would refuse).
 */
function checkConflict (subject: string, job: CID, request: OpenedMessage<'job-request'>, receipts: ReadonlyArray<OpenedMessage<'receipt'>>): CID[] {
  checkProofRequest(job, request)
  const inputs = jobInputs(request.payload)
  const outputs = new Map<string, CID>()
  receipts.forEach((receipt, i) => {
    checkSubjectReceipt(subject, job, inputs, receipt, `receipts.${i}`)
    outputs.set(receipt.payload.outputs.toString(), receipt.payload.outputs)
  })
  if (outputs.size < 2) reject(RejectReason.NO_CONFLICT, `the receipts name ${outputs.size} output`, 'receipts')
  return [...outputs.keys()].sort(compareStrings).map((key) => outputs.get(key) as CID)
}

/**
 * Verify a fraud proof: its envelope bytes (opened here with `options`, freshness and replay included),
 * or one already opened. Returns what it proves, or throws MessageRejectedError with the reason of the
 * first failed rule.
 */
export function verifyFraudProof (proof: Uint8Array | Pick<OpenedMessage<'fraud-proof'>, 'payload'>, options: OpenOptions): VerifiedFraudProof {
  const payload: FraudProof = proof instanceof Uint8Array ? openMessage(proof, 'fraud-proof', options).payload : proof.payload
  if (payload.kind !== 'conflicting-receipts') reject(RejectReason.INVALID_FIELD, `a ${payload.kind} proof is checked by re-execution (checkWrongOutput)`, 'kind')
  if (payload.inputs !== undefined) reject(RejectReason.INVALID_FIELD, 'a conflicting-receipts proof carries no inputs', 'inputs')
  const request = openEmbedded(payload.request, 'job-request', 'request', options)
  const receipts = payload.receipts.map((bytes, i) => openEmbedded(bytes, 'receipt', `receipts.${i}`, options))
  const outputs = checkConflict(payload.subject, payload.job, request, receipts)
  return { subject: payload.subject, job: payload.job, outputs, receipts }
}

/** A fraud proof's fields without its header (`v`, `issuedAt`, `expiresAt`), which the signer adds. */
export type FraudProofFields = Omit<FraudProof, 'v' | 'issuedAt' | 'expiresAt'>

/**
 * Build the fields of a fraud proof against the signer of `receipts` (all signed by one peer): one
 * receipt per distinct output, the earliest by payload CID string first, at most MAX_PROOF_RECEIPTS.
 * The result depends only on the set of receipts. Throws MessageRejectedError for the same reasons
 * verifyFraudProof refuses a proof with, so what it returns verifies.
 */
export function buildFraudProof (request: OpenedMessage<'job-request'>, receipts: ReadonlyArray<OpenedMessage<'receipt'>>): FraudProofFields {
  const first = receipts[0]
  if (first === undefined) return reject(RejectReason.NO_CONFLICT, 'no receipts', 'receipts')
  const other = receipts.find((r) => r.signer !== first.signer)
  if (other !== undefined) reject(RejectReason.NOT_BY_SUBJECT, `receipts of ${first.signer} and ${other.signer}: a proof is against one signer`, 'receipts')
  const byOutput = new Map<string, OpenedMessage<'receipt'>>()
  for (const receipt of [...receipts].sort((a, b) => compareStrings(a.cid.toString(), b.cid.toString()))) {
    const key = receipt.payload.outputs.toString()
    if (!byOutput.has(key)) byOutput.set(key, receipt)
  }
  const chosen = [...byOutput.values()].slice(0, MAX_PROOF_RECEIPTS)
  checkConflict(first.signer, first.payload.job, request, chosen)
  return { subject: first.signer, job: first.payload.job, kind: 'conflicting-receipts', request: request.bytes, receipts: chosen.map((r) => r.bytes) }
}
