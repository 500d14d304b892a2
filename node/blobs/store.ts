/**
 * Content-addressed files (DESIGN §6): the inputs and outputs of jobs, kept in `<dataDir>/blobs`
 * (mode 0700), one file per blob (mode 0600) named by its CID string. Raw blobs are stored under
 * CIDv1(raw, sha2-256); structured documents such as an output manifest `{ files: [{ path, size, cid }] }`
 * under CIDv1(dag-cbor, sha2-256) of their canonical encoding. Writes go to a temporary file that is
 * renamed into place, so a crash never leaves a half-written blob under a real name. Every read re-hashes
 * the file: a blob that changed on disk is an error (CORRUPT), never returned.
 *
 * Serving grants (which peer may fetch which CID over /gpumesh/blob/1.0.0) are kept in memory only and
 * are not re-made after a restart (issue 12, restart recovery): a provider that restarts cannot hand its
 * outputs over, a requester that restarts cannot serve its inputs to a provider still fetching them.
 * A public grant (`grantPublic`) lets any peer fetch a CID: the inputs of a job this node proved wrong
 * in a fraud proof that could not embed them, so third parties can check the proof (protocol/README §5.9).
 *
 * Job inputs this node fetched as a provider (`keepInput`) are a cache (input-cache.ts): kept by CID
 * after the job, so a later job with the same input neither fetches it again nor bids without saying
 * so (protocol/README §5.4 `cached`), and evicted least recently used first beyond the cap. Everything
 * else the node stores (`put`, `putCbor`, `importFile`: its own inputs and outputs) is never evicted; a
 * cached blob stored that way becomes the node's own and leaves the cache.
 */
import { constants } from 'node:fs'
import { chmod, mkdir, open, readFile, readdir, rename, rm, stat, unlink } from 'node:fs/promises'
import { join } from 'node:path'
import type { PeerId } from '@libp2p/interface'
import { CID, SHA2_256, cidMatches, cidOfRaw, cidOfValue, decodeCanonical } from '../../crypto/index.js'
import { randomNonce } from '../random.js'
import { DEFAULT_INPUT_CACHE_MIB, INPUT_CACHE_INDEX, InputCache } from './input-cache.js'

export interface BlobStoreOptions {
  /** The input cache's cap in bytes (0: keep no fetched input once its job is done). Default 10240 MiB. */
  inputCacheBytes?: number
}

/** CIDs granted to every peer at most (the oldest grant gives way). */
export const MAX_PUBLIC_GRANTS = 4096

export type BlobErrorCode = 'NOT_FOUND' | 'CORRUPT' | 'TOO_LARGE' | 'NOT_A_FILE' | 'IO'

export class BlobError extends Error {
  override readonly name = 'BlobError'
  constructor (readonly code: BlobErrorCode, message: string) {
    super(message)
  }
}

export interface StoredBlob {
  cid: CID
  size: number
}

/** Temporary files start with a dot, so they never collide with a CID string. */
const TMP_PREFIX = '.tmp-'

/** The store holds only CIDv1 with sha2-256 (raw or dag-cbor); any other CID is never present. */
function supported (cid: CID): boolean {
  return cid.version === 1 && cid.multihash.code === SHA2_256
}

function ioError (err: unknown, what: string): BlobError {
  return new BlobError('IO', `${what}: ${(err as Error).message}`)
}

const errnoOf = (err: unknown): string | undefined => (err as NodeJS.ErrnoException | undefined)?.code

export class BlobStore {
  /** cid string → peer ids allowed to fetch it (in memory; see the file comment). */
  private readonly grants = new Map<string, Set<string>>()
  /** CID strings any peer may fetch, oldest first. */
  private readonly publicGrants = new Set<string>()

  /** Index writes, one after another (each writes the whole index as it is then). */
  private indexWrite: Promise<void> = Promise.resolve()

  private constructor (readonly dir: string, readonly inputs: InputCache) {}

