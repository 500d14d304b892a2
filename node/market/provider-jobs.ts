/**
 * The provider's jobs once bid (DESIGN §6): each offer's lifecycle machine (`reduceProvider`) fed
 * one event at a time, and its effects carried out — re-checking and accepting awards, fetching
 * inputs, running the executor, streaming logs, signing statuses and receipts, publishing evidence,
 * scheduling ticks, keeping the records. provider.ts feeds it the events that come from the network
 * (awards, payments, cancels, a requester gone).
 *
 * Events for an offer go through its own queue, so they are reduced in order and the effects of one
 * event are carried out before the next is reduced; long work (fetching inputs, running the job)
 * runs beside the queue and feeds events back into it. Every offer is recorded in the market store
 * (`market-provider/<job>/<bid>`) on each change, and its ledger entry (`market-ledger/<award>`) once
 * it has an award. Nothing one job does escapes: effects are caught and logged one by one.
 */
import {
  EVIDENCE_TOPIC, billedGpus, ceilSeconds, decideBid, isProviderFinal, reduceProvider,
  type Allocation, type AwardTerms, type EvidenceRef, type JobState, type Kind, type OpenedMessage, type ProviderEffect, type ProviderEvent,
  type ProviderStatus, type SealedMessage
} from '../../protocol/index.js'
import type { Logger } from '../logger.js'
import { MAX_LOG_CHUNK, type ExecFrame } from '../services/exec.js'
import { fetchInputs, storeResult } from './provider-io.js'
import { sealAwardResponse, sealFailureReport, sealReceipt, sealStatus, type JobRef } from './provider-messages.js'
import { gpusOf, idOf, offerLedgerEntry, offerRecord, type Offer, type ProviderMarketOptions } from './provider-offer.js'

/** Notice a preempted bronze job gets before its work stops. */
export const DEFAULT_PREEMPT_NOTICE_MS = 2_000
/** All of a job's inputs together. */
export const DEFAULT_MAX_INPUT_BYTES = 256 * 1024 * 1024
/** After a job ends, the stream is aborted if the requester has not closed its side by then. */
const LINGER_MS = 30_000

/** A ProviderEvent without its time: `now` is read when the event is reduced. */
export type EventInput = ProviderEvent extends infer E ? (E extends { now: number } ? Omit<E, 'now'> : never) : never

export class ProviderJobs {
  /** Live offers by bid CID; an offer leaves in its final status. */
  readonly offers = new Map<string, Offer>()
  /** Offers that ended, by final status. */
  readonly ended: Partial<Record<ProviderStatus, number>> = {}
  /**
   * Jobs this node preempted (job id → the request's expiry): it does not bid on their next rounds,
   * which would only make them wait for the work that displaced them.
   */
  readonly preempted = new Map<string, number>()
  /** Jobs waiting for GPUs: woken whenever an allocation is released. */
  private readonly waiters = new Set<() => void>()
  private stopped = false

  constructor (private readonly options: ProviderMarketOptions) {}

  private get log (): Logger { return this.options.log }
  private now (): number { return this.options.now() }

  /** Track a new offer: carry out the effects of its first transition and record it. */
  add (offer: Offer, effects: readonly ProviderEffect[]): void {
    this.offers.set(offer.bid.cid.toString(), offer)
    for (const effect of effects) void this.carryOut(offer, effect)
    this.keepEnvelope(offer, offer.request)
    this.keepEnvelope(offer, offer.bid)
    this.persist(offer)
  }

  /** GPUs committed to awarded jobs (bids are not allocations until an award is accepted). */
  allocations (): Allocation[] {
    return [...this.offers.values()].flatMap((o) => o.allocation !== undefined ? [o.allocation] : [])
  }

  /** Queue an event for the offer's machine. */
  feed (offer: Offer, event: EventInput): void {
    if (this.stopped) return
    offer.queue = offer.queue.then(async () => { await this.apply(offer, event) }).catch((err: unknown) => {
      this.log.error('provider job event failed', { job: idOf(offer), event: event.type, error: err })
    })
  }

  private async apply (offer: Offer, event: EventInput): Promise<void> {
    if (this.stopped) return
    const { state, effects } = reduceProvider(offer.state, { ...event, now: this.now() } as ProviderEvent)
    const changed = state !== offer.state
    offer.state = state
    for (const effect of effects) {
      try {
        await this.carryOut(offer, effect)
      } catch (err) {
        this.log.error('provider effect failed', { job: idOf(offer), effect: effect.type, error: err })
      }
    }
    if (changed || event.type === 'payment-received') this.persist(offer)
    if (isProviderFinal(state.status)) this.finalize(offer)
  }

