/**
 * The messages harness nodes send each other: on gossip, the job request, auction rounds, bids,
 * awards (for audit) and failure reports; on an exec stream, the award, the provider's response,
 * statuses, the receipt, payments and cancels. Each is the opened form a daemon's shell hands its
 * agent (payload + signer + id), with its wire size from wire-size.ts.
 */
import type { CID } from '../../crypto/index.js'
import type { Award, AwardResponse, JobStatus } from '../../protocol/messages/award.js'
import type { JobCancel } from '../../protocol/messages/auction.js'
import type { Bid } from '../../protocol/messages/bid.js'
import type { FailureReport } from '../../protocol/messages/evidence.js'
import type { JobRequest } from '../../protocol/messages/job-request.js'
import type { PaymentCommitment, Receipt } from '../../protocol/messages/settlement.js'
import type { OpenedMessage } from '../../protocol/message.js'
import type { Kind as WireKind } from '../../protocol/kinds.js'
import type { Message } from './bus.js'
import { signedSize } from './wire-size.js'

/** A signed message as the receiving shell has opened it. */
export interface Opened<P> { cid: CID, signer: string, payload: P }

export interface RoundBody { cid: CID, signer: string, round: number, attempt: number, excluded: string[], opensAt: number, request: Opened<JobRequest> }

/** A receipt, plus what the executor model knows beside it: the outputs' size, and whether the provider tampered with them. */
export interface ReceiptBody extends Opened<Receipt> { outputBytes: number, tampered: boolean }

/**
 * A `wrong-output` fraud proof (protocol/messages/evidence.ts fraudProofSchema) as the harness carries it:
 * the payload's header, subject and kind; the job, its request and the subject's receipt beside it (their
 * envelopes ride along in its size). The job is outside the payload: a proof is news about a provider, so
 * the keyed delivery (recorder.ts jobOf) takes it to every subscriber, not only the job's watchers.
 */
export interface FraudProofBody extends Opened<{ v: 1, issuedAt: number, expiresAt: number, subject: string, kind: 'wrong-output' }> {
  job: CID
  receipt: Opened<Receipt>
}

export interface Bodies {
  'job-request': Opened<JobRequest>
  'auction-round': RoundBody
  bid: Opened<Bid>
  award: Opened<Award>
  'failure-report': Opened<FailureReport>
  'award-response': Opened<AwardResponse>
  'job-status': Opened<JobStatus>
  receipt: ReceiptBody
  payment: Opened<PaymentCommitment>
  'job-cancel': Opened<JobCancel>
  'fraud-proof': FraudProofBody
}
export type Kind = keyof Bodies

/**
 * A bus message of `kind` for `body`, sized as its signed envelope (+ `extraBytes`: envelopes a
 * failure report embeds). An auction round embeds its whole signed request.
 */
export function message<K extends Kind> (kind: K, body: Bodies[K], extraBytes = 0): Message<Bodies[K]> {
  let bytes: number
  if (kind === 'auction-round') {
    const r = body as RoundBody
    bytes = signedSize({ job: r.request.cid, round: r.round, attempt: r.attempt, excluded: r.excluded, v: 1, issuedAt: r.opensAt, expiresAt: r.opensAt }) + signedSize(r.request.payload)
  } else {
    bytes = signedSize((body as Opened<unknown>).payload)
  }
  return { kind, bytes: bytes + extraBytes, body }
}

/** The body of `m` when it is of `kind`. */
export function bodyOf<K extends Kind> (m: Message, kind: K): Bodies[K] | undefined {
  return m.kind === kind ? m.body as Bodies[K] : undefined
}

/**
 * `body` as the opened message an agent or a protocol check reads (kind, id, signer, payload): the harness
 * signs nothing, so there are no envelope bytes and no key.
 */
export function openedForAgent<K extends WireKind> (kind: K, body: Opened<unknown>): OpenedMessage<K> {
  return { kind, cid: body.cid, signer: body.signer, payload: body.payload } as unknown as OpenedMessage<K>
}
