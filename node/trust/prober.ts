/**
 * The daemon's prober (issue 11): the I/O shell around the pure schedule (protocol/trust/probe-schedule.ts).
 * It hears of providers (ads this node fetched, bidders on its jobs), runs the probes the schedule hands
 * out over /gpumesh/probe/1.0.0 (node/services/probe.ts), and does three things with every signed result:
 * it enters this node's own reputation view (protocol/trust/probe-evidence.ts says what each counts for),
 * it is kept with the evidence, and it is published on `gpumesh/2/evidence`. A provider that does not
 * answer the ping is signed `unreachable` (a `ping` result with ok false: its uptime); one that refuses
 * (its own rate limit) signs nothing and is tried again later. `gpumesh probe` runs one by hand.
 */
import type { NodeMetrics } from '../metrics.js'
import type { Startable } from '@libp2p/interface'
import { peerIdFromString } from '@libp2p/peer-id'
import type { Signer } from '../../crypto/index.js'
import { sealMessage, type SealedMessage } from '../../protocol/index.js'
import { probeEvidence, probeReading, type ProbeReading } from '../../protocol/trust/probe-evidence.js'
import { pingResultPayload } from '../../protocol/trust/probe-result.js'
import { ProbeSchedule, type ProbeScheduleParams, type ProbeTask } from '../../protocol/trust/probe-schedule.js'
import { PROBE_FLAG_FACTOR, expectedProbeMs, probeClaim, probeSizeFor } from '../../protocol/trust/probe-throughput.js'
import { ProbeError } from '../../protocol/trust/probe.js'
import type { Evidence } from '../../protocol/trust/reputation-evidence.js'
import type { Logger } from '../logger.js'
import { randomNonce } from '../random.js'
import { PROBE_GRACE_MS, type ProbeOutcome, type ProbeService } from '../services/probe.js'
import { PROBE_MIN_INTERVAL_MS } from './probe-rate-limit.js'

/** The longest the prober's timer waits before it looks at the schedule again. */
const MAX_WAKE_MS = 3_600_000

/** Allowance on a probe's length beyond its digest deadline: the product's transfer and the Freivalds check. */
export const PROBE_CHECK_ALLOWANCE_MS = 1_000

/** How long a probe of `model` may take at most, for the schedule's "before the award" rule. */
export function probeBudgetMs (model: string | undefined): number {
  const claim = probeClaim(model)
  return Math.ceil(PROBE_FLAG_FACTOR * expectedProbeMs(claim, probeSizeFor(claim))) + PROBE_GRACE_MS + PROBE_CHECK_ALLOWANCE_MS
}

/** The last probe of a provider, as plain data (`gpumesh probe`, `gpumesh providers`). */
export interface ProbeSummary {
  peer: string
  /** When the result was signed. */
  at: number
  /** The signed probe-result's payload CID. */
  cid: string
  kind: 'freivalds-matmul' | 'ping'
  reading: ProbeReading
  /** The claim is more than 2× faster than measured. */
  flagged: boolean
  /** The claimed model the probe was sized for (`cpu` for the CPU claim). */
  model?: string
  /** The device the claim implies, and the one the provider said it used. */
  claimedDevice?: 'cpu' | 'gpu'
  device?: 'cpu' | 'gpu'
  size?: number
  expectedMs?: number
  measuredMs: number
  rttMs?: number
  claimedMacPerSec?: number
  /** n³ per measured second, for a right answer. */
  measuredMacPerSec?: number
  detail?: string
  /** Why the probe ran: by hand, or the schedule's reason. */
  reason: 'manual' | ProbeTask['reason']
  /**
   * Set on a probe by hand that the provider refused because this node probed it less than its limit
   * of a minute ago (the schedule had just done so): the answer is that probe.
   */
  reused?: true
}

