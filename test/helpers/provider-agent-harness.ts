/**
 * Builders and a driver for the provider agent on plain values and virtual time (no signatures, no
 * libp2p, no timers): the job, ad, other providers' bids, and a Harness that seals bids, awards and
 * pays as the shell would. Shared by the provider-agent unit tests.
 */
import assert from 'node:assert/strict'
import { cidOfValue, type CID } from '../../crypto/index.js'
import {
  ProviderAgent, SeenBids, bidWindowClosesAt, suppressionDelayMs, tieBreakUniform, createMarketParams, decideBid, defaultMarketParams, jobIdOf,
  type AgentJob, type AuctionBid, type Award, type Bid, type CapabilityAd, type GpuInfo, type JobRequest, type MarketParams, type PaymentCommitment,
  type ProviderAgentEffect, type ProviderAgentEvent
} from '../../protocol/index.js'
import { ALWAYS, H, M, MON_10H as NOW } from './market-time.js'

export { NOW }

export const ME = 'peer-me'
export const REQUESTER = 'peer-requester'
export const MODEL = 'nvidia-h100-80gb-hbm3'

export function gpu (index: number): GpuInfo {
  return { index, uuid: `GPU-${index}`, name: MODEL, model: MODEL, vramMiB: 81_559, provenance: 'declared' }
}

export function makeAd (over: Partial<CapabilityAd> = {}): CapabilityAd {
  return {
    v: 1, issuedAt: NOW - H, expiresAt: NOW + 24 * H, seq: 1,
    gpus: [0, 1, 2, 3].map(gpu),
    host: { cpuCores: 64, memoryMiB: 512_000, diskGiB: 2000 },
    region: 'eu-west',
    price: { floor: 2_000_000 },
    availability: { timeZone: 'UTC', windows: ALWAYS },
    workloads: ['process', 'docker'],
    limits: { maxTempC: 85, maxPowerW: 2000 },
    attestations: [],
    addrs: [],
    ...over
  }
}

export interface JobOver { n?: number, issuedAt?: number, gpus?: number, tier?: 'gold' | 'silver' | 'bronze', maxPrice?: number, runtimeSec?: number, startDelaySec?: number, windowMs?: number }

export function makeJob (over: JobOver = {}): AgentJob {
  const payload: JobRequest = {
    v: 1, issuedAt: over.issuedAt ?? NOW, expiresAt: NOW + 24 * H,
    nonce: new Uint8Array(16).fill(over.n ?? 0),
    workload: { executor: 'process', argv: ['train'], env: {}, inputs: [], outputs: [], maxRuntimeSec: over.runtimeSec ?? 600, network: false },
    resources: { gpus: over.gpus ?? 2, minVramGB: 40, models: [], cpuCores: 4, memoryMiB: 16_000, diskMiB: 10_000 },
    sla: { tier: over.tier ?? 'silver', maxPrice: over.maxPrice ?? 3_000_000, maxStartDelaySec: over.startDelaySec ?? 600 },
    placement: { regions: ['eu'], residency: 'strict' },
    verification: { mode: 'none' },
    auction: { bidWindowMs: over.windowMs ?? 5_000, paymentRule: 'first-price' }
  }
  return { cid: jobIdOf(payload), signer: REQUESTER, payload }
}

export const cid = (value: unknown): CID => cidOfValue(value).cid

/** Another provider's bid for `job`, as damping reads it. */
export function otherBid (job: AgentJob, i: number, price: number, over: Partial<Bid> = {}): AuctionBid {
  const payload: Bid = {
    v: 1, issuedAt: NOW, expiresAt: NOW + M, job: job.cid, provider: `peer-${i}`, price,
    gpus: [`GPU-x${i}a`, `GPU-x${i}b`], model: MODEL, vramMiB: 81_559, region: 'eu-west', startBy: NOW, ad: cid({ ad: i }), ...over
  }
  return { cid: cid(payload), signer: `peer-${i}`, payload }
}

export class Harness {
  readonly agent: ProviderAgent
  now = NOW
  log: ProviderAgentEffect[] = []
  wake: number | undefined

  constructor (params: MarketParams = defaultMarketParams, damping = true, ad: CapabilityAd | undefined = makeAd(), minRequesterTrust?: number) {
    this.agent = new ProviderAgent({ peerId: ME, params: { ...params, damping }, ...(minRequesterTrust !== undefined ? { minRequesterTrust } : {}) })
    if (ad !== undefined) this.send({ type: 'ad-changed', now: this.now, ad })
  }

  send (event: ProviderAgentEvent): ProviderAgentEffect[] {
    const effects = this.agent.handle(event)
    for (const e of effects) if (e.type === 'wake') this.wake = e.at
    this.log.push(...effects)
    return effects
  }

  tick (at: number): ProviderAgentEffect[] {
    this.now = at
    return this.send({ type: 'tick', now: at })
  }

