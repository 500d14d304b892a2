/**
 * Writes a reputation view (protocol/trust/reputation.ts) to level when it changed, at most once per
 * `intervalMs` while the node runs (each write is a snapshot of every pair: up to ≈ 1 s of CPU at the
 * caps, and gossiped evidence changes a view often), and at once at `flush` (the daemon's stop). A crash
 * loses at most the last interval's changes.
 */
import type { Cancel, Scheduler } from '../../protocol/index.js'
import type { ReputationStore } from '../../protocol/trust/reputation.js'
import type { Logger } from '../logger.js'

/** The default interval between writes (both the requester's and the provider's view). */
export const REPUTATION_SAVE_INTERVAL_MS = 5_000

export interface ReputationSaverOptions {
  view: ReputationStore
  put: (snapshot: unknown) => Promise<void>
  get: () => Promise<unknown>
  scheduler: Scheduler
  log: Logger
  /** What the log calls the view. */
  name: string
  intervalMs?: number
}

export class ReputationSaver {
  private saved = 0
  private savedAt = -Infinity
  private saving: Promise<void> | undefined
  private later: Cancel | undefined
  private flushing = false

  constructor (private readonly options: ReputationSaverOptions) {}

  /** Read back the view kept before a restart; one that does not load is set aside, with a warning. */
  async load (): Promise<void> {
    const { view, log, name } = this.options
    const snapshot = await this.options.get()
    if (snapshot !== undefined) {
      try {
        view.load(snapshot)
      } catch (err) {
        log.warn(`the stored ${name} does not load; starting from no history`, { error: err })
      }
    }
    this.saved = view.changes
  }

  /** The view may have changed: write it now or when the interval allows. */
  save (): void {
    const { view, scheduler } = this.options
    if (this.saving !== undefined || this.later !== undefined) return
    if (view.changes === this.saved) return
    const due = this.savedAt + (this.options.intervalMs ?? REPUTATION_SAVE_INTERVAL_MS)
    if (!this.flushing && scheduler.now() < due) {
      this.later = scheduler.at(due, () => { this.later = undefined; this.save() })
      return
    }
    this.savedAt = scheduler.now()
    this.saved = view.changes
    const snapshot = view.snapshot()
    this.saving = (async () => {
      await this.options.put(snapshot).catch((err: unknown) => {
        this.options.log.error(`cannot save the ${this.options.name}`, { error: err })
      })
      this.saving = undefined
      this.save()
    })()
  }

  /** Write what changed at once and wait for it (the daemon's stop). */
  async flush (): Promise<void> {
    this.flushing = true
    this.later?.()
    this.later = undefined
    await this.saving
    this.save()
    await this.saving
  }
}