export interface ProberOptions {
  probe: ProbeService
  signer: Signer
  schedule?: Partial<ProbeScheduleParams>
  /** Probe on the schedule (false: only by hand). */
  enabled?: boolean
  now: () => number
  log: Logger
  /** Into this node's reputation view. */
  record: (evidence: Evidence) => void
  /** Keep the signed result with the node's evidence. */
  keep: (result: SealedMessage<'probe-result'>) => Promise<void>
  /** Publish it on the evidence topic. */
  publish: (result: SealedMessage<'probe-result'>) => Promise<void>
  /** Jitter draws in [0, 1) (Math.random by default). */
  random?: () => number
  /** gpumesh_probe_results_total, by reading. */
  metrics?: Pick<NodeMetrics, 'probeResults'>
}

export class Prober implements Startable {
  readonly schedule: ProbeSchedule
  private readonly last = new Map<string, ProbeSummary>()
  private readonly running = new Set<Promise<unknown>>()
  /** The probe in flight per peer, so a probe by hand can join one the schedule started. */
  private readonly inFlight = new Map<string, Promise<ProbeSummary>>()
  private timer: NodeJS.Timeout | undefined
  private abort = new AbortController()
  private started = false

  constructor (private readonly options: ProberOptions) {
    this.schedule = new ProbeSchedule(options.schedule)
  }

  start (): void {
    this.abort = new AbortController()
    this.started = true
    this.arm()
  }

  async stop (): Promise<void> {
    this.started = false
    clearTimeout(this.timer)
    this.abort.abort(new Error('the prober is stopping'))
    await Promise.allSettled([...this.running])
  }

  isStarted (): boolean {
    return this.started
  }

  /** A provider's ad this node fetched (its first GPU's model is the claim). */
  heardAd (peer: string, model: string | undefined): void {
    if (peer === this.options.signer.peerId) return
    this.schedule.heard(peer, this.options.now(), model !== undefined ? { model } : {})
    this.arm()
  }

  /** A bid on one of this node's jobs, whose window closes at `closesAt`. */
  heardBid (peer: string, model: string, closesAt: number): void {
    if (peer === this.options.signer.peerId) return
    this.schedule.heard(peer, this.options.now(), { model, bid: { closesAt, probeMs: probeBudgetMs(model) } })
    this.arm()
  }

  /** The last probe of `peer` this node ran since it started. */
  lastProbe (peer: string): ProbeSummary | undefined {
    return this.last.get(peer)
  }

  /**
   * Probe `peer` now against `model` (by hand). Throws ProbeError BUSY when it is being probed already
   * and RATE_LIMITED when it refuses.
   */
  async probeNow (peer: string, model: string | undefined): Promise<ProbeSummary> {
    const running = this.inFlight.get(peer)
    if (running !== undefined) return await running
    if (!this.schedule.begin(peer, this.options.now(), model)) throw new ProbeError('RATE_LIMITED', `BUSY: ${peer} is being probed already`)
    try {
      return await this.track(this.run(peer, model, 'manual'))
    } catch (err) {
      const last = this.last.get(peer)
      if (err instanceof ProbeError && err.code === 'RATE_LIMITED' && last !== undefined && this.options.now() - last.at < PROBE_MIN_INTERVAL_MS) return { ...last, reused: true }
      throw err
    }
  }

  private arm (): void {
    if (!this.started || this.options.enabled === false) return
    clearTimeout(this.timer)
    const now = this.options.now()
    const at = this.schedule.wakeAt(now)
    if (at === undefined) return
    // a timer beyond 2³¹ ms fires at once: wake at least hourly and look again
    this.timer = setTimeout(() => { this.tick() }, Math.min(MAX_WAKE_MS, Math.max(0, at - now)))
    this.timer.unref()
  }

  private tick (): void {
    if (!this.started) return
    const task = this.schedule.take(this.options.now())
    if (task !== undefined) {
      this.track(this.run(task.peer, task.model, task.reason)).catch((err: unknown) => {
        if (this.abort.signal.aborted) return
        const refused = err instanceof ProbeError && err.code === 'RATE_LIMITED'
        this.options.log[refused ? 'debug' : 'warn'](refused ? 'a provider refused a probe; trying later' : 'a probe failed', { peer: task.peer, error: err })
      })
    }
    this.arm()
  }

