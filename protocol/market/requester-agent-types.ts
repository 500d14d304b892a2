/**
 * The requester agent's events and effects (requester-agent.ts), as plain data. Ids are strings: a
 * job is its job request's CID string, a bid its CID string, an award its CID string, peers their
 * peer-id strings. Payloads are the opened schema payloads (CID objects inside). The shell (node/)
 * opens messages before it turns them into events and seals what the effects ask for: the agent never
 * needs a signature.
 */
import type { CID } from '../../crypto/index.js'
import type { OpenedMessage } from '../message.js'
import type { FailureReason } from '../messages/evidence.js'
import type { JobRequest } from '../messages/job-request.js'
import type { JobState } from '../messages/award.js'
import type { AuctionBid, AwardFields } from './award.js'
import type { EvidenceRef } from './lifecycle-shared.js'
import type { AwardEnding, ReauctionReason, RequesterJob, RequesterStatus } from './requester-lifecycle.js'
import type { RankedBid } from './scoring.js'
import type { AuditRecord, AuditStatus } from './result-audit.js'

/** Events about one job carry its id; `now` is the only time the agent knows. */
interface JobEventBase { now: number, job: string }

/** Events from the provider holding an award carry the attempt whose exec stream brought them. */
interface AttemptEventBase extends JobEventBase { attempt: number, provider: string }

export type RequesterAgentEvent =
  /** A job request this node signed (`cid` is its id). */
  /**
   * A job request this node signed (`cid` is its id). `envelope`: the request opened, which a job
   * with `verification` needs (the replicas' comparison reads it); without it the job runs unverified.
   */
  | { type: 'job-submitted', now: number, cid: CID, request: JobRequest, envelope?: OpenedMessage<'job-request'> }
  /**
   * A job read back from the store after a restart, in the state it was saved in, with what its view
   * showed (`award`, `bids`) and, for a verified job, the request opened (`envelope`). One in flight
   * goes on where it can (requester-lifecycle.ts resumeRequesterJob: an award's stream is re-opened,
   * a receipt's outputs fetched again, an open round opened anew); a replicated one, or one cut in a
   * step that lasts no time, is ended as failed (`interrupted`).
   */
  | { type: 'job-restored', now: number, cid: CID, request: JobRequest, state: RequesterJob, award?: AgentAwardView, bids?: readonly AgentBidView[], envelope?: OpenedMessage<'job-request'> }
  /**
   * A bid seen on gossip (opened: its signer checked); screened on arrival. `addrs`: the multiaddrs the
   * bidder is known at (its ad's `addrs`, the connections to it), for replication's independence rule.
   */
  | { type: 'bid-seen', now: number, bid: AuctionBid, model: string, region: string, addrs?: readonly string[] }
  /**
   * The shell's answer to `send-award`: it sealed the award as `award` (its CID string). `provider`
   * (the award's winner) tells replicas at one attempt apart; without it, the job's only award.
   */
  | { type: 'award-sealed', now: number, job: string, attempt: number, award: string, paymentRule: 'first-price' | 'second-score', provider?: string }
  | (AttemptEventBase & { type: 'award-response', decision: 'accept' | 'decline', reason?: string })
  /** A `job-status` heartbeat. */
  | (AttemptEventBase & { type: 'job-status', seq: number, state: JobState, gpuSeconds: number, message?: string })
  /** A receipt; `forThisRequester`: it names this node as the requester. */
  | (AttemptEventBase & { type: 'receipt', exitCode: number, gpuSeconds: number, forThisRequester: boolean, receipt?: OpenedMessage<'receipt'> })
  /** The shell fetched the receipt's outputs and recomputed every CID (`files` of them). */
  | (AttemptEventBase & { type: 'outputs-verified', files: number, missingOutputs?: string[] })
  | (AttemptEventBase & { type: 'outputs-mismatch', detail: string })
  /**
   * The shell fetched and checked the outputs but could not store them on this node (its own disk:
   * `detail` says how), still after one lease of tries: the provider delivered; nobody is blamed.
   */
  | (AttemptEventBase & { type: 'outputs-unsaved', detail: string })
  /**
   * The exec stream ended before the receipt: `remote` is the provider's doing, `local` this node's.
   * `resumable`: it merely dropped (reset, connection gone, closed), no frame broken (requester-lifecycle.ts).
   */
  | (AttemptEventBase & { type: 'stream-failed', fault: 'local' | 'remote', detail: string, resumable?: boolean })
  /** The shell could not open the exec stream (the no-show deadline decides). */
  | (AttemptEventBase & { type: 'unreachable', detail: string })
  /** The shell sent (or tried to send) the payment a `pay` effect asked for (`provider`: its payee, which tells replicas apart). */
  | (JobEventBase & { type: 'payment-sent', attempt: number, cumulative: number, provider?: string })
  /** The shell's answer to `reexecute`: the CID string of the outputs manifest of its own run. */
  | (JobEventBase & { type: 'reexecuted', output: string })
  /** The shell could not re-execute the job (`detail` says why). */
  | (JobEventBase & { type: 'reexecute-failed', detail: string })
  | (JobEventBase & { type: 'cancel' })
  /** A `wake` came due (or any time: deadlines due by `now` are handled). Without `job`: every job. */
  | { type: 'tick', now: number, job?: string }
  /** A fraud proof against `provider` was verified (`proof`: its id): convicted, never awarded again. */
  | { type: 'provider-convicted', now: number, provider: string, proof: string }

