/**
 * The provider's I/O around one job run (DESIGN §6), kept apart from the market's bookkeeping in
 * provider.ts: fetching the job's inputs from its requester, keeping the job's log, and turning what
 * the executor produced into blobs, the output manifest and grants for the requester.
 *
 * Inputs (protocol/README §5.3): a raw CID is one file placed at `path`; a dag-cbor CID is a manifest
 * `{ files: [{ path, size, cid }] }` whose files are placed under `path/`, and its `size` bounds the
 * files together. Every byte is hash-checked by the blob service and kept in the blob store, so a
 * blob this node already holds is not fetched again. What it fetched is kept as a cached input (the
 * store's LRU, node/blobs/input-cache.ts), and every blob the job reads is pinned against eviction
 * (`pinned` lists them; the caller unpins when the job is done).
 */
import { CID, DAG_CBOR_CODEC, RAW_CODEC, SHA2_256, decodeCanonical } from '../../crypto/index.js'
import type { JobRequest } from '../../protocol/index.js'
import type { BlobStore } from '../blobs/store.js'
import { buildManifest } from './manifest.js'

/** The largest log kept (and streamed) per job; what comes after is dropped. */
export const MAX_LOG_BYTES = 8 * 1024 * 1024
/** The largest input manifest document fetched. */
export const MAX_INPUT_MANIFEST_BYTES = 1024 * 1024

/** A job's inputs could not be fetched or are not acceptable. */
export class InputError extends Error {
  override readonly name = 'InputError'
}

/** A file for the executor's work dir. */
export interface JobInput { path: string, bytes: Uint8Array }

export interface FetchInputsOptions {
  blobs: BlobStore
  /** Fetch one blob from the requester, at most `maxBytes` (the blob service, hash-checked). */
  fetch: (cid: CID, maxBytes: number, signal: AbortSignal) => Promise<Uint8Array>
  /** All of a job's inputs together may not exceed this. */
  maxBytes: number
  signal: AbortSignal
  /**
   * A provider's own job: what is fetched is kept as a cached input, and every blob read is pinned and
   * added here (once per pin; unpin each when the job is done). Absent (re-execution, fraud checks): the
   * blobs are stored as before and the cache is left alone.
   */
  pinned?: CID[]
}

/** Fetch (or read locally) every input of a job, in the job's order. Throws InputError. */
export async function fetchInputs (inputs: JobRequest['workload']['inputs'], options: FetchInputsOptions): Promise<JobInput[]> {
  const declared = inputs.reduce((sum, i) => sum + i.size, 0)
  if (declared > options.maxBytes) throw new InputError(`the inputs total ${declared} bytes, over this provider's limit of ${options.maxBytes}`)
  const out: JobInput[] = []
  for (const input of inputs) {
    if (input.cid.code === RAW_CODEC) {
      const got = await blob(input.cid, input.size, options)
      if (got.fetched && options.pinned !== undefined) await options.blobs.keepInput(input.cid, got.bytes.byteLength)
      out.push({ path: input.path, bytes: got.bytes })
      continue
    }
    if (input.cid.code !== DAG_CBOR_CODEC) throw new InputError(`input ${input.path}: unsupported CID codec 0x${input.cid.code.toString(16)}`)
    const manifest = await blob(input.cid, MAX_INPUT_MANIFEST_BYTES, options)
    const files = manifestFiles(manifest.bytes, input.path)
    const total = files.reduce((sum, f) => sum + f.size, 0)
    if (total > input.size) throw new InputError(`input ${input.path}: its files total ${total} bytes, more than the ${input.size} declared`)
    if (manifest.fetched && options.pinned !== undefined) await options.blobs.keepInput(input.cid, manifest.bytes.byteLength, files.map((f) => f.cid))
    for (const file of files) {
      const got = await blob(file.cid, file.size, options)
      if (got.fetched && options.pinned !== undefined) await options.blobs.keepInput(file.cid, got.bytes.byteLength)
      out.push({ path: `${input.path}/${file.path}`, bytes: got.bytes })
    }
  }
  return out
}

/**
 * One blob, pinned for the job: the local copy when there is one (a cached input becomes the most
 * recently used), else fetched from the requester and stored (`fetched`: the caller keeps it as a
 * cached input once it knows what it is).
 */
async function blob (cid: CID, maxBytes: number, options: FetchInputsOptions): Promise<{ bytes: Uint8Array, fetched: boolean }> {
  options.signal.throwIfAborted()
  if (options.pinned !== undefined) {
    options.blobs.pinInput(cid)
    options.pinned.push(cid)
  }
  const local = await options.blobs.get(cid).catch(() => undefined)
  if (local !== undefined && local.byteLength <= maxBytes) {
    if (options.pinned !== undefined) await options.blobs.useInput(cid)
    return { bytes: local, fetched: false }
  }
  let bytes: Uint8Array
  try {
    bytes = await options.fetch(cid, maxBytes, options.signal)
  } catch (err) {
    throw new InputError((err as Error).message)
  }
  await options.blobs.putWithCid(cid, bytes)
  return { bytes, fetched: true }
}

