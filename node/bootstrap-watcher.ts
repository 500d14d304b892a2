/**
 * Watches the connection to the configured bootstrap peers. @libp2p/bootstrap dials each of them once,
 * a second after start, and logs a failure only at debug level: a wrong or unreachable address left a
 * node silently alone. The watcher dials them at start, warns at once when none answers, keeps
 * retrying with exponential backoff (`retryDelayMs`, driven by an injected clock) and dials again
 * when the node has lost every connection. `status()` is what `gpumesh status` shows.
 */
import { multiaddr, type Multiaddr } from '@multiformats/multiaddr'
import type { GpumeshLibp2p } from './libp2p.js'
import type { Logger } from './logger.js'

/** First retry after this long; each failed round doubles it, up to the maximum. */
export const BOOTSTRAP_RETRY_INITIAL_MS = 1_000
export const BOOTSTRAP_RETRY_MAX_MS = 60_000
export const BOOTSTRAP_RETRY_FACTOR = 2
/** One dial gives up after this long (an address that drops packets never refuses). */
export const BOOTSTRAP_DIAL_TIMEOUT_MS = 5_000

export interface BackoffParams { initialMs: number, maxMs: number, factor: number }

export const defaultBackoff: BackoffParams = { initialMs: BOOTSTRAP_RETRY_INITIAL_MS, maxMs: BOOTSTRAP_RETRY_MAX_MS, factor: BOOTSTRAP_RETRY_FACTOR }

/** How long to wait after `failedRounds` (≥ 1) failed rounds in a row before the next one. */
export function retryDelayMs (failedRounds: number, params: BackoffParams = defaultBackoff): number {
  if (failedRounds < 1) return 0
  return Math.min(params.maxMs, params.initialMs * params.factor ** Math.min(failedRounds - 1, 64))
}

/**
 * `none`: no bootstrap peer configured; `dialling`: the first round is under way; `connected`: at
 * least one bootstrap peer answered; `unreachable`: none answered, and a retry is scheduled.
 */
export type BootstrapState = 'none' | 'dialling' | 'connected' | 'unreachable'

export interface BootstrapStatus {
  state: BootstrapState
  /** Bootstrap peers configured (this node's own address left out). */
  configured: number
  /** Of those, connected now. */
  connected: number
  /** Failed rounds in a row (0 once one answered). */
  failedRounds: number
  /** Why the last failed round failed, one line per peer. */
  lastErrors: string[]
  /** When the next round is due (ms since the epoch), while one is scheduled. */
  nextAttemptAt?: number
}

/** Time for the watcher: `now`, and `after(ms, fn)` returning a cancel function. */
export interface WatcherClock {
  now (): number
  after (ms: number, fn: () => void): () => void
}

export const systemClock: WatcherClock = {
  now: () => Date.now(),
  after: (ms, fn) => {
    const timer = setTimeout(fn, ms)
    timer.unref()
    return () => { clearTimeout(timer) }
  }
}

export interface BootstrapWatcherOptions {
  clock?: WatcherClock
  backoff?: BackoffParams
  dialTimeoutMs?: number
}

interface Target { addr: Multiaddr, peerId: string }

export class BootstrapWatcher {
  private readonly targets: Target[]
  private readonly clock: WatcherClock
  private readonly backoff: BackoffParams
  private readonly dialTimeoutMs: number
  private state: BootstrapState
  private failedRounds = 0
  private lastErrors: string[] = []
  private nextAttemptAt: number | undefined
  private cancelTimer: (() => void) | undefined
  private current: Promise<void> | undefined
  private started = false
  private readonly onDisconnect = (): void => {
    if (this.started && this.current === undefined && this.nextAttemptAt === undefined && this.node.getConnections().length === 0) {
      this.log.warn('lost every connection; dialling the bootstrap peers again')
      this.schedule(this.backoff.initialMs)
    }
  }

