/**
 * The provider's recent bids and what became of them, for `GET /v1/bids` and the market metrics
 * (protocol/market/bid-outcome.ts decides won or lost and why). Bounded in memory (the newest
 * MAX_BID_LOG bids); not kept across restarts — the provider's job records are (store.ts).
 *
 * An entry is `pending` from the bid until one of:
 *  - an award naming it (on the exec stream, or on gossip first): `won`; declining that award
 *    afterwards (the review found the job no longer fits) makes it `declined`, with the reason;
 *  - an award on gossip for the job naming another bid: `lost`, with bid-outcome's reason when the
 *    award considered our bid and this node saw the winning bid on gossip (the market's audit log
 *    keeps them); a bid the award did not consider: `not-considered`. An award issued before our bid
 *    that does not name it (an earlier attempt, late on gossip) leaves it pending;
 *  - the offer ending with no award: `lost` without a winner when the bid expired, `withdrawn` when
 *    the job was cancelled or this node stopped selling before any award.
 *
 * The score inputs handed to bidOutcome: reliability unknown for both bids (the requester's view is
 * its own; this node's view of providers is not the requester's), and RTTs estimated from each bid's
 * region and country to the job's first placement region (rtt-estimate.ts), the nearest thing to the
 * requester's location this node knows, the same way for both bids; a job without regions scores both
 * at the default RTT.
 */
import {
  bidOutcome, cacheFactor, estimateRttMs,
  type LossReason, type OpenedMessage, type OutcomeBid, type ProviderStatus, type SealedMessage
} from '../../protocol/index.js'

/** Bids kept (the oldest sent is forgotten first). */
export const MAX_BID_LOG = 500

export type BidLogOutcome = 'pending' | 'won' | 'lost' | 'declined' | 'withdrawn'

/** One entry of `GET /v1/bids`. */
export interface BidLogEntry {
  /** The job request's CID. */
  job: string
  /** Our bid's CID. */
  bid: string
  /** The bid's ask, integer micro-credits per GPU-hour (as every price in the API). */
  pricePerGpuHour: number
  /** GPUs the bid offers. */
  gpus: number
  outcome: BidLogOutcome
  /** lost: a LossReason (absent when the winning bid was not seen, or the bid expired unawarded); declined: why. */
  reason?: string
  /** lost: the winner's peer id, when an award named one. */
  winner?: string
  /** When the bid was sent, ISO 8601. */
  at: string
}

/** A message as the log reads it: its CID and payload (an opened or sealed message fits). */
type Held<K extends 'job-request' | 'bid'> = Pick<OpenedMessage<K> | SealedMessage<K>, 'cid' | 'payload'>

interface Entry {
  view: BidLogEntry
  job: Held<'job-request'>
  bid: Held<'bid'>
}

export interface BidLogOptions {
  /** A bid on `job` seen on gossip, by CID string (the market's audit log): the winner, to explain a loss. */
  seenBid?: (job: string, bid: string) => Held<'bid'> | undefined
  /** An award decided one of our bids (from an award on gossip or on the exec stream). */
  onDecided?: (outcome: 'won' | 'lost', reason: LossReason | undefined) => void
  /** Entries kept; default MAX_BID_LOG. */
  max?: number
}

export class BidLog {
  /** By bid CID, in the order sent. */
  private readonly entries = new Map<string, Entry>()
  /** Pending bids of ours, by job. */
  private readonly pending = new Map<string, number>()
  private readonly max: number

  constructor (private readonly events: BidLogOptions = {}) {
    this.max = events.max ?? MAX_BID_LOG
  }

  /** Our bid, just sealed. */
  sent (job: Held<'job-request'>, bid: Held<'bid'>, now: number): void {
    const id = bid.cid.toString()
    if (this.entries.has(id)) return
    this.pending.set(job.cid.toString(), (this.pending.get(job.cid.toString()) ?? 0) + 1)
    this.entries.set(id, {
      job,
      bid,
      view: { job: job.cid.toString(), bid: id, pricePerGpuHour: bid.payload.price, gpus: bid.payload.gpus.length, outcome: 'pending', at: new Date(now).toISOString() }
    })
    while (this.entries.size > this.max) {
      const oldest = this.entries.keys().next().value as string
      const entry = this.entries.get(oldest) as Entry
      if (entry.view.outcome === 'pending') this.settle(entry, 'withdrawn')
      this.entries.delete(oldest)
    }
  }

