/**
 * The evidence records the reputation view is built from (DESIGN §7). The caller has already opened and
 * verified each signed envelope (openMessage) and maps it to one record:
 *
 *   - `receipt`    this node verified a provider's outputs against its signed receipt (own: signer = self);
 *   - `settlement` a payment commitment signed by a requester to a payee — the requester vouches that the
 *                  payee delivered (signer = the payment's signer, subject = its payee);
 *   - `failure`    a signed failure report (signer = the reporter, subject = its subject, reason = its reason);
 *   - `probe`      a signed probe result (signer = the prober, subject = its subject, ok = it read `pass`:
 *                  probe-evidence.ts).
 *
 * A receipt signed by the provider itself is the provider's own claim: as evidence from its signer about
 * itself it is self-issued and counts for nothing.
 */
import type { OpenedMessage } from '../message.js'
import { failureReasons } from '../messages/evidence.js'
import { probeEvidence } from './probe-evidence.js'

export const evidenceKinds = ['receipt', 'settlement', 'failure', 'probe'] as const
export type EvidenceKind = typeof evidenceKinds[number]

export interface Evidence {
  /** Who vouches (the verified signer's peer id). */
  signer: string
  /** The provider the evidence is about. */
  subject: string
  kind: EvidenceKind
  /** When it was observed (the message's issuedAt or observedAt), ms. */
  at: number
  /** Probes only: whether the subject passed. */
  ok?: boolean
  /** Failures only: the report's reason. */
  reason?: typeof failureReasons[number]
}

/** An evidence record out of shape. */
export class InvalidEvidenceError extends Error {
  override readonly name = 'InvalidEvidenceError'
  constructor (readonly field: string, message: string) {
    super(`${field}: ${message}`)
  }
}

/** Whether the record is a success; throws InvalidEvidenceError for a record out of shape. */
export function evidenceOutcome (e: Evidence): boolean {
  if (typeof e.signer !== 'string' || e.signer.length === 0) throw new InvalidEvidenceError('signer', 'expected a peer id')
  if (typeof e.subject !== 'string' || e.subject.length === 0) throw new InvalidEvidenceError('subject', 'expected a peer id')
  if (!Number.isSafeInteger(e.at) || e.at < 0) throw new InvalidEvidenceError('at', 'expected a time in ms ≥ 0')
  if (e.reason !== undefined && (e.kind !== 'failure' || !(failureReasons as readonly string[]).includes(e.reason))) {
    throw new InvalidEvidenceError('reason', 'only a failure carries a reason, one of the failure report reasons')
  }
  if (e.ok !== undefined && e.kind !== 'probe') throw new InvalidEvidenceError('ok', 'only a probe carries ok')
  switch (e.kind) {
    case 'receipt':
    case 'settlement':
      return true
    case 'failure':
      return false
    case 'probe':
      if (typeof e.ok !== 'boolean') throw new InvalidEvidenceError('ok', 'a probe must say whether the subject passed')
      return e.ok
    default:
      throw new InvalidEvidenceError('kind', `expected one of ${evidenceKinds.join(', ')}`)
  }
}

/** The gossiped kinds that carry reputation evidence about another peer. */
export type EvidenceMessageKind = 'payment' | 'failure-report' | 'probe-result'

/**
 * The record an opened (verified) evidence message stands for, as the mapping above says: a payment is
 * its signer's settlement with the payee, a failure report its signer's failure of the subject, a probe
 * result its signer's probe of the subject.
 */
export function evidenceFromMessage (m: OpenedMessage<EvidenceMessageKind>): Evidence {
  switch (m.kind) {
    case 'payment': {
      const p = m.payload as OpenedMessage<'payment'>['payload']
      return { signer: m.signer, subject: p.payee, kind: 'settlement', at: p.issuedAt }
    }
    case 'failure-report': {
      const p = m.payload as OpenedMessage<'failure-report'>['payload']
      return { signer: m.signer, subject: p.subject, kind: 'failure', reason: p.reason, at: p.observedAt }
    }
    default: {
      // a flagged probe counts as a failure even when its answer was right (probe-evidence.ts)
      return probeEvidence(m.signer, m.payload as OpenedMessage<'probe-result'>['payload'])
    }
  }
}
