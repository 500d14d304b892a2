/**
 * `wrong-output` fraud proofs (protocol/README.md §5.9): one receipt of the subject for a deterministic
 * job, and optionally the job's input bytes. Unlike `conflicting-receipts`, the proof alone settles
 * nothing: the pure checks here give a pending result, the verifier re-executes the job (node/trust/
 * reexecute.ts) and `settleWrongOutput` decides. A re-execution that names another output than the
 * receipt convicts the subject; one that agrees shows the proof false, and its signer is the liar.
 */
import { cidMatches, type CID } from '../../crypto/index.js'
import { RejectReason, reject } from '../errors.js'
import { openMessage, type OpenOptions, type OpenedMessage } from '../message.js'
import type { FraudProof } from '../messages/evidence.js'
import type { VerifiedFraudProof } from './fraud-proof.js'
import { checkProofRequest, checkSubjectReceipt, jobInputs, openEmbedded } from './fraud-proof.js'

/** A `wrong-output` proof that passed every check but the re-execution. */
export interface PendingWrongOutput {
  readonly subject: string
  readonly job: CID
  readonly request: OpenedMessage<'job-request'>
  /** The subject's receipt; its `outputs` is the claim the re-execution tests. */
  readonly receipt: OpenedMessage<'receipt'>
  /** The job's input bytes, in its order, each checked against its CID; undefined when the proof has none. */
  readonly inputs: Uint8Array[] | undefined
}

/**
 * The pure checks of a `wrong-output` proof (its envelope bytes, opened here with `options`, or one
 * already opened): kind, exactly one receipt, the request (§5.9 steps 2–4), the receipt (step 5) and,
 * when present, the inputs: one per job input, each hashing to that input's CID. Throws
 * MessageRejectedError with the first failed rule's reason.
 */
export function checkWrongOutput (proof: Uint8Array | Pick<OpenedMessage<'fraud-proof'>, 'payload'>, options: OpenOptions): PendingWrongOutput {
  const payload: FraudProof = proof instanceof Uint8Array ? openMessage(proof, 'fraud-proof', options).payload : proof.payload
  if (payload.kind !== 'wrong-output') reject(RejectReason.INVALID_FIELD, `a ${payload.kind} proof is checked by verifyFraudProof`, 'kind')
  if (payload.receipts.length !== 1) reject(RejectReason.INVALID_FIELD, `a wrong-output proof carries exactly one receipt, not ${payload.receipts.length}`, 'receipts')
  const request = openEmbedded(payload.request, 'job-request', 'request', options)
  const receipt = openEmbedded(payload.receipts[0] as Uint8Array, 'receipt', 'receipts.0', options)
  checkProofRequest(payload.job, request)
  const inputs = jobInputs(request.payload)
  checkSubjectReceipt(payload.subject, payload.job, inputs, receipt, 'receipts.0')
  if (payload.inputs !== undefined) checkInputBytes(inputs, payload.inputs)
  return { subject: payload.subject, job: payload.job, request, receipt, inputs: payload.inputs }
}

/** Each of `bytes` is the blob of the job input at its index, and there is one per input. */
export function checkInputBytes (inputs: readonly CID[], bytes: readonly Uint8Array[]): void {
  if (bytes.length !== inputs.length) reject(RejectReason.INPUTS_MISMATCH, `${bytes.length} input blobs for a job of ${inputs.length} inputs`, 'inputs')
  bytes.forEach((b, i) => {
    if (!cidMatches(inputs[i] as CID, b)) reject(RejectReason.INPUTS_MISMATCH, `inputs.${i} is not the blob ${String(inputs[i])}`, `inputs.${i}`)
  })
}

/**
 * Settle a pending proof with the output manifest CID this node's re-execution of the job gave: a
 * conviction when the subject's receipt names another output, else MessageRejectedError
 * REEXECUTION_AGREES (the subject's output is right, the proof false).
 */
export function settleWrongOutput (pending: PendingWrongOutput, reexecuted: CID): VerifiedFraudProof {
  const claimed = pending.receipt.payload.outputs
  if (claimed.equals(reexecuted)) reject(RejectReason.REEXECUTION_AGREES, `re-executing ${String(pending.job)} gave ${String(reexecuted)}, the output the subject signed`, 'receipts.0.outputs')
  const outputs = [claimed, reexecuted].sort((a, b) => (a.toString() < b.toString() ? -1 : 1))
  return { subject: pending.subject, job: pending.job, outputs, receipts: [pending.receipt] }
}

/** A `wrong-output` proof's fields without its header (`v`, `issuedAt`, `expiresAt`), which the signer adds. */
export type WrongOutputFields = Omit<FraudProof, 'v' | 'issuedAt' | 'expiresAt'>

/**
 * Build a `wrong-output` proof against the signer of `receipt`, with the job's input bytes when given
 * (leave them out when they would not fit the envelope; a verifier then fetches them). The builder
 * runs the pure checks itself, so what it returns passes checkWrongOutput; `reexecuted` (this node's
 * own output) must differ from the receipt's, else REEXECUTION_AGREES: a node never accuses on agreement.
 */
export function buildWrongOutputProof (request: OpenedMessage<'job-request'>, receipt: OpenedMessage<'receipt'>, reexecuted: CID, inputs?: Uint8Array[]): WrongOutputFields {
  const fields: WrongOutputFields = {
    subject: receipt.signer,
    job: receipt.payload.job,
    kind: 'wrong-output',
    request: request.bytes,
    receipts: [receipt.bytes],
    ...(inputs !== undefined ? { inputs } : {})
  }
  const pending = checkWrongOutput({ payload: { v: 1, issuedAt: 0, expiresAt: 0, ...fields } }, { now: receipt.payload.issuedAt })
  settleWrongOutput(pending, reexecuted)
  return fields
}