  /**
   * Open (creating if needed) the store in `dir`, clear temporary files a crash left behind, and load
   * the input cache's index (entries whose file is gone are dropped; over the cap, evicted).
   */
  static async open (dir: string, options: BlobStoreOptions = {}): Promise<BlobStore> {
    const cache = new InputCache(options.inputCacheBytes ?? DEFAULT_INPUT_CACHE_MIB * 1024 * 1024)
    let names: string[]
    try {
      await mkdir(dir, { recursive: true, mode: 0o700 })
      await chmod(dir, 0o700)
      names = await readdir(dir)
      for (const name of names) {
        if (name.startsWith(TMP_PREFIX)) await rm(join(dir, name), { force: true })
      }
    } catch (err) {
      throw ioError(err, `cannot open the blob store ${dir}`)
    }
    if (names.includes(INPUT_CACHE_INDEX)) {
      const present = new Set(names)
      const text = await readFile(join(dir, INPUT_CACHE_INDEX), 'utf8').catch((err: unknown) => { throw ioError(err, 'cannot read the input cache index') })
      for (const [cid, entry] of InputCache.parse(text)) if (present.has(cid)) cache.add(cid, entry)
    }
    const store = new BlobStore(dir, cache)
    await store.evictInputs(false)
    return store
  }

  private pathOf (cid: CID): string {
    return join(this.dir, cid.toString())
  }

  /** Store raw bytes under CIDv1(raw, sha2-256), as the node's own (never evicted). Idempotent. */
  async put (bytes: Uint8Array): Promise<StoredBlob> {
    return await this.putOwn(cidOfRaw(bytes), bytes)
  }

  /** Store a value as canonical DAG-CBOR under its dag-cbor CID (e.g. an output manifest), as the node's own. */
  async putCbor (value: unknown): Promise<StoredBlob> {
    const { cid, bytes } = cidOfValue(value)
    return await this.putOwn(cid, bytes)
  }

  /** The node's own blob: a cached input with the same CID leaves the cache, so it is never evicted. */
  private async putOwn (cid: CID, bytes: Uint8Array): Promise<StoredBlob> {
    const stored = await this.putWithCid(cid, bytes)
    if (this.inputs.remove(cid.toString())) await this.saveIndex()
    return stored
  }

  /**
   * Store `bytes` under `cid` after checking that they hash to it (BlobError CORRUPT otherwise); used for
   * blobs fetched from peers, whose codec may be raw or dag-cbor. Rewriting an existing blob replaces it
   * atomically, which also repairs a copy damaged on disk.
   */
  async putWithCid (cid: CID, bytes: Uint8Array): Promise<StoredBlob> {
    if (!supported(cid) || !cidMatches(cid, bytes)) throw new BlobError('CORRUPT', `bytes do not hash to ${cid.toString()}`)
    const tmp = join(this.dir, `${TMP_PREFIX}${Buffer.from(randomNonce()).toString('hex')}`)
    try {
      const file = await open(tmp, 'wx', 0o600)
      try {
        await file.writeFile(bytes)
        await file.sync()
      } finally {
        await file.close()
      }
      await rename(tmp, this.pathOf(cid))
    } catch (err) {
      await rm(tmp, { force: true }).catch(() => {})
      throw ioError(err, `cannot store ${cid.toString()}`)
    }
    return { cid, size: bytes.byteLength }
  }

  /** The blob's bytes, re-hashed on read; undefined when absent; BlobError CORRUPT when they changed. */
  async get (cid: CID): Promise<Uint8Array | undefined> {
    if (!supported(cid)) return undefined
    let bytes: Uint8Array
    try {
      bytes = new Uint8Array(await readFile(this.pathOf(cid)))
    } catch (err) {
      if (errnoOf(err) === 'ENOENT') return undefined
      throw ioError(err, `cannot read ${cid.toString()}`)
    }
    if (!cidMatches(cid, bytes)) throw new BlobError('CORRUPT', `blob ${cid.toString()} changed on disk (hash mismatch)`)
    return bytes
  }

