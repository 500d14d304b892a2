/**
 * /gpumesh/blob/1.0.0 — content-addressed files by CID, chunked, size-capped and hash-checked (DESIGN §6).
 *
 * Wire: every frame is length-prefixed (minimal unsigned varint length ‖ bytes).
 *  - Request: the requester opens a stream and sends one frame holding the binary CID (`cid.bytes`),
 *    at most 64 bytes. A longer frame (refused from its length prefix alone), or bytes that are not a
 *    CID, get the stream aborted.
 *  - Response: a first frame `status (1 byte) ‖ uvarint size`:
 *      status 0 = ok: `size` is the content length in bytes (minimal unsigned varint, a safe integer);
 *      status 1 = unavailable, sent as the single byte 01: the responder does not hold the CID OR has
 *        not granted it to this peer. The two are deliberately indistinguishable, so a stranger cannot
 *        probe what a node holds.
 *    After status 0 the content follows in frames of 1..65536 bytes until exactly `size` bytes have been
 *    sent; then (after either status) the responder closes its side of the stream.
 *  - The requester refuses an announced size above its own limit before any content arrives, treats
 *    a frame past `size` (or anything but the end of the stream after the content) as a protocol
 *    violation, and accepts the content only when sha2-256 of all of it equals the CID's digest.
 *  - Only CIDv1 with sha2-256 (codec raw or dag-cbor) are served or fetched.
 *  - Deadlines: the whole exchange, request to close, must finish within a per-request timeout
 *    (30 s by default) on both sides. Streams per connection: 16 inbound, 16 outbound.
 */
import type { ComponentLogger, Logger, PeerId, Startable, Stream } from '@libp2p/interface'
import type { ConnectionManager, Registrar } from '@libp2p/interface-internal'
import { lpStream } from '@libp2p/utils'
import { CID, SHA2_256, cidMatches, decodeVarint, encodeVarint } from '../../crypto/index.js'
import { PROTOCOLS } from '../../protocol/index.js'
import { deadline } from '../abort.js'
import { BlobError, type BlobStore, type StoredBlob } from '../blobs/store.js'
import type { NodeMetrics } from '../metrics.js'
import { frameLimits, isFrameLengthError } from './frame-limits.js'

export const BLOB_TIMEOUT_MS = 30_000
export const BLOB_CHUNK_BYTES = 64 * 1024
export const BLOB_MAX_REQUEST_BYTES = 64
export const BLOB_MAX_INBOUND_STREAMS = 16
export const BLOB_MAX_OUTBOUND_STREAMS = 16
export const BLOB_STATUS_OK = 0
export const BLOB_STATUS_UNAVAILABLE = 1

export interface BlobComponents {
  registrar: Registrar
  connectionManager: ConnectionManager
  logger: ComponentLogger
}

export interface BlobInit {
  /** The store served from; may also be set later on the service (`service.store = …`). */
  store?: BlobStore
  /** Per-request deadline, request to close, for serving and (by default) fetching. */
  timeoutMs?: number
  metrics?: NodeMetrics
}

export interface BlobFetchOptions {
  /** Largest content accepted; a larger announced size is refused before any content is read. */
  maxBytes: number
  signal?: AbortSignal
  /** Deadline for the whole fetch; defaults to the service's timeout. */
  timeoutMs?: number
}

/**
 * UNREACHABLE: no stream, or the peer went away mid-transfer (a reset, the connection gone);
 * CLOSED_EARLY: the peer closed the stream cleanly before its answer or before the `size` bytes it
 * announced (what a peer whose node stops gracefully does: its connections close their streams);
 * UNAVAILABLE: status 1; TOO_LARGE: announced size over maxBytes; BAD_RESPONSE: the peer broke the
 * wire format (more bytes than announced, bad frames); HASH_MISMATCH: the content does not hash to the
 * CID; TIMEOUT: the deadline passed; ABORTED: the caller's signal aborted; UNSUPPORTED_CID: not CIDv1
 * with sha2-256. Only BAD_RESPONSE, HASH_MISMATCH and TOO_LARGE say the bytes served were wrong.
 */
export type BlobFetchErrorCode = 'UNREACHABLE' | 'CLOSED_EARLY' | 'UNAVAILABLE' | 'TOO_LARGE' | 'BAD_RESPONSE' | 'HASH_MISMATCH' | 'TIMEOUT' | 'ABORTED' | 'UNSUPPORTED_CID'

export class BlobFetchError extends Error {
  override readonly name = 'BlobFetchError'
  constructor (readonly code: BlobFetchErrorCode, readonly peer: string, readonly cid: string, message: string) {
    super(`blob ${cid} from ${peer}: ${message}`)
  }
}

