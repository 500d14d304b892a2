/**
 * A harness requester: a `RequesterAgent` and the shell around it, doing with each effect what
 * node/market/requester*.ts does over libp2p — gossip the job and its re-opened rounds, seal and
 * send the award on an exec stream to the winner, turn the provider's frames into events, pay,
 * fetch the outputs (a delay for their size), report failures, keep the ledger — with counters for
 * CIDs and no signatures. `behaviour.stopPayingAfter` makes it a requester that stops paying.
 *
 * Attempts are kept per attempt number and provider, so that awards of one attempt to several providers
 * (a replicated job) each keep their own stream. A final `settled` payment is recorded as the requester
 * accepting the outputs that provider's receipt named (Recorder.accepted). With `spec.evidence`, gossiped
 * payments and failure reports from others go into the agent's reputation view as the daemon's
 * node/market/market.ts hands them to RequesterMarket.onEvidence (evidenceFromMessage, then
 * `reputation.add`, a record out of shape set aside).
 */
import { EventQueue } from './event-queue.js'
import { sha256, type CID } from '../../crypto/index.js'
import { EVIDENCE_TOPIC } from '../../protocol/constants.js'
import { jobTopics, providerTopics } from '../../protocol/discovery.js'
import type { Award } from '../../protocol/messages/award.js'
import type { JobRequest } from '../../protocol/messages/job-request.js'
import { RequesterAgent, type RequesterAgentEffect, type RequesterAgentEvent, type RequesterTrustOptions } from '../../protocol/market/requester-agent.js'
import type { Message, StreamEnd } from './bus.js'
import { peerIdOf } from './ids.js'
import { bodyOf, message, openedForAgent, type FraudProofBody, type Opened } from './messages.js'
import { RequesterVerifier } from './requester-verify.js'
import type { Receipt } from '../../protocol/messages/settlement.js'
import { header, jobRequest, type JobSpec } from './payloads.js'
import { transferMs, type Execution, type World } from './world.js'
import { UNREACHABLE } from './network.js'
import { InvalidEvidenceError, evidenceFromMessage, type EvidenceMessageKind } from '../../protocol/trust/reputation-evidence.js'

/** Awards, cancels and payments are valid this long (node/market seals them alike). */
const AWARD_LIFETIME_MS = 3_600_000 - 1
const PAYMENT_LIFETIME_MS = 30 * 24 * 3_600_000 - 1

export interface RequesterBehaviour {
  /** Send no payment after this many (a requester that stops paying). */
  stopPayingAfter?: number
}

export interface RequesterNodeSpec {
  region: string
  /** ISO 3166 alpha-2, for a network model that places nodes by country. */
  country?: string
  behaviour?: RequesterBehaviour
  /** Take gossiped payments and failure reports into the reputation view (the daemon does; default off, as before the trust layer). */
  evidence?: boolean
  /**
   * The agent's trust options (the agreement audit's share, the retroactive audit's bounds). What the
   * daemon always gives its agent (node/market/market.ts) is given here too unless set: a spotcheck seed
   * (the daemon's is random, kept in the data dir; here sha2-256 of `gpumesh-sim/requester-seed/<name>`)
   * and the node's location (`region`, `country`), from which bidders not measured are estimated.
   */
  trust?: RequesterTrustOptions
}

/** The spotcheck seed a harness requester's agent gets unless its spec names one (the daemon's loadSpotcheckSeed). */
export function simSpotcheckSeed (name: string): Uint8Array {
  return sha256(new TextEncoder().encode(`gpumesh-sim/requester-seed/${name}`))
}

/** The gossiped kinds the daemon hands its reputation view (node/market/market.ts REPUTATION_KINDS; the harness sends no probe results). */
const REPUTATION_KINDS: readonly EvidenceMessageKind[] = ['payment', 'failure-report']
/** Fraud proofs go to every requester's trust layer (node/trust/convictions.ts), reputation view or not. */
const PROOF_KINDS: readonly string[] = ['fraud-proof']

interface Attempt {
  job: string
  attempt: number
  provider: string
  award: Opened<Award>
  stream: StreamEnd
  paySeq: number
  receipt?: { outputBytes: number, tampered: boolean, outputs: string, opened: Opened<Receipt> }
  /** This side closed or aborted the stream: its end is no news. */
  closing: boolean
  /** A frame came from the provider on the stream. */
  heard: boolean
}