export type RequesterAgentEffect =
  | { type: 'publish-job', job: string }
  /** Re-auction: gossip an auction round for the job (the shell seals it with the job's request). */
  | { type: 'publish-round', job: string, round: number, attempt: number, excluded: string[], reason: ReauctionReason | 'no-bids' | 'held-back' | 'replica' }
  /**
   * Seal and send the award (`fields` are the award's payload without its header), open the exec
   * stream, grant the inputs; answer with `award-sealed`. `why`: one line for the job's view.
   */
  | { type: 'send-award', job: string, attempt: number, provider: string, price: number, fields: AwardFields, ranking: RankedBid[], why: string }
  | { type: 'send-cancel', job: string, attempt: number, provider: string, reason: string }
  /** Seal a cumulative payment and send it; write the ledger (final: the award's `ending`); answer `payment-sent`. */
  | {
    type: 'pay'
    job: string
    attempt: number
    payee: string
    interval: number
    cumulative: number
    gpuSeconds: number
    final: boolean
    ending?: AwardEnding
  }
  /**
   * An award ended without a final payment (cancelled or preempted before the run, or failed): close
   * its ledger entry at `cumulative` (what was committed), writing one if none exists, so both
   * ledgers hold every award.
   */
  | { type: 'end-award', job: string, attempt: number, payee: string, ending: 'cancelled' | 'preempted' | 'failed', cumulative: number }
  /**
   * Seal and gossip a failure report against `subject`. `counted`: whether it used up one of the
   * job's failed attempts (a no-show by a winner that never delivered here does not).
   */
  | { type: 'record-failure', job: string, attempt: number, subject: string, reason: FailureReason, evidence: EvidenceRef[], detail?: string, counted: boolean }
  /** Fetch the receipt's outputs and verify them; answer `outputs-verified`, `outputs-mismatch` or `outputs-unsaved`. */
  | { type: 'fetch-outputs', job: string, attempt: number, provider: string }
  /**
   * Re-open the exec stream of the award (`attempt`, `provider`) and send the award on it again
   * (protocol/README.md §7.7 "Resuming"): after a drop, or after this node's restart. Keep trying,
   * with back-off, while the award is current; the lease decides when to stop.
   */
  | { type: 'reconnect', job: string, attempt: number, provider: string }
  /** The round closed without an acceptable bid: look up the providers known and call explainNoBids. */
  | { type: 'explain', job: string, round: number, bids: number }
  /** Send a `tick` for `job` at `at`. */
  | { type: 'wake', job: string, at: number }
  /** A line for the job's timeline (`type` is the event kind, `peer` the provider concerned). */
  | { type: 'note', job: string, kind: string, text: string, peer?: string }
  /** The job reached a final status: stop its wakes, close its streams. */
  | { type: 'finished', job: string, status: RequesterStatus, reason?: string }
  /**
   * Re-run the (deterministic) job locally on the requester's own inputs, with the wasm executor's
   * determinism rules; answer `reexecuted` with the outputs manifest's CID, or `reexecute-failed`.
   * `audit`: the run audits a past accepted result after a conviction (result-audit.ts), not a split.
   */
  | { type: 'reexecute', job: string, audit?: true }
  /**
   * The retroactive audit of a past accepted result (result-audit.ts) changed: `status` and one line for
   * the job's view (`disproved`: the re-execution shows the accepted output wrong; `suspect`: a
   * non-deterministic result signed by a convicted provider). Settled payments are not taken back.
   */
  | { type: 'result-audited', job: string, status: AuditStatus, by: string, detail: string }
  /** A deterministic replica was shown wrong: build and publish a `wrong-output` fraud proof from its receipt (CID string). */
  | { type: 'publish-fraud-proof', job: string, subject: string, receipt: string }
  /** Something that did not apply (for a debug log). */
  | { type: 'ignored', job?: string, reason: string }