/** How far a fetch got, to explain a failure. */
interface Progress {
  opened: boolean
  size?: number
  received: number
  /** The peer reset the stream (lpStream reports that as a plain end of stream). */
  reset?: boolean
}

const EOF = 'UnexpectedEOFError'

function fetchable (cid: CID): boolean {
  return cid.version === 1 && cid.multihash.code === SHA2_256
}

export class BlobService implements Startable {
  private readonly log: Logger
  private readonly timeoutMs: number
  private started = false
  /** Set by the daemon once its blob store is open; with none, every request is answered unavailable. */
  store: BlobStore | undefined

  constructor (private readonly components: BlobComponents, private readonly init: BlobInit = {}) {
    this.log = components.logger.forComponent('gpumesh:blob')
    this.timeoutMs = init.timeoutMs ?? BLOB_TIMEOUT_MS
    this.store = init.store
  }

  readonly [Symbol.toStringTag] = 'gpumesh/blob'

  async start (): Promise<void> {
    await this.components.registrar.handle(PROTOCOLS.blob, (stream, connection) => { void this.serve(stream, connection.remotePeer) }, {
      maxInboundStreams: BLOB_MAX_INBOUND_STREAMS,
      maxOutboundStreams: BLOB_MAX_OUTBOUND_STREAMS
    })
    this.started = true
  }

  async stop (): Promise<void> {
    await this.components.registrar.unhandle(PROTOCOLS.blob)
    this.started = false
  }

  isStarted (): boolean {
    return this.started
  }

  private async serve (stream: Stream, peer: PeerId): Promise<void> {
    const limit = deadline(this.timeoutMs)
    const signal = limit.signal
    const count = (result: string): void => { this.init.metrics?.blobServed.inc({ result }) }
    // a requester that never sends its request, or never reads, must not hold the stream open
    const onTimeout = (): void => { stream.abort(new Error('blob request timed out')) }
    signal.addEventListener('abort', onTimeout, { once: true })
    try {
      const lp = lpStream(stream, frameLimits(BLOB_MAX_REQUEST_BYTES))
      let cid: CID
      try {
        // a frame over 64 bytes fails here (maxDataLength), bytes that are not a CID in decode
        cid = CID.decode((await lp.read({ signal })).subarray())
      } catch (err) {
        count('bad-request')
        stream.abort(err as Error)
        return
      }
      const { bytes, result } = await this.lookup(cid, peer)
      if (bytes === undefined) {
        await lp.write(Uint8Array.of(BLOB_STATUS_UNAVAILABLE), { signal })
      } else {
        await lp.write(Uint8Array.of(BLOB_STATUS_OK, ...encodeVarint(bytes.byteLength)), { signal })
        for (let offset = 0; offset < bytes.byteLength; offset += BLOB_CHUNK_BYTES) {
          await lp.write(bytes.subarray(offset, offset + BLOB_CHUNK_BYTES), { signal })
        }
      }
      await stream.close({ signal })
      count(result)
      if (bytes !== undefined) this.init.metrics?.blobBytes.inc({ direction: 'out' }, bytes.byteLength)
    } catch (err) {
      count('error')
      this.log('blob request from %p failed: %s', peer, (err as Error).message)
      stream.abort(err as Error)
    } finally {
      signal.removeEventListener('abort', onTimeout)
      limit.clear()
    }
  }

  /**
   * The bytes to serve `peer`, or undefined (answered as unavailable) with the local reason. The blob is
   * read and re-hashed whole before its first byte is sent, so damaged files are never served.
   */
  private async lookup (cid: CID, peer: PeerId): Promise<{ bytes?: Uint8Array, result: string }> {
    const store = this.store
    if (store === undefined) return { result: 'no-store' }
    if (!store.allowed(cid, peer)) return { result: 'not-granted' }
    try {
      const bytes = await store.get(cid)
      return bytes === undefined ? { result: 'not-found' } : { bytes, result: 'ok' }
    } catch (err) {
      // never serve bytes that do not match their CID; the operator has to look at the disk
      const corrupt = err instanceof BlobError && err.code === 'CORRUPT'
      this.log.error('not serving %s: %s', cid, (err as Error).message)
      return { result: corrupt ? 'corrupt' : 'store-error' }
    }
  }