/** A job's attempts by attempt number, then provider. */
interface Job { id: string, cid: CID, request: Opened<JobRequest>, attempts: Map<number, Map<string, Attempt>> }

export class RequesterNode {
  readonly peerId: string
  readonly agent: RequesterAgent
  readonly behaviour: RequesterBehaviour
  private readonly jobs = new Map<string, Job>()
  private readonly wakes = new Set<string>()
  private readonly topics = new Set<string>()
  /** Providers this node opened an exec stream to: it holds a connection to them (libp2p keeps it open). */
  private readonly connected = new Set<string>()
  private paymentsSent = 0
  private readonly verifier: RequesterVerifier
  private readonly events = new EventQueue<RequesterAgentEvent>((e) => { for (const effect of this.agent.handle(e)) this.carryOut(effect) })

  constructor (private readonly world: World, readonly name: string, readonly spec: RequesterNodeSpec) {
    this.peerId = peerIdOf(name)
    this.behaviour = spec.behaviour ?? {}
    // as node/market/market.ts: every requester has a spotcheck seed and says where it is
    this.agent = new RequesterAgent(this.peerId, world.params, {
      spotcheckSeed: simSpotcheckSeed(name),
      location: { region: spec.region, ...(spec.country !== undefined ? { country: spec.country } : {}) },
      ...spec.trust
    })
    this.verifier = new RequesterVerifier(world, this.peerId, (e) => { this.feed(e) }, (p) => this.agent.reputation.convictionOf(p) !== undefined)
    world.bus.join(this.peerId, spec.region, spec.country)
    for (const topic of providerTopics(spec.region)) this.subscribe(topic)
    // as every daemon does (node/market/market.ts): evidence reaches it and is counted; with `evidence` its
    // reputation view reads the payments and failure reports others signed
    // reputation view reads the payments and failure reports others signed; fraud proofs are checked either way
    if (spec.evidence === true) world.bus.subscribe(this.peerId, EVIDENCE_TOPIC, (_from, m) => { this.onEvidence(m) }, [...REPUTATION_KINDS, ...PROOF_KINDS])
    else world.bus.subscribe(this.peerId, EVIDENCE_TOPIC, (_from, m) => { this.onEvidence(m) }, PROOF_KINDS)

  }

  /** Others' evidence into the reputation view, as node/market/requester.ts onEvidence does. */
  private onEvidence (m: Message): void {
    const proof = bodyOf(m, 'fraud-proof')
    if (proof !== undefined) return this.verifier.onProof(proof)
    const body = bodyOf(m, 'payment') ?? bodyOf(m, 'failure-report')
    if (body === undefined || body.signer === this.peerId) return
    try {
      this.agent.reputation.add(evidenceFromMessage(openedForAgent(m.kind as EvidenceMessageKind, body)))
    } catch (err) {
      if (!(err instanceof InvalidEvidenceError)) throw err
      this.world.recorder.note(`${this.name} evidence not taken: ${err.message}`)
    }
  }

  private now (): number {
    return this.world.scheduler.now()
  }

  private subscribe (topic: string): void {
    if (this.topics.has(topic)) return
    this.topics.add(topic)
    this.world.bus.subscribe(this.peerId, topic, (from, m) => { this.onGossip(from, m) }, ['bid'])
  }

  /** Submit a job now; `execution` is how it runs wherever it is awarded (the world's default otherwise). Returns its id. */
  submit (spec: JobSpec, execution?: Partial<Execution>): string {
    const now = this.now()
    const payload = jobRequest(spec, now, this.world.ids.nonce())
    const cid = this.world.ids.cid('job')
    const id = cid.toString()
    if (execution !== undefined) this.world.setExecution(id, execution)
    const request = { cid, signer: this.peerId, payload }
    this.jobs.set(id, { id, cid, request, attempts: new Map() })
    this.world.jobs.set(id, request)
    // the opened request: a replicated or spot-checked job's comparison reads it (node/market/requester.ts submit)
    const envelope = payload.verification.mode === 'none' ? undefined : openedForAgent('job-request', request)
    // the keyed delivery visits a job's bids at the nodes that watch it: its requester, for its life
    this.world.bus.watch(this.peerId, id, true)
    for (const topic of jobTopics(payload.placement)) this.subscribe(topic)
    this.feed({ type: 'job-submitted', now, cid, request: payload, ...(envelope !== undefined ? { envelope } : {}) })
    return id
  }