  async carryOut (offer: Offer, effect: ProviderEffect): Promise<void> {
    switch (effect.type) {
      case 'review-award': return this.review(offer, effect.award)
      case 'respond-award': {
        const response = sealAwardResponse(this.options.signer, this.ref(offer), effect.decision, effect.reason, this.now())
        this.keepEnvelope(offer, response, 'award-response')
        return this.send(offer, { type: 'message', bytes: response.bytes })
      }
      case 'fetch-inputs': return this.spawn(offer, this.fetchInputs(offer))
      case 'start-job': return this.spawn(offer, this.startJob(offer))
      case 'heartbeat': return this.sendStatus(offer, effect.state, effect.gpuSeconds, effect.seq)
      case 'notify-preemption': return this.sendStatus(offer, 'preempted', this.gpuSecondsSoFar(offer), 0, `preempted: ${effect.noticeMs} ms notice`)
      case 'send-receipt': return await this.sendReceipt(offer, effect)
      case 'stop-work': return offer.work?.abort(new Error(`work stopped: ${effect.reason}`))
      case 'record-failure': {
        const report = sealFailureReport(this.options.signer, offer.request.cid, effect, offer.evidence, this.now())
        this.keepEnvelope(offer, report)
        this.log.warn('failure recorded', { job: idOf(offer), subject: effect.subject, reason: effect.reason, detail: effect.detail })
        return this.publishEvidence(offer, report)
      }
      case 'wake': return this.wake(offer, effect.at)
      case 'ignored': return this.log.debug('provider event ignored', { job: idOf(offer), reason: effect.reason })
    }
  }

  /** Re-check the award against the calendar and load now; commit the GPUs when it still fits. */
  private review (offer: Offer, terms: AwardTerms): void {
    const ad = this.options.ad()
    const job = offer.request.payload
    const now = this.now()
    const decision = ad === undefined ? undefined : decideBid(job, { ad: ad.payload, allocations: this.allocations() }, now)
    const reason = decision === undefined
      ? 'this node no longer sells'
      : decision.kind === 'decline'
        ? `${decision.reason}: ${decision.detail}`
        : terms.price < offer.bid.payload.price ? `the award pays ${terms.price}, below the ask of ${offer.bid.payload.price}` : undefined
    if (decision?.kind !== 'bid' || reason !== undefined) {
      this.log.info('declining an award', { job: idOf(offer), reason })
      return this.feed(offer, { type: 'decline-award', ...(reason !== undefined ? { reason } : {}) })
    }
    // committed now, before the acceptance is reduced, so a second award cannot take the same GPUs
    offer.allocation = { job: idOf(offer), gpus: decision.gpus, tier: job.sla.tier, price: terms.price, startedAt: decision.startBy, endsAt: decision.startBy + job.workload.maxRuntimeSec * 1000 }
    offer.displaces = [...this.offers.values()].filter((o) => o !== offer && o.allocation !== undefined && decision.preempts.includes(idOf(o)))
    for (const [id, expiresAt] of this.preempted) if (expiresAt <= now) this.preempted.delete(id)
    for (const other of offer.displaces) {
      this.preempted.set(idOf(other), other.request.payload.expiresAt)
      this.log.info('preempting a bronze job', { job: idOf(other), for: idOf(offer) })
      this.feed(other, { type: 'preempt', noticeMs: this.options.preemptNoticeMs ?? DEFAULT_PREEMPT_NOTICE_MS })
    }
    this.feed(offer, { type: 'accept-award' })
  }

  private async fetchInputs (offer: Offer): Promise<void> {
    const signal = (offer.work ??= new AbortController()).signal
    const requester = offer.requesterId
    try {
      offer.inputs = await fetchInputs(offer.request.payload.workload.inputs, {
        blobs: this.options.blobs,
        maxBytes: this.options.maxInputBytes ?? DEFAULT_MAX_INPUT_BYTES,
        signal,
        fetch: async (cid, maxBytes, s) => {
          if (requester === undefined) throw new Error('the requester is not connected')
          return await this.options.node.services.blob.fetch(requester, cid, { maxBytes, signal: s })
        }
      })
    } catch (err) {
      if (signal.aborted) return
      return this.fail(offer, `inputs could not be fetched: ${(err as Error).message}`)
    }
    this.feed(offer, { type: 'inputs-fetched' })
  }

