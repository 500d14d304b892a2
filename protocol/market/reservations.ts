/**
 * A provider's outstanding bids hold their GPUs, tentatively (protocol/README §5.6, "Reservations").
 * Without this a provider with one free GPU bids on every concurrent job it fits, wins two, and has to
 * decline the second award BUSY, which costs that requester an attempt. With it, each bid's GPUs and
 * times are held from the bid decision until the bid is shown won or lost:
 *
 * - the award for the bid comes (the hold becomes the allocation; the agent releases it);
 * - an award of the job's requester for the job, at an attempt at least the bid's, names another bid;
 * - a bid of another provider for the same round is seen that the award will prefer, as far as this
 *   provider can tell (never a provider it saw win an award of the same requester that may still be
 *   unfinished at the round's close: the requester's standing rule, standing.ts, may pass it over), as far as this
 *   provider can tell: it passes the award's screening at the round's close, and at the one prior's
 *   reliability (what the requester knows of a stranger) it scores below this bid at the reliability
 *   the requester's own record of this provider gives it (`estimateReliability` of this provider's
 *   settled and failed awards from that requester), both at the default RTT. Only the best-scoring bid
 *   is awarded, so this one has lost; the rule errs (an over-commit again, declined at the award) only
 *   when the requester rates the other bidder below the prior;
 * - the bid ends without an award (silent after damping, window closed, offer expired);
 * - `until` passes: the round's close + `MarketParams.bidHoldMs`, by which the award should have come
 *   (a late award is reviewed against what is free then).
 *
 * A new bid decision sees free = capacity − allocations − holds. A hold keeps its job's tier, so a gold
 * or silver job may still count on preempting a bronze job that is only bid on, as it would one that
 * runs (the bid policy's preemption is unchanged). A job declined BUSY while GPUs were held waits in
 * `BusyJobs` and is decided again when a hold is released, while its window is open, so providers that
 * all bid on the first of many concurrent jobs are not lost to the rest. Pure; time comes in as `now`.
 */
import type { CID } from '../../crypto/index.js'
import type { JobRequest } from '../messages/job-request.js'
import type { AuctionBid, AuctionJob } from './award.js'
import { bidCacheFactor, screenBid } from './award.js'
import { cacheFactor } from './input-cache.js'
import { estimateReliability, type Outcomes } from './reliability.js'
import { effectivePrice, type ScoringParams } from './scoring.js'
import type { Allocation, BidDecision } from './types.js'

export interface Reservation {
  /** The job (its request's CID string) and its request, the round and attempt the bid is for, and the job's requester. */
  readonly job: string
  readonly request: AuctionJob
  readonly round: number
  readonly attempt: number
  readonly requester: string
  /** What the bid offers, as the allocation it would become (its `price`: the ask). */
  readonly hold: Allocation
  /** The job's inputs the bid lists as cached (input-cache.ts), if any: they lower its score. */
  readonly cached?: readonly CID[] | undefined
  /** The round's window: when it opened (its issuedAt; undefined: round 1) and closes, by this node's clock. */
  readonly opensAt?: number | undefined
  readonly closesAt: number
  /** Providers excluded from the round (their bids do not count). */
  readonly excluded?: readonly string[] | undefined
  /** Released at this instant (ms) unless released sooner. */
  readonly until: number
  /** The bid's id, once it is sealed. */
  bid?: string
}

/** An award as seen on gossip (signed by `signer`). */
export interface SeenAward {
  job: string
  bid: string
  attempt: number
  signer: string
  /** The provider awarded, and until when its award may still be unfinished (ms; absent: not tracked). */
  winner?: string
  unfinishedUntil?: number
}

/** How long an award seen on gossip is taken to be unfinished when its job's max runtime is unknown. */
export const UNFINISHED_AWARD_HORIZON_MS = 24 * 60 * 60_000
/** At most this many awards seen on gossip are tracked as possibly unfinished (the oldest give way). */
export const MAX_TRACKED_AWARDS = 4096

/** The allocation a bid decision would commit for `request` (the award review commits the same shape). */
export function allocationFor (job: string, request: JobRequest, decision: Extract<BidDecision, { kind: 'bid' }>, price: number = decision.price): Allocation {
  return { job, gpus: decision.gpus, tier: request.sla.tier, price, startedAt: decision.startBy, endsAt: decision.startBy + request.workload.maxRuntimeSec * 1000 }
}

/** At most this many requesters' records are kept (the oldest give way). */
export const MAX_REQUESTER_RECORDS = 4096

export class Reservations {
  private readonly byKey = new Map<string, Reservation>()
  /** This provider's awards from each requester that settled (ok) or failed. */
  private readonly records = new Map<string, Outcomes>()
  /** Awards seen on gossip, `requester winner` → until when they may be unfinished. */
  private readonly unfinished = new Map<string, number>()

  /** How many holds are recorded (some may have run out: `active` drops them). */
  get size (): number {
    return this.byKey.size
  }

  /** Hold `r` under `key` (one hold per key: a second replaces the first). A hold of no GPU is not kept. */
  hold (key: string, r: Reservation): void {
    if (r.hold.gpus.length === 0) return
    this.byKey.set(key, r)
  }

  /** The bid under `key` was sealed as `bid`. */
  sealed (key: string, bid: string): void {
    const r = this.byKey.get(key)
    if (r !== undefined) r.bid = bid
  }

  /** The keys of the holds recorded (read-only: `job#round`, as the agent keys them). */
  keys (): IterableIterator<string> {
    return this.byKey.keys()
  }