  /** Call the job off now. */
  cancel (job: string): void {
    this.feed({ type: 'cancel', now: this.now(), job })
  }

  /** Hand an event to the agent and carry out its effects (events the effects cause queue behind). */
  feed (event: RequesterAgentEvent): void {
    this.events.push(event)
  }

  private onGossip (_from: string, m: Message): void {
    const bid = bodyOf(m, 'bid')
    const job = bid === undefined ? undefined : this.jobs.get(bid.payload.job.toString())
    if (bid === undefined || job === undefined) return
    // as the daemon: a verified job's bids come with where the bidder is known (here its ad's addresses)
    const addrs = job.request.payload.verification.mode === 'none' ? undefined : this.world.addresses.get(bid.signer)
    this.measure(bid.signer)
    this.feed({ type: 'bid-seen', now: this.now(), bid, model: bid.payload.model, region: bid.payload.region, ...(addrs !== undefined ? { addrs } : {}) })
  }

  /**
   * node/market/requester-rtt.ts `RttMeter.observe`: a bidder this node has a connection to is measured
   * on it (the connection monitor's reading: here the network model's mean round trip), never dialled; a
   * bidder without one keeps the agent's estimate from its bid's region and country.
   */
  private measure (peer: string): void {
    if (!this.connected.has(peer)) return
    const rtt = this.world.bus.meanRttMs(this.peerId, peer)
    if (rtt !== undefined) this.agent.rtt.measured(peer, rtt, this.now())
  }

  // -------------------------------------------------------------------------------------------
  // Effects
  // -------------------------------------------------------------------------------------------

  private carryOut (effect: RequesterAgentEffect): void {
    const now = this.now()
    switch (effect.type) {
      case 'publish-job': {
        const job = this.jobs.get(effect.job)
        if (job === undefined) return
        this.world.bus.publish(this.peerId, jobTopics(job.request.payload.placement), message('job-request', job.request))
        return
      }
      case 'publish-round': {
        const job = this.jobs.get(effect.job)
        if (job === undefined) return
        const body = { cid: this.world.ids.cid('round'), signer: this.peerId, round: effect.round, attempt: effect.attempt, excluded: [...effect.excluded], opensAt: now, request: job.request }
        this.world.recorder.note(`${this.name} round ${effect.round} of ${effect.job} (${effect.reason})`)
        this.world.bus.publish(this.peerId, jobTopics(job.request.payload.placement), message('auction-round', body))
        return
      }
      case 'send-award': return this.sendAward(effect)
      case 'send-cancel': {
        const a = this.attemptOf(effect.job, effect.attempt, effect.provider)
        if (a === undefined) return
        a.stream.send(message('job-cancel', { cid: this.world.ids.cid('cancel'), signer: this.peerId, payload: { ...header(now, AWARD_LIFETIME_MS), job: a.award.payload.job, award: a.award.cid, reason: effect.reason.slice(0, 256) } }))
        return
      }
      case 'pay': return this.pay(effect)
      case 'end-award': {
        const a = this.attemptOf(effect.job, effect.attempt, effect.payee)
        if (a === undefined) return
        this.world.recorder.ledger(this.peerId, a.award.cid.toString(), this.lineInit(a), { cumulative: effect.cumulative, state: effect.ending })
        return
      }
      case 'record-failure': {
        const job = this.jobs.get(effect.job)
        if (job === undefined) return
        this.world.recorder.failure({ reporter: this.peerId, subject: effect.subject, job: effect.job, reason: effect.reason, at: now, counted: effect.counted, ...(effect.detail !== undefined ? { detail: effect.detail } : {}) })
        const payload = { ...header(now, PAYMENT_LIFETIME_MS), job: job.cid, subject: effect.subject, reason: effect.reason, observedAt: now, evidence: [], ...(effect.detail !== undefined ? { detail: effect.detail.slice(0, 512) } : {}) }
        this.world.bus.publish(this.peerId, [EVIDENCE_TOPIC], message('failure-report', { cid: this.world.ids.cid('failure'), signer: this.peerId, payload }, effect.evidence.length * 400))
        // the daemon aborts the failed attempt's stream
        const a = this.attemptOf(effect.job, effect.attempt, effect.subject)
        if (a !== undefined) { a.closing = true; a.stream.reset(`attempt failed: ${effect.reason}`) }
        return
      }
      case 'fetch-outputs': return this.fetchOutputs(effect.job, effect.attempt, effect.provider)
      case 'reexecute': return this.verifier.reexecute(effect.job, effect.audit === true ? 'audit' : 'reexecute')
      case 'result-audited':
        this.world.recorder.audited({ job: effect.job, requester: this.peerId, status: effect.status, by: effect.by, at: now })
        return
      case 'publish-fraud-proof': {
        const receipt = [...this.jobs.get(effect.job)?.attempts.values() ?? []].flatMap((m) => [...m.values()]).find((a) => a.receipt?.opened.cid.toString() === effect.receipt)?.receipt?.opened
        if (receipt === undefined) return this.world.recorder.note(`${this.name} no receipt ${effect.receipt} to prove ${effect.subject} wrong`)
        return this.verifier.prove(effect.job, receipt)
      }
      case 'explain': return this.world.recorder.note(`${this.name} no acceptable bid for ${effect.job} in round ${effect.round} (${effect.bids} bids)`)
      case 'wake': return this.setWake(effect.job, effect.at)
      case 'finished': {
        this.world.recorder.jobEnded({ job: effect.job, requester: this.peerId, status: effect.status, ...(effect.reason !== undefined ? { reason: effect.reason } : {}), at: now })
        for (const byProvider of this.jobs.get(effect.job)?.attempts.values() ?? []) for (const a of byProvider.values()) { a.closing = true; a.stream.close('the job has ended') }
        return
      }
      case 'note':
      case 'ignored':
    }
  }