/** A bid of the current round as the job view shows it. */
export interface AgentBidView {
  cid: string
  provider: string
  /** Asked price, micros per GPU-hour. */
  price: number
  model: string
  region: string
  /** Effective price under the requester's view when the round closed (lower wins). */
  effectivePrice?: number
  /** Why a bid was dropped before ranking (award.ts BidRejection), when it was. */
  rejected?: string
  /** The RTT to the provider the round's close scored with, whole ms; absent: unknown (scored at defaultRttMs). */
  rttMs?: number
  /** Whether `rttMs` was measured or estimated from locations (rtt-view.ts). */
  rttSource?: 'measured' | 'estimated'
  /** How many of the job's input entries the bid lists as `cached` (input-cache.ts); absent: none. */
  cached?: number
}

/** The current award as the job view shows it. */
export interface AgentAwardView {
  attempt: number
  cid: string
  provider: string
  bid: string
  /** Price to be paid, micros per GPU-hour. */
  price: number
  paymentRule: 'first-price' | 'second-score'
  /** How many bids were considered. */
  considered: number
  /** One line: why this bid won (effective prices of the winner and the runner-up). */
  why: string
  awardedAt: number
  /** The winning bid's cached inputs (input-cache.ts): their paths, and the transfer seconds saved at the assumed 1 MiB/s; absent: none. */
  cached?: { paths: string[], savedSec: number }
}

/** What the shell may read about a job. */
export interface AgentJobView {
  id: string
  state: RequesterJob
  bids: AgentBidView[]
  award?: AgentAwardView
  /** Micros committed to providers, all attempts together. */
  paid: number
  /** A replicated or spot-checked job: its replicas and their comparison. */
  replication?: ReplicationView
  /** The retroactive audit after a conviction of one of its signers (result-audit.ts), once started. */
  audit?: AuditRecord
}

/** One replica of a replicated (or spot-checked) job as the job view shows it. */
export interface ReplicaView {
  /** `replica`: one of the k; `tie-break`: the further one after a split; `original`/`check`: a spotcheck's two runs. */
  role: 'replica' | 'tie-break' | 'original' | 'check'
  status: RequesterStatus
  attempt: number
  provider?: string
  /** The award's CID string, once sealed. */
  award?: string
  /** Outputs manifest CID string of its verified receipt. */
  outputs?: string
  /** After the comparison: paid (`matched`), reported (`outvoted`), or neither (`unpaid`: no majority). */
  verdict?: 'matched' | 'outvoted' | 'unpaid'
}

export interface ReplicationView {
  mode: 'replicate' | 'spotcheck'
  /** Replicas asked for (k; 2 for a spotcheck that drew a check). */
  k: number
  replicas: ReplicaView[]
  /** Why fewer than k run, when they do. */
  shortfall?: string
  /** The output groups of the comparison, most votes first. */
  groups?: Array<{ outputs: string, providers: string[] }>
  /** The local re-execution: `asked`, its outputs CID string, or `failed: …`. */
  reexecution?: string
  /** One line: how the comparison ended. */
  outcome?: string
}
