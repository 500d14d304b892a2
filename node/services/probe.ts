/**
 * /gpumesh/probe/1.0.0 — any node challenges a provider with a fresh nonce and a matrix product sized
 * to the provider's claimed hardware, times the answer, checks it with Freivalds' algorithm and signs
 * what it measured as a probe-result (protocol/README.md "Attestations and probes").
 *
 * Wire: length-prefixed frames (protocol/trust/probe-frames.ts). The challenger sends a ping and the
 * provider echoes its nonce — that round trip is the RTT, and a reachability probe ends there; then the
 * challenge {nonce, n}; the provider refuses it (rate limit, busy) or answers with the SHA-256 of its product the moment it has it
 * (the challenger's clock stops there, so the transfer of the product is not timed), then the product.
 * The challenger waits for the digest only until the claim is flagged anyway: 2× the expected time plus
 * one RTT and PROBE_GRACE_MS.
 */
import type { ComponentLogger, Logger, PeerId, Startable, Stream } from '@libp2p/interface'
import type { ConnectionManager, Registrar } from '@libp2p/interface-internal'
import { lpStream } from '@libp2p/utils'
import { bytesEqual, sha256, type Signer } from '../../crypto/index.js'
import { PROTOCOLS, sealMessage, type SealedMessage } from '../../protocol/index.js'
import { PROBE_MAX_FRAME_BYTES, decodeProbeFrame, encodeProbeFrame } from '../../protocol/trust/probe-frames.js'
import { pingResultPayload, probeResultPayload, probeVerdict, type ProbeVerdict } from '../../protocol/trust/probe-result.js'
import { PROBE_FLAG_FACTOR, expectedProbeMs, probeSizeFor, type ProbeClaim } from '../../protocol/trust/probe-throughput.js'
import { ProbeError, checkProbeSize, decodeProduct, deriveMatrix, encodeProduct, freivalds, freivaldsVectors } from '../../protocol/trust/probe.js'
import { deadline } from '../abort.js'
import { randomNonce } from '../random.js'
import { cpuProbeDevice, type ProbeDevice } from '../trust/probe-compute.js'
import { ProbeRateLimit } from '../trust/probe-rate-limit.js'
import { frameLimits } from './frame-limits.js'

/** The ping and the reading of the product each get this long. */
export const PROBE_TIMEOUT_MS = 10_000
/** Slack on the digest's deadline beyond 2× the expected time and one RTT. */
export const PROBE_GRACE_MS = 500
/** The provider gives up on a challenge after this long (a challenger sized it far beyond this machine). */
export const PROBE_SERVE_TIMEOUT_MS = 120_000
export const PROBE_MAX_INBOUND_STREAMS = 2
export const PROBE_MAX_OUTBOUND_STREAMS = 4
/** Bytes of the challenger's secret Freivalds seed. */
const SEED_BYTES = 32

export interface ProbeComponents {
  registrar: Registrar
  connectionManager: ConnectionManager
  logger: ComponentLogger
}

export interface ProbeInit {
  /** Wall clock for the signed result's timestamps. */
  now?: () => number
  /** Monotonic ms for timing (performance.now by default). */
  monotonic?: () => number
  /** What computes the provider's answers (the CPU kernel by default). */
  device?: ProbeDevice
  rateLimit?: ProbeRateLimit
}

export interface ProbeOptions {
  /** What the provider claims (protocol/trust/probe-throughput.ts probeClaim of its ad's model). */
  claim: ProbeClaim
  /** Matrix dimension; probeSizeFor(claim) by default. */
  n?: number
  signal?: AbortSignal
}

export interface ProbeOutcome {
  /** The signed probe-result (ready for the evidence topic). */
  result: SealedMessage<'probe-result'>
  verdict: ProbeVerdict
}

export class ProbeService implements Startable {
  private readonly log: Logger
  private readonly now: () => number
  private readonly monotonic: () => number
  private readonly rateLimit: ProbeRateLimit
  private started = false
  /** Signs probe-results; the daemon sets it to the node's identity. */
  signer: Signer | undefined
  /** Computes answers; the daemon (or a test) may swap it. */
  device: ProbeDevice

  constructor (private readonly components: ProbeComponents, init: ProbeInit = {}) {
    this.log = components.logger.forComponent('gpumesh:probe')
    this.now = init.now ?? Date.now
    this.monotonic = init.monotonic ?? (() => performance.now())
    this.device = init.device ?? cpuProbeDevice
    this.rateLimit = init.rateLimit ?? new ProbeRateLimit()
  }

  readonly [Symbol.toStringTag] = 'gpumesh/probe'