  private sendAward (e: Extract<RequesterAgentEffect, { type: 'send-award' }>): void {
    const job = this.jobs.get(e.job)
    if (job === undefined) return
    const now = this.now()
    const payload: Award = { ...header(now, AWARD_LIFETIME_MS), ...e.fields }
    const cid = this.world.ids.cid('award')
    const award: Opened<Award> = { cid, signer: this.peerId, payload }
    const stream = this.world.bus.open(this.peerId, e.provider)
    this.connected.add(e.provider)
    const a: Attempt = { job: e.job, attempt: e.attempt, provider: e.provider, award, stream, paySeq: 0, closing: false, heard: false }
    const byProvider = job.attempts.get(e.attempt) ?? new Map<string, Attempt>()
    byProvider.set(e.provider, a)
    job.attempts.set(e.attempt, byProvider)
    const rttMs = this.world.bus.meanRttMs(this.peerId, e.provider)
    const scored = this.agent.rtt.lookup(e.provider, now)
    this.world.recorder.award({ job: e.job, attempt: e.attempt, award: cid.toString(), requester: this.peerId, provider: e.provider, price: payload.price, at: now, ...(rttMs !== undefined ? { rttMs } : {}), ...(scored !== undefined ? { scoredRttMs: scored.ms, rttSource: scored.source } : {}) })
    this.world.recorder.ledger(this.peerId, cid.toString(), this.lineInit(a), {})
    this.feed({ type: 'award-sealed', now, job: e.job, attempt: e.attempt, award: cid.toString(), paymentRule: payload.paymentRule, provider: e.provider })
    this.world.bus.publish(this.peerId, jobTopics(job.request.payload.placement), message('award', award))
    stream.onMessage((m) => { this.onFrame(a, m) })
    stream.onClose((reason) => { this.onStreamClosed(a, reason) })
    stream.send(message('award', award))
  }

  private lineInit (a: Attempt): { role: 'requester', job: string, counterparty: string, price: number } {
    return { role: 'requester', job: a.job, counterparty: a.provider, price: a.award.payload.price }
  }

  private attemptOf (job: string, attempt: number, provider: string): Attempt | undefined {
    return this.jobs.get(job)?.attempts.get(attempt)?.get(provider)
  }