  /** An award (gossip or exec stream): decides each pending bid of ours on its job that it concerns. */
  awardSeen (award: Pick<OpenedMessage<'award'>, 'payload'>): void {
    const a = award.payload
    const job = a.job.toString()
    const considered = a.considered.map((c) => c.toString())
    if (!this.pending.has(job)) return
    const winnerBid = this.events.seenBid?.(job, a.bid.toString())
    for (const entry of this.entries.values()) {
      if (entry.view.job !== job || entry.view.outcome !== 'pending') continue
      const ours = entry.view.bid
      // an award older than our bid (an earlier attempt, late on gossip) says nothing of it
      if (!considered.includes(ours) && a.bid.toString() !== ours && a.issuedAt < entry.bid.payload.issuedAt) continue
      const outcome = bidOutcome({
        ours: this.scoreInput(entry, entry.bid.cid.toString(), entry.bid.payload),
        award: { bid: a.bid.toString(), winner: a.winner, considered },
        winner: winnerBid === undefined ? undefined : this.scoreInput(entry, winnerBid.cid.toString(), winnerBid.payload),
        tier: entry.job.payload.sla.tier,
        placement: entry.job.payload.placement
      })
      if (outcome.outcome === 'won') {
        this.settle(entry, 'won')
        this.events.onDecided?.('won', undefined)
      } else {
        this.settle(entry, 'lost')
        entry.view.winner = outcome.winner
        if (outcome.reason !== undefined) entry.view.reason = outcome.reason
        this.events.onDecided?.('lost', outcome.reason)
      }
    }
  }

  /** The offer of `bid` ended (the agent's offer-ended): what an award did not already say. */
  ended (bid: string, status: ProviderStatus, reason: string | undefined): void {
    const entry = this.entries.get(bid)
    if (entry === undefined) return
    const view = entry.view
    if (status === 'declined' && (view.outcome === 'won' || view.outcome === 'pending')) {
      this.settle(entry, 'declined')
      if (reason !== undefined) view.reason = reason
    } else if (view.outcome === 'pending') {
      this.settle(entry, status === 'lost' ? 'lost' : 'withdrawn')
    }
  }

  /** Our exec-stream award for `bid` was taken on: won (if no gossip award said so first). */
  won (bid: string): void {
    const entry = this.entries.get(bid)
    if (entry === undefined || entry.view.outcome !== 'pending') return
    this.settle(entry, 'won')
    this.events.onDecided?.('won', undefined)
  }

  /** The newest first, at most `limit`. */
  list (limit = this.max): BidLogEntry[] {
    const out: BidLogEntry[] = []
    const all = [...this.entries.values()]
    for (let i = all.length - 1; i >= 0 && out.length < limit; i--) out.push({ ...(all[i] as Entry).view })
    return out
  }

  /** Move a pending entry on. */
  private settle (entry: Entry, outcome: Exclude<BidLogOutcome, 'pending'>): void {
    const job = entry.view.job
    if (entry.view.outcome === 'pending') {
      const left = (this.pending.get(job) ?? 1) - 1
      if (left > 0) this.pending.set(job, left)
      else this.pending.delete(job)
    }
    entry.view.outcome = outcome
  }

  /** A bid's score inputs as this node can estimate them (see the file comment). */
  private scoreInput (entry: Entry, cid: string, bid: OpenedMessage<'bid'>['payload']): OutcomeBid {
    const region = entry.job.payload.placement.regions[0]
    const rttMs = region === undefined ? undefined : estimateRttMs({ region: bid.region, country: bid.country }, { region })
    return { cid, price: bid.price, cacheFactor: cacheFactor(entry.job.payload.workload, bid.cached), rttMs }
  }
}
