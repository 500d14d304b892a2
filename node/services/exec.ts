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
 * Any other tag, an empty frame or an oversized one ends the stream. Either side may close its write
 * side when it has nothing more to say; the stream ends when both have.
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

const TAG_MESSAGE = 0x01
const TAG_LOG = 0x02
/** Largest log chunk in one frame. */
export const MAX_LOG_CHUNK = 16 * 1024
/** The largest message kind sent on the stream (an award) plus the tag, or a log chunk with its header. */
export const MAX_EXEC_FRAME = Math.max(KINDS.award.maxBytes, MAX_LOG_CHUNK + 16) + 1
/** Concurrent jobs between one pair of peers. */
export const EXEC_MAX_STREAMS = 64
const OPEN_TIMEOUT_MS = 10_000

export type ExecFrame =
  | { type: 'message', bytes: Uint8Array }
  | { type: 'log', offset: number, data: Uint8Array }

export class ExecFrameError extends Error {
  override readonly name = 'ExecFrameError'
}

/** Encode one frame (without its length prefix). */
export function encodeExecFrame (frame: ExecFrame): Uint8Array {
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
  throw new ExecFrameError(`unknown exec frame tag 0x${(bytes[0] as number).toString(16)}`)
}

/** One exec stream: framed, writes serialised, reads as an async iterator. */
export class ExecChannel {
  private readonly lp: LengthPrefixedStream<Stream>
  private writing: Promise<void> = Promise.resolve()
  private closed = false

  constructor (readonly stream: Stream, readonly remotePeer: string) {
    this.lp = lpStream(stream, { maxDataLength: MAX_EXEC_FRAME })
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

  /** Frames until the remote closes its side; throws ExecFrameError on a bad frame (the stream is then aborted). */
  async * frames (): AsyncGenerator<ExecFrame> {
    while (true) {
      let bytes: Uint8Array
      try {
        bytes = (await this.lp.read()).subarray()
      } catch (err) {
        // the remote closed its write side (at a frame boundary, or inside a frame: the market
        // treats a missing message the same either way)
        if ((err as Error).name === 'UnexpectedEOFError') return
        throw err
      }
      try {
        yield decodeExecFrame(bytes)
      } catch (err) {
        if (err instanceof ExecFrameError) this.abort(err)
        throw err
      }
    }
  }

  /** Close our write side once every queued frame is out. */
  async close (): Promise<void> {
    if (this.closed) return
    this.closed = true
    await this.writing
    await this.stream.close().catch(() => {})
  }

  abort (err: Error): void {
    this.closed = true
    this.stream.abort(err)
  }
}

export interface ExecComponents {
  registrar: Registrar
  connectionManager: ConnectionManager
  logger: ComponentLogger
}

/** libp2p service: hands inbound exec streams to the market and opens outbound ones. */
export class ExecService implements Startable {
  private readonly log: Logger
  private started = false
  /** Set by the daemon's market: called for every inbound exec stream. Without it, streams are refused. */
  onChannel: ((channel: ExecChannel) => void) | undefined

  constructor (private readonly components: ExecComponents) {
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
      handler(new ExecChannel(stream, connection.remotePeer.toString()))
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
      return new ExecChannel(stream, peer.toString())
    } finally {
      limit.clear()
    }
  }
}

export function execService (): (components: ExecComponents) => ExecService {
  return (components) => new ExecService(components)
}
