/**
 * /gpumesh/exec/1.0.0 — one stream per award between the requester and the winning provider
 * (DESIGN §6, protocol/README §7.7). The requester opens it and sends the signed `award`; the
 * provider answers `award-response`, then `job-status` heartbeats, log chunks and finally the
 * `receipt`; the requester sends `payment`s and, to call the job off, `job-cancel`.
 *
 * Framing: unsigned-varint length-prefixed frames of at most MAX_EXEC_FRAME bytes, each starting
 * with a tag byte:
 *   0x01 ‖ envelope                  a signed gpumesh message (opened by the receiver with §6)
 *   0x02 ‖ uvarint offset ‖ bytes    provider → requester: the job's combined stdout/stderr from
 *                                    `offset`, at most MAX_LOG_CHUNK bytes; unsigned (the receipt's
 *                                    `logs` blob CID authenticates the whole log afterwards)
 *   0x03 ‖ uvarint upTo              requester → provider: log credit — the provider may send log
 *                                    bytes below offset `upTo`; before any credit frame, below
 *                                    LOG_WINDOW. So log is paced by what the requester has taken in
 *                                    (however much the job prints), and signed messages never wait.
 * Any other tag, an empty frame, an oversized one or a bad length prefix ends the stream: the reader
 * aborts it with an ExecStreamError (and counts it). Either side may close its write side when it has
 * nothing more to say; the stream ends when both have.
 *
 * This file is the transport only: which messages may come when is the market's business
 * (node/market/).
 */
import type { ComponentLogger, Connection, Logger, PeerId, Startable, Stream } from '@libp2p/interface'
import type { ConnectionManager, Registrar } from '@libp2p/interface-internal'
import { lpStream, type LengthPrefixedStream } from '@libp2p/utils'
import { decodeVarint, encodeVarint } from '../../crypto/index.js'
import { KINDS, PROTOCOLS } from '../../protocol/index.js'
import { deadline } from '../abort.js'
import type { NodeMetrics } from '../metrics.js'
import { frameLimits, isFrameLengthError } from './frame-limits.js'

const TAG_MESSAGE = 0x01
const TAG_LOG = 0x02
const TAG_CREDIT = 0x03
/** Largest log chunk in one frame. */
export const MAX_LOG_CHUNK = 16 * 1024
/** Log credit a provider starts with, and the window a requester keeps open ahead of what it has taken in. */
export const LOG_WINDOW = 256 * 1024
/** The largest message kind sent on the stream (an award) plus the tag, or a log chunk with its header. */
export const MAX_EXEC_FRAME = Math.max(KINDS.award.maxBytes, MAX_LOG_CHUNK + 16) + 1
/** Concurrent jobs between one pair of peers. */
export const EXEC_MAX_STREAMS = 64
const OPEN_TIMEOUT_MS = 10_000
/**
 * How long a side that ends an award with a last frame (the requester's `job-cancel` after a failed
 * attempt) waits for its half-close — the frames queued before it flushed, then the FIN — before it
 * resets the stream instead. A reset throws away what is not yet written, so it comes only after this.
 */
export const EXEC_CLOSE_TIMEOUT_MS = 1_500

export type ExecFrame =
  | { type: 'message', bytes: Uint8Array }
  | { type: 'log', offset: number, data: Uint8Array }
  | { type: 'credit', upTo: number }

export class ExecFrameError extends Error {
  override readonly name = 'ExecFrameError'
}

/**
 * Why an exec stream failed, and whose fault it is. Remote (the peer's doing, provable from what it
 * sent or did): BAD_FRAME — a frame the framing above forbids (bad length prefix, oversized, unknown
 * tag, bad offset); LOG_CREDIT — log past the credit given (checked by the requester); READ_LIMIT —
 * more than the transport's read buffer (4 MiB) sent ahead of this node's reading, which an honest
 * peer cannot do: its log waits for credit (at most LOG_WINDOW ahead) and its messages are a few KiB;
 * RESET — the peer reset the stream; GONE — the stream or connection went away for another reason.
 * Local (this node's own doing, never the peer's fault): LOCAL — this node aborted the stream, or
 * could not keep what came (e.g. its disk).
 */