  async start (): Promise<void> {
    await this.components.registrar.handle(PROTOCOLS.probe, (stream, connection) => { void this.serve(stream, connection.remotePeer.toString()) }, {
      maxInboundStreams: PROBE_MAX_INBOUND_STREAMS,
      maxOutboundStreams: PROBE_MAX_OUTBOUND_STREAMS
    })
    this.started = true
  }

  async stop (): Promise<void> {
    await this.components.registrar.unhandle(PROTOCOLS.probe)
    this.started = false
  }

  isStarted (): boolean {
    return this.started
  }

  private async serve (stream: Stream, peer: string): Promise<void> {
    // the challenger resetting the stream (it gave up) stops the computation, as the deadline does
    const gone = new AbortController()
    const onClose = (): void => { gone.abort(new Error('the challenger closed the probe stream')) }
    stream.addEventListener('close', onClose, { once: true })
    const limit = deadline(PROBE_SERVE_TIMEOUT_MS, gone.signal)
    const signal = limit.signal
    const onTimeout = (): void => { stream.abort(new Error('probe timed out')) }
    signal.addEventListener('abort', onTimeout, { once: true })
    let admitted = false
    try {
      const lp = lpStream(stream, frameLimits(PROBE_MAX_FRAME_BYTES))
      const ping = decodeProbeFrame((await lp.read({ signal })).subarray(), ['ping'])
      await lp.write(encodeProbeFrame({ kind: 'pong', nonce: ping.nonce }), { signal })
      let next
      try {
        next = await lp.read({ signal })
      } catch (err) {
        // a reachability probe ends after the pong
        if ((err as Error).name !== 'UnexpectedEOFError') throw err
        await stream.close({ signal })
        return
      }
      const challenge = decodeProbeFrame(next.subarray(), ['freivalds-matmul'])
      checkProbeSize(challenge.n)
      const admission = this.rateLimit.admit(peer, this.now())
      if (admission !== 'ok') {
        await lp.write(encodeProbeFrame({ kind: 'refused', reason: admission }), { signal })
        await stream.close({ signal })
        return
      }
      admitted = true
      const product = encodeProduct(await this.device.multiply(challenge.nonce, challenge.n, signal))
      await lp.write(encodeProbeFrame({ kind: 'digest', device: this.device.device, digest: sha256(product) }), { signal })
      await lp.write(product, { signal })
      await stream.close({ signal })
    } catch (err) {
      this.log('probe from %s failed: %s', peer, (err as Error).message)
      stream.abort(err as Error)
    } finally {
      if (admitted) this.rateLimit.release()
      signal.removeEventListener('abort', onTimeout)
      stream.removeEventListener('close', onClose)
      limit.clear()
    }
  }

  /**
   * A reachability probe: ping `peer` on this protocol and sign the result (kind `ping`), `ok: false`
   * with the reason when it does not answer within PROBE_TIMEOUT_MS. Not rate-limited by the provider:
   * it costs one frame each way.
   */
  async ping (peer: PeerId, options: { signal?: AbortSignal } = {}): Promise<ProbeOutcome> {
    const signer = this.signer
    if (signer === undefined) throw new Error('the probe service has no signer')
    const nonce = randomNonce()
    const limit = deadline(PROBE_TIMEOUT_MS, options.signal)
    const start = this.monotonic()
    let stream: Stream | undefined
    let payload
    try {
      stream = await this.components.connectionManager.openStream(peer, PROBE_PROTOCOL, { signal: limit.signal })
      const lp = lpStream(stream, frameLimits(PROBE_MAX_FRAME_BYTES))
      const sent = this.monotonic()
      await lp.write(encodeProbeFrame({ kind: 'ping', nonce }), { signal: limit.signal })
      const pong = decodeProbeFrame((await lp.read({ signal: limit.signal })).subarray(), ['pong'])
      const rttMs = this.monotonic() - sent
      if (!bytesEqual(pong.nonce, nonce)) throw new ProbeError('BAD_FRAME', 'the pong echoes another nonce')
      await stream.close({ signal: limit.signal }).catch(() => {})
      payload = pingResultPayload({ subject: peer.toString(), nonce, ok: true, rttMs, now: this.now() })
    } catch (err) {
      stream?.abort(err as Error)
      options.signal?.throwIfAborted()
      const detail = err instanceof ProbeError ? err.message : `NO_ANSWER: ${(err as Error).message}`
      payload = pingResultPayload({ subject: peer.toString(), nonce, ok: false, rttMs: this.monotonic() - start, now: this.now(), detail })
    } finally {
      limit.clear()
    }
    const result = sealMessage(signer, 'probe-result', payload)
    return { result, verdict: probeVerdict(result.payload) }
  }

