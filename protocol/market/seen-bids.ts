/**
 * What bid damping needs to remember (damping.ts): other providers' bids per job (their payloads, so
 * `shouldStaySilent` can screen and score them as the award would), so a provider can stay silent once
 * enough bids at least as good are out. A bid held costs about 3 KB (its CIDs dominate), so the
 * provider agent adds only bids for jobs it is waiting to bid on. Bounded by `MarketParams.seenBids`:
 * a job is forgotten once its bids have expired, at most `maxJobs` jobs are kept (the oldest go
 * first), and at most `maxPerJob` providers per job (enough to decide silence many times over; a flood
 * of bids from new identities cannot grow it).
 */
import type { AuctionBid } from './award.js'
import type { MarketParams } from './params.js'

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

  constructor (private readonly bounds: MarketParams['seenBids']) {}

  /** Jobs held. */
  get size (): number {
    return this.jobs.size
  }

  add (bid: AuctionBid, now: number): void {
    this.sweep(now)
    const job = bid.payload.job.toString()
    let entry = this.jobs.get(job)
    if (entry === undefined) {
      const oldest = this.jobs.keys().next()
      if (this.jobs.size >= this.bounds.maxJobs && oldest.done !== true) this.jobs.delete(oldest.value)
      this.jobs.set(job, entry = { expiresAt: 0, bids: new Map() })
    }
    const earlier = entry.bids.get(bid.signer)
    if (earlier === undefined && entry.bids.size >= this.bounds.maxPerJob) return
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
