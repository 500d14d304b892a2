/**
 * /gpumesh/capability/1.0.0 — a provider serves its signed capability ad; anyone can fetch it.
 *
 * Wire (protocol/README.md §7.5): frames are length-prefixed (unsigned varint length ‖ bytes). The
 * requester opens a stream and sends one empty frame (the single byte 00). The responder answers with
 * one frame holding the signed capability-ad envelope, or an empty frame when it is not selling, and
 * closes. A request frame that is not empty gets the stream aborted. The fetched ad must be signed by
 * the peer it came from.
 */
import type { ComponentLogger, Logger, PeerId, Startable, Stream } from '@libp2p/interface'
import type { ConnectionManager, Registrar } from '@libp2p/interface-internal'
import { lpStream } from '@libp2p/utils'
import { deadline } from '../abort.js'
import { KINDS, MessageRejectedError, PROTOCOLS, RejectReason, openMessage, type OpenedMessage } from '../../protocol/index.js'
import type { NodeMetrics } from '../metrics.js'
import { frameLimits, isFrameLengthError } from './frame-limits.js'

export const CAPABILITY_TIMEOUT_MS = 5_000
export const CAPABILITY_MAX_INBOUND_STREAMS = 8
export const CAPABILITY_MAX_OUTBOUND_STREAMS = 8
const MAX_AD_BYTES = KINDS['capability-ad'].maxBytes

export interface CapabilityComponents {
  registrar: Registrar
  connectionManager: ConnectionManager
  logger: ComponentLogger
}

export interface CapabilityInit {
  /** The current signed ad, or undefined when not selling. */
  currentAd?: () => Uint8Array | undefined
  /** The receiver's clock (ms since the epoch) for freshness checks. */
  now?: () => number
  timeoutMs?: number
  metrics?: NodeMetrics
}

export type CapabilityFetchErrorCode = 'UNREACHABLE' | 'NOT_SELLING' | 'BAD_RESPONSE' | 'WRONG_SIGNER'

export class CapabilityFetchError extends Error {
  override readonly name = 'CapabilityFetchError'
  constructor (readonly code: CapabilityFetchErrorCode, readonly peer: string, message: string, readonly reason?: RejectReason) {
    super(`${peer}: ${message}`)
  }
}

export class CapabilityService implements Startable {
  private readonly log: Logger
  private readonly timeoutMs: number
  private readonly now: () => number
  private started = false
  /** Set by the daemon once it has an ad to sell. */
  currentAd: () => Uint8Array | undefined

  constructor (private readonly components: CapabilityComponents, private readonly init: CapabilityInit = {}) {
    this.log = components.logger.forComponent('gpumesh:capability')
    this.timeoutMs = init.timeoutMs ?? CAPABILITY_TIMEOUT_MS
    this.now = init.now ?? Date.now
    this.currentAd = init.currentAd ?? (() => undefined)
  }

  readonly [Symbol.toStringTag] = 'gpumesh/capability'

  async start (): Promise<void> {
    await this.components.registrar.handle(PROTOCOLS.capability, (stream) => { void this.serve(stream) }, {
      maxInboundStreams: CAPABILITY_MAX_INBOUND_STREAMS,
      maxOutboundStreams: CAPABILITY_MAX_OUTBOUND_STREAMS
    })
    this.started = true
  }

  async stop (): Promise<void> {
    await this.components.registrar.unhandle(PROTOCOLS.capability)
    this.started = false
  }

  isStarted (): boolean {
    return this.started
  }