  /**
   * Probe `peer` against `claim` and sign what was measured. Throws ProbeError RATE_LIMITED when the
   * provider refuses and NO_ANSWER when it cannot be reached (no result is signed then); every probe
   * that got as far as the challenge yields a signed result, passed, flagged or failed.
   */
  async probe (peer: PeerId, options: ProbeOptions): Promise<ProbeOutcome> {
    const signer = this.signer
    if (signer === undefined) throw new Error('the probe service has no signer')
    const { claim } = options
    const n = options.n ?? probeSizeFor(claim)
    checkProbeSize(n)
    const expectedMs = expectedProbeMs(claim, n)
    const nonce = randomNonce()
    const subject = peer.toString()

    let stream: Stream | undefined
    let lp
    let rttMs: number
    const ping = deadline(PROBE_TIMEOUT_MS, options.signal)
    try {
      stream = await this.components.connectionManager.openStream(peer, PROBE_PROTOCOL, { signal: ping.signal })
      lp = lpStream(stream, frameLimits(Math.max(PROBE_MAX_FRAME_BYTES, 2 * n * n)))
      const sent = this.monotonic()
      await lp.write(encodeProbeFrame({ kind: 'ping', nonce }), { signal: ping.signal })
      const answer = decodeProbeFrame((await lp.read({ signal: ping.signal })).subarray(), ['pong'])
      rttMs = this.monotonic() - sent
      if (!bytesEqual(answer.nonce, nonce)) throw new ProbeError('BAD_FRAME', 'the pong echoes another nonce')
    } catch (err) {
      stream?.abort(err as Error)
      if (err instanceof ProbeError) throw err
      throw new ProbeError('NO_ANSWER', `${subject} did not answer the ping: ${(err as Error).message}`)
    } finally {
      ping.clear()
    }

    const measured = (fields: { ok: boolean, durationMs: number, device?: 'cpu' | 'gpu', detail?: string }): ProbeOutcome => {
      const payload = probeResultPayload({ subject, nonce, claim, n, expectedMs, rttMs, now: this.now(), ...fields })
      const result = sealMessage(signer, 'probe-result', payload)
      return { result, verdict: probeVerdict(result.payload) }
    }

    const waitMs = Math.ceil(PROBE_FLAG_FACTOR * expectedMs + rttMs + PROBE_GRACE_MS)
    const digestWait = deadline(waitMs, options.signal)
    const start = this.monotonic()
    let digest
    try {
      await lp.write(encodeProbeFrame({ kind: 'freivalds-matmul', nonce, n }), { signal: digestWait.signal })
      const first = decodeProbeFrame((await lp.read({ signal: digestWait.signal })).subarray(), ['digest', 'refused'])
      if (first.kind === 'refused') throw new ProbeError('RATE_LIMITED', `${subject} refused the probe: ${first.reason}`)
      digest = first
    } catch (err) {
      stream.abort(err as Error)
      options.signal?.throwIfAborted()
      if (err instanceof ProbeError && err.code === 'RATE_LIMITED') throw err
      const code = err instanceof ProbeError ? err.code : 'NO_ANSWER'
      return measured({ ok: false, durationMs: this.monotonic() - start - rttMs, detail: `${code}: no digest within ${waitMs} ms (${(err as Error).message})` })
    } finally {
      digestWait.clear()
    }
    const durationMs = this.monotonic() - start - rttMs

    const body = deadline(PROBE_TIMEOUT_MS, options.signal)
    try {
      const bytes = (await lp.read({ signal: body.signal })).subarray()
      await stream.close({ signal: body.signal }).catch(() => {})
      if (!bytesEqual(sha256(bytes), digest.digest)) throw new ProbeError('DIGEST_MISMATCH', 'the product does not hash to the digest sent first')
      const c = decodeProduct(bytes, n)
      const a = deriveMatrix(nonce, 'A', n)
      const b = deriveMatrix(nonce, 'B', n)
      if (!freivalds(a, b, c, n, freivaldsVectors(randomNonce(SEED_BYTES), n))) throw new ProbeError('WRONG_PRODUCT', 'the product is not A·B')
      return measured({ ok: true, durationMs, device: digest.device })
    } catch (err) {
      stream.abort(err as Error)
      options.signal?.throwIfAborted()
      const detail = err instanceof ProbeError ? err.message : `NO_ANSWER: ${(err as Error).message}`
      return measured({ ok: false, durationMs, device: digest.device, detail })
    } finally {
      body.clear()
    }
  }
}

const PROBE_PROTOCOL = PROTOCOLS.probe

/** libp2p service factory (STYLE: factory over components). */
export function probeService (init: ProbeInit = {}): (components: ProbeComponents) => ProbeService {
  return (components) => new ProbeService(components, init)
}