export type ExecStreamErrorCode = 'BAD_FRAME' | 'LOG_CREDIT' | 'RESET' | 'GONE' | 'READ_LIMIT' | 'LOCAL'

export class ExecStreamError extends Error {
  override readonly name = 'ExecStreamError'
  constructor (readonly code: ExecStreamErrorCode, message: string) {
    super(message)
  }

  get fault (): 'local' | 'remote' {
    return this.code === 'LOCAL' ? 'local' : 'remote'
  }
}

/** Encode one frame (without its length prefix). */
export function encodeExecFrame (frame: ExecFrame): Uint8Array {
  if (frame.type === 'credit') return Uint8Array.of(TAG_CREDIT, ...encodeVarint(frame.upTo))
  if (frame.type === 'message') {
    const out = new Uint8Array(frame.bytes.byteLength + 1)
    out[0] = TAG_MESSAGE
    out.set(frame.bytes, 1)
    return out
  }
  if (frame.data.byteLength > MAX_LOG_CHUNK) throw new ExecFrameError(`log chunk of ${frame.data.byteLength} bytes, limit ${MAX_LOG_CHUNK}`)
  const offset = encodeVarint(frame.offset)
  const out = new Uint8Array(1 + offset.byteLength + frame.data.byteLength)
  out[0] = TAG_LOG
  out.set(offset, 1)
  out.set(frame.data, 1 + offset.byteLength)
  return out
}

/** Decode one frame; throws ExecFrameError on anything else. */
export function decodeExecFrame (bytes: Uint8Array): ExecFrame {
  if (bytes.byteLength < 2) throw new ExecFrameError('empty exec frame')
  if (bytes[0] === TAG_MESSAGE) return { type: 'message', bytes: bytes.subarray(1) }
  if (bytes[0] === TAG_LOG) {
    const varint = decodeVarint(bytes, 1)
    if (varint === undefined) throw new ExecFrameError('bad log offset')
    const [offset, length] = varint
    const data = bytes.subarray(1 + length)
    if (data.byteLength > MAX_LOG_CHUNK) throw new ExecFrameError(`log chunk of ${data.byteLength} bytes, limit ${MAX_LOG_CHUNK}`)
    return { type: 'log', offset, data }
  }
  if (bytes[0] === TAG_CREDIT) {
    const varint = decodeVarint(bytes, 1)
    if (varint === undefined || 1 + varint[1] !== bytes.byteLength) throw new ExecFrameError('bad log credit')
    return { type: 'credit', upTo: varint[0] }
  }
  throw new ExecFrameError(`unknown exec frame tag 0x${(bytes[0] as number).toString(16)}`)
}

/** One exec stream: framed, writes serialised, reads as an async iterator. */
export class ExecChannel {
  private readonly lp: LengthPrefixedStream<Stream>
  private writing: Promise<void> = Promise.resolve()
  private closed = false
  /** Set when this side aborted the stream (so what follows is not the peer's doing). */
  private abortedHere = false
  /** The first failure, once there is one: it is counted and reported once. */
  private failure: ExecStreamError | undefined

  constructor (readonly stream: Stream, readonly remotePeer: string, private readonly metrics?: NodeMetrics) {
    this.lp = lpStream(stream, frameLimits(MAX_EXEC_FRAME))
  }

  /** Send a frame; frames go out in call order. Rejects when the stream is gone. */
  async send (frame: ExecFrame): Promise<void> {
    const bytes = encodeExecFrame(frame)
    const next = this.writing.then(async () => { await this.lp.write(bytes) })
    this.writing = next.catch(() => {})
    await next
  }

  async sendMessage (bytes: Uint8Array): Promise<void> {
    await this.send({ type: 'message', bytes })
  }

  /**
   * Frames until the remote closes its side. On anything else the stream is aborted (with the
   * reason, counted) and an ExecStreamError says why and whose fault it is.
   */
  async * frames (): AsyncGenerator<ExecFrame> {
    while (true) {
      let frame: ExecFrame
      try {
        frame = decodeExecFrame((await this.lp.read()).subarray())
      } catch (err) {
        // the remote closed its write side (at a frame boundary, or inside a frame: the market
        // treats a missing message the same either way); lpStream reads a reset as an end too
        if ((err as Error).name === 'UnexpectedEOFError') {
          if (this.stream.status === 'reset' && !this.abortedHere) throw this.fail(new ExecStreamError('RESET', 'the peer reset the exec stream'))
          return
        }
        throw this.fail(this.classify(err as Error))
      }
      yield frame
    }
  }

