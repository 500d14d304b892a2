/**
 * Whom a node probes, and when (issue 11; README "Trust" → "Attestations and probes"). Pure: time and
 * the jitter come in as arguments; node/trust/prober.ts is the I/O shell that runs the probes.
 *
 *   - A provider this node hears of (an ad it fetched, a bid on one of its jobs) and never probed is due
 *     at once. A bidder's first probe goes before the award when it fits in what is left of the bid
 *     window (now + probeMs ≤ closesAt), and such probes go first; otherwise it is due at the close,
 *     right after the award (`firstProbeAt`). The award never waits for a probe.
 *   - A provider probed at t is due again at t + intervalMs + jitter · jitterFraction · intervalMs
 *     (`reprobeAt`), never earlier: exactly at the interval is due, a millisecond before is not.
 *   - A probe the provider refused (its own rate limit, busy) is tried again retryMs later.
 *   - Globally: a token bucket of `burst` probes refilled at `perHour`, and at most `maxConcurrent` probes
 *     at once; at most `maxTracked` providers are remembered (the least recently heard one goes first).
 */
import { HOUR_MS, MINUTE_MS } from '../limits.js'

/** The shortest re-probe interval: the provider side refuses a second probe from a peer within 60 s. */
export const PROBE_INTERVAL_MIN_MS = MINUTE_MS
/** Default re-probe interval of a known provider: 6 h, so four probes a day (each ≈ 250 ms of its device). */
export const PROBE_INTERVAL_MS = 6 * HOUR_MS
/** Default jitter: a re-probe lands up to 10 % of the interval late, so probers do not march in step. */
export const PROBE_JITTER = 0.1
/** Default global rate: 60 probes an hour, in bursts of at most 4. */
export const PROBE_PER_HOUR = 60
export const PROBE_BURST = 4
/** Default wait before trying a provider again that refused a probe (its limit is one per peer per 60 s). */
export const PROBE_RETRY_MS = 2 * MINUTE_MS
export const PROBE_MAX_CONCURRENT = 1
export const PROBE_MAX_TRACKED = 4096

export interface ProbeScheduleParams {
  /** ≥ PROBE_INTERVAL_MIN_MS: a known provider is probed at most once per interval. */
  intervalMs: number
  /** 0..1: the share of the interval a re-probe may land late. */
  jitter: number
  /** ≥ 1: probes an hour, all providers together. */
  perHour: number
  /** ≥ 1, whole: probes that may start back to back. */
  burst: number
  /** ≥ 1 s: the wait after a refusal. */
  retryMs: number
  /** ≥ 1, whole. */
  maxConcurrent: number
  /** ≥ 1, whole. */
  maxTracked: number
}

export const defaultProbeScheduleParams: Readonly<ProbeScheduleParams> = Object.freeze({
  intervalMs: PROBE_INTERVAL_MS,
  jitter: PROBE_JITTER,
  perHour: PROBE_PER_HOUR,
  burst: PROBE_BURST,
  retryMs: PROBE_RETRY_MS,
  maxConcurrent: PROBE_MAX_CONCURRENT,
  maxTracked: PROBE_MAX_TRACKED
})

export class InvalidProbeScheduleParamsError extends Error {
  override readonly name = 'InvalidProbeScheduleParamsError'
  constructor (readonly field: string, message: string) {
    super(`${field}: ${message}`)
  }
}

export function validateProbeScheduleParams (p: ProbeScheduleParams): void {
  const bad = (field: string, what: string): never => { throw new InvalidProbeScheduleParamsError(field, `expected ${what}`) }
  if (!(Number.isSafeInteger(p.intervalMs) && p.intervalMs >= PROBE_INTERVAL_MIN_MS)) bad('intervalMs', `a whole number of ms ≥ ${PROBE_INTERVAL_MIN_MS}`)
  if (!(Number.isFinite(p.jitter) && p.jitter >= 0 && p.jitter <= 1)) bad('jitter', 'a number in 0..1')
  if (!(Number.isFinite(p.perHour) && p.perHour >= 1)) bad('perHour', 'a number ≥ 1')
  if (!(Number.isSafeInteger(p.retryMs) && p.retryMs >= 1000)) bad('retryMs', 'a whole number of ms ≥ 1000')
  for (const field of ['burst', 'maxConcurrent', 'maxTracked'] as const) if (!(Number.isSafeInteger(p[field]) && p[field] >= 1)) bad(field, 'a whole number ≥ 1')
}

export function createProbeScheduleParams (partial: Partial<ProbeScheduleParams> = {}): ProbeScheduleParams {
  const params = { ...defaultProbeScheduleParams, ...partial }
  validateProbeScheduleParams(params)
  return params
}

/**
 * When a provider never probed is first due: at once, unless it is a bidder whose probe (about
 * `probeMs`) would not end before the bid window closes — then at the close, right after the award.
 */
export function firstProbeAt (now: number, bid?: { closesAt: number, probeMs: number }): number {
  if (bid === undefined || now + bid.probeMs <= bid.closesAt) return now
  return bid.closesAt
}

/** When a provider probed at `probedAt` is due again, for a jitter draw in [0, 1). */
export function reprobeAt (probedAt: number, params: Pick<ProbeScheduleParams, 'intervalMs' | 'jitter'>, jitter: number): number {
  return probedAt + params.intervalMs + Math.floor(Math.min(Math.max(jitter, 0), 1) * params.jitter * params.intervalMs)
}

interface Target {
  peer: string
  /** The claimed GPU model last heard (an ad's first GPU, a bid's model). */
  model?: string
  heardAt: number
  dueAt: number
  probedAt?: number
  /** A bidder's first probe that fits before the award: run it before this time, ahead of the others. */
  before?: number
  inFlight: boolean
}

