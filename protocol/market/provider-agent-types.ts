/**
 * The provider agent's events and effects (provider-agent.ts), as plain data. Ids are strings: a job
 * is its job request's CID string, a bid its bid's, an award its award's; peers are peer-id strings.
 * Payloads are the opened schema payloads (they may hold CID objects). The agent computes no CID and
 * checks no signature: the shell (node/market/provider*.ts, or the simulator) seals and opens messages
 * and tells the agent who signed what.
 */
import type { CID } from '../../crypto/index.js'
import type { Award, JobState } from '../messages/award.js'
import type { JobCancel } from '../messages/auction.js'
import type { Bid } from '../messages/bid.js'
import type { CapabilityAd } from '../messages/capability-ad.js'
import type { PaymentCommitment } from '../messages/settlement.js'
import type { AuctionBid, AuctionJob } from './award.js'
import type { EvidenceRef } from './lifecycle-shared.js'
import type { ProviderEffect, ProviderJob, ProviderStatus } from './provider-lifecycle.js'
import type { Allocation, BidDecision } from './types.js'

/** A job request as the agent reads it (OpenedMessage<'job-request'> fits). */
export interface AgentJob extends AuctionJob {
  /** The requester (the job request's signer). */
  readonly signer: string
}

/** A re-opened auction (round ≥ 2): who may not bid, and when its window opened (the round's issuedAt). */
export interface AuctionRoundInfo { round: number, attempt: number, excluded: readonly string[], opensAt: number }

/** An award as the shell opened it: its id, its signer, and the peer that handed it over (the exec stream's remote). */
export interface AgentAward { id: string, signer: string, payload: Award }

/**
 * GPUs the owner keeps for its own work over [from, until): the agent bids, reviews awards and starts
 * jobs around them as around awarded work, and never preempts them. `label` names the work in notes.
 */
export interface OwnerHold { gpus: readonly string[], from: number, until: number, label: string }

export type ProviderAgentEvent =
  /** This node's capability ad (its payload), or undefined when it stops selling. */
  | { type: 'ad-changed', now: number, ad: CapabilityAd | undefined }
  /** The owner's own work ahead (replaces the previous list; past holds may be left out). */
  | { type: 'holds-changed', now: number, holds: readonly OwnerHold[] }
  /**
   * A job request (round 1: no `round`) or a re-opened round of one. `held`: which of the job's input
   * CIDs (strings) this node holds in its blob store now, so its bid can list them as `cached`
   * (input-cache.ts); absent = none.
   */
  | { type: 'job-seen', now: number, job: AgentJob, round?: AuctionRoundInfo, held?: readonly string[] }
  /** Another provider's bid from gossip (for damping). */
  | { type: 'bid-seen', now: number, bid: AuctionBid }
  /** The shell's answer to `send-bid`, right after it: the id and payload of the bid it signed. */
  | { type: 'bid-sealed', now: number, job: string, round: number, bid: string, payload: Bid }
  /** An award from gossip (any winner): one naming another bid releases this node's GPUs held for the job (reservations.ts). */
  | { type: 'award-seen', now: number, award: AgentAward }
  /** The first frame of an exec stream, opened; `from` is the peer that handed it over. */
  | { type: 'award', now: number, award: AgentAward, from: string }
  | { type: 'payment', now: number, bid: string, signer: string, payload: PaymentCommitment }
  | { type: 'cancel', now: number, bid: string, signer: string, payload: JobCancel }
  /** The exec stream of the offer ended (the requester closed it or it broke). */
  | { type: 'requester-gone', now: number, bid: string }
  | { type: 'inputs-fetched', now: number, bid: string }
  | { type: 'started', now: number, bid: string }
  /** The run ended; exitCode −1: it could not run (`note` says why, for the final status). */
  | { type: 'finished', now: number, bid: string, exitCode: number, gpuSeconds: number, outputBytes?: number, note?: string }
  /** The `wake` the agent asked for has come (or any time: a tick never hurts). */
  | { type: 'tick', now: number }
  /**
   * An awarded offer read back after this node restarted (its records): the job, the round and bid it
   * won with (`gpus`, `price`: the bid's), the award taken on (id, price), and the lifecycle state as
   * last recorded. It goes on if it can (provider-lifecycle.ts restartProviderJob); the answer is an
   * `offer-updated` (resumed) or nothing (the shell closes its records as interrupted).
   */
  | { type: 'offer-restored', now: number, job: AgentJob, round: number, bid: string, gpus: readonly string[], price: number, award: { id: string, price: number }, state: ProviderJob }

/** Why the agent refuses an award (string codes). */
export const AwardRefusal = { UNEXPECTED_AWARD: 'UNEXPECTED_AWARD' } as const
export type AwardRefusal = typeof AwardRefusal[keyof typeof AwardRefusal]