  /** Abort the stream for `error` (counted by code) and return it. */
  fail (error: ExecStreamError): ExecStreamError {
    if (this.failure !== undefined) return this.failure
    this.failure = error
    this.metrics?.execStreamErrors.inc({ code: error.code })
    if (this.stream.status === 'open' || this.stream.status === 'closing') this.abort(error)
    return error
  }

  private classify (err: Error): ExecStreamError {
    if (err instanceof ExecStreamError) return err
    if (this.failure !== undefined) return this.failure
    if (err instanceof ExecFrameError || isFrameLengthError(err)) return new ExecStreamError('BAD_FRAME', `bad exec frame from the peer: ${err.message}`)
    if (this.abortedHere) return new ExecStreamError('LOCAL', `aborted here: ${err.message}`)
    if (err.name === 'StreamBufferError') return new ExecStreamError('READ_LIMIT', `the peer sent more than this node's read buffer ahead of its reading (past any credit): ${err.message}`)
    if (err.name === 'StreamResetError' || this.stream.status === 'reset') return new ExecStreamError('RESET', 'the peer reset the exec stream')
    return new ExecStreamError('GONE', `the exec stream went away: ${err.message}`)
  }

  /** True while frames can still be sent: not closed or aborted here, and the stream not gone. */
  get writable (): boolean {
    return !this.closed && this.stream.status === 'open' && this.stream.writeStatus === 'writable'
  }

  /**
   * Close our write side once every queued frame is out (the stream's close waits for its write
   * buffer to flush before the FIN). Resolves true when this call closed it cleanly; false when it
   * was closed or aborted already, or the close failed (the stream is gone).
   */
  async close (): Promise<boolean> {
    if (this.closed) return false
    this.closed = true
    await this.writing
    return await this.stream.close().then(() => true, () => false)
  }

  abort (err: Error): void {
    this.closed = true
    this.abortedHere = true
    this.stream.abort(err)
  }
}

export interface ExecComponents {
  registrar: Registrar
  connectionManager: ConnectionManager
  logger: ComponentLogger
}

export interface ExecInit {
  metrics?: NodeMetrics
}

/** libp2p service: hands inbound exec streams to the market and opens outbound ones. */
export class ExecService implements Startable {
  private readonly log: Logger
  private started = false
  /** Set by the daemon's market: called for every inbound exec stream. Without it, streams are refused. */
  onChannel: ((channel: ExecChannel) => void) | undefined

  constructor (private readonly components: ExecComponents, private readonly init: ExecInit = {}) {
    this.log = components.logger.forComponent('gpumesh:exec')
  }

  readonly [Symbol.toStringTag] = 'gpumesh/exec'

  async start (): Promise<void> {
    await this.components.registrar.handle(PROTOCOLS.exec, (stream: Stream, connection: Connection) => {
      const handler = this.onChannel
      if (handler === undefined) {
        stream.abort(new Error('this node does not run jobs'))
        return
      }
      handler(new ExecChannel(stream, connection.remotePeer.toString(), this.init.metrics))
    }, { maxInboundStreams: EXEC_MAX_STREAMS, maxOutboundStreams: EXEC_MAX_STREAMS })
    this.started = true
  }

  async stop (): Promise<void> {
    await this.components.registrar.unhandle(PROTOCOLS.exec)
    this.started = false
  }

  isStarted (): boolean {
    return this.started
  }

  /** Open an exec stream to `peer` (dialling it when needed). */
  async open (peer: PeerId, options: { signal?: AbortSignal } = {}): Promise<ExecChannel> {
    const limit = deadline(OPEN_TIMEOUT_MS, options.signal)
    try {
      const stream = await this.components.connectionManager.openStream(peer, PROTOCOLS.exec, { signal: limit.signal })
      this.log('opened exec stream to %p', peer)
      return new ExecChannel(stream, peer.toString(), this.init.metrics)
    } finally {
      limit.clear()
    }
  }
}

export function execService (init: ExecInit = {}): (components: ExecComponents) => ExecService {
  return (components) => new ExecService(components, init)
}