/** A probe to run now. */
export interface ProbeTask {
  peer: string
  model?: string
  /** `first`: never probed by this node; `again`: its interval passed; `pre-award`: a bidder before its first award. */
  reason: 'first' | 'again' | 'pre-award'
}

export class ProbeSchedule {
  readonly params: ProbeScheduleParams
  private readonly targets = new Map<string, Target>()
  private tokens: number
  private tokensAt: number | undefined
  private running = 0

  constructor (params: Partial<ProbeScheduleParams> = {}) {
    this.params = createProbeScheduleParams(params)
    this.tokens = this.params.burst
  }

  get size (): number {
    return this.targets.size
  }

  /** When `peer` was last probed here, if ever. */
  probedAt (peer: string): number | undefined {
    return this.targets.get(peer)?.probedAt
  }

  /** When `peer` is next due, if tracked. */
  dueAt (peer: string): number | undefined {
    return this.targets.get(peer)?.dueAt
  }

  /**
   * This node heard of provider `peer` at `now`: from an ad (no `bid`) or a bid on one of its jobs,
   * whose window closes at `bid.closesAt` and whose probe takes about `bid.probeMs`.
   */
  heard (peer: string, now: number, info: { model?: string, bid?: { closesAt: number, probeMs: number } } = {}): void {
    let t = this.targets.get(peer)
    if (t === undefined) {
      this.makeRoom()
      t = { peer, heardAt: now, dueAt: firstProbeAt(now, info.bid), inFlight: false }
      this.targets.set(peer, t)
    } else {
      t.heardAt = Math.max(t.heardAt, now)
      // never probed: a bid may bring the first probe forward, never push it back
      if (t.probedAt === undefined) t.dueAt = Math.min(t.dueAt, firstProbeAt(now, info.bid))
    }
    if (info.model !== undefined) t.model = info.model
    if (t.probedAt === undefined && info.bid !== undefined && t.dueAt <= now && now + info.bid.probeMs <= info.bid.closesAt) {
      t.before = Math.min(t.before ?? Infinity, info.bid.closesAt)
    }
  }

  /** The next probe to start at `now`, marked in flight (and a token spent), or undefined. */
  take (now: number): ProbeTask | undefined {
    if (this.running >= this.params.maxConcurrent) return undefined
    this.refill(now)
    if (this.tokens < 1) return undefined
    let best: Target | undefined
    for (const t of this.targets.values()) {
      if (t.inFlight || t.dueAt > now) continue
      if (best === undefined || before(t, best)) best = t
    }
    if (best === undefined) return undefined
    this.tokens -= 1
    this.start(best)
    const reason = best.before !== undefined && best.before > now ? 'pre-award' : best.probedAt === undefined ? 'first' : 'again'
    return { peer: best.peer, ...(best.model !== undefined ? { model: best.model } : {}), reason }
  }

  /**
   * A probe asked for by hand (`gpumesh probe`): it skips the global limit but is recorded like any
   * other. False when `peer` is being probed already.
   */
  begin (peer: string, now: number, model?: string): boolean {
    let t = this.targets.get(peer)
    if (t === undefined) {
      this.makeRoom()
      t = { peer, heardAt: now, dueAt: now, inFlight: false }
      this.targets.set(peer, t)
    }
    if (t.inFlight) return false
    if (model !== undefined) t.model = model
    this.start(t)
    return true
  }

  /** The probe of `peer` ended at `now`: `probed` (a result was signed) or `refused` (none was). */
  done (peer: string, now: number, outcome: 'probed' | 'refused', jitter: number): void {
    const t = this.targets.get(peer)
    if (t === undefined || !t.inFlight) return
    t.inFlight = false
    this.running--
    delete t.before
    if (outcome === 'probed') {
      t.probedAt = now
      t.dueAt = reprobeAt(now, this.params, jitter)
    } else {
      t.dueAt = now + this.params.retryMs
    }
  }

  /** When `take` may next return a probe (undefined: nothing tracked is waiting, or all slots are busy). */
  wakeAt (now: number): number | undefined {
    if (this.running >= this.params.maxConcurrent) return undefined
    let earliest = Infinity
    for (const t of this.targets.values()) if (!t.inFlight && t.dueAt < earliest) earliest = t.dueAt
    if (earliest === Infinity) return undefined
    this.refill(now)
    const tokenAt = this.tokens >= 1 ? now : now + Math.ceil((1 - this.tokens) * HOUR_MS / this.params.perHour)
    return Math.max(earliest, tokenAt)
  }

  private start (t: Target): void {
    t.inFlight = true
    this.running++
  }

  private refill (now: number): void {
    if (this.tokensAt !== undefined && now > this.tokensAt) {
      this.tokens = Math.min(this.params.burst, this.tokens + (now - this.tokensAt) * this.params.perHour / HOUR_MS)
    }
    if (this.tokensAt === undefined || now > this.tokensAt) this.tokensAt = now
  }

  /** At capacity, forget the least recently heard provider that is not being probed. */
  private makeRoom (): void {
    if (this.targets.size < this.params.maxTracked) return
    let victim: Target | undefined
    for (const t of this.targets.values()) if (!t.inFlight && (victim === undefined || t.heardAt < victim.heardAt)) victim = t
    if (victim !== undefined) this.targets.delete(victim.peer)
  }
}

/** Whether `a` goes before `b`: pre-award probes first (earliest close), then the longest due, then by peer id. */
function before (a: Target, b: Target): boolean {
  const ua = a.before ?? Infinity
  const ub = b.before ?? Infinity
  if (ua !== ub) return ua < ub
  if (a.dueAt !== b.dueAt) return a.dueAt < b.dueAt
  return a.peer < b.peer
}