  /** Fetch `cid` from `peer`, checked against the CID. Throws BlobFetchError. */
  async fetch (peer: PeerId, cid: CID, options: BlobFetchOptions): Promise<Uint8Array> {
    const limit = deadline(options.timeoutMs ?? this.timeoutMs, options.signal)
    const progress: Progress = { opened: false, received: 0 }
    try {
      if (!fetchable(cid)) throw new BlobFetchError('UNSUPPORTED_CID', peer.toString(), cid.toString(), 'only CIDv1 with sha2-256 can be fetched')
      const bytes = await this.transfer(peer, cid, options.maxBytes, limit.signal, progress)
      this.init.metrics?.blobFetched.inc({ result: 'ok' })
      this.init.metrics?.blobBytes.inc({ direction: 'in' }, bytes.byteLength)
      return bytes
    } catch (err) {
      const error = this.explain(err, peer, cid, limit.signal, progress)
      this.init.metrics?.blobFetched.inc({ result: error.code })
      throw error
    } finally {
      limit.clear()
    }
  }

  /** Fetch `cid` from `peer` and keep it in `store` (under the same CID). */
  async fetchTo (peer: PeerId, cid: CID, store: BlobStore, options: BlobFetchOptions): Promise<StoredBlob> {
    return await store.putWithCid(cid, await this.fetch(peer, cid, options))
  }

  private async transfer (peer: PeerId, cid: CID, maxBytes: number, signal: AbortSignal, progress: Progress): Promise<Uint8Array> {
    const fail = (code: BlobFetchErrorCode, message: string): BlobFetchError => new BlobFetchError(code, peer.toString(), cid.toString(), message)
    const stream = await this.components.connectionManager.openStream(peer, PROTOCOLS.blob, { signal })
    progress.opened = true
    try {
      const lp = lpStream(stream, frameLimits(BLOB_CHUNK_BYTES))
      await lp.write(cid.bytes, { signal })
      const header = (await lp.read({ signal })).subarray()
      if (header[0] === BLOB_STATUS_UNAVAILABLE) throw fail('UNAVAILABLE', 'the peer does not offer this blob to us')
      const decoded = header[0] === BLOB_STATUS_OK ? decodeVarint(header, 1) : undefined
      if (decoded === undefined || decoded[1] + 1 !== header.byteLength) throw fail('BAD_RESPONSE', 'malformed status frame')
      const size = decoded[0]
      if (size > maxBytes) throw fail('TOO_LARGE', `announced ${size} bytes, over the limit of ${maxBytes}`)
      progress.size = size
      const content = new Uint8Array(size)
      while (progress.received < size) {
        const frame = await lp.read({ signal })
        if (frame.byteLength === 0) throw fail('BAD_RESPONSE', 'empty content frame')
        if (progress.received + frame.byteLength > size) throw fail('BAD_RESPONSE', `more than the ${size} bytes announced`)
        for (const chunk of frame) {
          content.set(chunk, progress.received)
          progress.received += chunk.byteLength
        }
      }
      // after the content the responder closes: anything else is a violation
      const extra = await lp.read({ signal }).catch((err: Error) => { if (err.name === EOF) return undefined; throw err })
      if (extra !== undefined) throw fail('BAD_RESPONSE', `more than the ${size} bytes announced`)
      if (!cidMatches(cid, content)) throw fail('HASH_MISMATCH', 'the content does not hash to the CID')
      await stream.close({ signal }).catch(() => {})
      return content
    } catch (err) {
      progress.reset = stream.status === 'reset'
      // frees the stream, and stops whatever the peer is still sending
      stream.abort(err as Error)
      throw err
    }
  }

  /** Turn any failure of a fetch into a BlobFetchError with a message that says how far it got. */
  private explain (err: unknown, peer: PeerId, cid: CID, signal: AbortSignal, progress: Progress): BlobFetchError {
    if (err instanceof BlobFetchError) return err
    const fail = (code: BlobFetchErrorCode, message: string): BlobFetchError => new BlobFetchError(code, peer.toString(), cid.toString(), message)
    const got = progress.size === undefined ? 'before its answer' : `after ${progress.received} of ${progress.size} bytes`
    if (signal.aborted) {
      const reason = signal.reason as Error | undefined
      if (reason?.name === 'TimeoutError') return fail('TIMEOUT', `${reason.message} (${got})`)
      return fail('ABORTED', `aborted ${got}: ${reason?.message ?? 'by the caller'}`)
    }
    const message = (err as Error).message
    if (!progress.opened) return fail('UNREACHABLE', `cannot open a stream: ${message}`)
    if (progress.reset === true) return fail('UNREACHABLE', `the peer reset the stream ${got}`)
    if ((err as Error).name === EOF) return fail('CLOSED_EARLY', `the peer closed the stream ${got}`)
    if (isFrameLengthError(err)) return fail('BAD_RESPONSE', `frame over ${BLOB_CHUNK_BYTES} bytes (${got})`)
    return fail('UNREACHABLE', `the peer went away ${got}: ${message}`)
  }
}

/** libp2p service factory (STYLE: factory over components). */
export function blobService (init: BlobInit = {}): (components: BlobComponents) => BlobService {
  return (components) => new BlobService(components, init)
}