  private pay (e: Extract<RequesterAgentEffect, { type: 'pay' }>): void {
    const a = this.attemptOf(e.job, e.attempt, e.payee)
    if (a === undefined) return
    // a settled ending pays for outputs the requester verified and accepted
    if (e.final && e.ending === 'settled' && a.receipt !== undefined) this.world.recorder.accepted({ job: e.job, requester: this.peerId, provider: a.provider, attempt: a.attempt, outputs: a.receipt.outputs, at: this.now() })
    const limit = this.behaviour.stopPayingAfter
    if (limit !== undefined && this.paymentsSent >= limit) return this.world.recorder.note(`${this.name} withholds a payment of ${e.cumulative} for ${e.job}`)
    this.paymentsSent++
    const now = this.now()
    a.paySeq++
    const payload = { ...header(now, PAYMENT_LIFETIME_MS), job: a.award.payload.job, award: a.award.cid, payee: e.payee, seq: a.paySeq, interval: e.interval, cumulative: e.cumulative, gpuSeconds: e.gpuSeconds }
    a.stream.send(message('payment', { cid: this.world.ids.cid('payment'), signer: this.peerId, payload }))
    this.world.recorder.ledger(this.peerId, a.award.cid.toString(), this.lineInit(a), { cumulative: e.cumulative, payment: true, ...(e.final ? { state: e.ending ?? 'final' } : {}) })
    this.feed({ type: 'payment-sent', now, job: e.job, attempt: e.attempt, cumulative: e.cumulative, provider: e.payee })
  }

  private fetchOutputs (job: string, attempt: number, provider: string): void {
    const a = this.attemptOf(job, attempt, provider)
    if (a === undefined) return
    const bytes = a.receipt?.outputBytes ?? 0
    const tampered = a.receipt?.tampered === true
    this.world.recorder.blob('output-blob', bytes)
    const at = this.now() + 2 * this.world.bus.latencyMs(this.peerId, provider) + transferMs(this.world, bytes, provider, this.peerId)
    this.world.scheduler.at(at, () => {
      const now = this.now()
      if (tampered) this.feed({ type: 'outputs-mismatch', now, job, attempt, provider, detail: 'an output does not match its CID' })
      else this.feed({ type: 'outputs-verified', now, job, attempt, provider, files: 1 })
    })
  }

  private setWake (job: string, at: number): void {
    const k = `${job} ${at}`
    if (this.wakes.has(k)) return
    this.wakes.add(k)
    this.world.scheduler.at(at, () => {
      this.wakes.delete(k)
      this.feed({ type: 'tick', now: this.now(), job })
    })
  }

  // -------------------------------------------------------------------------------------------
  // The exec stream
  // -------------------------------------------------------------------------------------------

  private onFrame (a: Attempt, m: Message): void {
    a.heard = true
    const now = this.now()
    const base = { now, job: a.job, attempt: a.attempt, provider: a.provider }
    const response = bodyOf(m, 'award-response')
    if (response !== undefined) {
      const r = response.payload
      return this.feed({ ...base, type: 'award-response', decision: r.decision, ...(r.reason !== undefined ? { reason: r.reason } : {}) })
    }
    const status = bodyOf(m, 'job-status')
    if (status !== undefined) {
      // a long run's every heartbeat: built field by field (spreads cost more than the agent's step)
      const s = status.payload
      const event: Extract<RequesterAgentEvent, { type: 'job-status' }> = { now, job: a.job, attempt: a.attempt, provider: a.provider, type: 'job-status', seq: s.seq, state: s.state, gpuSeconds: s.gpuSeconds }
      if (s.message !== undefined) event.message = s.message
      return this.feed(event)
    }
    const receipt = bodyOf(m, 'receipt')
    if (receipt !== undefined) {
      const opened = { cid: receipt.cid, signer: receipt.signer, payload: receipt.payload }
      a.receipt = { outputBytes: receipt.outputBytes, tampered: receipt.tampered, outputs: receipt.payload.outputs.toString(), opened }
      const r = receipt.payload
      return this.feed({ ...base, type: 'receipt', exitCode: r.exitCode, gpuSeconds: r.gpuSeconds, forThisRequester: r.requester === this.peerId, receipt: openedForAgent('receipt', opened) })
    }
  }

  private onStreamClosed (a: Attempt, reason: string): void {
    if (a.closing || a.receipt !== undefined) return
    const base = { now: this.now(), job: a.job, attempt: a.attempt, provider: a.provider }
    // as node/market's openStream: a stream that could not be opened, or that the network dropped before the
    // provider said anything, means the provider cannot be reached (the lease's deadline decides); once it
    // has answered, a broken stream is a failure of the attempt
    if (reason === 'no listener' || (reason === UNREACHABLE && !a.heard)) this.feed({ ...base, type: 'unreachable', detail: 'the provider is not reachable' })
    else this.feed({ ...base, type: 'stream-failed', fault: 'remote', detail: `the provider closed the stream: ${reason}` })
  }
}

