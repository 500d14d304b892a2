/**
 * What the requester's shell keeps per job beside the agent's state (protocol/market/requester-agent.ts):
 * the signed envelopes, the exec streams, the log's pacing, the timers and the record written to the
 * store. Nothing here decides: the agent does; the shell's files (requester*.ts) share these types.
 */
import type { Signer } from '../../crypto/index.js'
import type { Cancel, EvidenceRef, JobRequest, KnownProviders, MarketParams, OpenedMessage, RequesterAgentEvent, RequesterTrustOptions, Scheduler, SealedMessage } from '../../protocol/index.js'
import type { BlobStore } from '../blobs/store.js'
import type { GpumeshLibp2p } from '../libp2p.js'
import type { Logger } from '../logger.js'
import type { NodeMetrics } from '../metrics.js'
import type { ExecChannel } from '../services/exec.js'
import type { MarketGossip } from './gossip.js'
import type { JobRecord } from './requester-views.js'
import type { ResultView } from './views.js'
import type { MarketStore } from './store.js'

export interface RequesterOptions {
  signer: Signer
  node: GpumeshLibp2p
  gossip: MarketGossip
  store: MarketStore
  blobs: BlobStore
  /** Where fetched outputs and logs go: `<jobsDir>/<job id>/`. */
  jobsDir: string
  /** The wall clock (used only when no scheduler is given). */
  now: () => number
  /** The market's parameters and time (market.ts passes the daemon's; defaults: defaultMarketParams, the wall clock). */
  params?: MarketParams
  scheduler?: Scheduler
  log: Logger
  metrics?: NodeMetrics
  /** The providers that might run `job`, for the no-bids explanation (a DHT lookup: ads fetched, peers without one). */
  knownAds?: (job: JobRequest) => Promise<KnownProviders>
  /**
   * Replication's independence view and the spotcheck seed (protocol/market/replica-runs.ts): a lookup of
   * a provider's addresses beyond the connections to it, trust clusters, the 32-byte secret seed.
   */
  trust?: RequesterTrustOptions
  /**
   * After a failed attempt's `job-cancel`: how long the half-close may take before the stream is reset
   * instead, ms (default EXEC_CLOSE_TIMEOUT_MS, node/services/exec.ts).
   */
  cancelCloseMs?: number
}

/** What is kept per award attempt: the signed award, its stream and the envelopes that may become evidence. */
export interface Attempt {
  number: number
  award: SealedMessage<'award'>
  provider: string
  price: number
  /** The cumulative of the last payment counted in gpumesh_market_spent_microcredits_total. */
  spent?: number
  channel?: ExecChannel
  /** The exec stream being opened and the award sent on it; undefined when it cannot be reached. */
  opened?: Promise<ExecChannel | undefined>
  evidence: Partial<Record<EvidenceRef, Uint8Array>>
  paySeq: number
  /**
   * This attempt's log (offsets are the provider's): bytes taken in from the stream (or the log blob)
   * so far, bytes of those written out, and the credit given (counted from what is written, so the
   * writes waiting never exceed one window).
   */
  logReceived: number
  logBytes: number
  logCredit: number
  /** Every credit given (the first is implicit): where a stream that stopped may have been waiting. */
  grants: Set<number>
  /** Log bytes received when the receipt came (all the frames sent before it). */
  logAtReceipt?: number
  /** Log bytes received when the stream was last re-opened: where a restarted provider's new run's log begins. */
  logAtResume?: number
  /** The provider's last job-status state on this attempt. */
  providerState?: string
  /**
   * Where the receipt's log blob begins in this attempt's log: 0, or after a provider's restart
   * (a status going back from `running`) the offset its new run's log was streamed from.
   */
  logBase?: number
  /** The receipt, once it came: its outputs are fetched on the agent's `fetch-outputs`. */
  receipt?: OpenedMessage<'receipt'>
  /** Its outputs, once fetched and verified (a replicated job keeps each replica's). */
  outputs?: ResultView['outputs']
  /** A loop re-opening the stream is running (requester-exec.ts reconnect), and its next wait. */
  reconnecting?: boolean
  reconnectWait?: number
}

export interface ActiveJob {
  id: string
  record: JobRecord
  request: SealedMessage<'job-request'>
  /** By awardKey(attempt, provider): a replicated job holds several awards at one attempt. */
  attempts: Map<string, Attempt>
  /** Pending wakes by time. */
  wakes: Map<number, Cancel>
  /** The agent's effects are carried out one at a time, in order. */
  effects: Promise<void>
  /** Writes to the job's log file, one at a time. */
  logQueue: Promise<void>
  /** The record write in flight (writes never hold up the effects), and whether another is due after it. */
  saving?: Promise<void>
  dirty: boolean
  /** Read back from the store after a restart: its bids, award and payments are the record's, not the agent's. */
  restored?: boolean
}

/** What the shell's parts (exec, outputs, payments) need from the market object. */
export interface RequesterShell {
  readonly options: RequesterOptions
  readonly scheduler: Scheduler
  readonly stopping: boolean
  /** The agent's word on an award's output fetch: still awaited (its run is `verifying`). */
  awaitingOutputs: (active: ActiveJob, attempt: Attempt) => boolean
  /** Feed an event to the agent and carry out its effects. */
  dispatch: (active: ActiveJob, event: RequesterAgentEvent) => void
  /** A line on the job's timeline. */
  note: (active: ActiveJob, kind: string, text: string, peer?: string) => void
  save: (active: ActiveJob) => void
  jobDir: (id: string) => string
}

export function short (peer: string): string {
  return `…${peer.slice(-8)}`
}
