/**
 * The provider's jobs once bid (DESIGN §6): the shell that carries out the provider agent's per-offer
 * effects (protocol/market/provider-agent.ts) — answering awards, fetching inputs, running the executor,
 * streaming logs, signing statuses and receipts, publishing evidence, keeping the records — and feeds
 * back what happened (inputs fetched, started, finished). The agent decides; nothing here does.
 *
 * Each offer's effects are carried out in order on its own queue (a receipt may wait for its result to
 * be stored; the frames after it wait too); long work (fetching inputs, running the job) runs beside
 * the queue. Every offer is recorded in the market store (`market-provider/<job>/<bid>`) on each
 * change, and its ledger entry (`market-ledger/<award>`) once it has an award. Nothing one job does
 * escapes: effects are caught and logged one by one.
 */
import {
  EVIDENCE_TOPIC, billedGpus, ceilSeconds,
  type Cancel, type JobState, type Kind, type EvidenceRef, type OfferEffect, type OpenedMessage, type ProviderAgentEffect, type ProviderAgentEvent, type ProviderOfferView,
  type Scheduler, type SealedMessage
} from '../../protocol/index.js'
import type { Logger } from '../logger.js'
import { LOG_WINDOW, MAX_LOG_CHUNK, type ExecChannel, type ExecFrame } from '../services/exec.js'
import { fetchInputs, restartLine, storeResult, type LogBuffer } from './provider-io.js'
import { sealAwardResponse, sealFailureReport, sealReceipt, sealStatus, type JobRef } from './provider-messages.js'
import { idOf, offerLedgerEntry, offerRecord, type Offer, type ProviderMarketOptions } from './provider-offer.js'

/** All of a job's inputs together. */
export const DEFAULT_MAX_INPUT_BYTES = 256 * 1024 * 1024
/**
 * After a job ends, the stream is aborted if the requester has not closed its side by then. A shell
 * constant, not a MarketParams field: it bounds how long a stream is kept open, decides nothing (the
 * agent keeps the ended offer for a late payment for `endedRetentionMs`, which must be and is longer).
 */
const LINGER_MS = 30_000
/**
 * How long stop() waits for the records to be written and the aborted runs to end (the process executor's
 * kill grace is 2 s): the daemon's shutdown, not a market decision.
 */
const STOP_WAIT_MS = 5_000
/** How many ended runs' logs are kept for the local API, and their bytes in all (the oldest go first). */
const ENDED_LOGS_KEPT = 16
const ENDED_LOG_BYTES = 16 * 1024 * 1024

type Feed = (event: ProviderAgentEvent) => void
type Lookup = (bid: string) => ProviderOfferView | undefined
type Ended = Extract<ProviderAgentEffect, { type: 'offer-updated' | 'offer-ended' }>

export class ProviderJobs {
  /** Offers by bid CID: from the bid until the job has ended and its stream is gone. */
  readonly offers = new Map<string, Offer>()
  /** The logs of the last runs forgotten (by bid, oldest first), for `GET /v1/market/logs` a while after a job ends. */
  private readonly endedLogs = new Map<string, { job: string, log: LogBuffer }>()
  private endedLogBytes = 0
  /** Input fetches and runs under way: stop() waits for them, so nothing writes to the data dir after it. */
  private readonly running = new Set<Promise<void>>()
  private stopped = false

  constructor (
    private readonly options: ProviderMarketOptions,
    private readonly scheduler: Scheduler,
    /** Hands an event to the agent (provider.ts). */
    private readonly feed: Feed,
    /** The agent's view of an offer. */
    private readonly view: Lookup
  ) {}

  private get log (): Logger { return this.options.log }
  private now (): number { return this.scheduler.now() }

  /** Track a bid just sealed; the agent's offer-updated records it. */
  add (offer: Offer): void {
    this.offers.set(offer.bid.cid.toString(), offer)
    this.keepEnvelope(offer, offer.request)
    this.keepEnvelope(offer, offer.bid)
  }

