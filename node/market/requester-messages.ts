/**
 * What the requester signs for one job (protocol/README §5.3–§5.8): auction rounds, awards, job
 * cancels, payments and failure reports, built from what the requester agent decided
 * (protocol/market/requester-agent.ts). Pure apart from signing; the shell (requester.ts) decides
 * nothing here. Lifetimes are the shortest that cover each message's use.
 */
import type { Signer } from '../../crypto/index.js'
import { sealMessage, type AwardFields, type RequesterAgentEffect, type SealedMessage } from '../../protocol/index.js'

const HOUR = 3_600_000
const DAY = 24 * HOUR
/** Payments and failure reports are evidence (settlement, reputation): kept for a month. */
export const EVIDENCE_LIFETIME_MS = 30 * DAY
/** A failure report embeds at most this many envelopes. */
const MAX_EVIDENCE = 4

type Request = SealedMessage<'job-request'>

/** A re-auction round for the job, valid through its bid window and an hour beyond (never past the job). */
export function sealAuctionRound (signer: Signer, request: Request, effect: Extract<RequesterAgentEffect, { type: 'publish-round' }>, now: number): SealedMessage<'auction-round'> {
  const job = request.payload
  return sealMessage(signer, 'auction-round', {
    v: 1,
    issuedAt: now,
    expiresAt: Math.min(job.expiresAt, now + job.auction.bidWindowMs + HOUR),
    job: request.cid,
    round: Math.min(64, effect.round),
    attempt: effect.attempt,
    excluded: effect.excluded,
    request: request.bytes
  })
}

/** The award the agent decided (its fields), issued now, valid for an hour. */
export function sealAward (signer: Signer, fields: AwardFields, now: number): SealedMessage<'award'> {
  return sealMessage(signer, 'award', { v: 1, issuedAt: now, expiresAt: now + HOUR, ...fields })
}

export function sealJobCancel (signer: Signer, request: Request, award: SealedMessage<'award'>, reason: string, now: number): SealedMessage<'job-cancel'> {
  return sealMessage(signer, 'job-cancel', {
    v: 1, issuedAt: now, expiresAt: now + HOUR, job: request.cid, award: award.cid, reason: reason.slice(0, 200)
  })
}

export function sealPayment (
  signer: Signer, request: Request, award: SealedMessage<'award'>, seq: number,
  effect: Extract<RequesterAgentEffect, { type: 'pay' }>, now: number
): SealedMessage<'payment'> {
  return sealMessage(signer, 'payment', {
    v: 1,
    issuedAt: now,
    expiresAt: now + EVIDENCE_LIFETIME_MS,
    job: request.cid,
    award: award.cid,
    payee: effect.payee,
    seq,
    interval: effect.interval,
    cumulative: effect.cumulative,
    gpuSeconds: effect.gpuSeconds
  })
}

/** A failure report against the effect's subject, with the envelopes named as evidence (at most 4). */
export function sealFailureReport (
  signer: Signer, request: Request, effect: Extract<RequesterAgentEffect, { type: 'record-failure' }>,
  evidence: ReadonlyArray<Uint8Array | undefined>, now: number
): SealedMessage<'failure-report'> {
  return sealMessage(signer, 'failure-report', {
    v: 1,
    issuedAt: now,
    expiresAt: now + EVIDENCE_LIFETIME_MS,
    job: request.cid,
    subject: effect.subject,
    reason: effect.reason,
    observedAt: now,
    evidence: evidence.filter((b): b is Uint8Array => b !== undefined).slice(0, MAX_EVIDENCE),
    ...(effect.detail !== undefined ? { detail: effect.detail.slice(0, 500) } : {})
  })
}
