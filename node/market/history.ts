/**
 * The market's side of /gpumesh/history/1.0.0 (protocol/README.md §7.11; issue 11): an index of the
 * evidence this node keeps, by the peers it concerns (node/market/store.ts `market-history`), the pages
 * it serves from it, and the envelopes it takes from other nodes' answers. A served envelope is taken
 * exactly as one heard on `gpumesh/2/evidence` — §6 opened, then the same budgets and, for a fraud
 * proof, the same verifier — with one difference: it is relevant because this node asked about its
 * subject. What the server sent that was not asked for, or that fails §6 or §5.9, is its fault.
 */
import { messageKindOf } from './message-kind.js'
import { BoundedCache } from '../../crypto/index.js'
import {
  MessageRejectedError, RejectReason, openMessage, type OpenedMessage, type SealedMessage
} from '../../protocol/index.js'
import { EVIDENCE_KINDS, evidenceSubjects, type EvidenceKind } from '../../protocol/trust/evidence-budget.js'
import { historyKey, selectHistory, servedRefusal, type HistoryEntry, type HistoryRequest } from '../../protocol/trust/history.js'
import type { Logger } from '../logger.js'
import type { NodeMetrics } from '../metrics.js'
import type { HistoryPage } from '../services/history.js'
import { ProofRefusal } from '../trust/fraud-verifier.js'
import type { MarketGossip } from './gossip.js'
import type { MarketStore } from './store.js'

/** §6 reasons that do not show the server lied (a copy gone stale, seen before, a skewed clock). */
const NOT_FAULTS = new Set<string>([RejectReason.REPLAY, RejectReason.EXPIRED, RejectReason.FUTURE_DATED])

/** What became of one served envelope: taken, or why not, and whether it counts against the server. */
export interface ServedOutcome {
  taken: boolean
  reason?: string
  fault: boolean
}

export interface EvidenceHistoryOptions {
  store: MarketStore
  gossip: MarketGossip
  now: () => number
  log: Logger
  metrics?: NodeMetrics
  /** The evidence budgets (Market.admitEvidence), with `asked` the subject this node asked about. */
  admit: (message: OpenedMessage<EvidenceKind>, asked?: string) => string | undefined
  /** Hand an admitted envelope on, as gossip would (Market.dispatch). */
  deliver: (message: OpenedMessage<EvidenceKind>) => void
}

/** Envelopes taken from answers that are remembered (a wrong-output proof is not kept until it verifies). */
const TAKEN_REMEMBERED = 10_000

export class EvidenceHistory {
  /** Envelopes taken from answers (payload CIDs): a second server's copy is KNOWN, not charged twice. */
  private readonly taken = new BoundedCache<string, true>(TAKEN_REMEMBERED)

  constructor (private readonly options: EvidenceHistoryOptions) {}

  /** Index an envelope kept in the store (`signer`: who signed it) under each peer it concerns. Never throws. */
  async index (message: SealedMessage<EvidenceKind>, signer: string): Promise<void> {
    const { kind, payload, cid, bytes } = message
    const peers = evidenceSubjects(kind, payload as unknown as Record<string, unknown>, signer).peers
    if (peers.length === 0) return
    const entry: HistoryEntry = { key: historyKey(kind, cid.toString()), kind, cid: cid.toString(), size: bytes.byteLength, expiresAt: (payload as { expiresAt: number }).expiresAt }
    await this.options.store.putHistory(peers, entry).catch((err: unknown) => {
      this.options.log.warn('cannot index evidence for history', { cid: entry.cid, error: err })
    })
  }

  /** The page to serve for `request` (the service's source). */
  async page (request: HistoryRequest): Promise<HistoryPage> {
    const { store } = this.options
    const now = this.options.now()
    const entries = request.q === 'subject' ? await store.historyOf(request.subject) : await this.convictionEntries()
    const selected = selectHistory(entries, request, now)
    const envelopes: Uint8Array[] = []
    for (const e of selected.entries) {
      const bytes = await store.getEnvelope(e.cid)
      if (bytes !== undefined) envelopes.push(bytes)
    }
    return { envelopes, ...(selected.next !== undefined ? { next: selected.next } : {}) }
  }

  /** Take one envelope a peer served for `request`. Never throws. */
  async take (bytes: Uint8Array, request: HistoryRequest, from: string): Promise<ServedOutcome> {
    const out = await this.judge(bytes, request)
    if (!out.taken) {
      this.options.metrics?.messagesRejected.inc({ kind: messageKindOf(bytes), reason: out.reason ?? 'unknown', via: 'history' })
      this.options.log.debug('served envelope not taken', { from, reason: out.reason, fault: out.fault })
    }
    return out
  }

  private async judge (bytes: Uint8Array, request: HistoryRequest): Promise<ServedOutcome> {
    let message: OpenedMessage<EvidenceKind>
    try {
      message = openMessage(bytes, EVIDENCE_KINDS, { now: this.options.now() })
    } catch (err) {
      if (!(err instanceof MessageRejectedError)) throw err
      return { taken: false, reason: err.reason, fault: !NOT_FAULTS.has(err.reason) }
    }
    const irrelevant = servedRefusal(request, message.kind, message.payload as unknown as Record<string, unknown>, message.signer)
    if (irrelevant !== undefined) return { taken: false, reason: irrelevant, fault: true }
    // kept already (from gossip, an earlier answer, before a restart): nothing to do, nobody's fault.
    // Seen on gossip but not kept (refused there as IRRELEVANT: this node had not asked then) is taken now.
    const id = message.cid.toString()
    if (this.taken.get(id) !== undefined) return { taken: false, reason: 'KNOWN', fault: false }
    const kept = await this.options.store.getEnvelope(id).catch(() => undefined)
    // (checked again after the await: another answer's copy may have been taken meanwhile; from here on all is synchronous)
    if (kept !== undefined || this.taken.get(id) !== undefined) return { taken: false, reason: 'KNOWN', fault: false }
    // a copy arriving on gossip from now on is a replay there
    this.options.gossip.markSeen(message)
    const refusal = this.options.admit(message, request.q === 'subject' ? request.subject : undefined)
    // a proof that fails §5.9 was served as evidence: the server's fault; busy, pending or known are not
    if (refusal === ProofRefusal.INVALID) return { taken: false, reason: refusal, fault: true }
    if (refusal === ProofRefusal.PENDING) {
      this.taken.set(id, true)
      return { taken: true, reason: refusal, fault: false }
    }
    // refused by a budget or a busy verifier: another server's copy may be taken later
    if (refusal !== undefined) return { taken: false, reason: refusal, fault: false }
    this.taken.set(id, true)
    this.options.deliver(message)
    return { taken: true, fault: false }
  }

  /** This node's convictions as history entries: the subject is the key. */
  private async convictionEntries (): Promise<HistoryEntry[]> {
    const { store } = this.options
    const out: HistoryEntry[] = []
    for (const c of await store.convictions()) {
      const bytes = await store.getEnvelope(c.proof)
      if (bytes === undefined) continue
      try {
        const proof = openMessage(bytes, 'fraud-proof', { now: this.options.now(), historical: true })
        out.push({ key: c.subject, kind: 'fraud-proof', cid: c.proof, size: bytes.byteLength, expiresAt: proof.payload.expiresAt })
      } catch (err) {
        if (!(err instanceof MessageRejectedError)) throw err
      }
    }
    return out
  }
}
