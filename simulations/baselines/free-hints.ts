/**
 * A cheap "surely not free" test in front of the exact capacity search, so a matcher that scans a job's
 * candidates cheapest first skips full nodes without touching them.
 *
 * Per node, GPU count g and probe length p (1 ms, 4 ms, 16 ms … 4^15 ms: the largest power of 4 not
 * above the job's duration), `FreeHints` keeps a lower bound on the first instant t at which g GPUs are
 * free over [t, t + p) — a necessary condition for a start at t. The bound stays a bound because the matchers only add work to
 * a timeline (usage only rises) and ask with a `from` that never goes back in time (jobs are handled in
 * time order); a query with an earlier `from` than the last one is answered without the hint, and a job
 * shorter than 1 ms is checked without it too.
 *
 * `CandidateScan` puts those bounds over a fleet group's nodes (cheapest first, fit.ts) in a min segment
 * tree, so "the next node whose bound is ≤ latest" is O(log n) however many full nodes lie before it. A
 * node is in one group, so its bounds live in one tree each; where a bound rose outside a scan (a random
 * draw's check) the tree holds an older, lower value — still a lower bound, refreshed when a scan reaches it.
 */
import type { FleetCapacity, GpuTimeline } from '../capacity.js'
import type { FleetNode } from '../model.js'

interface Hint { timeline: GpuTimeline, from: number, firstFree: Float64Array }

/** Probe lengths 4^0 … 4^(PROBES − 1) ms. */
const PROBES = 16

/** The probe for a job of `durationMs` (≥ 1): the index of the largest power of 4 ≤ it. */
export function probeFor (durationMs: number): number {
  let k = 0
  let p = 1
  while (k < PROBES - 1 && p * 4 <= durationMs) {
    p *= 4
    k++
  }
  return k
}

export class FreeHints {
  private readonly byNode = new Map<FleetNode, Hint>()

  constructor (private readonly capacity: FleetCapacity) {}

  timeline (node: FleetNode): GpuTimeline {
    return this.hint(node).timeline
  }

  /** The node's current lower bound for (gpus, probe) (+∞ when it has fewer GPUs). */
  bound (node: FleetNode, gpus: number, probe: number): number {
    return gpus > node.gpus ? Number.POSITIVE_INFINITY : this.hint(node).firstFree[gpus * PROBES + probe] as number
  }

  /**
   * The earliest t in [from, latest] at which `gpus` GPUs of the node are free over [t, t + 4^probe ms),
   * or undefined when there is none: no start of a job of at least that length needing them comes earlier.
   */
  firstFree (node: FleetNode, gpus: number, from: number, latest: number, probe: number): number | undefined {
    if (latest < from || gpus > node.gpus) return undefined
    const h = this.hint(node)
    const length = 4 ** probe
    if (from < h.from) return h.timeline.earliestStart(gpus, from, length, latest)
    h.from = from
    const i = gpus * PROBES + probe
    const bound = h.firstFree[i] as number
    if (bound > latest) return undefined
    // the first such instant at all, past `latest` too: the tightest bound for the next query (none → +∞,
    // and usage only rises, so never)
    const t = h.timeline.earliestStart(gpus, Math.max(from, bound), length)
    h.firstFree[i] = t ?? Number.POSITIVE_INFINITY
    return t !== undefined && t <= latest ? t : undefined
  }

  private hint (node: FleetNode): Hint {
    let h = this.byNode.get(node)
    if (h === undefined) {
      h = { timeline: this.capacity.timeline(node.id), from: Number.NEGATIVE_INFINITY, firstFree: new Float64Array((node.gpus + 1) * PROBES).fill(Number.NEGATIVE_INFINITY) }
      this.byNode.set(node, h)
    }
    return h
  }
}

/** A min segment tree of free-instant bounds over one candidate list, for one GPU count. */
class BoundTree {
  private readonly size: number
  private readonly tree: Float64Array

  constructor (readonly length: number) {
    let size = 1
    while (size < length) size *= 2
    this.size = size
    this.tree = new Float64Array(2 * size).fill(Number.POSITIVE_INFINITY)
    for (let i = 0; i < length; i++) this.tree[size + i] = Number.NEGATIVE_INFINITY
    for (let i = size - 1; i >= 1; i--) this.tree[i] = Math.min(this.tree[2 * i] as number, this.tree[2 * i + 1] as number)
  }

  set (i: number, value: number): void {
    let k = this.size + i
    this.tree[k] = value
    for (k >>= 1; k >= 1; k >>= 1) this.tree[k] = Math.min(this.tree[2 * k] as number, this.tree[2 * k + 1] as number)
  }

  /** The first index ≥ from whose value is ≤ x, or −1. */
  firstAtMost (from: number, x: number): number {
    return from >= this.length ? -1 : this.descend(1, 0, this.size, from, x)
  }

  private descend (k: number, lo: number, hi: number, from: number, x: number): number {
    if (hi <= from || (this.tree[k] as number) > x) return -1
    if (hi - lo === 1) return lo
    const mid = (lo + hi) >> 1
    const left = this.descend(2 * k, lo, mid, from, x)
    return left >= 0 ? left : this.descend(2 * k + 1, mid, hi, from, x)
  }
}

/** Walks a group's nodes (cheapest first) over only those that may have a job's GPUs free in time. */
export class CandidateScan {
  private readonly trees = new WeakMap<readonly FleetNode[], Array<BoundTree | undefined>>()

  constructor (readonly hints: FreeHints) {}

  /**
   * Calls `visit(node, firstFree)` for each candidate, in list order, that has `gpus` GPUs free over
   * [t, t + 4^probe) for some t in [from, latest()] (firstFree: the earliest), until `visit` returns false. `latest` is read
   * before each step, so the caller may narrow it as it finds better candidates.
   */
  scan (candidates: readonly FleetNode[], gpus: number, probe: number, from: number, latest: () => number, visit: (node: FleetNode, firstFree: number) => boolean): void {
    let trees = this.trees.get(candidates)
    if (trees === undefined) {
      trees = []
      this.trees.set(candidates, trees)
    }
    let tree = trees[gpus * PROBES + probe]
    if (tree === undefined) {
      tree = new BoundTree(candidates.length)
      trees[gpus * PROBES + probe] = tree
    }
    let i = 0
    for (;;) {
      const until = latest()
      i = tree.firstAtMost(i, until)
      if (i < 0) return
      const node = candidates[i] as FleetNode
      const first = this.hints.firstFree(node, gpus, from, until, probe)
      tree.set(i, this.hints.bound(node, gpus, probe))
      if (first !== undefined && !visit(node, first)) return
      i++
    }
  }
}
