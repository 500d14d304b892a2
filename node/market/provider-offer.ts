/**
 * The provider side's shared shapes (node/market/provider.ts, provider-jobs.ts): its options, and
 * the `Offer` — one bid sent, and the job when it wins: what the shell keeps beside the agent's state
 * (the exec stream, the evidence, the run) — with the two records written from both, the provider's
 * job record and its ledger entry.
 */
import type { PeerId } from '@libp2p/interface'
import type { CID, Signer } from '../../crypto/index.js'
import {
  isProviderFinal,
  type Cancel, type EvidenceRef, type MarketParams, type Scheduler, type JobState, type OpenedMessage, type ProviderJob, type ProviderOfferView, type SealedMessage
} from '../../protocol/index.js'
import type { BlobStore } from '../blobs/store.js'
import type { Executor } from '../executors/types.js'
import type { GpumeshLibp2p } from '../libp2p.js'
import type { Logger } from '../logger.js'
import type { NodeMetrics } from '../metrics.js'
import { LOG_WINDOW, type ExecChannel } from '../services/exec.js'
import type { MarketGossip } from './gossip.js'
import { LogBuffer, type JobInput, type StoredResult } from './provider-io.js'
import type { MarketStore } from './store.js'
import type { LedgerEntry } from './views.js'

/** What the provider side is built from (market.ts passes the daemon's). */
export interface ProviderMarketOptions {
  signer: Signer
  peerId: string
  node: GpumeshLibp2p
  gossip: MarketGossip
  store: MarketStore
  blobs: BlobStore
  executors: Partial<Record<'process' | 'wasm' | 'docker', Executor>>
  /** This node's signed capability ad; undefined while it does not sell. */
  ad: () => SealedMessage<'capability-ad'> | undefined
  now: () => number
  /** The market's parameters and time (market.ts passes the daemon's). */
  params?: MarketParams
  scheduler?: Scheduler
  log: Logger
  metrics?: NodeMetrics
  /** All of a job's inputs together (default DEFAULT_MAX_INPUT_BYTES). */
  maxInputBytes?: number
  /** A bid seen on gossip (the market's audit log), to explain why a bid of this node lost (bid-log.ts). */
  seenBid?: (job: string, bid: string) => OpenedMessage<'bid'> | undefined
  /** 0..1: no bids for requesters scoring below this (config `provider.minRequesterTrust`; default DEFAULT_MIN_REQUESTER_TRUST). */
  minRequesterTrust?: number
}


/**
 * The shell's side of one bid sent (the agent, protocol/market/provider-agent.ts, holds its decisions
 * and lifecycle state): the signed messages, the exec stream, the evidence, the run and its log.
 */
export interface Offer {
  request: OpenedMessage<'job-request'>
  /** The auction round the bid was for (1 = the job request itself). */
  round: number
  bid: SealedMessage<'bid'>
  /** The agent's effects carried out in order (some are async); store writes in order. */
  queue: Promise<void>
  saving: Promise<void>
  /** Signed envelopes a failure report may embed, and the CIDs of those kept in the store. */
  evidence: Partial<Record<EvidenceRef, Uint8Array>>
  envelopes: Partial<Record<EvidenceRef, string>>
  channel?: ExecChannel
  requesterId?: PeerId
  award?: OpenedMessage<'award'>
  /** The GPUs the job holds (the bid's until the agent commits others). */
  gpus: string[]
  /** Aborts the input fetch and the run (stop-work). */
  work?: AbortController
  inputs?: JobInput[]
  /**
   * Input blobs pinned in the store for this offer: those its bid says are cached (from the bid on),
   * and each the job reads (provider-io.ts fetchInputs); unpinned when the offer ends, won or lost.
   */
  pinned?: CID[]
  result?: StoredResult
  /** The cumulative of the last payment counted in gpumesh_market_earned_microcredits_total. */
  earned?: number
  log: LogBuffer
  /** Log bytes sent on the stream so far, and the requester's credit (send below it only). */
  logSent: number
  logCredit: number
  /** Last job-status seq sent and the state it carried. */
  statusSeq: number
  lastState?: JobState
  finalized: boolean
  /** The requester's side of the stream has ended. */
  streamEnded?: boolean
  /** The stream was resumed (§7.7 "Resuming"): the requester's first credit on it says where its log continues. */
  resumeLog?: boolean
  /**
   * Read back after this node restarted, its run lost: the new run's log goes on after what the
   * requester holds, which the first credit on its re-opened stream says (provider-jobs.ts onLogCredit).
   */
  logRestarted?: boolean
  linger?: Cancel
}

export function newOffer (request: OpenedMessage<'job-request'>, round: number, bid: SealedMessage<'bid'>): Offer {
  return {
    request,
    round,
    bid,
    queue: Promise.resolve(),
    saving: Promise.resolve(),
    evidence: {},
    envelopes: {},
    gpus: bid.payload.gpus,
    log: new LogBuffer(),
    logSent: 0,
    logCredit: LOG_WINDOW,
    statusSeq: 0,
    finalized: false
  }
}

/** The job id (CID string). */
export const idOf = (offer: Offer): string => offer.request.cid.toString()

/** `market-provider/<job>/<bid>`: plain JSON, envelopes by CID, and the whole lifecycle state. */
export interface ProviderRecord {
  job: string
  bid: string
  round: number
  requester: string
  status: ProviderJob['status']
  reason?: string
  gpus: string[]
  /** CIDs of the envelopes kept in `market-envelopes`. */
  envelopes: Partial<Record<EvidenceRef | 'request' | 'bid', string>>
  manifest?: string
  logs?: string
  machine: ProviderJob
  updatedAt: number
}

export function offerRecord (offer: Offer, view: ProviderOfferView, now: number): ProviderRecord {
  const s = view.state
  const result = offer.result
  return {
    job: idOf(offer),
    bid: offer.bid.cid.toString(),
    round: offer.round,
    requester: offer.request.signer,
    status: s.status,
    ...(s.reason !== undefined ? { reason: s.reason } : {}),
    gpus: [...view.gpus],
    envelopes: { request: idOf(offer), bid: offer.bid.cid.toString(), ...offer.envelopes },
    ...(result !== undefined ? { manifest: result.manifest.toString() } : {}),
    ...(result?.logs !== undefined ? { logs: result.logs.toString() } : {}),
    machine: s,
    updatedAt: now
  }
}

/** The ledger entry of an awarded offer: 'open' until the job's final status, then that status. */
export function offerLedgerEntry (offer: Offer, view: ProviderOfferView, now: number): LedgerEntry | undefined {
  const award = offer.award
  if (award === undefined) return undefined
  const s = view.state
  return {
    job: idOf(offer),
    award: award.cid.toString(),
    role: 'provider',
    counterparty: offer.request.signer,
    price: award.payload.price,
    cumulative: view.payment.cumulative,
    seq: view.payment.seq,
    gpuSeconds: Math.max(s.finished?.gpuSeconds ?? 0, view.payment.gpuSeconds),
    ...(s.finished !== undefined ? { owed: s.finished.owed } : {}),
    state: isProviderFinal(s.status) ? s.status : 'open',
    updatedAt: now
  }
}
