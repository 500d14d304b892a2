/**
 * What bid damping needs to remember (protocol/market/damping.ts): other providers' bids per job (their
 * payloads, so `shouldStaySilent` can screen and score them as the award would), so a provider can stay
 * silent once enough bids at least as good are out. A bid held costs about 3 KB (its CIDs dominate), so
 * the provider adds only bids for jobs it is waiting to bid on (provider.ts). Bounded:
 * a job is forgotten once its bids have expired, at most MAX_SEEN_JOBS jobs are kept (the oldest
 * go first), and at most MAX_SEEN_PER_JOB providers per job (enough to decide silence many times
 * over; a flood of bids from new identities cannot grow it).
 */
import type { AuctionBid, OpenedMessage } from '../../protocol/index.js'

export const MAX_SEEN_JOBS = 4096
export const MAX_SEEN_PER_JOB = 64
/** Expired jobs are swept at most this often. */
const SWEEP_MS = 10_000

interface SeenJob {
  /** The latest expiry of the job's bids seen. */
  expiresAt: number
  /** Each provider's latest bid (one per round). */
  bids: Map<string, AuctionBid>
}

export class SeenBids {
  private readonly jobs = new Map<string, SeenJob>()
  private lastSweep = 0

  get size (): number {
    return this.jobs.size
  }

  add (bid: OpenedMessage<'bid'>, now: number): void {
    this.sweep(now)
    const job = bid.payload.job.toString()
    let entry = this.jobs.get(job)
    if (entry === undefined) {
      const oldest = this.jobs.keys().next()
      if (this.jobs.size >= MAX_SEEN_JOBS && oldest.done !== true) this.jobs.delete(oldest.value)
      this.jobs.set(job, entry = { expiresAt: 0, bids: new Map() })
    }
    const earlier = entry.bids.get(bid.signer)
    if (earlier === undefined && entry.bids.size >= MAX_SEEN_PER_JOB) return
    if (earlier === undefined || bid.payload.issuedAt >= earlier.payload.issuedAt) entry.bids.set(bid.signer, { cid: bid.cid, signer: bid.signer, payload: bid.payload })
    entry.expiresAt = Math.max(entry.expiresAt, bid.payload.expiresAt)
  }

  /** The bids for `job` in the round that opened at `opensAt` (undefined: round 1, all of them). */
  bids (job: string, opensAt: number | undefined, now: number): AuctionBid[] {
    const entry = this.jobs.get(job)
    if (entry === undefined || entry.expiresAt <= now) return []
    return [...entry.bids.values()].filter((b) => opensAt === undefined || b.payload.issuedAt >= opensAt)
  }

  private sweep (now: number): void {
    if (now - this.lastSweep < SWEEP_MS) return
    this.lastSweep = now
    for (const [job, entry] of this.jobs) if (entry.expiresAt <= now) this.jobs.delete(job)
  }
}