/** Why a payment or cancel frame is dropped (string codes). */
export const FrameDrop = {
  NOT_REQUESTER: 'NOT_REQUESTER',
  WRONG_AWARD: 'WRONG_AWARD',
  WRONG_PAYEE: 'WRONG_PAYEE',
  STALE_SEQ: 'STALE_SEQ',
  /** A payment whose cumulative is below an earlier one's (a commitment only grows). */
  BELOW_EARLIER: 'BELOW_EARLIER'
} as const
export type FrameDrop = typeof FrameDrop[keyof typeof FrameDrop]

/** The lifecycle's effects for one offer that the shell carries out (the agent handles review, wakes and ignores). */
type OfferLifecycleEffect =
  | Exclude<ProviderEffect, { type: 'review-award' | 'wake' | 'ignored' | 'heartbeat' | 'notify-preemption' | 'start-job' }>
  /** A job-status; `message`: the note of a final status. */
  | { type: 'heartbeat', seq: number, state: JobState, gpuSeconds: number, message?: string }
  /** A `preempted` status with the notice, out of the heartbeat sequence; `at`: when the notice was given (the work stops at `at + noticeMs`). */
  | { type: 'notify-preemption', noticeMs: number, gpuSeconds: number, message: string, at: number }
  /** Run the job now, on these GPUs (issued only when it may really start, early start included). */
  | { type: 'start-job', gpus: string[] }

/** Every per-offer effect names its bid and job. */
export type OfferEffect = OfferLifecycleEffect & { bid: string, job: string }

export type ProviderAgentEffect =
  /**
   * Seal and publish a bid on `job` (`request`: the job as the shell passed it in) for `round` on the
   * decision's terms, valid until `expiresAt`, listing `cached` (the job's inputs this node held when it
   * saw the job, in the bid's order; absent = none); answer with `bid-sealed`.
   */
  | { type: 'send-bid', job: string, round: number, request: AgentJob, decision: Extract<BidDecision, { kind: 'bid' }>, closesAt: number, expiresAt: number, cached?: readonly CID[] }
  /** Refuse the award (abort the exec stream). */
  | { type: 'refuse-award', award: string, reason: AwardRefusal, message: string }
  /** The award was taken on for the bid: bind the exec stream to it and keep the award as evidence. */
  | { type: 'award-taken', bid: string, job: string, award: string }
  /**
   * The requester re-opened the exec stream with an award this node holds for a job not yet final
   * (protocol/README.md §7.7 "Resuming"): bind the new stream to the job in place of the old, send
   * the receipt again if it went out, and continue the log from the requester's first credit.
   */
  | { type: 'resume-stream', bid: string, job: string, award: string }
  /** The payment or cancel frame being handled counts: keep it (as `ref` evidence, when named). */
  | { type: 'frame-accepted', bid: string, job: string, kind: 'payment' | 'job-cancel', ref?: EvidenceRef }
  /** Drop the frame being handled; `ref`: keep it as that evidence (a bounced payment a failure report embeds). */
  | { type: 'drop-frame', bid: string, job: string, kind: 'payment' | 'job-cancel', reason: FrameDrop, message: string, ref?: EvidenceRef }
  /** The offer's state changed (or a payment came): record it. */
  | { type: 'offer-updated', bid: string, job: string }
  /** The offer reached a final status: release what it held, close its stream. */
  | { type: 'offer-ended', bid: string, job: string, status: ProviderStatus, reason?: string, awarded: boolean }
  | OfferEffect
  /** Send a tick at `at`; a later wake replaces an earlier one. */
  | { type: 'wake', at: number }
  /**
   * This node saw the job and did not bid in this round: `reason` is a bid-policy decline code
   * (bid-policy.ts: VRAM, REGION, BUSY, …) or the agent's own — EXCLUDED, PREEMPTED_HERE,
   * WINDOW_CLOSED, LOW_TRUST, NOT_SELLING, DAMPED. For metrics; a `note` says the same for the log.
   */
  | { type: 'passed', job: string, round: number, reason: string }
  /** For the shell's log. */
  | { type: 'note', level: 'debug' | 'info' | 'warn', message: string, fields: Record<string, unknown> }

/** One offer as the status views read it. */
export interface ProviderOfferView {
  readonly job: string
  readonly bid: string
  readonly round: number
  readonly requester: string
  readonly state: ProviderJob
  /** The GPUs held (or, before an award, the bid's). */
  readonly gpus: readonly string[]
  readonly award?: { id: string, price: number }
  readonly allocation?: Allocation
  /** The latest valid payment. */
  readonly payment: { seq: number, cumulative: number, gpuSeconds: number }
  /** Why the job ended, for its final status. */
  readonly note?: string
}
