/**
 * A size-bounded map that forgets the least recently inserted entry first. Enough for key caches,
 * where a miss costs one recomputation.
 */
export class BoundedCache<K, V> {
  private readonly entries = new Map<K, V>()

  constructor (readonly capacity: number) {
    if (!Number.isInteger(capacity) || capacity < 1) throw new RangeError('capacity must be a positive integer')
  }

  get size (): number {
    return this.entries.size
  }

  get (key: K): V | undefined {
    return this.entries.get(key)
  }

  set (key: K, value: V): void {
    this.entries.delete(key)
    this.entries.set(key, value)
    if (this.entries.size > this.capacity) {
      const oldest = this.entries.keys().next()
      if (oldest.done !== true) this.entries.delete(oldest.value)
    }
  }
}
