/**
 * What a node does with the fraud proofs it hears (protocol/README.md §5.9; issue 11). A
 * `conflicting-receipts` proof is checked at once (pure). A `wrong-output` proof passes the pure checks
 * first, then waits in a bounded queue for a re-execution (node/trust/reexecute.ts): one at a time,
 * at most `maxQueued` waiting and `perSigner` per signer. Its inputs come from the proof, else by CID
 * from the proof's signer (the blob protocol; it was the requester, so it holds them). A proof the
 * re-execution refutes counts against its signer: after `maxRefuted` such proofs its proofs are no
 * longer taken. A verified proof calls `onConvicted` once per subject.
 */
import type { CID } from '../../crypto/index.js'
import { MessageRejectedError, RejectReason, type OpenedMessage, type SealedMessage } from '../../protocol/index.js'
import { verifyFraudProof } from '../../protocol/trust/fraud-proof.js'
import { checkWrongOutput, settleWrongOutput, type PendingWrongOutput } from '../../protocol/trust/wrong-output.js'
import type { BlobStore } from '../blobs/store.js'
import type { Logger } from '../logger.js'
import { fetchInputs, type JobInput } from '../market/provider-io.js'
import { ReexecutionError, reexecuteJob, type ReexecuteOptions } from './reexecute.js'

/** Why a proof was not taken (the gossip validator ignores it with this reason). */
export const ProofRefusal = {
  /** It fails a rule of §5.9 (its reason is logged). */
  INVALID: 'FRAUD_PROOF_INVALID',
  /** Its subject is convicted already. */
  KNOWN: 'FRAUD_PROOF_KNOWN',
  /** The re-execution queue, or the signer's share of it, is full. */
  BUSY: 'FRAUD_PROOF_BUSY',
  /** Its signer sent proofs that re-execution refuted. */
  DISCREDITED: 'FRAUD_PROOF_DISCREDITED',
  /** Taken: a wrong-output proof waits for its re-execution (relayed once verified). */
  PENDING: 'FRAUD_PROOF_PENDING'
} as const
export type ProofRefusal = typeof ProofRefusal[keyof typeof ProofRefusal]

/** A verified proof: what the node acts on. */
export interface Conviction {
  subject: string
  /** The proof's id (payload CID string). */
  proof: string
  message: SealedMessage<'fraud-proof'>
  /** Whether gossip relayed it already (a conflicting-receipts proof accepted by the validator). */
  relayed: boolean
}

export interface FraudVerifierOptions {
  now: () => number
  log: Logger
  blobs: BlobStore
  /** Fetch one blob from `peer` (the blob service, hash-checked), at most `maxBytes`. */
  fetch: (peer: string, cid: CID, maxBytes: number, signal: AbortSignal) => Promise<Uint8Array>
  /** Whether `subject` is convicted already. */
  convicted: (subject: string) => boolean
  onConvicted: (conviction: Conviction) => void
  /** Largest inputs of a job this node re-executes, all together. */
  maxInputBytes: number
  maxQueued?: number
  perSigner?: number
  maxRefuted?: number
  /** Passed to reexecuteJob (caps, temp dir). */
  reexecute?: Omit<ReexecuteOptions, 'job' | 'signal'>
}

const DEFAULT_MAX_QUEUED = 16
const DEFAULT_PER_SIGNER = 2
const DEFAULT_MAX_REFUTED = 1

export class FraudVerifier {
  private readonly queue: Array<{ message: OpenedMessage<'fraud-proof'>, pending: PendingWrongOutput }> = []
  private readonly queuedBy = new Map<string, number>()
  private readonly refutedBy = new Map<string, number>()
  /** Subjects with a proof queued or running: one re-execution per subject is enough. */
  private readonly subjects = new Set<string>()
  private running: Promise<void> | undefined
  private readonly stopper = new AbortController()

  constructor (private readonly options: FraudVerifierOptions) {}

