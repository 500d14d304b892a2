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
 */
import { constants } from 'node:fs'
import { chmod, mkdir, open, readFile, readdir, rename, rm, stat, unlink } from 'node:fs/promises'
import { join } from 'node:path'
import type { PeerId } from '@libp2p/interface'
import { CID, SHA2_256, cidMatches, cidOfRaw, cidOfValue, decodeCanonical } from '../../crypto/index.js'
import { randomNonce } from '../random.js'

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

  private constructor (readonly dir: string) {}

  /** Open (creating if needed) the store in `dir`, and clear temporary files a crash left behind. */
  static async open (dir: string): Promise<BlobStore> {
    try {
      await mkdir(dir, { recursive: true, mode: 0o700 })
      await chmod(dir, 0o700)
      for (const name of await readdir(dir)) {
        if (name.startsWith(TMP_PREFIX)) await rm(join(dir, name), { force: true })
      }
    } catch (err) {
      throw ioError(err, `cannot open the blob store ${dir}`)
    }
    return new BlobStore(dir)
  }

  private pathOf (cid: CID): string {
    return join(this.dir, cid.toString())
  }

  /** Store raw bytes under CIDv1(raw, sha2-256). Idempotent: the same bytes give the same CID. */
  async put (bytes: Uint8Array): Promise<StoredBlob> {
    return await this.putWithCid(cidOfRaw(bytes), bytes)
  }

  /** Store a value as canonical DAG-CBOR under its dag-cbor CID (e.g. an output manifest). */
  async putCbor (value: unknown): Promise<StoredBlob> {
    const { cid, bytes } = cidOfValue(value)
    return await this.putWithCid(cid, bytes)
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

  allowed (cid: CID, peer: PeerId | string): boolean {
    const key = cid.toString()
    return this.publicGrants.has(key) || (this.grants.get(key)?.has(peer.toString()) ?? false)
  }
}
