/**
 * Builders and a driver for the requester agent on virtual time: signed bids from seeded identities,
 * a job payload, and a Driver that fires the agent's wakes in order and answers award-sealed and
 * payment-sent as the shell would. Shared by the requester-agent unit tests.
 */
import { Identity, cidOfValue, type CID } from '../../crypto/index.js'
import {
  RequesterAgent, createMarketParams, jobIdOf, openMessage, sealMessage,
  type AuctionBid, type Bid, type JobRequest, type OpenedMessage, type RequesterAgentEffect, type RequesterAgentEvent, type RequesterTrustOptions
} from '../../protocol/index.js'
import { NOW } from './arbitraries.js'

export { NOW }

export const LEASE = 30_000
export const WINDOW = 500

export function identity (i: number): Identity {
  const seed = new Uint8Array(32).fill(9)
  seed[0] = i & 0xff
  seed[1] = i >> 8
  return new Identity(seed)
}

export const REQUESTER = identity(1000).peerId

export function jobPayload (changes: Partial<JobRequest> = {}, resources: Partial<JobRequest['resources']> = {}): JobRequest {
  return {
    v: 1,
    issuedAt: NOW,
    expiresAt: NOW + 3_600_000,
    nonce: new Uint8Array(16).fill(4),
    workload: { executor: 'process', argv: ['python3', 'train.py'], env: {}, inputs: [], outputs: ['out.json'], maxRuntimeSec: 3600, network: false },
    resources: { gpus: 1, minVramGB: 40, models: ['h100'], cpuCores: 4, memoryMiB: 16_384, diskMiB: 10_240, ...resources },
    sla: { tier: 'silver', maxPrice: 3_000_000, maxStartDelaySec: 300 },
    placement: { regions: ['eu'], residency: 'strict' },
    verification: { mode: 'none' },
    auction: { bidWindowMs: WINDOW, paymentRule: 'first-price' },
    ...changes
  }
}

export function bidFor (job: CID, i: number, price: number, now: number, changes: Partial<Bid> = {}): AuctionBid {
  const signer = identity(i)
  const sealed = sealMessage(signer, 'bid', {
    v: 1,
    issuedAt: now,
    expiresAt: now + 120_000,
    job,
    provider: signer.peerId,
    price,
    gpus: [`GPU-${i}`],
    model: 'nvidia-h100-80gb-hbm3',
    vramMiB: 81_559,
    region: 'eu-west',
    startBy: now + 60_000,
    ad: cidOfValue({ ad: i }).cid,
    ...changes
  })
  return { cid: sealed.cid, signer: signer.peerId, payload: sealed.payload }
}

export const peer = (i: number): string => identity(i).peerId

/**
 * A minimal driver on virtual time: the agent's wakes are kept and fired in order; `award-sealed`
 * and `payment-sent` are answered as a shell would. Everything else is recorded for the test.
 */
export class Driver {
  readonly agent: RequesterAgent
  readonly effects: RequesterAgentEffect[] = []
  private wakes: Array<{ job: string, at: number }> = []
  now = NOW
  readonly request: JobRequest
  readonly cid: CID
  readonly id: string
  /** The request as the requester's shell opens it (signed by REQUESTER). */
  readonly envelope: OpenedMessage<'job-request'>

  constructor (request: JobRequest = jobPayload(), params = createMarketParams({ leaseMs: LEASE }), trust: RequesterTrustOptions = {}) {
    this.agent = new RequesterAgent(REQUESTER, params, trust)
    this.request = request
    this.cid = jobIdOf(request)
    this.id = this.cid.toString()
    this.envelope = openMessage(sealMessage(identity(1000), 'job-request', request).bytes, 'job-request', { now: NOW, historical: true })
  }

  send (event: RequesterAgentEvent): RequesterAgentEffect[] {
    const out = this.agent.handle(event)
    this.effects.push(...out)
    for (const e of out) {
      if (e.type === 'wake') this.wakes.push({ job: e.job, at: e.at })
      if (e.type === 'send-award') this.send({ type: 'award-sealed', now: this.now, job: e.job, attempt: e.attempt, award: `award-${e.attempt}`, paymentRule: e.fields.paymentRule, provider: e.provider })
      if (e.type === 'pay') this.send({ type: 'payment-sent', now: this.now, job: e.job, attempt: e.attempt, cumulative: e.cumulative, provider: e.payee })
    }
    return out
  }

  submit (): void {
    this.send({ type: 'job-submitted', now: this.now, cid: this.cid, request: this.request, envelope: this.envelope })
  }

  bid (i: number, price: number, changes: Partial<Bid> = {}, addrs?: string[]): RequesterAgentEffect[] {
    return this.send({ type: 'bid-seen', now: this.now, bid: bidFor(this.cid, i, price, this.now, changes), model: 'nvidia-h100-80gb-hbm3', region: 'eu-west', ...(addrs !== undefined ? { addrs } : {}) })
  }

  /** Fire every wake due up to `t`, in order, then stand at `t`. */
  runTo (t: number): void {
    for (;;) {
      this.wakes.sort((a, b) => a.at - b.at)
      const next = this.wakes[0]
      if (next === undefined || next.at > t) break
      this.wakes.shift()
      this.now = Math.max(this.now, next.at)
      this.send({ type: 'tick', now: this.now, job: next.job })
    }
    this.now = t
  }

  get state (): ReturnType<RequesterAgent['view']> {
    return this.agent.view(this.id)
  }

  get attempt (): number {
    return this.state?.state.attempt ?? 0
  }

  winner (): string | undefined {
    return this.state?.state.award?.provider
  }

  from (provider: number, event: Record<string, unknown> & { type: string }, attempt = this.attempt): RequesterAgentEffect[] {
    return this.send({ now: this.now, job: this.id, attempt, provider: peer(provider), ...event } as unknown as RequesterAgentEvent)
  }

  of<T extends RequesterAgentEffect['type']> (type: T): Array<Extract<RequesterAgentEffect, { type: T }>> {
    return this.effects.filter((e): e is Extract<RequesterAgentEffect, { type: T }> => e.type === type)
  }

  /** Run the current award through to a verified receipt (`seconds` of running). */
  deliver (provider: number, seconds = 10): void {
    this.from(provider, { type: 'award-response', decision: 'accept' })
    this.from(provider, { type: 'job-status', seq: 1, state: 'running', gpuSeconds: 0 })
    this.runTo(this.now + seconds * 1000)
    this.from(provider, { type: 'job-status', seq: 2, state: 'completed', gpuSeconds: seconds })
    this.from(provider, { type: 'receipt', exitCode: 0, gpuSeconds: seconds, forThisRequester: true })
    this.from(provider, { type: 'outputs-verified', files: 1 })
  }
}