  /** Release the hold under `key`; true when there was one. */
  release (key: string): boolean {
    return this.byKey.delete(key)
  }

  /** An award seen on gossip: release every hold it shows lost. Returns the released keys. */
  awardSeen (award: SeenAward): string[] {
    if (award.winner !== undefined && award.unfinishedUntil !== undefined) {
      const k = `${award.signer} ${award.winner}`
      this.unfinished.delete(k)
      this.unfinished.set(k, Math.max(award.unfinishedUntil, this.unfinished.get(k) ?? 0))
      if (this.unfinished.size > MAX_TRACKED_AWARDS) this.unfinished.delete(this.unfinished.keys().next().value as string)
    }
    return this.releaseWhere((r) => r.job === award.job && r.requester === award.signer && award.attempt >= r.attempt && r.bid !== award.bid)
  }

  /** An award of `requester`'s to this provider ended: settled (true) or failed (false). */
  outcome (requester: string, ok: boolean): void {
    const r = this.records.get(requester) ?? { ok: 0, failed: 0 }
    this.records.delete(requester)
    this.records.set(requester, ok ? { ok: r.ok + 1, failed: r.failed } : { ok: r.ok, failed: r.failed + 1 })
    if (this.records.size > MAX_REQUESTER_RECORDS) this.records.delete(this.records.keys().next().value as string)
  }

  /** The reliability `requester`'s record of this provider gives it (the prior when it has none). */
  reliabilityAt (requester: string, params: ScoringParams): number {
    return estimateReliability(this.records.get(requester) ?? { ok: 0, failed: 0 }, params)
  }

  /** Another provider's bid seen on gossip: release the holds on its job's round that it beats. Returns the released keys. */
  bidSeen (bid: AuctionBid, params: ScoringParams): string[] {
    const job = bid.payload.job.toString()
    return this.releaseWhere((r) => r.job === job && (r.opensAt === undefined || bid.payload.issuedAt >= r.opensAt) &&
      r.excluded?.includes(bid.signer) !== true && screenBid(bid, r.request, r.closesAt) === undefined &&
      !this.mayHoldUnfinished(r.requester, bid.signer, r.closesAt) &&
      beats(bid.payload.price, r.hold.price, this.reliabilityAt(r.requester, params), r.request, params,
        bidCacheFactor(r.request, bid), cacheFactor(r.request.payload.workload, r.cached)))
  }

  /** The job request of a hold on `job`, if this node holds GPUs for one of its rounds. */
  requestFor (job: string): JobRequest | undefined {
    for (const r of this.byKey.values()) if (r.job === job) return r.request.payload
    return undefined
  }

  /**
   * Whether `provider` may still hold an award of `requester` at `at`, as far as awards seen on gossip
   * tell: the requester's standing rule (standing.ts) may then pass its better bid over, so it does not
   * show this node's bid lost.
   */
  mayHoldUnfinished (requester: string, provider: string, at: number): boolean {
    return (this.unfinished.get(`${requester} ${provider}`) ?? -Infinity) > at
  }

  /** The earliest `until` of the holds (undefined: none). */
  nextUntil (): number | undefined {
    let next: number | undefined
    for (const r of this.byKey.values()) if (next === undefined || r.until < next) next = r.until
    return next
  }

  /** The holds in force at `now`, as allocations (those whose `until` is due are released). */
  active (now: number): Allocation[] {
    this.expire(now)
    return [...this.byKey.values()].map((r) => r.hold)
  }

  /** Release the holds whose `until` is due at `now`; returns their keys. */
  expire (now: number): string[] {
    return this.releaseWhere((r) => r.until <= now)
  }

  private releaseWhere (lost: (r: Reservation) => boolean): string[] {
    const released: string[] = []
    for (const [key, r] of this.byKey) {
      if (!lost(r)) continue
      this.byKey.delete(key)
      released.push(key)
    }
    return released
  }
}

/**
 * True when a stranger's ask of `theirs` (the prior's reliability) scores strictly below this
 * provider's ask of `mine` at reliability `myReliability`, both at the default RTT and each at its
 * own cache factor (input-cache.ts; 1: nothing cached), for `job`'s tier.
 */
export function beats (theirs: number, mine: number, myReliability: number, job: AuctionJob, params: ScoringParams, theirCache = 1, myCache = 1): boolean {
  const tier = job.payload.sla.tier
  return effectivePrice({ price: theirs, cacheFactor: theirCache }, tier, params) < effectivePrice({ price: mine, reliability: myReliability, cacheFactor: myCache }, tier, params)
}

/** At most this many jobs wait for held GPUs; the oldest give way. */
export const MAX_BUSY_JOBS = 256

/** Jobs declined BUSY while bids held GPUs: decided again when a hold is released, until their window closes. */
export class BusyJobs<T> {
  private readonly byKey = new Map<string, { item: T, closesAt: number }>()

  get size (): number {
    return this.byKey.size
  }

  /** The keys of the waiting items (read-only). */
  keys (): IterableIterator<string> {
    return this.byKey.keys()
  }

  /** `item` (under `key`) waits until `closesAt`. */
  add (key: string, item: T, closesAt: number): void {
    this.byKey.delete(key)
    this.byKey.set(key, { item, closesAt })
    if (this.byKey.size > MAX_BUSY_JOBS) this.byKey.delete(this.byKey.keys().next().value as string)
  }

  /** The waiting items whose window is still open at `now`, oldest first; all leave the list. */
  take (now: number): T[] {
    const out: T[] = []
    for (const { item, closesAt } of this.byKey.values()) if (closesAt > now) out.push(item)
    this.byKey.clear()
    return out
  }
}