/** The files of an input manifest, or InputError. */
function manifestFiles (bytes: Uint8Array, where: string): Array<{ path: string, size: number, cid: CID }> {
  let value: unknown
  try {
    value = decodeCanonical(bytes)
  } catch (err) {
    throw new InputError(`input ${where}: the manifest is not canonical DAG-CBOR (${(err as Error).message})`)
  }
  const files = (value as { files?: unknown } | null)?.files
  if (!Array.isArray(files) || files.length > 4096) throw new InputError(`input ${where}: the manifest is not { files: [...] } of at most 4096 files`)
  return files.map((f: unknown, i) => {
    const { path, size, cid } = (f ?? {}) as { path?: unknown, size?: unknown, cid?: unknown }
    const c = CID.asCID(cid)
    if (typeof path !== 'string' || path === '' || typeof size !== 'number' || !Number.isSafeInteger(size) || size < 0 ||
      c == null || c.version !== 1 || c.code !== RAW_CODEC || c.multihash.code !== SHA2_256) {
      throw new InputError(`input ${where}: manifest file ${i} is not { path, size, cid } with a raw sha2-256 CID`)
    }
    return { path, size, cid: c }
  })
}

/** The line a restarted provider's log starts the new run with (protocol/README.md §7.7 "Resuming"). */
export const RESTART_LOG_LINE = '[gpumesh] the provider restarted: the job runs again from the start\n'

/** RESTART_LOG_LINE, on a line of its own after `held` bytes of the old run's log. */
export function restartLine (held: number): Uint8Array {
  return new TextEncoder().encode((held > 0 ? '\n' : '') + RESTART_LOG_LINE)
}

/**
 * A job's combined stdout/stderr, kept up to a cap; offsets are those streamed to the requester. The
 * kept bytes start at `base`: 0, unless the provider restarted mid-run, when the new run's log goes on
 * after what the requester already holds (rebase, protocol/README.md §7.7 "Resuming").
 */
export class LogBuffer {
  private chunks: Uint8Array[] = []
  private length = 0
  private start = 0
  /** True once something was dropped at the cap. */
  truncated = false

  /** `cap` bounds the end offset (base + kept bytes), as the requester's log cap does. */
  constructor (readonly cap: number = MAX_LOG_BYTES) {}

  /** The offset of the first kept byte. */
  get base (): number {
    return this.start
  }

  /** The end offset: the next byte appended goes here. */
  get size (): number {
    return this.start + this.length
  }

  /** Keep (a copy of) what fits under the cap; returns it with its offset, or undefined when nothing fits. */
  append (data: Uint8Array): { offset: number, data: Uint8Array } | undefined {
    const room = this.cap - this.size
    if (data.byteLength > room) this.truncated = true
    if (room <= 0 || data.byteLength === 0) return undefined
    const kept = data.slice(0, room)
    const offset = this.size
    this.chunks.push(kept)
    this.length += kept.byteLength
    return { offset, data: kept }
  }

  /**
   * Move the kept bytes to start at `base` (before any was streamed), with `lead` in front of them:
   * the log of a run started again after a restart, continuing the requester's copy of the old run's.
   * What no longer fits under the cap is dropped.
   */
  rebase (base: number, lead: Uint8Array): void {
    if (!Number.isSafeInteger(base) || base < 0) throw new RangeError(`log base must be a non-negative integer, got ${base}`)
    const kept = this.bytes()
    this.chunks = []
    this.length = 0
    this.start = Math.min(base, this.cap)
    if (base > this.cap) this.truncated = true
    this.append(lead)
    this.append(kept)
  }

  /** A copy of the bytes kept from offset `from` to `to` (clamped to what is kept). */
  slice (from: number, to: number): Uint8Array {
    const lo0 = Math.max(from, this.start) - this.start
    const end = Math.min(to, this.size) - this.start
    const out = new Uint8Array(Math.max(0, end - lo0))
    let at = 0
    for (const chunk of this.chunks) {
      const lo = Math.max(lo0, at)
      const hi = Math.min(end, at + chunk.byteLength)
      if (lo < hi) out.set(chunk.subarray(lo - at, hi - at), lo - lo0)
      at += chunk.byteLength
      if (at >= end) break
    }
    return out
  }

  /** The kept bytes (from `base`): the receipt's `logs` blob. */
  bytes (): Uint8Array {
    const out = new Uint8Array(this.length)
    let at = 0
    for (const chunk of this.chunks) {
      out.set(chunk, at)
      at += chunk.byteLength
    }
    return out
  }
}

/** What a finished run left for the requester: the manifest, the log blob and the files. */
export interface StoredResult {
  manifest: CID
  /** Absent when the job wrote no log. */
  logs?: CID
  files: Array<{ path: string, size: number, cid: CID }>
}

/**
 * Store the produced outputs (in the job's declared order, only those produced) and the log as
 * blobs, build the manifest, and grant all of it to the requester.
 */
export async function storeResult (
  blobs: BlobStore,
  declared: readonly string[],
  outputs: ReadonlyArray<{ path: string, bytes: Uint8Array }>,
  log: Uint8Array,
  requester: string
): Promise<StoredResult> {
  const produced = new Map(outputs.map((o) => [o.path, o.bytes]))
  const files: StoredResult['files'] = []
  for (const path of new Set(declared)) {
    const bytes = produced.get(path)
    if (bytes === undefined) continue
    const stored = await blobs.put(bytes)
    files.push({ path, size: stored.size, cid: stored.cid })
  }
  const manifest = (await blobs.putCbor(buildManifest(files))).cid
  const logs = log.byteLength > 0 ? (await blobs.put(log)).cid : undefined
  for (const cid of [manifest, ...(logs !== undefined ? [logs] : []), ...files.map((f) => f.cid)]) blobs.grant(cid, requester)
  return { manifest, ...(logs !== undefined ? { logs } : {}), files }
}