  private async track<T> (work: Promise<T>): Promise<T> {
    this.running.add(work)
    try {
      return await work
    } finally {
      this.running.delete(work)
      this.arm()
    }
  }

  /** One probe: sign what came out, or nothing when refused; the schedule hears how it ended either way. */
  private async run (peer: string, model: string | undefined, reason: ProbeSummary['reason']): Promise<ProbeSummary> {
    const work = this.runOnce(peer, model, reason)
    this.inFlight.set(peer, work)
    try {
      return await work
    } finally {
      this.inFlight.delete(peer)
    }
  }

  private async runOnce (peer: string, model: string | undefined, reason: ProbeSummary['reason']): Promise<ProbeSummary> {
    const { probe, signer, now, log } = this.options
    const claim = probeClaim(model)
    const started = performance.now()
    let outcome: ProbeOutcome
    try {
      try {
        outcome = await probe.probe(peerIdFromString(peer), { claim, signal: this.abort.signal })
      } catch (err) {
        this.abort.signal.throwIfAborted()
        if (err instanceof ProbeError && err.code === 'RATE_LIMITED') throw err
        if (!(err instanceof ProbeError)) throw err
        // no pong: the provider is unreachable, which is what a ping result with ok false says
        const payload = pingResultPayload({ subject: peer, nonce: randomNonce(), ok: false, rttMs: performance.now() - started, now: now(), detail: err.message })
        outcome = { result: sealMessage(signer, 'probe-result', payload), verdict: 'failed' }
      }
    } catch (err) {
      this.schedule.done(peer, now(), 'refused', this.jitter())
      throw err
    }
    this.schedule.done(peer, now(), 'probed', this.jitter())
    const summary = summarize(outcome.result, claim, reason)
    this.options.metrics?.probeResults.inc({ reading: summary.reading })
    this.last.delete(peer)
    this.last.set(peer, summary)
    for (const old of this.last.keys()) {
      if (this.last.size <= this.schedule.params.maxTracked) break
      this.last.delete(old)
    }
    this.options.record(probeEvidence(signer.peerId, outcome.result.payload))
    log.info('probed a provider', { peer, reading: summary.reading, model: summary.model, expectedMs: summary.expectedMs, measuredMs: summary.measuredMs, reason })
    await this.options.keep(outcome.result).catch((err: unknown) => { log.warn('keeping a probe result failed', { error: err }) })
    await this.options.publish(outcome.result).catch((err: unknown) => { log.debug('publishing a probe result failed', { error: err }) })
    return summary
  }

  private jitter (): number {
    return (this.options.random ?? Math.random)()
  }
}

function summarize (result: SealedMessage<'probe-result'>, claim: ReturnType<typeof probeClaim>, reason: ProbeSummary['reason']): ProbeSummary {
  const p = result.payload
  const reading = probeReading(p)
  const kind = p.kind === 'ping' ? 'ping' : 'freivalds-matmul'
  const macs = p.size !== undefined ? p.size ** 3 : undefined
  return {
    peer: p.subject,
    at: p.issuedAt,
    cid: result.cid.toString(),
    kind,
    reading,
    flagged: reading === 'flagged',
    ...(kind === 'freivalds-matmul' ? { model: claim.model, claimedDevice: claim.device, claimedMacPerSec: claim.macPerSec } : {}),
    ...(p.device !== undefined ? { device: p.device } : {}),
    ...(p.size !== undefined ? { size: p.size } : {}),
    ...(p.expectedMs !== undefined ? { expectedMs: p.expectedMs } : {}),
    measuredMs: p.durationMs,
    ...(p.rttMs !== undefined ? { rttMs: p.rttMs } : {}),
    ...(p.ok && macs !== undefined && p.durationMs > 0 ? { measuredMacPerSec: Math.round(macs * 1000 / p.durationMs) } : {}),
    ...(p.detail !== undefined ? { detail: p.detail } : {}),
    reason
  }
}
