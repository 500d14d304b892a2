/**
 * Signed messages: a payload of one kind inside an RFC 0002 envelope (DESIGN §3). `sealMessage`
 * makes one; `openMessage` runs every check a receiver owes the network, cheapest first, and either
 * returns the verified payload or throws MessageRejectedError with a reason code.
 */
import {
  EnvelopeError, decodeEnvelope, peerIdFromPublicKey, sealEnvelope, verifyEnvelope,
  type CID, type Ed25519, type Signer
} from '../crypto/index.js'
import { toString as toHex } from 'uint8arrays/to-string'
import { DEFAULT_CLOCK_SKEW_MS, ENVELOPE_DOMAIN, MAX_ENVELOPE_BYTES } from './constants.js'
import { RejectReason, reject } from './errors.js'
import { decodePayload, encodePayload } from './codec.js'
import { KINDS, kindOfPayloadType, payloadTypeOf, type Kind, type PayloadOf } from './kinds.js'
import type { ReplayCache } from './replay-cache.js'

export interface SealedMessage<K extends Kind> {
  readonly kind: K
  readonly payload: PayloadOf<K>
  /** The envelope's wire bytes. */
  readonly bytes: Uint8Array
  /** CID of the payload (for a job request: the job id). */
  readonly cid: CID
}

export interface OpenedMessage<K extends Kind> extends SealedMessage<K> {
  /** Peer id of the signer. */
  readonly signer: string
  readonly publicKey: Uint8Array
}

export interface OpenOptions {
  /** The receiver's clock, ms since the epoch. */
  readonly now: number
  /** Record accepted messages here and refuse ones seen before. */
  readonly replay?: ReplayCache
  readonly clockSkewMs?: number
  /** Lower the size limit below the kind's own. */
  readonly maxBytes?: number
  readonly ed25519?: Ed25519
  /**
   * Skip freshness and replay checks: for evidence read back from storage or embedded in another
   * message (a fraud proof's receipts), where only authenticity and form matter.
   */
  readonly historical?: boolean
}

/** Sign `payload` as `kind`. Throws MessageRejectedError when the payload does not validate. */
export function sealMessage<K extends Kind> (signer: Signer, kind: K, payload: PayloadOf<K>): SealedMessage<K> {
  const encoded = encodePayload(kind, payload)
  checkLifetime(kind, encoded.payload)
  const field = KINDS[kind].signerField
  if (field !== undefined && (encoded.payload as Record<string, unknown>)[field] !== signer.peerId) {
    reject(RejectReason.SIGNER_MISMATCH, `${kind}.${field} must be the signer's peer id ${signer.peerId}`, field)
  }
  const bytes = sealEnvelope(signer, ENVELOPE_DOMAIN, payloadTypeOf(kind), encoded.bytes)
  if (bytes.byteLength > KINDS[kind].maxBytes) {
    reject(RejectReason.TOO_LARGE, `${kind} envelope is ${bytes.byteLength} bytes, limit ${KINDS[kind].maxBytes}`)
  }
  return { kind, payload: encoded.payload, bytes, cid: encoded.cid }
}

interface Timed { issuedAt: number, expiresAt: number }

function checkLifetime (kind: Kind, payload: Timed): void {
  if (payload.expiresAt <= payload.issuedAt) reject(RejectReason.BAD_LIFETIME, 'expiresAt must be after issuedAt', 'expiresAt')
  if (payload.expiresAt - payload.issuedAt > KINDS[kind].maxLifetimeMs) {
    reject(RejectReason.BAD_LIFETIME, `${kind} may live at most ${KINDS[kind].maxLifetimeMs} ms`, 'expiresAt')
  }
}

/**
 * Open `bytes` as one of the `expected` kinds. Checks, in order: size, envelope form, payload type,
 * payload encoding and schema, lifetime and freshness, signature, signer field, replay.
 */