  private async startJob (offer: Offer): Promise<void> {
    const job = offer.request.payload
    const signal = (offer.work ??= new AbortController()).signal
    const executor = this.options.executors[job.workload.executor]
    if (executor === undefined) return this.fail(offer, `executor "${job.workload.executor}" not available`)
    await this.waitForStart(offer, signal)
    if (signal.aborted || offer.finalized) return
    const gpus = gpusOf(offer)
    const startedAt = this.now()
    this.feed(offer, { type: 'started' })
    this.log.info('job started', { job: idOf(offer), executor: executor.kind, gpus })
    try {
      const result = await executor.run({
        job: idOf(offer),
        argv: job.workload.argv,
        ...(job.workload.image !== undefined ? { image: job.workload.image } : {}),
        env: job.workload.env,
        inputs: offer.inputs ?? [],
        outputs: job.workload.outputs,
        timeoutMs: job.workload.maxRuntimeSec * 1000,
        network: job.workload.network,
        gpus
      }, { signal, onEvent: (event) => { this.onLog(offer, event.data) } })
      offer.inputs = undefined
      const endedAt = this.now()
      // stopped (cancel, preemption, non-payment): the lifecycle has ended the job, no receipt
      if (signal.aborted || offer.finalized) return
      offer.result = await storeResult(this.options.blobs, job.workload.outputs, result.outputs, offer.log.bytes(), offer.request.signer)
      if (result.reason === 'start-failed') return this.fail(offer, `the job could not start: ${result.detail ?? 'unknown reason'}`)
      const exitCode = Math.min(255, Math.max(-1, Math.trunc(result.exitCode)))
      const gpuSeconds = billedGpus(job.resources.gpus) * ceilSeconds(endedAt - startedAt)
      this.log.info('job finished', { job: idOf(offer), exitCode, gpuSeconds, outputs: offer.result.files.length, reason: result.reason })
      // the requester fetches these before its final payment: the lifecycle allows for it
      const outputBytes = offer.result.files.reduce((n, f) => n + f.size, 0)
      this.feed(offer, { type: 'finished', exitCode, gpuSeconds, outputBytes })
    } catch (err) {
      if (!signal.aborted && !offer.finalized) this.fail(offer, `internal error: ${(err as Error).message}`)
      throw err
    }
  }

  /**
   * Wait until the job may start: once the bronze jobs it preempts have given their GPUs up (at most
   * the notice and a margin later), at its committed start — or earlier, when GPUs it can use come
   * free sooner (an allocation in its way ended early) and the calendar allows it now.
   */
  private async waitForStart (offer: Offer, signal: AbortSignal): Promise<void> {
    const preemptedBy = this.now() + (this.options.preemptNoticeMs ?? DEFAULT_PREEMPT_NOTICE_MS) + 5_000
    while (!signal.aborted && !offer.finalized) {
      const now = this.now()
      const preempting = now < preemptedBy && offer.displaces.some((o) => !o.finalized)
      if (!preempting && this.mayStart(offer, now)) return
      await this.released(preempting ? preemptedBy : offer.allocation?.startedAt ?? now, signal)
    }
  }

  /** True when the job may start at `now`; moves its allocation when it starts early. */
  private mayStart (offer: Offer, now: number): boolean {
    const held = offer.allocation
    const ad = this.options.ad()
    if (held === undefined || held.startedAt <= now) return true
    if (ad === undefined) return false
    const job = offer.request.payload
    const early = decideBid(job, { ad: ad.payload, allocations: this.allocations().filter((a) => a !== held) }, now)
    if (early.kind !== 'bid' || early.startBy > now || early.preempts.length > 0) return false
    offer.allocation = { ...held, gpus: early.gpus, startedAt: now, endsAt: now + job.workload.maxRuntimeSec * 1000 }
    return true
  }

  /** Resolves at `until` (by options.now()), when an allocation is released, or on abort. */
  private async released (until: number, signal: AbortSignal): Promise<void> {
    await new Promise<void>((resolve) => {
      const done = (): void => {
        clearTimeout(timer)
        this.waiters.delete(done)
        signal.removeEventListener('abort', done)
        resolve()
      }
      const timer = setTimeout(done, Math.min(Math.max(1, until - this.now()), 2 ** 31 - 1))
      timer.unref()
      this.waiters.add(done)
      signal.addEventListener('abort', done, { once: true })
    })
  }