  constructor (private readonly node: GpumeshLibp2p, peers: readonly string[], private readonly log: Logger, options: BootstrapWatcherOptions = {}) {
    this.clock = options.clock ?? systemClock
    this.backoff = options.backoff ?? defaultBackoff
    this.dialTimeoutMs = options.dialTimeoutMs ?? BOOTSTRAP_DIAL_TIMEOUT_MS
    const self = node.peerId.toString()
    this.targets = []
    for (const text of peers) {
      try {
        const addr = multiaddr(text)
        const peerId = addr.getComponents().findLast((c) => c.name === 'p2p')?.value
        if (peerId === undefined) { log.warn('bootstrap address without /p2p/<peer id> ignored', { addr: text }); continue }
        if (peerId !== self) this.targets.push({ addr, peerId })
      } catch (err) {
        log.warn('unreadable bootstrap address ignored', { addr: text, error: err })
      }
    }
    this.state = this.targets.length === 0 ? 'none' : 'dialling'
  }

  start (): void {
    if (this.started) return
    this.started = true
    if (this.targets.length === 0) return
    this.node.addEventListener('peer:disconnect', this.onDisconnect)
    void this.round()
  }

  stop (): void {
    this.started = false
    this.cancelTimer?.()
    this.cancelTimer = undefined
    this.nextAttemptAt = undefined
    this.node.removeEventListener('peer:disconnect', this.onDisconnect)
  }

  /** The round under way, if any (tests await it). */
  async settled (): Promise<void> {
    await this.current
  }

  status (): BootstrapStatus {
    const connectedPeers = new Set(this.node.getConnections().map((c) => c.remotePeer.toString()))
    return {
      state: this.state,
      configured: this.targets.length,
      connected: new Set(this.targets.filter((t) => connectedPeers.has(t.peerId)).map((t) => t.peerId)).size,
      failedRounds: this.failedRounds,
      lastErrors: this.lastErrors,
      ...(this.nextAttemptAt !== undefined ? { nextAttemptAt: this.nextAttemptAt } : {})
    }
  }

  private schedule (delayMs: number): void {
    this.cancelTimer?.()
    this.nextAttemptAt = this.clock.now() + delayMs
    this.cancelTimer = this.clock.after(delayMs, () => {
      this.cancelTimer = undefined
      this.nextAttemptAt = undefined
      void this.round()
    })
  }

  /** Dial every bootstrap peer at once; any answer ends the retries, none schedules the next round. */
  private async round (): Promise<void> {
    if (!this.started || this.current !== undefined) return
    let done!: () => void
    this.current = new Promise((resolve) => { done = resolve })
    try {
      const results = await Promise.allSettled(this.targets.map(async (t) => {
        await this.node.dial(t.addr, { signal: AbortSignal.timeout(this.dialTimeoutMs) })
      }))
      if (!this.started) return
      const answered = results.filter((r) => r.status === 'fulfilled').length
      if (answered > 0) {
        if (this.state === 'unreachable') this.log.info('a bootstrap peer answers again', { answered, configured: this.targets.length, after: this.failedRounds })
        else this.log.info('connected to bootstrap peers', { answered, configured: this.targets.length })
        this.state = 'connected'
        this.failedRounds = 0
        this.lastErrors = []
        return
      }
      this.failedRounds++
      this.lastErrors = results.map((r, i) => `${this.targets[i]?.addr.toString() ?? '?'}: ${r.status === 'rejected' ? reasonOf(r.reason) : '?'}`)
      const delay = retryDelayMs(this.failedRounds, this.backoff)
      // warn when the node becomes isolated, not on every retry (they are logged at debug)
      if (this.state !== 'unreachable') {
        this.log.warn(`no bootstrap peer answers (${this.targets.length} configured); retrying with backoff, check the --bootstrap addresses`, { errors: this.lastErrors, retryInMs: delay })
      } else {
        this.log.debug('bootstrap peers still unreachable', { failedRounds: this.failedRounds, errors: this.lastErrors, retryInMs: delay })
      }
      this.state = 'unreachable'
      this.schedule(delay)
    } finally {
      this.current = undefined
      done()
    }
  }
}

function reasonOf (err: unknown): string {
  const e = err as Error & { errors?: unknown[] }
  // libp2p wraps each address's failure in an AggregateError: the first one says what happened
  const inner = Array.isArray(e?.errors) && e.errors.length > 0 ? (e.errors[0] as Error) : undefined
  const message = inner?.message ?? e?.message ?? String(err)
  return message.split('\n')[0] ?? message
}
