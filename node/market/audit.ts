/**
 * Any node can check an auction it watched (DESIGN §5: "the award names the bids considered, so any
 * node can audit it"). The audit log keeps, for recent jobs seen on gossip, the job request, the bids
 * and the awards, bounded in memory; `check` runs the pure `auditAward` (what holds under every
 * reliability view) and `verifyAward` with this node's uniform view.
 */
import { BoundedCache } from '../../crypto/index.js'
import { auditAward, verifyAward, type AwardCheck, type OpenedMessage } from '../../protocol/index.js'

/** Jobs remembered (the oldest seen is forgotten first). */
const MAX_JOBS = 1_000
/** Bids kept per job: the award schema's limit on `considered`. */
const MAX_BIDS_PER_JOB = 256

interface Watched {
  request?: OpenedMessage<'job-request'>
  bids: Map<string, OpenedMessage<'bid'>>
  awards: Array<OpenedMessage<'award'>>
}

export interface AuditResult {
  job: string
  award: string
  attempt: number
  winner: string
  price: number
  /** Checks that hold under every view (auditAward). */
  audit: AwardCheck
  /** Recomputed with uniform views (verifyAward): agreement, not proof. */
  uniform: AwardCheck
}

export class AuditLog {
  private readonly jobs = new BoundedCache<string, Watched>(MAX_JOBS)

  private watched (job: string): Watched {
    let w = this.jobs.get(job)
    if (w === undefined) {
      w = { bids: new Map(), awards: [] }
      this.jobs.set(job, w)
    }
    return w
  }

  onJob (request: OpenedMessage<'job-request'>): void {
    this.watched(request.cid.toString()).request = request
  }

  onBid (bid: OpenedMessage<'bid'>): void {
    const w = this.watched(bid.payload.job.toString())
    if (w.bids.size < MAX_BIDS_PER_JOB) w.bids.set(bid.cid.toString(), bid)
  }

  onAward (award: OpenedMessage<'award'>): void {
    const w = this.watched(award.payload.job.toString())
    if (w.awards.length < 16) w.awards.push(award)
  }

  /** A bid on `job` seen on gossip (and still remembered), by CID string. */
  bid (job: string, bid: string): OpenedMessage<'bid'> | undefined {
    return this.jobs.get(job)?.bids.get(bid)
  }

  /** Whether this node saw `job`'s request on gossip (and still remembers it). */
  watches (job: string): boolean {
    return this.jobs.get(job)?.request !== undefined
  }

  /** Check every award seen for `job`; undefined when the job request was not seen. */
  check (job: string): AuditResult[] | undefined {
    const w = this.jobs.get(job)
    if (w?.request === undefined) return undefined
    const request = w.request
    const bids = [...w.bids.values()]
    return w.awards.map((award) => {
      // only the job's requester may award it
      const forged: AwardCheck | undefined = award.signer === request.signer
        ? undefined
        : { ok: false, reason: 'WRONG_JOB', detail: `awarded by ${award.signer}, not by the requester ${request.signer}` }
      const input = { job: { cid: request.cid, payload: request.payload }, bids }
      return {
        job,
        award: award.cid.toString(),
        attempt: award.payload.attempt,
        winner: award.payload.winner,
        price: award.payload.price,
        audit: forged ?? auditAward(award.payload, input),
        uniform: forged ?? verifyAward(award.payload, input)
      }
    })
  }
}
