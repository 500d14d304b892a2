/**
 * What the provider signs for one job (protocol/README §5.4, §5.7, §5.8), built from the job's
 * state: bids, award responses, statuses, receipts and failure reports. Pure apart from signing;
 * provider.ts decides when to send them. Lifetimes are the shortest that cover each message's use.
 */
import type { CID, Signer } from '../../crypto/index.js'
import {
  sealMessage,
  type BidDecision, type CapabilityAd, type EvidenceRef, type FailureReason, type JobState, type OpenedMessage, type SealedMessage
} from '../../protocol/index.js'

import { EVIDENCE_LIFETIME_MS, MAX_EVIDENCE, RESPONSE_LIFETIME_MS, STATUS_LIFETIME_MS } from './lifetimes.js'

export { EVIDENCE_LIFETIME_MS, RESPONSE_LIFETIME_MS, STATUS_LIFETIME_MS }
/** Evidence embedded in a failure report: at most MAX_EVIDENCE envelopes of at most 32 KiB each. */
const MAX_EVIDENCE_BYTES = 32 * 1024

/** `text` cut to at most `maxBytes` UTF-8 bytes, at a character boundary. */
export function clip (text: string, maxBytes: number): string {
  if (Buffer.byteLength(text) <= maxBytes) return text
  let out = ''
  for (const ch of text) {
    if (Buffer.byteLength(out + ch) > maxBytes - 3) break
    out += ch
  }
  return `${out}...`
}

/** The bid for `request` on the terms of `decision`, valid until `expiresAt` (the agent's: its round's close + the bid grace). */
export function sealBid (
  signer: Signer,
  request: OpenedMessage<'job-request'>,
  decision: Extract<BidDecision, { kind: 'bid' }>,
  ad: SealedMessage<'capability-ad'>,
  expiresAt: number,
  now: number,
  /** The job's inputs this node holds (the agent's `send-bid` effect), listed as the bid's `cached`. */
  cached?: readonly CID[]
): SealedMessage<'bid'> {
  const a: CapabilityAd = ad.payload
  const gpus = decision.gpus.map((uuid) => a.gpus.find((g) => g.uuid === uuid)).filter((g) => g !== undefined)
  return sealMessage(signer, 'bid', {
    v: 1,
    issuedAt: now,
    expiresAt,
    job: request.cid,
    provider: signer.peerId,
    price: decision.price,
    gpus: decision.gpus,
    // a CPU-only job allocates no GPU: the machine's first GPU describes it
    model: gpus[0]?.model ?? a.gpus[0]?.model ?? 'cpu',
    vramMiB: gpus.length > 0 ? Math.min(...gpus.map((g) => g.vramMiB)) : 0,
    region: a.region,
    ...(a.country !== undefined ? { country: a.country } : {}),
    startBy: Math.max(decision.startBy, now),
    ad: ad.cid,
    ...(cached !== undefined && cached.length > 0 ? { cached: [...cached] } : {})
  })
}

/** The identifiers every exec-stream message of a job carries. */
export interface JobRef { job: CID, award: CID }

export function sealAwardResponse (signer: Signer, ref: JobRef, decision: 'accept' | 'decline', reason: string | undefined, now: number): SealedMessage<'award-response'> {
  return sealMessage(signer, 'award-response', {
    v: 1, issuedAt: now, expiresAt: now + RESPONSE_LIFETIME_MS, ...ref, decision, ...(reason !== undefined ? { reason: clip(reason, 256) } : {})
  })
}

export function sealStatus (signer: Signer, ref: JobRef, seq: number, state: JobState, gpuSeconds: number, message: string | undefined, now: number): SealedMessage<'job-status'> {
  return sealMessage(signer, 'job-status', {
    v: 1, issuedAt: now, expiresAt: now + STATUS_LIFETIME_MS, ...ref, seq, state, gpuSeconds, ...(message !== undefined ? { message: clip(message, 512) } : {})
  })
}

export interface ReceiptTerms {
  requester: string
  inputs: CID[]
  outputs: CID
  logs?: CID
  exitCode: number
  startedAt: number
  endedAt: number
  gpuSeconds: number
  gpus: string[]
  executor: 'process' | 'wasm' | 'docker'
  /** The provider's hardware attestation (the one its ad lists). */
  attestation?: CID
}

export function sealReceipt (signer: Signer, ref: JobRef, terms: ReceiptTerms, now: number): SealedMessage<'receipt'> {
  return sealMessage(signer, 'receipt', { v: 1, issuedAt: now, expiresAt: now + EVIDENCE_LIFETIME_MS, ...ref, ...terms })
}

/** A failure report about `subject`, embedding the named envelopes this node holds (at most 4). */
export function sealFailureReport (
  signer: Signer,
  job: CID,
  failure: { subject: string, reason: FailureReason, evidence: readonly EvidenceRef[], detail?: string },
  held: Partial<Record<EvidenceRef, Uint8Array>>,
  now: number
): SealedMessage<'failure-report'> {
  const evidence = failure.evidence
    .map((ref) => held[ref])
    .filter((bytes): bytes is Uint8Array => bytes !== undefined && bytes.byteLength <= MAX_EVIDENCE_BYTES)
    .slice(0, MAX_EVIDENCE)
  return sealMessage(signer, 'failure-report', {
    v: 1,
    issuedAt: now,
    expiresAt: now + EVIDENCE_LIFETIME_MS,
    job,
    subject: failure.subject,
    reason: failure.reason,
    observedAt: now,
    evidence,
    ...(failure.detail !== undefined ? { detail: clip(failure.detail, 512) } : {})
  })
}
