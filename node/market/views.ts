/**
 * What the local API returns about jobs and money (`/v1/jobs`, `/v1/job`, `/v1/job/logs`,
 * `/v1/job/result`, `/v1/ledger`): plain JSON, prices in micro-credits (1 credit = 1e6 micros)
 * per GPU-hour, times in ms since the epoch. The CLI formats these; scripts read them with --json.
 */
import type { AgentAwardView, AgentBidView, ReplicationView } from '../../protocol/index.js'
import type { ReputationExplanation } from '../../protocol/trust/reputation.js'

/** One line of a job's history, as the requester saw it. */
export interface JobEvent {
  at: number
  /** `submitted`, `bid`, `award`, `accepted`, `running`, `log`, `receipt`, `verified`, `paid`, `failure`, `re-auction`, `no-bids`, `cancelled`, `settled`, … */
  type: string
  /** One human-readable line. */
  text: string
  /** The provider concerned, when any. */
  peer?: string
}

/** A bid of the job's current round (the requester agent's view). */
export type BidView = AgentBidView

/** The job's current award (the requester agent's view). */
export type AwardView = AgentAwardView

export interface ReceiptView {
  cid: string
  provider: string
  exitCode: number
  startedAt: number
  endedAt: number
  gpuSeconds: number
  /** CID of the output manifest. */
  outputs: string
  /** True when every output was fetched and its CID recomputed to match the receipt. */
  outputsValid: boolean
}

export interface OutputFileView {
  path: string
  size: number
  cid: string
  /** Where the fetched file lies on this machine (inside the daemon's data dir). */
  file: string
}

/** A job this node submitted (requester side). */
export interface JobView {
  id: string
  label?: string
  /** The requester lifecycle's status: bidding, awarded, running, completed, verified, settled, failed, cancelled, expired. */
  status: string
  /** Why the job ended, in a final status. */
  reason?: string
  tier: 'gold' | 'silver' | 'bronze'
  executor: 'process' | 'docker' | 'wasm'
  gpus: number
  /** Price cap, micros per GPU-hour. */
  maxPrice: number
  submittedAt: number
  updatedAt: number
  /** Auction rounds opened so far. */
  round: number
  /** Bids of the current (or last) round. */
  bids: BidView[]
  award?: AwardView
  /** Why this node scores the awarded provider as it does, now (its reputation view); only in `job status`. */
  providerReputation?: ReputationExplanation
  receipt?: ReceiptView
  /** Cumulative micros committed to providers for this job, all attempts together. */
  paid: number
  /** Bytes of log kept for the job (`job logs`), and, when some was not kept, why (the log was cut there). */
  logBytes?: number
  logCut?: string
  /** When the last round closed without an acceptable bid: why (protocol/market/explain.ts). */
  explanation?: unknown
  /** A replicated or spot-checked job: its replicas, their outputs and how the comparison ended (protocol ReplicationView). */
  replication?: ReplicationView
  /**
   * After a conviction of one of its signers, the audit of its accepted result (protocol AuditRecord):
   * `disproved` — re-executed, the outputs accepted are wrong (the settled payment is not taken back);
   * `suspect` — not deterministic, signed by a convicted provider; `confirmed`, `queued`, `auditing`, …
   */
  audit?: { status: string, by: string, detail: string }
  events: JobEvent[]
}

/** `/v1/job/logs?id=&from=`: log bytes from offset `from` of the job's combined stdout/stderr. */
export interface LogsView {
  /** UTF-8 text (invalid sequences replaced). */
  text: string
  /** Offset to ask for next. */
  next: number
  /** True when the job is final and no more logs will come. */
  done: boolean
  /** Set (with why) when the log was cut: what came after was not kept. */
  cut?: string
}

/** `/v1/job/result?id=`. */
export interface ResultView {
  id: string
  status: string
  exitCode?: number
  receipt?: ReceiptView
  outputs: OutputFileView[]
}

/** One job in the ledger, from either side. */
export interface LedgerEntry {
  job: string
  award: string
  role: 'provider' | 'requester'
  /** The other side. */
  counterparty: string
  /** Price, micros per GPU-hour. */
  price: number
  /** Latest cumulative signed payment commitment, micros. */
  cumulative: number
  /** Sequence number of that commitment. */
  seq: number
  gpuSeconds: number
  /** What the receipt is worth (provider) or what was due at settlement (requester), when known. */
  owed?: number
  /**
   * open (work under way), then how the award ended. Both sides record the same ending and amount for
   * `settled`, `cancelled` and `preempted` (the requester's final payment says which, protocol/README
   * §7.7). An award the requester failed is `failed` on its side at what it committed (the provider's
   * side names its own ending, e.g. stopped-unpaid, with the same amount); the provider also records
   * declined, lost; either side `interrupted` (its daemon stopped with the work in flight).
   */
  state: string
  updatedAt: number
}

/** `/v1/ledger`. */
export interface LedgerView {
  peerId: string
  /** Micros earned as a provider (sum of the latest commitments received). */
  earned: number
  /** Micros spent as a requester (sum of the latest commitments sent). */
  spent: number
  /** earned − spent. */
  balance: number
  entries: LedgerEntry[]
}