  /** Seal every send-bid as the shell would (bid id from the payload). */
  seal (effects: ProviderAgentEffect[]): Array<{ bid: string, payload: Bid, cid: CID }> {
    const out = []
    for (const e of effects) {
      if (e.type !== 'send-bid') continue
      const payload: Bid = {
        v: 1, issuedAt: this.now, expiresAt: e.expiresAt, job: e.request.cid, provider: ME, price: e.decision.price, gpus: e.decision.gpus,
        model: MODEL, vramMiB: 81_559, region: 'eu-west', startBy: Math.max(e.decision.startBy, this.now), ad: cid({ mine: 1 })
      }
      const c = cid(payload)
      this.send({ type: 'bid-sealed', now: this.now, job: e.job, round: e.round, bid: c.toString(), payload })
      out.push({ bid: c.toString(), payload, cid: c })
    }
    return out
  }

  /** See the job and bid at once (damping off or delay 0); returns the sealed bid. */
  bidOn (job: AgentJob): { bid: string, payload: Bid, cid: CID } {
    const sealed = this.seal(this.send({ type: 'job-seen', now: this.now, job }))
    assert.equal(sealed.length, 1, 'expected one bid')
    return sealed[0] as { bid: string, payload: Bid, cid: CID }
  }

  award (job: AgentJob, bid: { cid: CID, payload: Bid }, over: Partial<Award> = {}, who: { signer?: string, from?: string } = {}): { effects: ProviderAgentEffect[], id: string, payload: Award } {
    const payload: Award = {
      v: 1, issuedAt: this.now, expiresAt: this.now + H, job: job.cid, attempt: 1, winner: ME, bid: bid.cid, price: bid.payload.price,
      paymentRule: 'first-price', considered: [bid.cid], excluded: [], leaseMs: 30_000, billingIntervalSec: 60, ...over
    }
    const c = cid(payload)
    const id = c.toString()
    awardCids.set(id, c)
    const signer = who.signer ?? REQUESTER
    return { effects: this.send({ type: 'award', now: this.now, award: { id, signer, payload }, from: who.from ?? signer }), id, payload }
  }

  /** Bid, win, fetch inputs: returns the ids of a job ready to start (start-job issued or not). */
  accepted (job: AgentJob): { bid: string, award: string, cid: CID, effects: ProviderAgentEffect[] } {
    const bid = this.bidOn(job)
    const award = this.award(job, bid)
    assert.ok(has(award.effects, 'respond-award', (e) => e.decision === 'accept'), JSON.stringify(award.effects.filter((e) => e.type !== 'note')))
    const effects = this.send({ type: 'inputs-fetched', now: this.now, bid: bid.bid })
    return { bid: bid.bid, award: award.id, cid: bid.cid, effects }
  }

  running (job: AgentJob): { bid: string, award: string } {
    const a = this.accepted(job)
    assert.ok(has(a.effects, 'start-job'))
    this.send({ type: 'started', now: this.now, bid: a.bid })
    return a
  }

  payment (job: AgentJob, bid: string, award: string, over: Partial<PaymentCommitment> = {}, signer = REQUESTER): ProviderAgentEffect[] {
    const payload: PaymentCommitment = {
      v: 1, issuedAt: this.now, expiresAt: this.now + H, job: job.cid, award: cidFromString(award), payee: ME, seq: 1, interval: 1, cumulative: 1, gpuSeconds: 1, ...over
    }
    return this.send({ type: 'payment', now: this.now, bid, signer, payload })
  }
}

/** Award CIDs by id string (payments and cancels name the award by CID). */
const awardCids = new Map<string, CID>()
export function cidFromString (s: string): CID {
  const c = awardCids.get(s)
  if (c === undefined) throw new Error('unknown award id')
  return c
}

export type Of<T extends ProviderAgentEffect['type']> = Extract<ProviderAgentEffect, { type: T }>
export function find<T extends ProviderAgentEffect['type']> (effects: readonly ProviderAgentEffect[], type: T, where: (e: Of<T>) => boolean = () => true): Of<T> | undefined {
  return effects.find((e): e is Of<T> => e.type === type && where(e as Of<T>))
}
export function has<T extends ProviderAgentEffect['type']> (effects: readonly ProviderAgentEffect[], type: T, where?: (e: Of<T>) => boolean): boolean {
  return find(effects, type, where) !== undefined
}
export const notes = (effects: readonly ProviderAgentEffect[]): string[] => effects.flatMap((e) => e.type === 'note' ? [e.message] : [])

/** The damping delay the agent (ME) should wait for `job` (round 1 unless given) on a fresh ad: the fit delay plus ME's suppression timer (damping.ts dampingDelayMs, written out). */
export function delayOf (job: AgentJob, fraction = defaultMarketParams.bidDelayFraction, round = 1, params: MarketParams = defaultMarketParams): number {
  const d = decideBid(job.payload, { ad: makeAd(), allocations: [] }, NOW)
  assert.equal(d.kind, 'bid')
  const window = job.payload.auction.bidWindowMs
  const spread = fraction * params.bidSpreadShare
  return Math.floor((1 - (d as { fit: number }).fit) * (fraction - spread) * window) +
    suppressionDelayMs(tieBreakUniform(ME, job.cid.toString(), round), window, spread, params.dampingGroupSize)
}

