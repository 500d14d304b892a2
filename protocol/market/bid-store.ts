/**
 * A round's bid store on the requester (protocol/README §5.6 "Bid store"). Pure: the bids held, the
 * arriving bid and its score come in; out comes whether to admit it, to replace a held bid with it, or
 * to refuse it. The store is bounded (MAX_BIDS_PER_ROUND, the most an award can consider), so it must
 * not fill on a first-come basis: damping delays honest bids, and cheap junk arriving first would take
 * every slot.
 *
 * Rules, in order, for a bid that passed screening on arrival (`assessBid`):
 *  1. the same bid CID again is refused (DUPLICATE);
 *  2. one bid per peer per round (MAX_BIDS_PER_PEER_PER_ROUND): a second bid from a peer replaces its
 *     held one when it is the better own bid (lower price, ties to the lower CID string: the award's
 *     DUPLICATE_SIGNER rule), else it is refused (PEER_HAS_BETTER);
 *  3. with room, it is admitted;
 *  4. when full, it replaces the worst held bid (highest effective price, ties to the higher CID string:
 *     the award's ranking) when it ranks before it, else it is refused (OUTRANKED).
 * So with the requester's views unchanged through the round, the store ends holding the best-ranked
 * bid of each of the best-ranked peers, which is what the award would consider of all bids received.
 */
import { betterOwnOffer, bidCacheFactor, screenBid, lookupView, type AuctionBid, type AuctionJob, type BidRejection, type PeerView } from './award.js'
import { MAX_CONSIDERED_BIDS } from '../limits.js'
import { compareRanked, defaultScoringParams, effectivePrice, scoringParamsForJob, type ScoringParams } from './scoring.js'

/** Most bids a round's store holds: the most an award can consider. */
export const MAX_BIDS_PER_ROUND = MAX_CONSIDERED_BIDS
/** Most bids one peer has in a round's store (the award counts one per signer). */
export const MAX_BIDS_PER_PEER_PER_ROUND = 1

/** A bid as the store holds it: ids and what it ranks by. */
export interface HeldBid {
  /** Bid CID, string form. */
  bid: string
  /** Peer id of its signer. */
  provider: string
  /** Asked price, micros per GPU-hour. */
  price: number
  /** Price × the requester's score factor for the signer at arrival (scoring.ts). */
  effectivePrice: number
}

export const BidRefusal = {
  DUPLICATE: 'DUPLICATE',
  /** The peer already has a bid this round at least as good. */
  PEER_HAS_BETTER: 'PEER_HAS_BETTER',
  /** The store is full of bids that all rank before it. */
  OUTRANKED: 'OUTRANKED'
} as const
export type BidRefusal = typeof BidRefusal[keyof typeof BidRefusal]

export type BidAdmission =
  | { kind: 'admit' }
  /** Take it in place of `evict` (a bid CID): the peer's own worse bid, or the worst bid of a full store. */
  | { kind: 'replace', evict: string, because: 'SAME_PEER' | 'FULL' }
  | { kind: 'refuse', reason: BidRefusal }

const rankOf = (b: HeldBid): { effectivePrice: number, cid: string } => ({ effectivePrice: b.effectivePrice, cid: b.bid })

/** What to do with `arriving` given the round's `held` bids (see the file comment). */
export function admitBid (held: readonly HeldBid[], arriving: HeldBid, capacity: number = MAX_BIDS_PER_ROUND): BidAdmission {
  if (held.some((h) => h.bid === arriving.bid)) return { kind: 'refuse', reason: BidRefusal.DUPLICATE }
  const own = held.find((h) => h.provider === arriving.provider)
  if (own !== undefined) {
    return betterOwnOffer({ price: arriving.price, cid: arriving.bid }, { price: own.price, cid: own.bid })
      ? { kind: 'replace', evict: own.bid, because: 'SAME_PEER' }
      : { kind: 'refuse', reason: BidRefusal.PEER_HAS_BETTER }
  }
  if (held.length < capacity) return { kind: 'admit' }
  let worst: HeldBid | undefined
  for (const h of held) if (worst === undefined || compareRanked(rankOf(h), rankOf(worst)) > 0) worst = h
  if (worst === undefined || compareRanked(rankOf(arriving), rankOf(worst)) >= 0) return { kind: 'refuse', reason: BidRefusal.OUTRANKED }
  return { kind: 'replace', evict: worst.bid, because: 'FULL' }
}

/** The held bids after `admission` of `arriving` (the same array when refused). */
export function storeBid (held: readonly HeldBid[], arriving: HeldBid, admission: BidAdmission): readonly HeldBid[] {
  switch (admission.kind) {
    case 'admit': return [...held, arriving]
    case 'replace': return [...held.filter((h) => h.bid !== admission.evict), arriving]
    case 'refuse': return held
  }
}

/** What screening on arrival needs beside the job and the bid. */
export interface AssessContext {
  /**
   * The time to screen at: the round's close (or now, if later), the earliest the award can be decided.
   * A bid that expires by then, or promises a start later than maxStartDelaySec after it, cannot win.
   */
  at: number
  /** The requester's reliability view (as the award uses it); unknown peers score as in scoring.ts. */
  reliability?: PeerView
  /** The requester's RTT view, if the award uses one. */
  rtt?: PeerView
  params?: ScoringParams
}

/**
 * Screen `bid` on arrival with the award's own payload checks (`screenBid`: job, price cap, expiry,
 * hardware, VRAM, model, region/residency, start) and score it for the store: the reason it can never
 * be considered, or the held form.
 */
export function assessBid (job: AuctionJob, bid: AuctionBid, ctx: AssessContext): { fault: BidRejection } | { held: HeldBid } {
  const fault = screenBid(bid, job, ctx.at)
  if (fault !== undefined) return { fault }
  const input = { price: bid.payload.price, reliability: lookupView(ctx.reliability, bid.signer), rttMs: lookupView(ctx.rtt, bid.signer), cacheFactor: bidCacheFactor(job, bid) }
  return {
    held: {
      bid: bid.cid.toString(),
      provider: bid.signer,
      price: bid.payload.price,
      effectivePrice: effectivePrice(input, job.payload.sla.tier, scoringParamsForJob(ctx.params ?? defaultScoringParams, job.payload.placement))
    }
  }
}