  /** One of the agent's per-offer effects, carried out on the offer's queue. */
  onEffect (effect: OfferEffect | Ended): void {
    const offer = this.offers.get(effect.bid)
    if (offer === undefined || this.stopped) return
    // the record and the end are read now, while the agent's view is the one the effect follows
    if (effect.type === 'offer-updated') return this.persist(offer)
    if (effect.type === 'offer-ended') return this.finalize(offer)
    const work: OfferEffect = effect
    if (work.type === 'start-job') offer.gpus = work.gpus
    offer.queue = offer.queue.then(async () => { await this.carryOut(offer, work) }).catch((err: unknown) => {
      this.log.error('provider effect failed', { job: idOf(offer), effect: effect.type, error: err })
    })
  }

  private async carryOut (offer: Offer, effect: OfferEffect): Promise<void> {
    switch (effect.type) {
      case 'respond-award': {
        const response = sealAwardResponse(this.options.signer, this.ref(offer), effect.decision, effect.reason, this.now())
        this.keepEnvelope(offer, response, 'award-response')
        return this.send(offer, { type: 'message', bytes: response.bytes })
      }
      case 'fetch-inputs': return this.spawn(offer, this.fetchInputs(offer))
      case 'start-job': return this.spawn(offer, this.startJob(offer))
      case 'heartbeat': return this.sendStatus(offer, effect.state, effect.gpuSeconds, effect.seq, effect.message)
      // dated when the agent gave the notice: the work stops `noticeMs` after that, whenever this is signed
      case 'notify-preemption':
        this.options.metrics?.preemptions.inc()
        return this.sendStatus(offer, 'preempted', effect.gpuSeconds, 0, effect.message, effect.at)
      case 'send-receipt':
        this.options.metrics?.gpuSecondsSold.inc(effect.gpuSeconds)
        return await this.sendReceipt(offer, effect)
      case 'stop-work': return offer.work?.abort(new Error(`work stopped: ${effect.reason}`))
      case 'record-failure': {
        this.options.metrics?.failures.inc({ side: 'provider', kind: effect.reason })
        const report = sealFailureReport(this.options.signer, offer.request.cid, effect, offer.evidence, this.now())
        this.keepEnvelope(offer, report)
        this.log.warn('failure recorded', { job: idOf(offer), subject: effect.subject, reason: effect.reason, detail: effect.detail })
        return this.publishEvidence(offer, report)
      }
    }
  }

  private event (offer: Offer, event: { type: 'inputs-fetched' | 'started' } | { type: 'finished', exitCode: number, gpuSeconds: number, outputBytes?: number, note?: string }): void {
    if (this.stopped) return
    this.feed({ ...event, now: this.now(), bid: offer.bid.cid.toString() })
  }

  private async fetchInputs (offer: Offer): Promise<void> {
    const signal = (offer.work ??= new AbortController()).signal
    const requester = offer.requesterId
    try {
      offer.inputs = await fetchInputs(offer.request.payload.workload.inputs, {
        blobs: this.options.blobs,
        maxBytes: this.options.maxInputBytes ?? DEFAULT_MAX_INPUT_BYTES,
        signal,
        pinned: (offer.pinned ??= []),
        fetch: async (cid, maxBytes, s) => {
          if (requester === undefined) throw new Error('the requester is not connected')
          return await this.options.node.services.blob.fetch(requester, cid, { maxBytes, signal: s })
        }
      })
    } catch (err) {
      if (signal.aborted) return
      return this.fail(offer, `inputs could not be fetched: ${(err as Error).message}`)
    }
    this.event(offer, { type: 'inputs-fetched' })
  }

