/**
 * The frames of /gpumesh/probe/1.0.0 (protocol/README.md "Attestations and probes"): each a canonical
 * DAG-CBOR map in a length-prefixed frame, except the answer, which is the raw product bytes. Pure.
 *
 *   challenger → {kind: "ping", nonce}               provider → {kind: "pong", nonce}   (a reachability probe ends here)
 *   challenger → {kind: "freivalds-matmul", nonce, n} provider → {kind: "refused", reason}
 *                                                      | {kind: "digest", device, digest} then the product
 */
import { z } from 'zod'
import { CborError, decodeCanonical, encodeCanonical } from '../../crypto/index.js'
import { bytes, nonce } from '../messages/common.js'
import { PROBE_MAX_N, ProbeError } from './probe.js'

/** Why a provider refuses a probe stream. */
export const probeRefusals = ['RATE_LIMITED', 'BUSY'] as const

export const probeFrameSchema = z.discriminatedUnion('kind', [
  z.strictObject({ kind: z.literal('ping'), nonce }),
  z.strictObject({ kind: z.literal('pong'), nonce }),
  z.strictObject({ kind: z.literal('refused'), reason: z.enum(probeRefusals) }),
  z.strictObject({ kind: z.literal('freivalds-matmul'), nonce, n: z.int().min(1).max(PROBE_MAX_N) }),
  /** SHA-256 of the product bytes, sent the moment the product is known: the challenger's clock stops here. */
  z.strictObject({ kind: z.literal('digest'), device: z.enum(['cpu', 'gpu']), digest: bytes(32, 32) })
])

export type ProbeFrame = z.infer<typeof probeFrameSchema>

/** Longest CBOR frame of the protocol (a 32-byte nonce or digest and the field names): far below this. */
export const PROBE_MAX_FRAME_BYTES = 256

export function encodeProbeFrame (frame: ProbeFrame): Uint8Array {
  return encodeCanonical(probeFrameSchema.parse(frame))
}

/** Decode a frame, expecting one of `kinds`. Throws ProbeError BAD_FRAME. */
export function decodeProbeFrame<K extends ProbeFrame['kind']> (data: Uint8Array, kinds: readonly K[]): Extract<ProbeFrame, { kind: K }> {
  let value: unknown
  try {
    value = decodeCanonical(data)
  } catch (err) {
    if (err instanceof CborError) throw new ProbeError('BAD_FRAME', err.message)
    throw err
  }
  const parsed = probeFrameSchema.safeParse(value)
  if (!parsed.success) throw new ProbeError('BAD_FRAME', parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; '))
  if (!(kinds as readonly string[]).includes(parsed.data.kind)) throw new ProbeError('BAD_FRAME', `got ${parsed.data.kind}, expected ${kinds.join(' or ')}`)
  return parsed.data as Extract<ProbeFrame, { kind: K }>
}