  /** The job cannot go on: an exit code of −1 (the lifecycle allows it before and while running). */
  private fail (offer: Offer, why: string): void {
    this.log.warn('job failed', { job: idOf(offer), error: why })
    offer.note = why
    this.feed(offer, { type: 'finished', exitCode: -1, gpuSeconds: 0 })
  }

  /** Keep a log chunk (up to the stored-log cap) and stream what the requester's credit allows. */
  private onLog (offer: Offer, data: Uint8Array): void {
    if (offer.log.append(data) === undefined) return
    this.pumpLog(offer)
  }

  /** The requester took in more of the log: it may have more (credits never go down). */
  onLogCredit (offer: Offer, upTo: number): void {
    if (upTo <= offer.logCredit) return
    offer.logCredit = upTo
    this.pumpLog(offer)
  }

  /**
   * Send the kept log from where the stream is up to the credit, in frames of at most MAX_LOG_CHUNK
   * bytes. What waits for credit stays in the stored log (the receipt's `logs` blob has all of it),
   * so a job may print any amount and heartbeats and the receipt never queue behind it.
   */
  private pumpLog (offer: Offer): void {
    if (offer.channel === undefined) return
    const end = Math.min(offer.logCredit, offer.log.size)
    while (offer.logSent < end) {
      const to = Math.min(end, offer.logSent + MAX_LOG_CHUNK)
      this.send(offer, { type: 'log', offset: offer.logSent, data: offer.log.slice(offer.logSent, to) })
      offer.logSent = to
    }
  }

  /** A job-status; its seq stays strictly increasing across heartbeats and extra notices. */
  private sendStatus (offer: Offer, state: JobState, gpuSeconds: number, seq: number, message?: string): void {
    if (offer.award === undefined) return
    offer.statusSeq = Math.max(seq, offer.statusSeq + 1)
    const final = state === 'failed' || state === 'cancelled' || (state === 'preempted' && isProviderFinal(offer.state.status))
    const note = message ?? (final ? offer.note ?? offer.state.reason : undefined)
    const status = sealStatus(this.options.signer, this.ref(offer), offer.statusSeq, state, gpuSeconds, note, this.now())
    offer.evidence['last-status'] = status.bytes
    // periodic heartbeats repeat their state: keep only the changes
    if (state !== offer.lastState) this.keepEnvelope(offer, status, 'last-status')
    offer.lastState = state
    this.send(offer, { type: 'message', bytes: status.bytes })
  }

  private async sendReceipt (offer: Offer, effect: Extract<ProviderEffect, { type: 'send-receipt' }>): Promise<void> {
    const job = offer.request.payload
    offer.result ??= await storeResult(this.options.blobs, [], [], offer.log.bytes(), offer.request.signer)
    const receipt = sealReceipt(this.options.signer, this.ref(offer), {
      requester: offer.request.signer,
      inputs: job.workload.inputs.map((i) => i.cid),
      outputs: offer.result.manifest,
      ...(offer.result.logs !== undefined ? { logs: offer.result.logs } : {}),
      exitCode: effect.exitCode,
      startedAt: effect.startedAt,
      endedAt: effect.endedAt,
      gpuSeconds: effect.gpuSeconds,
      gpus: gpusOf(offer),
      executor: job.workload.executor
    }, this.now())
    this.keepEnvelope(offer, receipt, 'receipt')
    this.send(offer, { type: 'message', bytes: receipt.bytes })
    this.publishEvidence(offer, receipt)
  }

  /** Gossip a receipt or failure report on the evidence topic, without holding up the job's events. */
  private publishEvidence (offer: Offer, message: SealedMessage<'receipt' | 'failure-report'>): void {
    this.options.gossip.publish(message, [EVIDENCE_TOPIC]).catch((err: unknown) => {
      this.log.warn('publishing evidence failed', { job: idOf(offer), kind: message.kind, error: err })
    })
  }

