/**
 * A binary min-heap of (time, item) pairs in typed arrays, reused across calls: the overlay models'
 * event queue. `clear()` keeps the storage, so a lookup or a publish allocates nothing once the heap
 * has grown to its working size. Equal times pop in item order, so a run never depends on how the
 * heap happens to break ties.
 */
export class TimeHeap {
  private times: Float64Array
  private items: Int32Array
  private count = 0

  constructor (capacity = 64) {
    this.times = new Float64Array(Math.max(1, capacity))
    this.items = new Int32Array(Math.max(1, capacity))
  }

  get size (): number {
    return this.count
  }

  clear (): void {
    this.count = 0
  }

  /** The earliest time in the heap (undefined when empty). */
  peekTime (): number | undefined {
    return this.count > 0 ? this.times[0] : undefined
  }

  push (time: number, item: number): void {
    if (this.count === this.times.length) this.grow()
    let i = this.count++
    const times = this.times
    const items = this.items
    while (i > 0) {
      const parent = (i - 1) >> 1
      const pt = times[parent] as number
      if (pt < time || (pt === time && (items[parent] as number) <= item)) break
      times[i] = pt
      items[i] = items[parent] as number
      i = parent
    }
    times[i] = time
    items[i] = item
  }

  /** Removes the earliest entry and returns its item; `lastTime` holds its time. -1 when empty. */
  pop (): number {
    if (this.count === 0) return -1
    const times = this.times
    const items = this.items
    const top = items[0] as number
    this.lastTime = times[0] as number
    const n = --this.count
    if (n > 0) {
      const t = times[n] as number
      const it = items[n] as number
      let i = 0
      while (true) {
        const l = 2 * i + 1
        if (l >= n) break
        const r = l + 1
        let c = l
        if (r < n) {
          const lt = times[l] as number
          const rt = times[r] as number
          if (rt < lt || (rt === lt && (items[r] as number) < (items[l] as number))) c = r
        }
        const ct = times[c] as number
        if (ct > t || (ct === t && (items[c] as number) >= it)) break
        times[i] = ct
        items[i] = items[c] as number
        i = c
      }
      times[i] = t
      items[i] = it
    }
    return top
  }

  /** The time of the entry `pop()` last returned. */
  lastTime = 0

  private grow (): void {
    const times = new Float64Array(this.times.length * 2)
    times.set(this.times)
    const items = new Int32Array(this.items.length * 2)
    items.set(this.items)
    this.times = times
    this.items = items
  }
}
