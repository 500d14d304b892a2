/**
 * Keeps this provider's capability keys on the DHT (DESIGN §4): provides each key, retries keys that
 * could not be placed (no DHT servers yet, peers gone) with backoff, lets kad-dht re-provide them
 * before their records expire, and withdraws them — stops re-providing — when the node stops selling.
 * Records already placed on other peers expire by themselves (`dht.recordValidityMs`).
 */
import type { CID } from 'multiformats/cid'
import { capabilityKeyCid } from '../protocol/index.js'
import type { GpumeshLibp2p } from './libp2p.js'
import { withDeadline } from './abort.js'
import type { Logger } from './logger.js'
import type { NodeMetrics } from './metrics.js'

export const PROVIDE_TIMEOUT_MS = 30_000
/** Keys provided at once by default (config `dht.provideConcurrency`). */
export const PROVIDE_CONCURRENCY = 4
export const RETRY_MIN_MS = 2_000
export const RETRY_MAX_MS = 60_000

export interface KeyState {
  key: string
  cid: string
  provided: boolean
  lastError?: string
  providedAt?: number
  /** How many peers acknowledged the provider record on the last provide. */
  storedOn?: number
}

export class Announcer {
  private readonly keys = new Map<string, { cid: CID, provided: boolean, lastError?: string, providedAt?: number, storedOn?: number }>()
  private retryTimer: NodeJS.Timeout | undefined
  private retryDelay = RETRY_MIN_MS
  private running: Promise<void> | undefined
  private stopped = false
  private readonly controller = new AbortController()

  constructor (
    private readonly node: GpumeshLibp2p,
    private readonly log: Logger,
    private readonly metrics?: NodeMetrics,
    /** Remembers the announced set, so a node that died without withdrawing cleans up at its next start. */
    private readonly remember?: (keys: readonly string[]) => Promise<void>,
    /** Keys provided at once (config `dht.provideConcurrency`). */
    private readonly concurrency = PROVIDE_CONCURRENCY
  ) {}

  /**
   * Stop re-providing keys a previous run announced and this one does not want. kad-dht keeps our
   * own provider records in the persistent peer store and re-announces them, so after a crash or a
   * change of region or GPUs the old keys would otherwise live on.
   */
  async forgetStale (previous: readonly string[], wanted: readonly string[]): Promise<void> {
    const keep = new Set(wanted)
    for (const key of previous) if (!keep.has(key)) await this.withdrawOne(key, capabilityKeyCid(key))
    await this.remember?.(wanted)
  }

  /** Announce exactly `keys` from now on: withdraw the others, provide the new ones. */
  async set (keys: readonly string[]): Promise<void> {
    const wanted = new Set(keys)
    for (const [key, state] of this.keys) {
      if (!wanted.has(key)) {
        this.keys.delete(key)
        await this.withdrawOne(key, state.cid)
      }
    }
    for (const key of wanted) if (!this.keys.has(key)) this.keys.set(key, { cid: capabilityKeyCid(key), provided: false })
    await this.remember?.([...this.keys.keys()])
    this.kick()
  }

  /** Stop announcing everything (the node stops selling). */
  async withdraw (): Promise<void> {
    await this.set([])
  }

  state (): KeyState[] {
    return [...this.keys].map(([key, s]) => ({
      key,
      cid: s.cid.toString(),
      provided: s.provided,
      ...(s.lastError !== undefined ? { lastError: s.lastError } : {}),
      ...(s.providedAt !== undefined ? { providedAt: s.providedAt } : {}),
      ...(s.storedOn !== undefined ? { storedOn: s.storedOn } : {})
    }))
  }

  /** Provide pending keys now (e.g. after a new DHT peer appeared). */
  kick (): void {
    if (this.stopped || this.running !== undefined) return
    clearTimeout(this.retryTimer)
    this.retryTimer = undefined
    this.running = this.providePending().finally(() => {
      this.running = undefined
      this.scheduleRetry()
    })
  }

  /** Resolves when no provide round is running (tests, shutdown). */
  async idle (): Promise<void> {
    while (this.running !== undefined) await this.running
  }

  async stop (): Promise<void> {
    this.stopped = true
    clearTimeout(this.retryTimer)
    this.controller.abort()
    await this.idle()
  }

  private scheduleRetry (): void {
    if (this.stopped || ![...this.keys.values()].some((s) => !s.provided)) {
      this.retryDelay = RETRY_MIN_MS
      return
    }
    this.retryTimer = setTimeout(() => { this.kick() }, this.retryDelay)
    this.retryTimer.unref()
    this.retryDelay = Math.min(this.retryDelay * 2, RETRY_MAX_MS)
  }

  private async provideOne (key: string): Promise<void> {
    const state = this.keys.get(key)
    if (state === undefined || state.provided) return
    const started = performance.now()
    try {
      // kad-dht resolves a provide even when no peer stored the record: count the peers that did
      const stored = await withDeadline(PROVIDE_TIMEOUT_MS, this.controller.signal, async (signal) => {
        let count = 0
        for await (const event of this.node.services.dht.provide(state.cid, { signal })) {
          if (event.name === 'PEER_RESPONSE' && event.messageName === 'ADD_PROVIDER') count++
        }
        return count
      })
      if (stored === 0) throw new Error('no peer stored the provider record')
      state.storedOn = stored
      state.provided = true
      state.providedAt = Date.now()
      delete state.lastError
      this.metrics?.provides.inc({ result: 'ok' })
      this.metrics?.provideSeconds.observe((performance.now() - started) / 1000)
    } catch (err) {
      state.lastError = (err as Error).message
      this.metrics?.provides.inc({ result: 'error' })
      this.log.debug('provide failed', { key, error: err })
    }
  }

  private async providePending (): Promise<void> {
    const pending = [...this.keys].filter(([, s]) => !s.provided).map(([key]) => key)
    if (pending.length === 0) return
    let next = 0
    // with no connection a provide can only wait for its timeout; peer:connect kicks us again
    const connected = (): boolean => this.node.getConnections().length > 0
    const worker = async (): Promise<void> => {
      while (next < pending.length && !this.stopped && connected()) await this.provideOne(pending[next++] as string)
    }
    await Promise.all(Array.from({ length: this.concurrency }, worker))
    const failed = [...this.keys.values()].filter((s) => !s.provided).length
    if (this.stopped || this.keys.size === 0) return
    if (!connected()) {
      this.log.info('no peers yet: capability keys will be announced when one connects', { keys: this.keys.size })
      return
    }
    if (failed === 0) this.log.info('capability keys announced on the DHT', { keys: this.keys.size })
    else this.log.warn('some capability keys could not be announced yet; will retry', { failed, of: this.keys.size })
  }

  private async withdrawOne (key: string, cid: CID): Promise<void> {
    try {
      await this.node.services.dht.cancelReprovide(cid)
    } catch (err) {
      this.log.debug('cancel reprovide failed', { key, error: err })
    }
  }
}