export function openMessage<K extends Kind> (bytes: Uint8Array, expected: K | readonly K[], options: OpenOptions): OpenedMessage<K> {
  const kinds: readonly K[] = typeof expected === 'string' ? [expected] : expected
  const globalLimit = Math.min(options.maxBytes ?? MAX_ENVELOPE_BYTES, MAX_ENVELOPE_BYTES)
  if (!(bytes instanceof Uint8Array)) reject(RejectReason.MALFORMED_ENVELOPE, 'expected bytes')
  if (bytes.byteLength > globalLimit) reject(RejectReason.TOO_LARGE, `${bytes.byteLength} bytes, limit ${globalLimit}`)

  let envelope
  try {
    envelope = decodeEnvelope(bytes)
  } catch (err) {
    if (!(err instanceof EnvelopeError)) throw err
    reject(err.code === 'ENVELOPE_UNSUPPORTED_KEY' ? RejectReason.UNSUPPORTED_KEY : RejectReason.MALFORMED_ENVELOPE, err.message)
  }

  const kind = kindOfPayloadType(envelope.payloadType)
  if (kind === undefined) reject(RejectReason.UNKNOWN_PAYLOAD_TYPE, `payload type ${toHex(envelope.payloadType, 'base16')} is not a gpumesh message`)
  if (!(kinds as readonly Kind[]).includes(kind)) reject(RejectReason.WRONG_PAYLOAD_TYPE, `got ${kind}, expected ${kinds.join(' or ')}`)
  const spec = KINDS[kind]
  const limit = Math.min(spec.maxBytes, globalLimit)
  if (bytes.byteLength > limit) reject(RejectReason.TOO_LARGE, `${kind} of ${bytes.byteLength} bytes, limit ${limit}`)

  const { payload, cid } = decodePayload(kind as K, envelope.payload)
  const timed = payload as Timed
  checkLifetime(kind, timed)
  if (options.historical !== true) {
    const skew = options.clockSkewMs ?? DEFAULT_CLOCK_SKEW_MS
    if (timed.issuedAt > options.now + skew) reject(RejectReason.FUTURE_DATED, `issued ${timed.issuedAt - options.now} ms in the future`, 'issuedAt')
    if (timed.expiresAt <= options.now) reject(RejectReason.EXPIRED, `expired ${options.now - timed.expiresAt} ms ago`, 'expiresAt')
  }

  if (!verifyEnvelope(envelope, ENVELOPE_DOMAIN, options.ed25519)) reject(RejectReason.BAD_SIGNATURE, `${kind} signature does not verify`)
  const signer = peerIdFromPublicKey(envelope.publicKey)
  if (spec.signerField !== undefined) {
    const named = (payload as Record<string, unknown>)[spec.signerField]
    if (named !== signer) reject(RejectReason.SIGNER_MISMATCH, `${kind} names ${String(named)} as its ${spec.signerField} but was signed by ${signer}`, spec.signerField)
  }

  if (options.replay != null && options.historical !== true) {
    if (!options.replay.add(replayKey({ kind, payload, cid }, signer), timed.expiresAt, options.now)) reject(RejectReason.REPLAY, `${kind} ${cid.toString()} from ${signer} seen before`)
  }
  return { kind, payload, bytes, cid, signer, publicKey: envelope.publicKey } as OpenedMessage<K>
}

/**
 * The key under which a replay cache records `message` signed by `signer` (§6.3):
 * `<kind>/<signer>/<id>`, where `<id>` is the hex nonce for kinds keyed by nonce and the payload CID
 * otherwise. A sender that records its own messages MUST use this key, or a byte-identical copy of one
 * of them coming back is not recognised as a replay (and would be accepted and forwarded).
 */
export function replayKey (message: Pick<SealedMessage<Kind>, 'kind' | 'payload' | 'cid'>, signer: string): string {
  const id = KINDS[message.kind].replayKey === 'nonce' ? toHex((message.payload as { nonce: Uint8Array }).nonce, 'base16') : message.cid.toString()
  return `${message.kind}/${signer}/${id}`
}

/**
 * The job request embedded in an auction round, opened with the historical option (the round's own
 * freshness was checked when it was opened). It must be the round's job, signed by the round's signer,
 * and not expired at `now` (a round may not revive an expired job).
 */
export function openRoundRequest (round: OpenedMessage<'auction-round'>, now: number): OpenedMessage<'job-request'> {
  const request = openMessage(round.payload.request, 'job-request', { now, historical: true })
  if (!request.cid.equals(round.payload.job)) reject(RejectReason.EMBEDDED_MISMATCH, `the round is for ${String(round.payload.job)} but embeds ${String(request.cid)}`, 'request')
  if (request.signer !== round.signer) reject(RejectReason.EMBEDDED_MISMATCH, `the job was requested by ${request.signer}, the round signed by ${round.signer}`, 'request')
  if (request.payload.expiresAt <= now) reject(RejectReason.EXPIRED, 'the embedded job request has expired', 'request')
  return request
}
