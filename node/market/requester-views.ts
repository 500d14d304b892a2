/**
 * The requester's stored record of a job, and the JobView the API returns from it.
 */
import type { JobRequest, NoBidsExplanation, RequesterJob } from '../../protocol/index.js'
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
  events: JobEvent[]
  logBytes: number
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
    events: record.events
  }
}
