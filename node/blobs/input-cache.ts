/**
 * The provider's input cache (issue 12, data-aware placement): which blobs in the store are job inputs
 * fetched from requesters, in least- to most-recently-used order, and how many bytes they take. Only
 * these blobs are ever evicted: the node's own submitted inputs, the outputs it produced or fetched, and
 * everything else it put are not in the index, so the cap never removes them.
 *
 * The order is kept in `<blobs>/.input-cache.json` (written atomically on every change), so recency
 * survives a restart. An index entry whose file is gone (removed by hand) is dropped on open; a blob
 * file the index does not name is not the cache's and is left alone.
 *
 * Eviction (`victims`) walks from the least recently used and skips a blob that is pinned (a running
 * job reads it) or that a peer may fetch (a grant), until the cached bytes are at most the cap; what it
 * cannot evict now waits for the next change (an unpin re-runs it). A cap of 0 keeps nothing once the
 * job that fetched it is done.
 */

/** The default cap, MiB (config `provider.inputCacheMiB`). */
export const DEFAULT_INPUT_CACHE_MIB = 10_240

/** The index file's name in the blob directory (a dot name: never a CID string, never a temporary). */
export const INPUT_CACHE_INDEX = '.input-cache.json'

export interface CachedInput {
  /** Bytes of this blob's file. */
  size: number
  /** For an input manifest (dag-cbor): the CIDs (strings) of the blobs it names, held only when all are. */
  files?: string[]
}

/** The index file: version 1, entries least recently used first. */
interface IndexFile { v: 1, entries: Array<[string, number, string[]?]> }

export class InputCache {
  /** CID string → entry; Map order is the recency order, least recently used first. */
  private readonly entries = new Map<string, CachedInput>()
  /** CID string → how many running jobs read it. */
  private readonly pins = new Map<string, number>()
  private total = 0

  constructor (readonly capBytes: number) {
    if (!Number.isSafeInteger(capBytes) || capBytes < 0) throw new RangeError(`input cache cap: expected a whole number of bytes ≥ 0, got ${capBytes}`)
  }

  /** The index as written to disk. */
  serialize (): string {
    const file: IndexFile = { v: 1, entries: [...this.entries].map(([cid, e]) => e.files !== undefined ? [cid, e.size, e.files] : [cid, e.size]) }
    return JSON.stringify(file)
  }

  /** Entries of a serialized index (malformed content gives none: the cache then starts empty). */
  static parse (text: string): Array<[string, CachedInput]> {
    let file: unknown
    try {
      file = JSON.parse(text)
    } catch {
      return []
    }
    const entries = (file as Partial<IndexFile> | null)?.entries
    if ((file as Partial<IndexFile> | null)?.v !== 1 || !Array.isArray(entries)) return []
    const out: Array<[string, CachedInput]> = []
    for (const e of entries as unknown[]) {
      if (!Array.isArray(e)) continue
      const [cid, size, files] = e as [unknown, unknown, unknown]
      if (typeof cid !== 'string' || !Number.isSafeInteger(size) || (size as number) < 0) continue
      const list = Array.isArray(files) && files.every((f) => typeof f === 'string') ? { files: files as string[] } : {}
      out.push([cid, { size: size as number, ...list }])
    }
    return out
  }

  /** Bytes the cached inputs take. */
  get bytes (): number { return this.total }
  get size (): number { return this.entries.size }

  has (cid: string): boolean { return this.entries.has(cid) }

  /** An input is held when its blob is cached and, for a manifest, every blob it names is too. */
  holds (cid: string): boolean {
    const e = this.entries.get(cid)
    return e !== undefined && (e.files ?? []).every((f) => this.entries.has(f))
  }

  /** CIDs, least recently used first. */
  order (): string[] { return [...this.entries.keys()] }

  /** Record `cid` as the most recently used input (new, or moved to the end with its new size). */
  add (cid: string, entry: CachedInput): void {
    this.remove(cid)
    this.entries.set(cid, entry)
    this.total += entry.size
  }

  /** Mark a cached input (and, for a manifest, the blobs it names) used now; false when not cached. */
  touch (cid: string): boolean {
    const e = this.entries.get(cid)
    if (e === undefined) return false
    this.entries.delete(cid)
    this.entries.set(cid, e)
    for (const f of e.files ?? []) this.touch(f)
    return true
  }

  /** Forget `cid` (evicted, or the node now owns it); true when it was cached. */
  remove (cid: string): boolean {
    const e = this.entries.get(cid)
    if (e === undefined) return false
    this.entries.delete(cid)
    this.total -= e.size
    return true
  }

  pin (cid: string): void {
    this.pins.set(cid, (this.pins.get(cid) ?? 0) + 1)
  }

  unpin (cid: string): void {
    const n = (this.pins.get(cid) ?? 0) - 1
    if (n > 0) this.pins.set(cid, n)
    else this.pins.delete(cid)
  }

  pinned (cid: string): boolean { return this.pins.has(cid) }

  /**
   * What to evict to bring the cached bytes to the cap: least recently used first, skipping pinned
   * blobs and those `granted` says a peer may fetch. Removes them from the index; the caller deletes
   * the files.
   */
  evict (granted: (cid: string) => boolean): string[] {
    const out: string[] = []
    for (const [cid, e] of this.entries) {
      if (this.total <= this.capBytes) break
      if (this.pinned(cid) || granted(cid)) continue
      out.push(cid)
      this.entries.delete(cid)
      this.total -= e.size
    }
    return out
  }
}
