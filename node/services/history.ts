/**
 * /gpumesh/history/1.0.0 — a node serves what it holds about a subject (its evidence, fraud proofs
 * first) and the fraud proofs of the providers it convicted; anyone may ask (protocol/README.md §7.11).
 *
 * Wire: length-prefixed frames (§7.5). The asker sends one request frame (protocol/trust/history.ts,
 * ≤ 512 bytes); the server answers with one response frame (≤ 1 MiB) and closes. A request that is not
 * a valid frame gets the stream aborted; an asker over its rate (HISTORY_RATE, per asking peer) gets a
 * `refused: RATE_LIMITED` answer. What is served comes from `source` (the market, node/market/market.ts);
 * a node without one (a bootstrap peer) does not register the protocol. This service checks an answer's
 * frame and shape only; the envelopes in it are the asker's market's to open (node/trust/history-sync.ts).
 */
import type { ComponentLogger, Connection, Logger, PeerId, Startable, Stream } from '@libp2p/interface'
import type { ConnectionManager, Registrar } from '@libp2p/interface-internal'
import { lpStream } from '@libp2p/utils'
import { PROTOCOLS } from '../../protocol/index.js'
import { RequesterBudget } from '../../protocol/trust/budget.js'
import {
  HISTORY_MAX_REQUEST_BYTES, HISTORY_MAX_RESPONSE_BYTES, HISTORY_RATE, HistoryError, decodeHistoryRequest,
  decodeHistoryResponse, encodeHistoryRequest, encodeHistoryResponse, type HistoryRequest, type HistoryResponse
} from '../../protocol/trust/history.js'
import { deadline } from '../abort.js'
import type { NodeMetrics } from '../metrics.js'
import { frameLimits, isFrameLengthError } from './frame-limits.js'

export const HISTORY_TIMEOUT_MS = 10_000
export const HISTORY_MAX_INBOUND_STREAMS = 4
export const HISTORY_MAX_OUTBOUND_STREAMS = 4

/** What a server answers with: the envelopes' bytes and the cursor for more. */
export interface HistoryPage {
  envelopes: Uint8Array[]
  next?: string
}

export type HistorySource = (request: HistoryRequest, from: string) => Promise<HistoryPage>

export interface HistoryComponents {
  registrar: Registrar
  connectionManager: ConnectionManager
  logger: ComponentLogger
}

export interface HistoryInit {
  /** Serve the protocol (false on a bootstrap peer: it holds no evidence). Default true. */
  serve?: boolean
  now?: () => number
  timeoutMs?: number
  metrics?: NodeMetrics
}

/**
 * Why an ask got no answer: `UNREACHABLE` (no stream, a reset, an early end, the timeout — not
 * the server's provable fault), `TOO_LARGE` / `BAD_RESPONSE` / `TOO_MANY` (it broke the protocol),
 * `REFUSED` (it rate-limited the asker).
 */
export type HistoryFetchErrorCode = 'UNREACHABLE' | 'TOO_LARGE' | 'BAD_RESPONSE' | 'TOO_MANY' | 'REFUSED'

export class HistoryFetchError extends Error {
  override readonly name = 'HistoryFetchError'
  constructor (readonly code: HistoryFetchErrorCode, readonly peer: string, message: string) {
    super(`${peer}: ${message}`)
  }

  /** Whether the server broke the protocol (counts against it). */
  get fault (): boolean {
    return this.code === 'TOO_LARGE' || this.code === 'BAD_RESPONSE' || this.code === 'TOO_MANY'
  }
}

export class HistoryService implements Startable {
  private readonly log: Logger
  private readonly timeoutMs: number
  private readonly now: () => number
  private readonly budget = new RequesterBudget({ rateFor: () => HISTORY_RATE })
  private started = false
  /** Set by the market once its store is open; until then answers are empty. */
  source: HistorySource | undefined

  constructor (private readonly components: HistoryComponents, private readonly init: HistoryInit = {}) {
    this.log = components.logger.forComponent('gpumesh:history')
    this.timeoutMs = init.timeoutMs ?? HISTORY_TIMEOUT_MS
    this.now = init.now ?? Date.now
  }

  readonly [Symbol.toStringTag] = 'gpumesh/history'

