/**
 * A harness requester's own verification work (issue 11), as node/market/requester-reexecute.ts and the
 * trust layer (node/trust/convictions.ts, fraud-verifier.ts) do it, with the executor's run time for the
 * run the harness does not do:
 *
 * - `reexecute`: run the job itself — its run time on this node (World.execution), its GPUs' seconds counted
 *   as a verification run — and answer `reexecuted` with the job's true output (outputs.ts: every honest run
 *   of a job names it).
 * - `publish-fraud-proof`: the trust layer signs a `wrong-output` proof only once its own run shows the
 *   receipt wrong: a job this node re-executed is not run again; any other is (counted). Then it gossips the
 *   proof on the evidence topic and convicts the subject here.
 * - `reexecute` with `audit`: the same run, for the retroactive audit of a past accepted result after a
 *   conviction (protocol/market/result-audit.ts), counted as an `audit` run.
 * - A proof heard: a `wrong-output` proof is checked by re-executing its job (counted, once per node), then
 *   the subject is convicted (`provider-convicted`). As the daemon's FraudVerifier, a node that has convicted
 *   the subject already, or is checking a proof against it, does not check another (one run per subject).
 *   A proof whose receipt names the job's true output does not convict.
 */
import { EVIDENCE_TOPIC } from '../../protocol/constants.js'
import type { RequesterAgentEvent } from '../../protocol/market/requester-agent.js'
import type { Receipt } from '../../protocol/messages/settlement.js'
import { message, type FraudProofBody, type Opened } from './messages.js'
import { trueOutput } from './outputs.js'
import { header } from './payloads.js'
import type { World } from './world.js'
import type { VerificationRunRecord } from './recorder.js'

/** A fraud proof is valid this long (as the evidence the daemon signs). */
const PROOF_LIFETIME_MS = 30 * 24 * 3_600_000 - 1

export class RequesterVerifier {
  /** Jobs this node has re-executed. */
  private readonly reexecuted = new Set<string>()
  /** Subjects a proof against is being checked. */
  private readonly checking = new Set<string>()

  constructor (
    private readonly world: World,
    private readonly peerId: string,
    private readonly feed: (event: RequesterAgentEvent) => void,
    private readonly convicted: (provider: string) => boolean
  ) {}

  /** Re-run `job` here (`audit`: a past accepted result, after a conviction); answer `reexecuted` with its true output once the run is done. */
  reexecute (job: string, kind: 'reexecute' | 'audit' = 'reexecute'): void {
    this.run(job, kind, undefined, () => {
      this.reexecuted.add(job)
      this.feed({ type: 'reexecuted', now: this.world.scheduler.now(), job, output: trueOutput(job).toString() })
    })
  }

  /** Prove `receipt` wrong: re-execute unless done, then gossip the proof and convict its signer here. */
  prove (job: string, receipt: Opened<Receipt>): void {
    const publish = (): void => {
      const request = this.world.jobs.get(job)
      if (request === undefined || receipt.payload.outputs.equals(trueOutput(job))) return
      const now = this.world.scheduler.now()
      const body: FraudProofBody = { cid: this.world.ids.cid('fraud-proof'), signer: this.peerId, payload: { ...header(now, PROOF_LIFETIME_MS), subject: receipt.signer, kind: 'wrong-output' }, job: request.cid, receipt }
      // the proof embeds the job's request and the subject's receipt (both signed envelopes)
      const embedded = message('job-request', request).bytes + message('receipt', { ...receipt, outputBytes: 0, tampered: false }).bytes
      this.world.bus.publish(this.peerId, [EVIDENCE_TOPIC], message('fraud-proof', body, embedded))
      this.convict(receipt.signer, body)
    }
    if (this.reexecuted.has(job)) publish()
    else this.run(job, 'proof-check', receipt.signer, publish)
  }

  /** A proof heard on the evidence topic: check it (one run per subject) and convict on a wrong receipt. */
  onProof (proof: FraudProofBody): void {
    const subject = proof.payload.subject
    const job = proof.job.toString()
    if (proof.signer === this.peerId || proof.receipt.signer !== subject || !proof.receipt.payload.job.equals(proof.job)) return
    if (this.convicted(subject) || this.checking.has(subject)) return
    this.checking.add(subject)
    this.run(job, 'proof-check', subject, () => {
      this.checking.delete(subject)
      if (!proof.receipt.payload.outputs.equals(trueOutput(job))) this.convict(subject, proof)
    })
  }

  private convict (provider: string, proof: FraudProofBody): void {
    if (this.convicted(provider)) return
    const now = this.world.scheduler.now()
    this.world.recorder.convicted({ node: this.peerId, provider, proof: proof.cid.toString(), job: proof.job.toString(), at: now })
    this.feed({ type: 'provider-convicted', now, provider, proof: proof.cid.toString() })
  }

  /** Run `job` on this node for its run time (its GPUs' seconds counted), then `then`. */
  private run (job: string, kind: VerificationRunRecord['kind'], subject: string | undefined, then: () => void): void {
    const ex = this.world.execution(job, this.peerId)
    const gpus = this.world.jobs.get(job)?.payload.resources.gpus ?? 1
    const now = this.world.scheduler.now()
    this.world.recorder.verificationRun({ job, node: this.peerId, kind, gpuSeconds: gpus * ex.durationMs / 1000, at: now, ...(subject !== undefined ? { subject } : {}) })
    this.world.scheduler.at(now + ex.durationMs, then)
  }
}