  private async serve (stream: Stream): Promise<void> {
    const limit = deadline(this.timeoutMs)
    const signal = limit.signal
    const count = (result: string): void => { this.init.metrics?.capabilityServed.inc({ result }) }
    // a requester that never sends its request must not hold the stream open
    const onTimeout = (): void => { stream.abort(new Error('capability request timed out')) }
    signal.addEventListener('abort', onTimeout, { once: true })
    try {
      // the request is one empty frame: a longer one, or a prefix of more than one byte, fails at once
      const lp = lpStream(stream, frameLimits(0))
      try {
        await lp.read({ signal })
      } catch (err) {
        count('bad-request')
        stream.abort(err as Error)
        return
      }
      const ad = this.currentAd()
      await lp.write(ad ?? new Uint8Array(0), { signal })
      await stream.close({ signal })
      count(ad === undefined ? 'not-selling' : 'ok')
    } catch (err) {
      count('error')
      this.log('capability request failed: %s', (err as Error).message)
      stream.abort(err as Error)
    } finally {
      signal.removeEventListener('abort', onTimeout)
      limit.clear()
    }
  }

  /** Fetch and verify `peer`'s capability ad. Throws CapabilityFetchError. */
  async fetch (peer: PeerId, options: { signal?: AbortSignal } = {}): Promise<OpenedMessage<'capability-ad'>> {
    const id = peer.toString()
    const limit = deadline(this.timeoutMs, options.signal)
    const signal = limit.signal
    const count = (result: string): void => { this.init.metrics?.capabilityFetched.inc({ result }) }
    let bytes: Uint8Array
    let stream: Stream | undefined
    try {
      stream = await this.components.connectionManager.openStream(peer, PROTOCOLS.capability, { signal })
      const lp = lpStream(stream, frameLimits(MAX_AD_BYTES))
      await lp.write(new Uint8Array(0), { signal })
      bytes = (await lp.read({ signal })).subarray()
      await stream.close({ signal }).catch(() => {})
    } catch (err) {
      // a cancelled read leaves the stream open: free it (and stop an oversized ad arriving)
      stream?.abort(err as Error)
      if (isFrameLengthError(err) && (err as Error).name !== 'InvalidDataLengthError') {
        count('rejected')
        throw new CapabilityFetchError('BAD_RESPONSE', id, `bad length prefix: ${(err as Error).message}`)
      }
      if (isFrameLengthError(err)) {
        count('rejected')
        this.init.metrics?.messagesRejected.inc({ kind: 'capability-ad', reason: RejectReason.TOO_LARGE, via: 'capability' })
        throw new CapabilityFetchError('BAD_RESPONSE', id, `ad larger than ${MAX_AD_BYTES} bytes`, RejectReason.TOO_LARGE)
      }
      count('unreachable')
      throw new CapabilityFetchError('UNREACHABLE', id, `no capability ad: ${(err as Error).message}`)
    } finally {
      limit.clear()
    }
    if (bytes.byteLength === 0) {
      count('not-selling')
      throw new CapabilityFetchError('NOT_SELLING', id, 'the peer is not selling')
    }
    return this.verify(id, bytes, count)
  }

  /** Open `bytes` as `peer`'s capability ad (also used for ads read back from storage). */
  verify (peer: string, bytes: Uint8Array, count: (result: string) => void = () => {}): OpenedMessage<'capability-ad'> {
    let opened: OpenedMessage<'capability-ad'>
    try {
      opened = openMessage(bytes, 'capability-ad', { now: this.now() })
    } catch (err) {
      if (!(err instanceof MessageRejectedError)) throw err
      count('rejected')
      this.init.metrics?.messagesRejected.inc({ kind: 'capability-ad', reason: err.reason, via: 'capability' })
      throw new CapabilityFetchError('BAD_RESPONSE', peer, err.message, err.reason)
    }
    if (opened.signer !== peer) {
      count('wrong-signer')
      throw new CapabilityFetchError('WRONG_SIGNER', peer, `ad signed by ${opened.signer}, not by the peer that served it`)
    }
    count('ok')
    return opened
  }
}

/** libp2p service factory (STYLE: factory over components). */
export function capabilityService (init: CapabilityInit = {}): (components: CapabilityComponents) => CapabilityService {
  return (components) => new CapabilityService(components, init)
}