  async start (): Promise<void> {
    if (this.init.serve !== false) {
      await this.components.registrar.handle(PROTOCOLS.history, (stream, connection) => { void this.serve(stream, connection) }, {
        maxInboundStreams: HISTORY_MAX_INBOUND_STREAMS,
        maxOutboundStreams: HISTORY_MAX_OUTBOUND_STREAMS
      })
    }
    this.started = true
  }

  async stop (): Promise<void> {
    if (this.init.serve !== false) await this.components.registrar.unhandle(PROTOCOLS.history)
    this.started = false
  }

  isStarted (): boolean {
    return this.started
  }

  private async serve (stream: Stream, connection: Connection): Promise<void> {
    const limit = deadline(this.timeoutMs)
    const signal = limit.signal
    const count = (result: string): void => { this.init.metrics?.historyServed.inc({ result }) }
    const onTimeout = (): void => { stream.abort(new Error('history request timed out')) }
    signal.addEventListener('abort', onTimeout, { once: true })
    const from = connection.remotePeer.toString()
    try {
      const lp = lpStream(stream, frameLimits(HISTORY_MAX_REQUEST_BYTES))
      let request: HistoryRequest
      try {
        request = decodeHistoryRequest((await lp.read({ signal })).subarray())
      } catch (err) {
        count('bad-request')
        stream.abort(err as Error)
        return
      }
      let response: HistoryResponse
      if (this.budget.admit(from, this.now()) !== undefined) {
        response = { v: 1, envelopes: [], refused: 'RATE_LIMITED' }
        count('rate-limited')
      } else {
        const page = await this.source?.(request, from) ?? { envelopes: [] }
        response = { v: 1, envelopes: page.envelopes, ...(page.next !== undefined ? { next: page.next } : {}) }
        count(page.envelopes.length === 0 ? 'empty' : 'ok')
      }
      await lp.write(encodeHistoryResponse(response), { signal })
      await stream.close({ signal })
    } catch (err) {
      count('error')
      this.log('history request failed: %s', (err as Error).message)
      stream.abort(err as Error)
    } finally {
      signal.removeEventListener('abort', onTimeout)
      limit.clear()
    }
  }

  /** Ask `peer`; the answer's frame and shape are checked (not its envelopes). Throws HistoryFetchError. */
  async fetch (peer: PeerId, request: HistoryRequest, options: { signal?: AbortSignal } = {}): Promise<HistoryResponse> {
    const id = peer.toString()
    const limit = deadline(this.timeoutMs, options.signal)
    const signal = limit.signal
    const count = (result: string): void => { this.init.metrics?.historyFetched.inc({ result }) }
    let bytes: Uint8Array
    let stream: Stream | undefined
    try {
      stream = await this.components.connectionManager.openStream(peer, PROTOCOLS.history, { signal })
      const lp = lpStream(stream, frameLimits(HISTORY_MAX_RESPONSE_BYTES))
      await lp.write(encodeHistoryRequest(request), { signal })
      bytes = (await lp.read({ signal })).subarray()
      await stream.close({ signal }).catch(() => {})
    } catch (err) {
      stream?.abort(err as Error)
      if (isFrameLengthError(err)) {
        count('too-large')
        throw new HistoryFetchError('TOO_LARGE', id, `answer frame over ${HISTORY_MAX_RESPONSE_BYTES} bytes: ${(err as Error).message}`)
      }
      count('unreachable')
      throw new HistoryFetchError('UNREACHABLE', id, `no answer: ${(err as Error).message}`)
    } finally {
      limit.clear()
    }
    let response: HistoryResponse
    try {
      response = decodeHistoryResponse(bytes, request)
    } catch (err) {
      if (!(err instanceof HistoryError)) throw err
      const code = err.code === 'TOO_MANY' || err.code === 'TOO_LARGE' ? err.code : 'BAD_RESPONSE'
      count(code.toLowerCase().replace('_', '-'))
      throw new HistoryFetchError(code, id, err.message)
    }
    if (response.refused !== undefined) {
      count('refused')
      throw new HistoryFetchError('REFUSED', id, `refused: ${response.refused}`)
    }
    count('ok')
    return response
  }
}

/** libp2p service factory (STYLE: factory over components). */
export function historyService (init: HistoryInit = {}): (components: HistoryComponents) => HistoryService {
  return (components) => new HistoryService(components, init)
}
