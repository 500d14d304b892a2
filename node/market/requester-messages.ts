/**
 * What the requester signs for one job (protocol/README §5.3–§5.8): auction rounds, awards, job
 * cancels, payments and failure reports, built from what the requester agent decided
 * (protocol/market/requester-agent.ts). Pure apart from signing; the shell (requester.ts) decides
 * nothing here. Lifetimes are the shortest that cover each message's use.
 */
import type { Signer } from '../../crypto/index.js'
import { MAX_AUCTION_ROUND, sealMessage, type AwardFields, type RequesterAgentEffect, type SealedMessage } from '../../protocol/index.js'
import { AWARD_LIFETIME_MS, EVIDENCE_LIFETIME_MS, MAX_EVIDENCE } from './lifetimes.js'

type Request = SealedMessage<'job-request'>

/** A re-auction round for the job, valid through its bid window and an hour beyond (never past the job). */
export function sealAuctionRound (signer: Signer, request: Request, effect: Extract<RequesterAgentEffect, { type: 'publish-round' }>, now: number): SealedMessage<'auction-round'> {
  const job = request.payload
  return sealMessage(signer, 'auction-round', {
    v: 1,
    issuedAt: now,
    expiresAt: Math.min(job.expiresAt, now + job.auction.bidWindowMs + AWARD_LIFETIME_MS),
    job: request.cid,
    round: Math.min(MAX_AUCTION_ROUND, effect.round),
    attempt: effect.attempt,
    excluded: effect.excluded,
    request: request.bytes
  })
}

/** The award the agent decided (its fields), issued now, valid for an hour. */
export function sealAward (signer: Signer, fields: AwardFields, now: number): SealedMessage<'award'> {
  return sealMessage(signer, 'award', { v: 1, issuedAt: now, expiresAt: now + AWARD_LIFETIME_MS, ...fields })
}

export function sealJobCancel (signer: Signer, request: Request, award: SealedMessage<'award'>, reason: string, now: number): SealedMessage<'job-cancel'> {
  return sealMessage(signer, 'job-cancel', {
    v: 1, issuedAt: now, expiresAt: now + AWARD_LIFETIME_MS, job: request.cid, award: award.cid, reason: reason.slice(0, 200)
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
