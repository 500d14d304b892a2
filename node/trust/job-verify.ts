/**
 * `gpumesh job verify` (issue 11): the requester re-executes a finished deterministic job of its own
 * with the inputs it holds and compares the output manifest CID with the provider's receipt. On a
 * mismatch it signs a `wrong-output` fraud proof (protocol/README.md §5.9), with the input bytes when
 * they fit the envelope, so that any node can check it by re-executing too.
 */
import type { CID, Signer } from '../../crypto/index.js'
import { KINDS, openMessage, sealMessage, type OpenedMessage, type SealedMessage } from '../../protocol/index.js'
import { buildWrongOutputProof } from '../../protocol/trust/wrong-output.js'
import type { BlobStore } from '../blobs/store.js'
import { fetchInputs } from '../market/provider-io.js'
import { reexecuteJob, type ReexecuteOptions } from './reexecute.js'

/** How long a fraud proof this node signs lives (the kind allows 400 d). */
export const FRAUD_PROOF_LIFETIME_MS = 30 * 24 * 3_600_000
/** Room in the proof envelope for its own fields, key and signature beside the embedded bytes. */
const PROOF_OVERHEAD_BYTES = 2048

export interface JobVerification {
  job: string
  provider: string
  /** True when the re-execution gave the receipt's output. */
  verified: boolean
  receiptOutputs: string
  reexecutedOutputs: string
  /** The fraud proof signed on a mismatch. */
  proof?: SealedMessage<'fraud-proof'>
}

export interface VerifyJobOptions {
  signer: Signer
  blobs: BlobStore
  now: () => number
  maxInputBytes: number
  reexecute?: Omit<ReexecuteOptions, 'job'>
}

/**
 * Re-execute `request` (this node's job) against `receipt` (the provider's, opened). The inputs come
 * from this node's blob store only (it imported them at submit); a missing one fails the verification.
 */
export async function verifyJobByReexecution (request: SealedMessage<'job-request'>, receiptBytes: Uint8Array, options: VerifyJobOptions): Promise<JobVerification> {
  const now = options.now()
  const opened = openMessage(request.bytes, 'job-request', { now, historical: true })
  const receipt: OpenedMessage<'receipt'> = openMessage(receiptBytes, 'receipt', { now, historical: true })
  const declared = request.payload.workload.inputs
  const signal = options.reexecute?.signal ?? new AbortController().signal
  const inputs = await fetchInputs(declared, {
    blobs: options.blobs,
    maxBytes: options.maxInputBytes,
    signal,
    fetch: async (cid: CID) => { throw new Error(`input ${cid.toString()} is not in this node's blob store`) }
  })
  const output = await reexecuteJob(request.payload, inputs, { ...options.reexecute, job: request.cid.toString() })
  const base = { job: request.cid.toString(), provider: receipt.signer, receiptOutputs: receipt.payload.outputs.toString(), reexecutedOutputs: output.toString() }
  if (output.equals(receipt.payload.outputs)) return { ...base, verified: true }
  const found = await Promise.all(declared.map(async (input) => await options.blobs.get(input.cid).catch(() => undefined)))
  const blobs = found.every((b) => b !== undefined) ? found : undefined
  const embedded = (blobs ?? []).reduce((n, b) => n + b.byteLength, 0) + request.bytes.byteLength + receiptBytes.byteLength + PROOF_OVERHEAD_BYTES
  // inputs that would not fit stay out: a verifier fetches them by CID from this node
  const fields = buildWrongOutputProof(opened, receipt, output, blobs !== undefined && embedded <= KINDS['fraud-proof'].maxBytes ? blobs : undefined)
  const proof = sealMessage(options.signer, 'fraud-proof', { v: 1, issuedAt: now, expiresAt: now + FRAUD_PROOF_LIFETIME_MS, ...fields })
  return { ...base, verified: false, proof }
}