  /** A stored DAG-CBOR document, decoded (canonical encoding required); undefined when absent. */
  async getCbor (cid: CID): Promise<unknown> {
    const bytes = await this.get(cid)
    return bytes === undefined ? undefined : decodeCanonical(bytes)
  }

  async has (cid: CID): Promise<boolean> {
    return (await this.size(cid)) !== undefined
  }

  /** Size in bytes of a stored blob (from the file system, not re-hashed), or undefined. */
  async size (cid: CID): Promise<number | undefined> {
    if (!supported(cid)) return undefined
    try {
      const info = await stat(this.pathOf(cid))
      return info.isFile() ? info.size : undefined
    } catch (err) {
      if (errnoOf(err) === 'ENOENT') return undefined
      throw ioError(err, `cannot stat ${cid.toString()}`)
    }
  }

  /**
   * Store a local regular file of at most `maxBytes` as a raw blob. A symbolic link as the last path
   * component is refused unless `followSymlinks` (job outputs must never follow links out of their work
   * dir); FIFOs, devices and directories are refused (NOT_A_FILE) without blocking on them.
   */
  async importFile (path: string, maxBytes: number, options: { followSymlinks?: boolean } = {}): Promise<StoredBlob> {
    const flags = constants.O_RDONLY | constants.O_NONBLOCK | (options.followSymlinks === true ? 0 : constants.O_NOFOLLOW)
    let file
    try {
      file = await open(path, flags)
    } catch (err) {
      const code = errnoOf(err)
      if (code === 'ENOENT') throw new BlobError('NOT_FOUND', `${path}: no such file`)
      if (code === 'ELOOP') throw new BlobError('NOT_A_FILE', `${path} is a symbolic link`)
      if (code === 'EISDIR') throw new BlobError('NOT_A_FILE', `${path} is a directory`)
      throw ioError(err, `cannot open ${path}`)
    }
    try {
      const info = await file.stat()
      if (!info.isFile()) throw new BlobError('NOT_A_FILE', `${path} is not a regular file`)
      if (info.size > maxBytes) throw new BlobError('TOO_LARGE', `${path} is ${info.size} bytes, over the limit of ${maxBytes}`)
      // read one byte past the size seen: a file that grows meanwhile is refused, not cut short
      const buffer = new Uint8Array(info.size + 1)
      let length = 0
      while (length < buffer.byteLength) {
        const { bytesRead } = await file.read(buffer, length, buffer.byteLength - length, length)
        if (bytesRead === 0) break
        length += bytesRead
      }
      if (length !== info.size) throw new BlobError('IO', `${path} changed while it was being read`)
      return await this.put(buffer.subarray(0, length))
    } catch (err) {
      if (err instanceof BlobError) throw err
      throw ioError(err, `cannot read ${path}`)
    } finally {
      await file.close()
    }
  }

  /** Delete a blob and its grants; absent blobs are fine. */
  async remove (cid: CID): Promise<void> {
    this.grants.delete(cid.toString())
    this.publicGrants.delete(cid.toString())
    if (this.inputs.remove(cid.toString())) await this.saveIndex()
    if (!supported(cid)) return
    try {
      await unlink(this.pathOf(cid))
    } catch (err) {
      if (errnoOf(err) !== 'ENOENT') throw ioError(err, `cannot remove ${cid.toString()}`)
    }
  }

  /** Allow `peer` to fetch `cid` from this node (in memory only). */
  grant (cid: CID, peer: PeerId | string): void {
    const key = cid.toString()
    let peers = this.grants.get(key)
    if (peers === undefined) this.grants.set(key, peers = new Set())
    peers.add(peer.toString())
  }

  revoke (cid: CID, peer: PeerId | string): void {
    const key = cid.toString()
    const peers = this.grants.get(key)
    peers?.delete(peer.toString())
    if (peers?.size === 0) this.grants.delete(key)
  }

