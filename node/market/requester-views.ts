/**
 * The requester's stored record of a job, and the JobView the API returns from it.
 */
import type { AuditRecord, JobRequest, NoBidsExplanation, ReplicationView, RequesterJob } from '../../protocol/index.js'
import type { AwardView, BidView, JobEvent, JobView, OutputFileView, ReceiptView } from './views.js'

/** Kept in the market store under `market-requester/<job id>` (plain JSON). */
export interface JobRecord {
  id: string
  /** CID of the signed job request (kept in market-envelopes). */
  request: string
  submittedAt: number
  updatedAt: number
  state: RequesterJob
  bids: BidView[]
  award?: AwardView
  receipt?: ReceiptView
  outputs?: OutputFileView[]
  /** Micros committed to providers, all attempts together. */
  paid: number
  explanation?: NoBidsExplanation
  /** A replicated or spot-checked job's replicas and comparison (the agent's view). */
  replication?: ReplicationView
  /** The retroactive audit after a conviction of one of its signers (protocol/market/result-audit.ts). */
  audit?: AuditRecord
  events: JobEvent[]
  logBytes: number
  /** `logBytes` when the current award was sealed: where its log starts in the job's log file. */
  logStart?: number
  /** Set (with why) once some of the job's log was not kept. */
  logCut?: string
}

export function jobView (record: JobRecord, job: JobRequest, state: RequesterJob): JobView {
  return {
    id: record.id,
    ...(job.label !== undefined ? { label: job.label } : {}),
    status: state.status,
    ...(state.reason !== undefined ? { reason: state.reason } : {}),
    tier: job.sla.tier,
    executor: job.workload.executor,
    gpus: job.resources.gpus,
    maxPrice: job.sla.maxPrice,
    submittedAt: record.submittedAt,
    updatedAt: record.updatedAt,
    round: state.auction.round,
    bids: record.bids,
    ...(record.award !== undefined ? { award: record.award } : {}),
    ...(record.receipt !== undefined ? { receipt: record.receipt } : {}),
    paid: record.paid,
    logBytes: record.logBytes,
    ...(record.logCut !== undefined ? { logCut: record.logCut } : {}),
    ...(record.explanation !== undefined ? { explanation: record.explanation } : {}),
    ...(record.replication !== undefined ? { replication: record.replication } : {}),
    ...(record.audit !== undefined ? { audit: { ...record.audit } } : {}),
    events: timelineOf(record.events)
  }
}

/**
 * For a bare status event, the event types that tell in full what it says (default: its own type):
 * `awarded` is what `award …` says; the job's `completed` what the provider's `completed` report says
 * or, when the outputs were fetched after the receipt (status `verifying` in between), the `outputs` event.
 */
const TOLD_BY: Record<string, readonly string[]> = { awarded: ['award'], completed: ['completed', 'outputs'] }

/** A status change with nothing to add (`awarded`/`awarded`), as the lifecycle records it. */
const isBare = (e: JobEvent): boolean => e.text === e.type && e.peer === undefined

/**
 * The events as shown: the lifecycle records a status change (`awarded`, `completed`) next to the
 * event that caused it (`award …`, `provider reports completed`); the bare status event is left out
 * when an event that tells it (TOLD_BY) lies between the status changes before and after it. A line that
 * says a clause twice (`cancelled: cancelled by the requester`) says it once.
 */
export function timelineOf (events: readonly JobEvent[]): JobEvent[] {
  const bare = events.flatMap((e, i) => isBare(e) ? [i] : [])
  const shown: JobEvent[] = []
  events.forEach((e, i) => {
    if (isBare(e)) {
      const k = bare.indexOf(i)
      const from = k > 0 ? bare[k - 1] as number : -1
      const to = k < bare.length - 1 ? bare[k + 1] as number : events.length
      const told = TOLD_BY[e.type] ?? [e.type]
      if (events.slice(from + 1, to).some((other, j) => from + 1 + j !== i && told.includes(other.type))) return
    }
    const text = sayOnce(e.text)
    shown.push(text === e.text ? e : { ...e, text })
  })
  return shown
}

/**
 * `a: a: b` → `a: b`; `cancelled: cancelled by the requester` → `cancelled by the requester` (a
 * one-word clause dropped when the next clause begins with it).
 */
export function sayOnce (text: string): string {
  const clauses = text.split(': ')
  const kept = clauses.filter((c, i) => {
    const next = clauses[i + 1]
    if (next === undefined) return true
    return c !== next && !(!c.includes(' ') && next.startsWith(`${c} `))
  })
  return kept.join(': ')
}
