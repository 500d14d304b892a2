/**
 * Time for the market's components (DESIGN §1, §8): `now()` and `at(t, fn) → cancel`. Every market
 * component in node/ takes one, so the daemon runs on the wall clock (node/market/real-scheduler.ts)
 * and tests and the simulator run the same code on virtual time (`VirtualScheduler` below). No market
 * code calls `setTimeout` or `Date.now` itself.
 *
 * The contract both implementations keep:
 * - `at(t, fn)` calls `fn` once, when `now() >= t` (never before: a caller may rely on it); a `t` in
 *   the past runs as soon as possible, after the caller returns — never synchronously inside `at`.
 * - The returned function cancels the call if it has not run yet; calling it again does nothing.
 * - Calls due at the same time run in the order they were scheduled.
 */
export interface Scheduler {
  now: () => number
  at: (t: number, fn: () => void) => Cancel
}

/** Cancels a scheduled call; idempotent. */
export type Cancel = () => void

/** A running series (VirtualScheduler.series). */
export interface Series {
  /**
   * Run the series' next step no later than `t` (not before now), in the series' own place among the calls
   * due then; after the series ended, it starts again with a step at `t`. Not to be called from its own step.
   */
  wake: (t: number) => void
}

interface Entry {
  t: number
  seq: number
  fn: () => void
  cancelled: boolean
  /** A series' step (`series`): runs at `t`, says when it runs next (undefined: done). */
  again?: () => number | undefined
}

/**
 * A virtual clock: time moves only when the owner runs the queue. Deterministic (ties by scheduling
 * order), so the same inputs give the same run. A binary heap: `at` and each step are O(log n).
 */
export class VirtualScheduler implements Scheduler {
  private time: number
  private seq = 0
  private readonly heap: Entry[] = []
  private live = 0

  constructor (start = 0) {
    this.time = start
  }

  now (): number {
    return this.time
  }

  at (t: number, fn: () => void): Cancel {
    const entry: Entry = { t: this.clamp(t), seq: this.seq++, fn, cancelled: false }
    this.push(entry)
    this.live++
    return () => {
      if (entry.cancelled) return
      entry.cancelled = true
      this.live--
    }
  }

  /**
   * A series of calls decided together now, at non-decreasing times, each holding the place in the order
   * that its own `at` made now would hold: `step` runs at `first` and returns when it runs next (undefined:
   * the series is over). A call of another owner due at the same instant runs before a step if it was
   * scheduled before this call, after it otherwise — exactly as if every step had been scheduled now, one
   * after another. One heap entry for the whole series (a gossip publish's deliveries, grouped by instant:
   * harness/bus.ts) instead of one per step; it counts as one pending call until it ends. A next time
   * earlier than the one just run is taken as that one; a series never runs steps due at Infinity.
   */
  series (first: number, step: () => number | undefined): Series {
    let entry: Entry = { t: this.clamp(first), seq: this.seq++, fn: () => {}, cancelled: false, again: step }
    this.push(entry)
    this.live++
    return {
      // a step due sooner than the series' next one (or after it ended): the same seq, so the same place
      // among calls due then; the entry it replaces stays in the heap, cancelled, and is dropped unrun
      wake: (t) => {
        const at = this.clamp(t)
        if (!entry.cancelled && entry.t <= at) return
        if (entry.cancelled) this.live++
        entry.cancelled = true
        entry = { t: at, seq: entry.seq, fn: entry.fn, cancelled: false, again: step }
        this.push(entry)
      }
    }
  }

  /** Calls scheduled and neither run nor cancelled. */
  get pending (): number {
    return this.live
  }

  /** When the next call is due, or undefined when none is. */
  next (): number | undefined {
    this.dropCancelled()
    return this.heap[0]?.t
  }

  /** Run the next due call (moving the clock to its time); false when none is left. */
  step (): boolean {
    this.dropCancelled()
    const entry = this.pop()
    if (entry === undefined || entry.t === Infinity) {
      if (entry !== undefined) this.push(entry)
      return false
    }
    this.time = Math.max(this.time, entry.t)
    if (entry.again !== undefined) {
      const next = entry.again()
      if (next !== undefined) {
        // the same entry, the same seq: its place among calls due at the next instant is the series' own
        entry.t = Math.max(this.clamp(next), entry.t)
        this.push(entry)
        return true
      }
    }
    this.live--
    entry.cancelled = true
    if (entry.again === undefined) entry.fn()
    return true
  }

  /** A due time as the queue keeps it: not before now, Infinity for +Infinity, now for NaN or -Infinity. */
  private clamp (t: number): number {
    return Number.isFinite(t) ? Math.max(t, this.time) : (t > 0 ? Infinity : this.time)
  }

  /**
   * Run every call due up to `t` (calls they schedule included), then set the clock to `t`. Returns how
   * many ran. `maxSteps` guards against a component that reschedules itself forever at one instant.
   */
  runUntil (t: number, maxSteps = 10_000_000): number {
    let steps = 0
    for (let due = this.next(); due !== undefined && due <= t; due = this.next()) {
      if (steps++ >= maxSteps) throw new Error(`VirtualScheduler: more than ${maxSteps} calls before ${t}`)
      this.step()
    }
    this.time = Math.max(this.time, t)
    return steps
  }

  /** Move the clock forward by `ms`, running what falls due. */
  advance (ms: number): number {
    return this.runUntil(this.time + Math.max(0, ms))
  }

  /** Run until nothing is scheduled (or `maxSteps` calls ran). Returns how many ran. */
  runAll (maxSteps = 10_000_000): number {
    let steps = 0
    while (this.step()) {
      if (++steps >= maxSteps) throw new Error(`VirtualScheduler: more than ${maxSteps} calls`)
    }
    return steps
  }

  private dropCancelled (): void {
    while (this.heap.length > 0 && (this.heap[0] as Entry).cancelled) this.pop()
  }

  /**
   * Sift up and down by moving a hole, not by swapping pairs (a swap through a destructured array costs
   * an allocation in the hottest loop of a simulation). Entries are ordered by (t, seq), seqs unique.
   */
  private push (entry: Entry): void {
    const h = this.heap
    let i = h.length
    h.push(entry)
    while (i > 0) {
      const parent = (i - 1) >> 1
      const p = h[parent] as Entry
      if (!before(entry, p)) break
      h[i] = p
      i = parent
    }
    h[i] = entry
  }

  private pop (): Entry | undefined {
    const h = this.heap
    const top = h[0]
    const last = h.pop()
    if (top === undefined || last === undefined || h.length === 0) return top
    const n = h.length
    let i = 0
    for (;;) {
      const l = 2 * i + 1
      if (l >= n) break
      const r = l + 1
      let m = l
      if (r < n && before(h[r] as Entry, h[l] as Entry)) m = r
      if (!before(h[m] as Entry, last)) break
      h[i] = h[m] as Entry
      i = m
    }
    h[i] = last
    return top
  }
}

function before (a: Entry, b: Entry): boolean {
  return a.t < b.t || (a.t === b.t && a.seq < b.seq)
}
