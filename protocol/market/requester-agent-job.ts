/**
 * What the requester agent (requester-agent.ts) keeps per job, and the lines it writes for the job's
 * view. A job drives one lifecycle (`reduceRequester`) — a Run — or, when it is replicated or
 * spot-checked, one Run per replica (replica-runs.ts) beside the job's own, which then only shows the
 * whole.
 */
import type { CID } from '../../crypto/index.js'
import type { OpenedMessage } from '../message.js'
import type { JobRequest } from '../messages/job-request.js'
import type { AuctionBid } from './award.js'
import { formatMicros } from './pricing.js'
import type { AgentAwardView, AgentBidView, ReplicaView, RequesterAgentEffect } from './requester-agent-types.js'
import type { RequesterJob } from './requester-lifecycle.js'

export type SendAward = Extract<RequesterAgentEffect, { type: 'send-award' }>

/** One lifecycle the agent drives: the job's own, or one replica's. */
export interface Run {
  state: RequesterJob
  /** The decision of its last close, sent as the award. */
  decision?: SendAward
  award?: AgentAwardView
  /** The receipt of its current award (the shell's opened envelope), when the shell gave it. */
  receipt?: OpenedMessage<'receipt'>
}

/** One replica of a replicated or spot-checked job. */
export interface ReplicaSlot extends Run {
  role: ReplicaView['role']
  verdict?: ReplicaView['verdict']
}

/** A replicated (or spot-checked) job's replicas and where their comparison stands. */
export interface Replication {
  mode: 'replicate' | 'spotcheck'
  k: number
  slots: ReplicaSlot[]
  shortfall?: string
  /** `asked`, the outputs CID string of the local re-execution, or `failed: …`. */
  reexecution?: string
  tieBroken: boolean
  /** The comparison was decided: payments and reports are out, waiting for the paid ones to settle. */
  judged: boolean
  /** Final status and reason once every slot has ended. */
  ending?: { status: 'settled' | 'failed' | 'cancelled', reason: string }
  cancelled: boolean
  groups?: Array<{ outputs: string, providers: string[] }>
  outcome?: string
}

export interface AgentJob extends Run {
  id: string
  cid: CID
  request: JobRequest
  /** The request opened (needed to compare replicas); absent: verification cannot run. */
  envelope?: OpenedMessage<'job-request'>
  /** The current rounds' held bids, by CID string. */
  bids: Map<string, AuctionBid>
  bidViews: AgentBidView[]
  /** Highest cumulative committed per award (`attempt provider`); awards whose ledger has ended. */
  committed: Map<string, number>
  ended: Set<string>
  replication?: Replication
  /** The job's single run was verified and the spotcheck drew it: a check is to be started. */
  spotcheckDue?: boolean
}

/** The key of one award among a job's: replicas share an attempt number, never a provider. */
export function awardKey (attempt: number, provider: string): string {
  return `${attempt} ${provider}`
}

export function note (job: AgentJob, kind: string, text: string, peer?: string): RequesterAgentEffect {
  return { type: 'note', job: job.id, kind, text, ...(peer !== undefined ? { peer } : {}) }
}

export function credits (micros: number): string {
  return `${formatMicros(micros)} cr`
}

export function short (peer: string): string {
  return `…${peer.slice(-8)}`
}
