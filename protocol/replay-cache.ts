/**
 * Remembers recently accepted messages until they expire, so a replayed one is refused
 * (DESIGN §3). Time is passed in; nothing here reads a clock.
 *
 * Memory is bounded: entries are dropped once expired, and when the cache is full the entry that
 * expires soonest goes first (it is the least useful). Size the capacity to the expected rate ×
 * the lifetimes in use; a message can only be replayed after its entry was evicted *and* while it is
 * still fresh, so `evictedUnexpired` counts the exposure and belongs on a metric.
 */
export const DEFAULT_REPLAY_CACHE_CAPACITY = 100_000

export class ReplayCache {
  private readonly expiries = new Map<string, number>()
  /** Min-heap of [expiresAt, key]; may hold stale pairs for keys already gone (lazy deletion). */
  private readonly heap: Array<[number, string]> = []
  evictedUnexpired = 0

  constructor (readonly capacity: number = DEFAULT_REPLAY_CACHE_CAPACITY) {
    if (!Number.isInteger(capacity) || capacity < 1) throw new RangeError('capacity must be a positive integer')
  }

  get size (): number {
    return this.expiries.size
  }

  /** True when `key` was recorded and has not expired at `now`. */
  has (key: string, now: number): boolean {
    const expiresAt = this.expiries.get(key)
    return expiresAt !== undefined && expiresAt > now
  }

  /**
   * Record `key` until `expiresAt`. Returns false (and records nothing) when it is already there:
   * that is a replay.
   */
  add (key: string, expiresAt: number, now: number): boolean {
    this.prune(now)
    if (this.has(key, now)) return false
    this.expiries.set(key, expiresAt)
    this.push([expiresAt, key])
    while (this.expiries.size > this.capacity) {
      const [soonest, victim] = this.pop()
      if (this.expiries.get(victim) === soonest) {
        this.expiries.delete(victim)
        if (soonest > now) this.evictedUnexpired++
      }
    }
    return true
  }

  /** Drop every entry that has expired at `now`. */
  prune (now: number): void {
    while (this.heap.length > 0 && (this.heap[0] as [number, string])[0] <= now) {
      const [expiresAt, key] = this.pop()
      if (this.expiries.get(key) === expiresAt) this.expiries.delete(key)
    }
    // stale heap pairs (keys re-added or evicted) are skipped above; keep the heap from growing
    // without bound when many of them pile up
    if (this.heap.length > 2 * this.capacity + 1024) this.rebuild()
  }

  private rebuild (): void {
    this.heap.length = 0
    for (const [key, expiresAt] of this.expiries) this.push([expiresAt, key])
  }

  private push (item: [number, string]): void {
    const heap = this.heap
    heap.push(item)
    let i = heap.length - 1
    while (i > 0) {
      const parent = (i - 1) >> 1
      if ((heap[parent] as [number, string])[0] <= item[0]) break
      heap[i] = heap[parent] as [number, string]
      i = parent
    }
    heap[i] = item
  }

  private pop (): [number, string] {
    const heap = this.heap
    const top = heap[0] as [number, string]
    const last = heap.pop() as [number, string]
    if (heap.length > 0) {
      let i = 0
      for (;;) {
        const left = 2 * i + 1
        const right = left + 1
        let smallest = i
        let value = last[0]
        if (left < heap.length && (heap[left] as [number, string])[0] < value) { smallest = left; value = (heap[left] as [number, string])[0] }
        if (right < heap.length && (heap[right] as [number, string])[0] < value) smallest = right
        if (smallest === i) break
        heap[i] = heap[smallest] as [number, string]
        i = smallest
      }
      heap[i] = last
    }
    return top
  }
}