  /** The agent says the job may start now, on `offer.gpus`. */
  private async startJob (offer: Offer): Promise<void> {
    const job = offer.request.payload
    const signal = (offer.work ??= new AbortController()).signal
    const executor = this.options.executors[job.workload.executor]
    if (executor === undefined) return this.fail(offer, `executor "${job.workload.executor}" not available`)
    if (signal.aborted || offer.finalized) return
    const gpus = offer.gpus
    const startedAt = this.now()
    this.event(offer, { type: 'started' })
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
      this.event(offer, { type: 'finished', exitCode, gpuSeconds, outputBytes })
    } catch (err) {
      if (!signal.aborted && !offer.finalized) this.fail(offer, `internal error: ${(err as Error).message}`)
      throw err
    }
  }

  /** The job cannot go on: an exit code of −1 (the lifecycle allows it before and while running). */
  private fail (offer: Offer, why: string): void {
    this.log.warn('job failed', { job: idOf(offer), error: why })
    this.event(offer, { type: 'finished', exitCode: -1, gpuSeconds: 0, note: why })
  }

  /** Keep a log chunk (up to the stored-log cap) and stream what the requester's credit allows. */
  private onLog (offer: Offer, data: Uint8Array): void {
    if (offer.log.append(data) === undefined) return
    this.pumpLog(offer)
  }

  /**
   * The requester took in more of the log: it may have more (credits never go down). On a resumed
   * stream the first credit is the requester's log bytes + LOG_WINDOW: the log continues from there.
   */
  onLogCredit (offer: Offer, upTo: number): void {
    if (offer.resumeLog === true) {
      offer.resumeLog = false
      const held = Math.max(0, upTo - LOG_WINDOW)
      if (offer.logRestarted === true) {
        // the old run's log died with the process: the new run's continues the requester's copy
        offer.logRestarted = false
        offer.log.rebase(held, restartLine(held))
      }
      offer.logSent = Math.min(offer.log.size, Math.max(offer.log.base, held))
      offer.logCredit = upTo
      return this.pumpLog(offer)
    }
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
    if (offer.channel === undefined || offer.resumeLog === true) return
    const end = Math.min(offer.logCredit, offer.log.size)
    while (offer.logSent < end) {
      const to = Math.min(end, offer.logSent + MAX_LOG_CHUNK)
      this.send(offer, { type: 'log', offset: offer.logSent, data: offer.log.slice(offer.logSent, to) })
      offer.logSent = to
    }
  }

  /** A job-status; its seq stays strictly increasing across heartbeats and extra notices. */
  private sendStatus (offer: Offer, state: JobState, gpuSeconds: number, seq: number, message: string | undefined, at = this.now()): void {
    if (offer.award === undefined) return
    offer.statusSeq = Math.max(seq, offer.statusSeq + 1)
    const status = sealStatus(this.options.signer, this.ref(offer), offer.statusSeq, state, gpuSeconds, message, at)
    offer.evidence['last-status'] = status.bytes
    // periodic heartbeats repeat their state: keep only the changes
    if (state !== offer.lastState) this.keepEnvelope(offer, status, 'last-status')
    offer.lastState = state
    this.send(offer, { type: 'message', bytes: status.bytes })
  }

  private async sendReceipt (offer: Offer, effect: Extract<OfferEffect, { type: 'send-receipt' }>): Promise<void> {
    const job = offer.request.payload
    offer.result ??= await storeResult(this.options.blobs, [], [], offer.log.bytes(), offer.request.signer)
    const attestation = this.options.ad()?.payload.attestations[0]
    const receipt = sealReceipt(this.options.signer, this.ref(offer), {
      requester: offer.request.signer,
      inputs: job.workload.inputs.map((i) => i.cid),
      outputs: offer.result.manifest,
      ...(offer.result.logs !== undefined ? { logs: offer.result.logs } : {}),
      exitCode: effect.exitCode,
      startedAt: effect.startedAt,
      endedAt: effect.endedAt,
      gpuSeconds: effect.gpuSeconds,
      gpus: offer.gpus,
      executor: job.workload.executor,
      ...(attestation !== undefined ? { attestation } : {})
    }, this.now())
    this.keepEnvelope(offer, receipt, 'receipt')
    // the record names the receipt at once: a restart in `completed` needs it to take the job up (provider-restore.ts)
    this.persist(offer)
    this.send(offer, { type: 'message', bytes: receipt.bytes })
    this.publishEvidence(offer, receipt)
  }

  /** Gossip a receipt or failure report on the evidence topic, without holding up the job's events. */
  private publishEvidence (offer: Offer, message: SealedMessage<'receipt' | 'failure-report'>): void {
    this.options.gossip.publish(message, [EVIDENCE_TOPIC]).catch((err: unknown) => {
      this.log.warn('publishing evidence failed', { job: idOf(offer), kind: message.kind, error: err })
    })
  }

  /** A final status: stop the work, close the stream once the last frames are out. */
  private finalize (offer: Offer): void {
    if (offer.finalized) return
    offer.finalized = true
    offer.work?.abort(new Error('the job has ended'))
    offer.inputs = undefined
    // the job's cached inputs may be evicted again
    for (const cid of (offer.pinned ?? []).splice(0)) {
      this.options.blobs.unpinInput(cid).catch((err: unknown) => { this.log.warn('input cache eviction failed', { job: idOf(offer), error: err }) })
    }
    const channel = offer.channel
    if (channel === undefined || offer.streamEnded === true) {
      this.forget(offer)
      if (channel === undefined) return
    }
    // after the frames queued before the end
    offer.queue = offer.queue.then(async () => {
      await channel.close().catch(() => {})
      if (offer.streamEnded === true) return
      offer.linger = this.scheduler.at(this.now() + LINGER_MS, () => { channel.abort(new Error('the job has ended')) })
    })
  }

  /**
   * The requester re-opened the stream with the job's award (§7.7 "Resuming"): frames go on the new
   * one (the old is dropped), the receipt goes out again if it did before, and the log waits for the
   * requester's first credit, which says how much of it the requester holds.
   */
  resume (offer: Offer, channel: ExecChannel): void {
    const old = offer.channel
    offer.channel = channel
    offer.streamEnded = false
    offer.linger?.()
    offer.linger = undefined
    offer.resumeLog = true
    if (old !== undefined && old !== channel) old.abort(new Error('the requester resumed on a new stream'))
    const receipt = offer.evidence.receipt
    if (receipt !== undefined) this.send(offer, { type: 'message', bytes: receipt })
  }

  /** The offer's exec stream has ended: an ended offer is forgotten. */
  streamEnded (offer: Offer): void {
    if (offer.finalized) this.forget(offer)
  }

  /** An ended offer is dropped; an awarded one's log is kept among the last ENDED_LOGS_KEPT (at most ENDED_LOG_BYTES in all). */
  private forget (offer: Offer): void {
    const bid = offer.bid.cid.toString()
    this.offers.delete(bid)
    if (offer.award === undefined || this.endedLogs.has(bid)) return
    this.endedLogs.set(bid, { job: idOf(offer), log: offer.log })
    this.endedLogBytes += offer.log.size - offer.log.base
    for (const [key, old] of this.endedLogs) {
      if (this.endedLogs.size <= ENDED_LOGS_KEPT && this.endedLogBytes <= ENDED_LOG_BYTES) break
      this.endedLogs.delete(key)
      this.endedLogBytes -= old.log.size - old.log.base
    }
  }

  /** The log of the newest run of `job` this node holds, with its offer while that is live (none: the run ended), or undefined. */
  runLog (job: string): { log: LogBuffer, offer?: Offer } | undefined {
    let found: { log: LogBuffer, offer?: Offer } | undefined
    for (const o of this.offers.values()) if (idOf(o) === job && o.award !== undefined) found = { log: o.log, offer: o }
    if (found !== undefined) return found
    for (const e of this.endedLogs.values()) if (e.job === job) found = { log: e.log }
    return found
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
    const tracked = work.catch((err: unknown) => { this.log.error('provider job work failed', { job: idOf(offer), error: err }) })
    this.running.add(tracked)
    void tracked.finally(() => this.running.delete(tracked))
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
    const view = this.view(offer.bid.cid.toString())
    if (view === undefined) return
    offer.gpus = [...view.gpus]
    const record = offerRecord(offer, view, this.now())
    const entry = offerLedgerEntry(offer, view, this.now())
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
      offer.linger?.()
      // made here when there is none yet, so a fetch or a start still queued sees it aborted and never begins
      ;(offer.work ??= new AbortController()).abort(new Error('the provider is stopping'))
      offer.channel?.abort(new Error('the provider is stopping'))
    }
    let cancel: Cancel | undefined
    // an aborted run ends within the executor's kill grace (SIGTERM, then SIGKILL) and cleans its work dir
    await Promise.race([
      Promise.allSettled([...offers.map(async (o) => { await o.queue; await o.saving }), ...this.running]),
      new Promise<void>((resolve) => { cancel = this.scheduler.at(this.now() + STOP_WAIT_MS, resolve) })
    ])
    cancel?.()
  }
}
