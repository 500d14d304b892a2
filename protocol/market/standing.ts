/**
 * A requester's standing rule (issue 11, Sybils; protocol/README.md §5.6 "Standing"): which bidders its own history
 * lets take another award, before bids are ranked. Pure: the requester's own outcomes with each bidder
 * (decayed as its reputation view decays them) and the awards it has running with each come in; out come
 * the bids in good standing and the ones held back, with why.
 *
 * Reputation alone cannot stop an identity that delivers once and then vanishes while bidding at a
 * quarter of list: a score factor is bounded (scoring.ts), a low enough ask outweighs it, and every such
 * identity costs the requester a lost lease before the next one is tried. The rule looks only at what
 * this requester saw itself, so nothing another identity signs can move it:
 *
 *  - **failures**: a provider whose own decayed failures weigh at least `minFailureWeight` and at least
 *    `failureRatio` × its own decayed deliveries is held back — it failed this requester at least as
 *    often as it delivered. With the 14-day half-life one failure holds a provider back for 14 days
 *    unless it delivers again; a provider with a long record absorbs an occasional failure.
 *  - **exposure**: a provider may hold at most `exposureBase + ⌊deliveries × exposurePerDelivery⌋`
 *    unfinished awards of this requester (plain delivery counts): a new identity gets one job at a time,
 *    and earns more by delivering, so one that means to vanish takes one job down with it, not ten.
 *    Awards younger than `exposureGraceMs` do not count: jobs closing together are one decision, bounded
 *    by the provider's own reservations (reservations.ts).
 *
 * When no bid is in good standing the requester still awards — a held-back provider is better than no
 * GPU: the over-exposed ones first (their record is good), else every held-back bid, ranked as usual.
 * But when at least `reopenHeldBack` signers were held back and none is in good standing, the round is
 * re-opened once, its message excluding them (a swarm of cheap identities makes honest providers' damping
 * stay silent; excluded bids do not count in damping, §5.6, so the re-opened round hears them). Their bids
 * stay in the round: when it hears no bid in good standing, the award falls back on them as above, so a
 * job whose only fitting providers were held back is not lost. Over-exposed signers are excluded from the
 * message too: not excluding them cut the `sybil` scenario's honest completion to 58–73 % (88–93 % with them).
 */
import type { AuctionBid } from './award.js'
import { short } from './requester-agent-job.js'

/** Own decayed failures at which a provider can be held back: half a fresh failure (one failure, one half-life ago). */
export const STANDING_MIN_FAILURE_WEIGHT = 0.5
/** Held back when own failures ≥ this × own deliveries (both decayed): failed at least as often as it delivered. */
export const STANDING_FAILURE_RATIO = 1
/** Unfinished awards any provider may hold from one requester… */
export const STANDING_EXPOSURE_BASE = 1
/** …plus this many per delivery to that requester (rounded down). */
export const STANDING_EXPOSURE_PER_DELIVERY = 0.5
/**
 * Awards younger than this do not count towards exposure: jobs closing together (a sweep) are one decision,
 * in which the provider's own reservations already bound what it bids on to the GPUs it has (reservations.ts);
 * passing its better bids over there would hand the awards to providers that gave their GPUs to other jobs.
 */
export const STANDING_EXPOSURE_GRACE_MS = 1_000
/** Held-back bids in a round with none in good standing at which the round is re-opened once without them. */
export const STANDING_REOPEN_HELD_BACK = 5

export interface StandingParams {
  /** false: every screened bid is ranked by score alone (the owner's explicit opt-out). */
  enabled: boolean
  /** ≥ 0. */
  minFailureWeight: number
  /** ≥ 0. */
  failureRatio: number
  /** Integer ≥ 1. */
  exposureBase: number
  /** ≥ 0. */
  exposurePerDelivery: number
  /** ms, integer ≥ 0. */
  exposureGraceMs: number
  /** Integer ≥ 1. */
  reopenHeldBack: number
}

export const defaultStandingParams: Readonly<StandingParams> = Object.freeze({
  enabled: true,
  minFailureWeight: STANDING_MIN_FAILURE_WEIGHT,
  failureRatio: STANDING_FAILURE_RATIO,
  exposureBase: STANDING_EXPOSURE_BASE,
  exposurePerDelivery: STANDING_EXPOSURE_PER_DELIVERY,
  exposureGraceMs: STANDING_EXPOSURE_GRACE_MS,
  reopenHeldBack: STANDING_REOPEN_HELD_BACK
})

