/**
 * What an adversarial provider publishes for each job request or re-opened round it sees (issue 10,
 * "Adversaries"), and what the real network does with each message — modelled, since the harness signs
 * nothing (node/market/gossip.ts's topic validator opens every message with the full §6 checks before
 * gossipsub forwards it):
 *
 * - **Its own bids** (signed with its own key): the validator accepts them, gossipsub forwards them to
 *   every subscriber, and each requester's agent screens them (`assessBid`) and keeps at most one per
 *   peer per round (bid-store.ts). They go out on the bus like any bid.
 * - **Replays** (the same bytes again): the receiver's replay cache IGNOREs them at the first hop, so
 *   they cost `firstHop` deliveries and reach no agent (counted as `bid-replay`).
 * - **Forged bids** (a made-up peer id: no key to sign with, so the signature cannot verify): the
 *   validator REJECTs them at the first hop (gossipsub's peer score then penalises the sender), the
 *   same cost, no agent sees them (counted as `bid-forged`).
 *
 * The **undercutter** bids `price` on every job its GPUs could plausibly take (enough GPUs of enough
 * memory; the requester's screening checks the rest) instead of running its agent's bidding, then
 * vanishes (no-show) or accepts and stalls (provider-node.ts). The **spammer** runs its agent honestly
 * and on top floods each job it sees: `own` extra bids under its identity at the job's price cap, each
 * claiming the job's GPU count whatever it has (bids for jobs it cannot serve), `replays` copies of one
 * of them and `forged` bids under made-up ids.
 */
import type { CID } from '../../crypto/index.js'
import { jobTopics } from '../../protocol/discovery.js'
import type { CapabilityAd } from '../../protocol/messages/capability-ad.js'
import type { JobRequest } from '../../protocol/messages/job-request.js'
import { message, type Opened } from './messages.js'
import { bidPayload } from './payloads.js'
import type { World } from './world.js'

export interface UndercutBehaviour {
  /** The price it asks, micros per GPU-hour (e.g. 1, or a small share of list). */
  price: number
}

export interface SpamBehaviour {
  /** Extra bids under its own identity per job request and round seen, at the job's cap (each a new CID). */
  own: number
  /** Copies of the first of them sent again (ignored at the first hop). */
  replays: number
  /** Bids under made-up peer ids (rejected at the first hop). */
  forged: number
  /** Peers a dropped message reaches before it is dropped: the sender's gossip mesh (gossipsub's D). */
  firstHop: number
}

/** How long an adversary's bid stays valid beyond the bid window, ms. */
const BID_SLACK_MS = 60_000

/** Whether `ad`'s GPUs could take `request` (count and memory; screening checks model and region). */
export function plausible (ad: CapabilityAd, request: JobRequest): boolean {
  const need = request.resources.gpus
  const minMiB = request.resources.minVramGB * 1024
  return ad.gpus.filter((g) => g.vramMiB >= minMiB).length >= need
}

/** The bids and the first-hop drops one adversary sends for one job request or round. */
export class AdversaryBidder {
  constructor (
    private readonly world: World,
    private readonly peerId: string,
    private readonly undercut: UndercutBehaviour | undefined,
    private readonly spam: SpamBehaviour | undefined
  ) {}

  /** React to `job` (its request, gossiped or re-opened in a round that does not exclude this node). */
  seen (job: Opened<JobRequest>, ad: CapabilityAd | undefined, adCid: CID): void {
    if (ad === undefined) return
    const topics = jobTopics(job.payload.placement)
    if (this.undercut !== undefined && plausible(ad, job.payload)) {
      this.world.bus.publish(this.peerId, topics, this.bid(job, ad, adCid, this.undercut.price, false))
    }
    const spam = this.spam
    if (spam === undefined) return
    let first: ReturnType<AdversaryBidder['bid']> | undefined
    for (let i = 0; i < spam.own; i++) {
      const m = this.bid(job, ad, adCid, job.payload.sla.maxPrice, true)
      first ??= m
      this.world.bus.publish(this.peerId, topics, m)
    }
    if (first !== undefined) for (let i = 0; i < spam.replays; i++) this.world.recorder.droppedAtFirstHop(this.peerId, { ...first, kind: 'bid-replay' }, spam.firstHop)
    for (let i = 0; i < spam.forged; i++) {
      const forger = `peer:forged-${this.world.ids.next('forged')}`
      const m = this.bid(job, ad, adCid, Math.max(1, Math.floor(job.payload.sla.maxPrice / 2)), true, forger)
      this.world.recorder.droppedAtFirstHop(this.peerId, { ...m, kind: 'bid-forged' }, spam.firstHop)
    }
  }

  /** A bid on `job` at `price`: its ad's GPUs, or (`claimAll`) as many as the job asks, had or not. */
  private bid (job: Opened<JobRequest>, ad: CapabilityAd, adCid: CID, price: number, claimAll: boolean, signer = this.peerId): ReturnType<typeof message<'bid'>> {
    const now = this.world.scheduler.now()
    const need = Math.max(1, job.payload.resources.gpus)
    const minMiB = job.payload.resources.minVramGB * 1024
    const fitting = ad.gpus.filter((g) => g.vramMiB >= minMiB)
    const gpus = claimAll
      ? Array.from({ length: need }, (_, i) => fitting[i] ?? ad.gpus[i] ?? { uuid: `GPU-claimed-${signer}-${i}`, model: ad.gpus[0]?.model ?? 'cpu', vramMiB: ad.gpus[0]?.vramMiB ?? 0 })
      : fitting.slice(0, need)
    const cid = this.world.ids.cid('bid')
    const payload = bidPayload({
      now,
      expiresAt: now + job.payload.auction.bidWindowMs + BID_SLACK_MS,
      job: job.cid,
      provider: signer,
      price,
      gpus: gpus.map((g) => g.uuid),
      hardware: gpus,
      ad,
      adCid,
      startBy: now
    })
    return message('bid', { cid, signer, payload })
  }
}
