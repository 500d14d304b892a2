/**
 * GPU capacity over time, per node: a step function of GPUs in use. The owners' own work is packed
 * onto the fleet with it (workloads/), the baselines place renters' jobs with it, and the report
 * computes offered and sold GPU-hours from it — one timeline type, so every strategy counts capacity
 * the same way.
 *
 * `GpuTimeline` keeps sorted breakpoints: over [times[i], times[i+1]) `used[i]` GPUs are in use
 * (times[0] = −∞, so every instant has a step). Adding an interval splits at its two ends and raises
 * the steps between them; queries binary-search the start and walk the steps the interval covers.
 */

/** An interval would use more GPUs than the node has. */
export class CapacityError extends Error {
  readonly code = 'CAPACITY_EXCEEDED'
  constructor (readonly node: string, readonly start: number, readonly end: number, readonly gpus: number, readonly free: number) {
    super(`node ${node}: ${gpus} GPU(s) over [${start}, ${end}) but only ${free} free`)
    this.name = 'CapacityError'
  }
}

export class GpuTimeline {
  private readonly times: number[] = [Number.NEGATIVE_INFINITY]
  private readonly used: number[] = [0]

  constructor (readonly node: string, readonly gpus: number) {
    if (!Number.isInteger(gpus) || gpus < 0) throw new RangeError(`node ${node}: GPU count must be a whole number ≥ 0, got ${gpus}`)
  }

  /** The most GPUs in use at any instant of [start, end); 0 for an empty interval. */
  usedMax (start: number, end: number): number {
    if (!(end > start)) return 0
    let i = this.stepAt(start)
    let max = 0
    while (i < this.times.length && (this.times[i] as number) < end) {
      max = Math.max(max, this.used[i] as number)
      i++
    }
    return max
  }

  /** GPUs free over the whole of [start, end). */
  free (start: number, end: number): number {
    return this.gpus - this.usedMax(start, end)
  }

  /** GPUs in use at instant t. */
  usedAt (t: number): number {
    return this.used[this.stepAt(t)] as number
  }

  /** Take `n` GPUs over [start, end); throws CapacityError when fewer are free. */
  add (start: number, end: number, n: number): void {
    if (!Number.isInteger(n) || n < 0) throw new RangeError(`GPU count must be a whole number ≥ 0, got ${n}`)
    if (!(end > start) || n === 0) return
    const free = this.free(start, end)
    if (n > free) throw new CapacityError(this.node, start, end, n, free)
    const a = this.split(start)
    const b = this.split(end)
    for (let i = a; i < b; i++) this.used[i] = (this.used[i] as number) + n
  }

  /**
   * The earliest start s ≥ from (and ≤ latest) at which `n` GPUs are free over [s, s + duration);
   * undefined when none. Only `from` and the instants where usage drops can be the earliest start.
   */
  earliestStart (n: number, from: number, duration: number, latest = Number.POSITIVE_INFINITY): number | undefined {
    if (n > this.gpus) return undefined
    if (this.free(from, from + duration) >= n) return from
    for (let i = this.stepAt(from) + 1; i < this.times.length; i++) {
      const t = this.times[i] as number
      if (t > latest) return undefined
      if ((this.used[i] as number) < (this.used[i - 1] as number) && this.free(t, t + duration) >= n) return t
    }
    return undefined
  }

  /** GPU-hours in use over [start, end). */
  usedGpuHours (start: number, end: number): number {
    if (!(end > start)) return 0
    let total = 0
    for (let i = this.stepAt(start); i < this.times.length && (this.times[i] as number) < end; i++) {
      const from = Math.max(this.times[i] as number, start)
      const to = Math.min(i + 1 < this.times.length ? this.times[i + 1] as number : Number.POSITIVE_INFINITY, end)
      total += (this.used[i] as number) * (to - from)
    }
    return total / 3_600_000
  }

  /** The index of the step holding instant t (the last breakpoint ≤ t). */
  private stepAt (t: number): number {
    let lo = 0
    let hi = this.times.length - 1
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1
      if ((this.times[mid] as number) <= t) lo = mid
      else hi = mid - 1
    }
    return lo
  }

  /** Make t a breakpoint; returns its index. */
  private split (t: number): number {
    const i = this.stepAt(t)
    if (this.times[i] === t) return i
    this.times.splice(i + 1, 0, t)
    this.used.splice(i + 1, 0, this.used[i] as number)
    return i + 1
  }
}

/** One timeline per node of a fleet. */
export class FleetCapacity {
  private readonly byNode = new Map<string, GpuTimeline>()

  constructor (nodes: Iterable<{ id: string, gpus: number }>) {
    for (const n of nodes) {
      if (this.byNode.has(n.id)) throw new RangeError(`duplicate node id ${n.id}`)
      this.byNode.set(n.id, new GpuTimeline(n.id, n.gpus))
    }
  }

  timeline (node: string): GpuTimeline {
    const t = this.byNode.get(node)
    if (t === undefined) throw new RangeError(`unknown node ${node}`)
    return t
  }

  nodes (): IterableIterator<GpuTimeline> {
    return this.byNode.values()
  }
}