  /**
   * A tick at or after `at` by options.now(). A timer may fire a little before the clock reaches
   * `at` (timers and the wall clock drift apart); the machine would take that tick as early and
   * keep waiting for the wake it asked for, so the timer is re-armed until `at` has really come.
   */
  private wake (offer: Offer, at: number): void {
    if (this.stopped || offer.finalized) return
    const left = at - this.now()
    const timer = setTimeout(() => {
      offer.timers.delete(timer)
      if (at > this.now()) return this.wake(offer, at)
      this.feed(offer, { type: 'tick' })
    }, Math.min(Math.max(0, left), 2 ** 31 - 1))
    timer.unref()
    offer.timers.add(timer)
  }

  /** A final status: release the GPUs and timers, close the stream once the last frames are out. */
  private finalize (offer: Offer): void {
    if (offer.finalized) return
    offer.finalized = true
    for (const timer of offer.timers) clearTimeout(timer)
    offer.timers.clear()
    offer.work?.abort(new Error(`the job is ${offer.state.status}`))
    offer.allocation = undefined
    offer.inputs = undefined
    this.offers.delete(offer.bid.cid.toString())
    for (const wake of [...this.waiters]) wake()
    const status = offer.state.status
    this.ended[status] = (this.ended[status] ?? 0) + 1
    if (offer.award !== undefined) this.log.info('job ended', { job: idOf(offer), status, reason: offer.state.reason })
    const channel = offer.channel
    if (channel === undefined) return
    void channel.close().catch(() => {})
    if (offer.streamEnded) return
    offer.linger = setTimeout(() => { channel.abort(new Error('the job has ended')) }, LINGER_MS)
    offer.linger.unref()
  }

  // -------------------------------------------------------------------------------------------
  // Helpers
  // -------------------------------------------------------------------------------------------

  private ref (offer: Offer): JobRef {
    return { job: offer.request.cid, award: (offer.award as OpenedMessage<'award'>).cid }
  }

  /** Send a frame on the job's stream; a stream that is gone is noticed by the frame reader. */
  private send (offer: Offer, frame: ExecFrame): void {
    offer.channel?.send(frame).catch((err: unknown) => {
      this.log.debug('exec frame not sent', { job: idOf(offer), error: err })
    })
  }

  private spawn (offer: Offer, work: Promise<void>): void {
    work.catch((err: unknown) => { this.log.error('provider job work failed', { job: idOf(offer), error: err }) })
  }

  private gpuSecondsSoFar (offer: Offer): number {
    const started = offer.state.startedAt
    return started === undefined ? 0 : offer.state.gpus * Math.floor(Math.max(0, this.now() - started) / 1000)
  }

  /** Keep a signed envelope in the store (and, when named, as evidence for a failure report). */
  keepEnvelope (offer: Offer, message: SealedMessage<Kind>, ref?: EvidenceRef): void {
    const cid = message.cid.toString()
    if (ref !== undefined) {
      offer.evidence[ref] = message.bytes
      offer.envelopes[ref] = cid
    }
    this.write(offer, async () => { await this.options.store.putEnvelope(cid, message.bytes) })
  }

  /** Record the offer (and its ledger entry once awarded); writes stay in order per offer. */
  persist (offer: Offer): void {
    const record = offerRecord(offer, this.now())
    const entry = offerLedgerEntry(offer, this.now())
    this.write(offer, async () => {
      await this.options.store.put('provider', `${record.job}/${record.bid}`, record)
      if (entry !== undefined) await this.options.store.putLedger(entry)
    })
  }

  private write (offer: Offer, work: () => Promise<void>): void {
    offer.saving = offer.saving.then(work).catch((err: unknown) => {
      this.log.warn('market store write failed', { job: idOf(offer), error: err })
    })
  }

  /** Abort every run, clear every timer, drop every stream; wait (briefly) for the records to be written. */
  async stop (): Promise<void> {
    this.stopped = true
    const offers = [...this.offers.values()]
    for (const offer of offers) {
      for (const timer of offer.timers) clearTimeout(timer)
      offer.timers.clear()
      clearTimeout(offer.linger)
      offer.work?.abort(new Error('the provider is stopping'))
      offer.channel?.abort(new Error('the provider is stopping'))
    }
    let timer: NodeJS.Timeout | undefined
    await Promise.race([
      Promise.allSettled(offers.map(async (o) => { await o.queue; await o.saving })),
      new Promise<void>((resolve) => { timer = setTimeout(resolve, 2_000); timer.unref() })
    ])
    clearTimeout(timer)
  }
}