/** What the requester knows of one bidder: its own outcomes with it and the awards it holds now. */
export interface StandingRecord {
  /** Own verified deliveries, decayed to now. */
  ok: number
  /** Own failures blamed on it, decayed to now. */
  failed: number
  /** Own verified deliveries, a plain count. */
  okCount: number
  /** This requester's awards it holds that have not ended (awarded or running), made at least `exposureGraceMs` ago. */
  unfinished: number
}

export type Standing =
  | { kind: 'good' }
  | { kind: 'held-back', reason: 'failures' | 'exposure', detail: string }

export type StandingLookup = (provider: string) => StandingRecord

/** The most unfinished awards `okCount` deliveries earn. */
export function exposureLimit (okCount: number, params: StandingParams = defaultStandingParams): number {
  return params.exposureBase + Math.floor(Math.max(0, okCount) * params.exposurePerDelivery)
}

/** One provider's standing with this requester. */
export function standingOf (r: StandingRecord, params: StandingParams = defaultStandingParams): Standing {
  if (!params.enabled) return { kind: 'good' }
  if (r.failed > 0 && r.failed >= params.minFailureWeight && r.failed >= params.failureRatio * r.ok) {
    return { kind: 'held-back', reason: 'failures', detail: `failed ${r.failed.toFixed(2)} vs delivered ${r.ok.toFixed(2)} (decayed, own)` }
  }
  const limit = exposureLimit(r.okCount, params)
  if (r.unfinished >= limit) {
    return { kind: 'held-back', reason: 'exposure', detail: `holds ${r.unfinished} unfinished award(s), ${limit} allowed after ${r.okCount} deliveries` }
  }
  return { kind: 'good' }
}

export interface HeldBackBid { bid: AuctionBid, reason: 'failures' | 'exposure', detail: string }

export interface StandingSelection {
  /** The bids to rank: those in good standing, or the fallback when none is. */
  bids: AuctionBid[]
  heldBack: HeldBackBid[]
  /** Providers to exclude in a re-opened round (none is in good standing and enough were held back); else empty. */
  reopenExcluding: string[]
  /** No bid in good standing: `bids` are held-back ones. */
  fallback: boolean
}

/**
 * Split `bids` by their signers' standing. `mayReopen`: the round has not been re-opened for this yet.
 * A signer's standing is looked up once.
 */
export function selectByStanding (bids: readonly AuctionBid[], lookup: StandingLookup, mayReopen: boolean, params: StandingParams = defaultStandingParams): StandingSelection {
  if (!params.enabled) return { bids: [...bids], heldBack: [], reopenExcluding: [], fallback: false }
  const bySigner = new Map<string, Standing>()
  const good: AuctionBid[] = []
  const heldBack: HeldBackBid[] = []
  for (const bid of bids) {
    let s = bySigner.get(bid.signer)
    if (s === undefined) { s = standingOf(lookup(bid.signer), params); bySigner.set(bid.signer, s) }
    if (s.kind === 'good') good.push(bid)
    else heldBack.push({ bid, reason: s.reason, detail: s.detail })
  }
  if (good.length > 0 || heldBack.length === 0) return { bids: good, heldBack, reopenExcluding: [], fallback: false }
  const signers = [...new Set(heldBack.map((h) => h.bid.signer))].sort()
  if (mayReopen && signers.length >= params.reopenHeldBack) return { bids: [], heldBack, reopenExcluding: signers, fallback: true }
  const exposed = heldBack.filter((h) => h.reason === 'exposure')
  return { bids: (exposed.length > 0 ? exposed : heldBack).map((h) => h.bid), heldBack, reopenExcluding: [], fallback: true }
}

/** A bid view's `rejected` for a bid the standing rule kept out of the ranking. */
export const HELD_BACK = 'HELD_BACK'

/** The note on a round with held-back bids: how many, and the first one's reason. */
export function heldBackText (s: StandingSelection): string {
  const signers = new Set(s.heldBack.map((h) => h.bid.signer))
  const first = s.heldBack[0]
  const why = first === undefined ? '' : `: ${short(first.bid.signer)} ${first.detail}${signers.size > 1 ? ', …' : ''}`
  const then = s.reopenExcluding.length > 0 ? '; none in good standing, re-opening the round without them' : s.fallback ? '; none in good standing, ranking them (the over-exposed first)' : ''
  return `${signers.size} bidder(s) held back by this node's own history${why}${then}`
}