  /** Allow every peer to fetch `cid` from this node (in memory only; at most MAX_PUBLIC_GRANTS). */
  grantPublic (cid: CID): void {
    const key = cid.toString()
    this.publicGrants.delete(key)
    this.publicGrants.add(key)
    if (this.publicGrants.size > MAX_PUBLIC_GRANTS) this.publicGrants.delete(this.publicGrants.values().next().value as string)
  }

  /** Whether any peer may fetch `cid` (a grant to someone, or public). */
  private granted (cid: string): boolean {
    return this.publicGrants.has(cid) || this.grants.has(cid)
  }

  // ---------------------------------------------------------------------------------------------
  // The input cache (input-cache.ts)
  // ---------------------------------------------------------------------------------------------

  /**
   * Keep `cid`, a job input this node just fetched (a blob, or an input manifest with the CIDs of the
   * blobs it names), as the most recently used cached input; then evict beyond the cap. Only for a blob
   * fetched because the node did not hold it: one it holds (its own, or cached) is read, not kept.
   */
  async keepInput (cid: CID, size: number, files?: readonly CID[]): Promise<void> {
    this.inputs.add(cid.toString(), { size, ...(files !== undefined ? { files: files.map((f) => f.toString()) } : {}) })
    await this.evictInputs(true)
  }

  /** A cached input was read for a job: it becomes the most recently used (no-op when not cached). */
  async useInput (cid: CID): Promise<void> {
    if (this.inputs.touch(cid.toString())) await this.saveIndex()
  }

  /** Which of `cids` (a job's inputs) this node holds as cached inputs, as strings, in the given order. */
  heldInputs (cids: readonly CID[]): string[] {
    return cids.map((c) => c.toString()).filter((c) => this.inputs.holds(c))
  }

  /** A running job reads `cid`: it is not evicted until unpinned (as often as pinned). */
  pinInput (cid: CID): void {
    this.inputs.pin(cid.toString())
  }

  /** The job is done with `cid`: it may be evicted again (and is, when the cache is over its cap). */
  async unpinInput (cid: CID): Promise<void> {
    this.inputs.unpin(cid.toString())
    await this.evictInputs(false)
  }

  /** Evict what the cap and the pins allow and delete those files; write the index if anything changed. */
  private async evictInputs (changed: boolean): Promise<void> {
    const evicted = this.inputs.evict((c) => this.granted(c))
    // the files first: a crash in between leaves index entries without a file, which open() drops
    // (the reverse would leave files no index names, never evicted)
    for (const key of evicted) {
      await unlink(join(this.dir, key)).catch((err: unknown) => {
        if (errnoOf(err) !== 'ENOENT') throw ioError(err, `cannot evict ${key}`)
      })
    }
    if (changed || evicted.length > 0) await this.saveIndex()
  }

  /** Write the index atomically (a temporary file renamed into place), after any write before it. */
  private async saveIndex (): Promise<void> {
    const text = this.inputs.serialize()
    const write = this.indexWrite.then(async () => {
      const tmp = join(this.dir, `${TMP_PREFIX}${Buffer.from(randomNonce()).toString('hex')}`)
      try {
        const file = await open(tmp, 'wx', 0o600)
        try {
          await file.writeFile(text)
          await file.sync()
        } finally {
          await file.close()
        }
        await rename(tmp, join(this.dir, INPUT_CACHE_INDEX))
      } catch (err) {
        await rm(tmp, { force: true }).catch(() => {})
        throw ioError(err, 'cannot write the input cache index')
      }
    })
    this.indexWrite = write.catch(() => {})
    await write
  }

  allowed (cid: CID, peer: PeerId | string): boolean {
    const key = cid.toString()
    return this.publicGrants.has(key) || (this.grants.get(key)?.has(peer.toString()) ?? false)
  }
}
