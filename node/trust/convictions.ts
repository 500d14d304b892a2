/**
 * The node's side of fraud proofs (protocol/README.md §5.9, issue 11), between the market's gossip and
 * its requester: proofs heard on the evidence topic go to the FraudVerifier; a verified one convicts
 * its subject — kept in the store (it survives a restart), handed to the requester agent (score 0,
 * never awarded again) and republished once when gossip did not relay it. `verifyJob` serves
 * `gpumesh job verify`: re-execute one of this node's finished jobs and, on a mismatch, sign, keep and
 * publish a `wrong-output` proof.
 */
import { join } from 'node:path'
import { peerIdFromString } from '@libp2p/peer-id'
import { toString as toHex } from 'uint8arrays/to-string'
import type { Signer } from '../../crypto/index.js'
import { EVIDENCE_TOPIC, type OpenedMessage, type SealedMessage } from '../../protocol/index.js'
import { ApiError } from '../api/server.js'
import type { BlobStore } from '../blobs/store.js'
import type { GpumeshLibp2p } from '../libp2p.js'
import type { Logger } from '../logger.js'
import type { MarketGossip } from '../market/gossip.js'
import { InputError } from '../market/provider-io.js'
import type { RequesterMarket } from '../market/requester.js'
import type { MarketStore } from '../market/store.js'
import { FraudVerifier, type Conviction, type ProofRefusal } from './fraud-verifier.js'
import { verifyJobByReexecution } from './job-verify.js'
import { ReexecutionError } from './reexecute.js'

export interface ConvictionsOptions {
  signer: Signer
  node: GpumeshLibp2p
  gossip: MarketGossip
  store: MarketStore
  blobs: BlobStore
  requester: RequesterMarket
  dataDir: string
  now: () => number
  log: Logger
  maxInputBytes: number
  /** Told of each conviction once it is kept (the market indexes the proof to serve it, §7.11). */
  onKept?: (c: Conviction) => void
}

/** What `gpumesh job verify` gets back (the API's JSON). */
export interface JobVerifyView {
  job: string
  provider: string
  verified: boolean
  receiptOutputs: string
  reexecutedOutputs: string
  /** The wrong-output proof published on a mismatch: its id and envelope (hex). */
  proof?: { id: string, kind: 'wrong-output', envelope: string }
  /** The job's audit after a conviction of one of its signers (protocol/market/result-audit.ts), when there was one. */
  audit?: { status: string, by: string, detail: string }
}

export class Convictions {
  readonly verifier: FraudVerifier

  constructor (private readonly options: ConvictionsOptions) {
    const tmpRoot = join(options.dataDir, 'work', 'reexecute')
    this.verifier = new FraudVerifier({
      now: options.now,
      log: options.log,
      blobs: options.blobs,
      fetch: async (peer, cid, maxBytes, signal) => await options.node.services.blob.fetch(peerIdFromString(peer), cid, { maxBytes, signal }),
      convicted: (subject) => options.requester.convicted(subject),
      onConvicted: (c) => { void this.convict(c) },
      maxInputBytes: options.maxInputBytes,
      reexecute: { tmpRoot }
    })
  }

  /** A fraud proof from gossip (opened and within quota): undefined to relay it, else why not now. */
  take (message: OpenedMessage<'fraud-proof'>): ProofRefusal | undefined {
    return this.verifier.take(message)
  }

  /** Act on a verified proof, once per subject; never throws. */
  async convict (c: Conviction): Promise<void> {
    const { log, requester, store, gossip, now } = this.options
    if (requester.convicted(c.subject)) return
    requester.onConvicted(c.subject, c.proof)
    log.warn('provider convicted on a fraud proof', { subject: c.subject, proof: c.proof, kind: c.message.payload.kind })
    await store.putConviction(c.subject, c.proof, c.message.bytes, now()).catch((err: unknown) => {
      log.error('cannot keep a conviction', { subject: c.subject, error: err })
    })
    this.options.onKept?.(c)
    if (!c.relayed) {
      await gossip.publish(c.message, [EVIDENCE_TOPIC]).catch((err: unknown) => {
        log.warn('republishing a fraud proof failed', { proof: c.proof, error: err })
      })
    }
  }

  /** `POST /v1/job/verify?id=`: re-execute the job and compare with its receipt. */
  async verifyJob (id: string): Promise<JobVerifyView> {
    const job = this.options.requester.verifiable(id)
    if (job === undefined) throw new ApiError(404, 'NO_SUCH_JOB', `no job ${id} was submitted from this node`)
    if (job.receipt === undefined) throw new ApiError(409, 'NO_RECEIPT', `job ${id} has no receipt to verify yet`)
    const view = await this.verifyReceipt(id, job.request, job.receipt)
    const audit = this.options.requester.view(id)?.audit
    return audit !== undefined ? { ...view, audit } : view
  }

  /**
   * The requester agent's `publish-fraud-proof`: a replica of this node's job was outvoted (or
   * refuted by the requester's own run). The proof is signed only if this node's own re-execution
   * shows the receipt wrong, so it never publishes one its peers' re-execution would refute. Never throws.
   */
  async proveWrongReplica (id: string, receiptCid: string): Promise<void> {
    const job = this.options.requester.verifiable(id)
    if (job === undefined) return
    try {
      const view = await this.verifyReceipt(id, job.request, receiptCid)
      if (view.verified) this.options.log.warn('an outvoted replica\'s output is what this node\'s re-execution gives: no fraud proof', { job: id, receipt: receiptCid })
    } catch (err) {
      this.options.log.warn('no fraud proof for an outvoted replica', { job: id, receipt: receiptCid, error: err })
    }
  }

  private async verifyReceipt (id: string, request: SealedMessage<'job-request'>, receiptCid: string): Promise<JobVerifyView> {
    const receipt = await this.options.store.getEnvelope(receiptCid)
    if (receipt === undefined) throw new ApiError(409, 'NO_RECEIPT', `job ${id} has no receipt to verify yet`)
    const job = { request }
    let result
    try {
      result = await verifyJobByReexecution(job.request, receipt, {
        signer: this.options.signer,
        blobs: this.options.blobs,
        now: this.options.now,
        maxInputBytes: this.options.maxInputBytes,
        reexecute: { tmpRoot: join(this.options.dataDir, 'work', 'reexecute') }
      })
    } catch (err) {
      if (err instanceof ReexecutionError) throw new ApiError(409, 'NOT_REEXECUTABLE', err.message)
      if (err instanceof InputError) throw new ApiError(409, 'NO_INPUTS', err.message)
      throw err
    }
    const { proof, ...view } = result
    if (proof === undefined) return view
    // convicted here once; the proof is published on every mismatch found (a peer that missed it gets another chance)
    await this.convict({ subject: result.provider, proof: proof.cid.toString(), message: proof, relayed: true })
    // inputs the proof could not embed: any peer checking it fetches them from this node (§5.9)
    if (proof.payload.kind === 'wrong-output' && (proof.payload.inputs?.length ?? 0) === 0) {
      for (const input of request.payload.workload.inputs) this.options.blobs.grantPublic(input.cid)
    }
    await this.options.gossip.publish(proof, [EVIDENCE_TOPIC]).catch((err: unknown) => {
      this.options.log.warn('publishing a fraud proof failed', { proof: proof.cid.toString(), error: err })
    })
    return { ...view, proof: { id: proof.cid.toString(), kind: 'wrong-output', envelope: toHex(proof.bytes, 'base16') } }
  }

  async stop (): Promise<void> {
    await this.verifier.stop()
  }
}