  /**
   * Take a proof heard on gossip: undefined when it is verified (conflicting-receipts, relay it), else
   * why it is not relayed now (PENDING for a queued wrong-output proof).
   */
  take (message: OpenedMessage<'fraud-proof'>): ProofRefusal | undefined {
    const { subject, kind } = message.payload
    if (this.options.convicted(subject) || this.subjects.has(subject)) return ProofRefusal.KNOWN
    if ((this.refutedBy.get(message.signer) ?? 0) >= (this.options.maxRefuted ?? DEFAULT_MAX_REFUTED)) return ProofRefusal.DISCREDITED
    const now = this.options.now()
    try {
      if (kind === 'conflicting-receipts') {
        verifyFraudProof(message, { now })
        this.options.onConvicted({ subject, proof: message.cid.toString(), message, relayed: true })
        return undefined
      }
      const pending = checkWrongOutput(message, { now })
      const mine = this.queuedBy.get(message.signer) ?? 0
      if (this.queue.length >= (this.options.maxQueued ?? DEFAULT_MAX_QUEUED) || mine >= (this.options.perSigner ?? DEFAULT_PER_SIGNER)) return ProofRefusal.BUSY
      this.queuedBy.set(message.signer, mine + 1)
      this.subjects.add(subject)
      this.queue.push({ message, pending })
      this.running ??= this.drain()
      return ProofRefusal.PENDING
    } catch (err) {
      if (!(err instanceof MessageRejectedError)) throw err
      this.options.log.info('fraud proof refused', { proof: message.cid.toString(), signer: message.signer, reason: err.reason, error: err.message })
      return ProofRefusal.INVALID
    }
  }

  /** Proofs by `signer` that re-execution refuted. */
  refuted (signer: string): number {
    return this.refutedBy.get(signer) ?? 0
  }

  /** Wait until the queue is empty (tests, stop). */
  async idle (): Promise<void> {
    while (this.running !== undefined) await this.running
  }

  async stop (): Promise<void> {
    this.stopper.abort(new Error('the node is stopping'))
    this.queue.length = 0
    await this.idle()
  }

  private async drain (): Promise<void> {
    try {
      for (let next = this.queue.shift(); next !== undefined; next = this.queue.shift()) {
        try {
          await this.settle(next.message, next.pending)
        } finally {
          const left = (this.queuedBy.get(next.message.signer) ?? 1) - 1
          if (left <= 0) this.queuedBy.delete(next.message.signer)
          else this.queuedBy.set(next.message.signer, left)
          this.subjects.delete(next.pending.subject)
        }
      }
    } finally {
      this.running = undefined
    }
  }

  /** Re-execute one pending proof and act on the verdict; never throws. */
  private async settle (message: OpenedMessage<'fraud-proof'>, pending: PendingWrongOutput): Promise<void> {
    const proof = message.cid.toString()
    const signal = this.stopper.signal
    try {
      const inputs = await this.inputsOf(pending, message.signer, signal)
      const output = await reexecuteJob(pending.request.payload, inputs, { ...this.options.reexecute, job: pending.job.toString(), signal })
      settleWrongOutput(pending, output)
      this.options.log.warn('fraud proof verified by re-execution: provider convicted', { proof, subject: pending.subject, job: pending.job.toString() })
      this.options.onConvicted({ subject: pending.subject, proof, message, relayed: false })
    } catch (err) {
      if (err instanceof MessageRejectedError && err.reason === RejectReason.REEXECUTION_AGREES) {
        // the re-execution agrees with the subject: the proof is false, and its signer made it
        this.refutedBy.set(message.signer, (this.refutedBy.get(message.signer) ?? 0) + 1)
        this.options.log.warn('fraud proof refuted by re-execution', { proof, signer: message.signer, subject: pending.subject, reason: err.reason })
        return
      }
      if (signal.aborted) return
      const why = err instanceof ReexecutionError ? err.reason : 'inputs'
      this.options.log.info('fraud proof not settled', { proof, subject: pending.subject, why, error: (err as Error).message })
    }
  }

  /** The job's input files: from the proof's bytes (kept as blobs), fetched by CID from `signer` for the rest. */
  private async inputsOf (pending: PendingWrongOutput, signer: string, signal: AbortSignal): Promise<JobInput[]> {
    const declared = pending.request.payload.workload.inputs
    for (const [i, bytes] of (pending.inputs ?? []).entries()) await this.options.blobs.putWithCid((declared[i] as { cid: CID }).cid, bytes)
    return await fetchInputs(declared, {
      blobs: this.options.blobs,
      maxBytes: this.options.maxInputBytes,
      signal,
      fetch: async (cid, maxBytes, s) => await this.options.fetch(signer, cid, maxBytes, s)
    })
  }
}
