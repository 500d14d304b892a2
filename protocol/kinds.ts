/**
 * The registry of message kinds: for each, its payload type (a multicodec in the private-use range,
 * so a bid's signature can never be read as a receipt), schema, size limit, longest allowed lifetime
 * and how replays are recognised.
 */
import type { z } from 'zod'
import { toString as toHex } from 'uint8arrays/to-string'
import { encodeVarint } from '../crypto/index.js'
import { capabilityAdSchema } from './messages/capability-ad.js'
import { jobRequestSchema } from './messages/job-request.js'
import { bidSchema } from './messages/bid.js'
import { awardResponseSchema, awardSchema, jobStatusSchema } from './messages/award.js'
import { paymentSchema, receiptSchema } from './messages/settlement.js'
import { attestationSchema, failureReportSchema, fraudProofSchema, probeResultSchema } from './messages/evidence.js'
import { auctionRoundSchema, jobCancelSchema } from './messages/auction.js'
import { DAY_MS as DAY, HOUR_MS as HOUR, MINUTE_MS as MINUTE } from './limits.js'

const KIB = 1024

/**
 * How a replay is recognised: `nonce` — the same signer may never reuse a nonce (requests);
 * `payload` — the same signer's identical payload is a replay (everything else).
 */
export type ReplayKey = 'nonce' | 'payload'

export interface KindSpec<S extends z.ZodType = z.ZodType> {
  /** Multicodec code of the payload type (private-use range 0x300000–0x3fffff). */
  readonly code: number
  readonly schema: S
  /** Largest envelope accepted for this kind, in bytes. */
  readonly maxBytes: number
  /** Longest allowed expiresAt − issuedAt. */
  readonly maxLifetimeMs: number
  readonly replayKey: ReplayKey
  /** A payload field that must hold the signer's peer id, so a copy re-signed by another peer is refused. */
  readonly signerField?: string
}

/**
 * Payload types: 0x3f67xx ("g" for gpumesh). Never reuse a retired code. Retired: 0x3f670c (fraud-proof
 * layout 1, before it embedded the job request).
 */
const KIND_TABLE = {
  'capability-ad': { code: 0x3f6701, schema: capabilityAdSchema, maxBytes: 32 * KIB, maxLifetimeMs: 2 * DAY, replayKey: 'payload' },
  'job-request': { code: 0x3f6702, schema: jobRequestSchema, maxBytes: 64 * KIB, maxLifetimeMs: 7 * DAY, replayKey: 'nonce' },
  bid: { code: 0x3f6703, schema: bidSchema, maxBytes: 4 * KIB, maxLifetimeMs: 1 * HOUR, replayKey: 'payload', signerField: 'provider' },
  award: { code: 0x3f6704, schema: awardSchema, maxBytes: 32 * KIB, maxLifetimeMs: 1 * HOUR, replayKey: 'payload' },
  'award-response': { code: 0x3f6705, schema: awardResponseSchema, maxBytes: 2 * KIB, maxLifetimeMs: 1 * HOUR, replayKey: 'payload' },
  'job-status': { code: 0x3f6706, schema: jobStatusSchema, maxBytes: 2 * KIB, maxLifetimeMs: 15 * MINUTE, replayKey: 'payload' },
  receipt: { code: 0x3f6707, schema: receiptSchema, maxBytes: 16 * KIB, maxLifetimeMs: 400 * DAY, replayKey: 'payload' },
  payment: { code: 0x3f6708, schema: paymentSchema, maxBytes: 2 * KIB, maxLifetimeMs: 30 * DAY, replayKey: 'payload' },
  'failure-report': { code: 0x3f6709, schema: failureReportSchema, maxBytes: 144 * KIB, maxLifetimeMs: 400 * DAY, replayKey: 'payload' },
  attestation: { code: 0x3f670a, schema: attestationSchema, maxBytes: 16 * KIB, maxLifetimeMs: 30 * DAY, replayKey: 'payload', signerField: 'provider' },
  'probe-result': { code: 0x3f670b, schema: probeResultSchema, maxBytes: 2 * KIB, maxLifetimeMs: 30 * DAY, replayKey: 'nonce' },
  'fraud-proof': { code: 0x3f670f, schema: fraudProofSchema, maxBytes: 152 * KIB, maxLifetimeMs: 400 * DAY, replayKey: 'payload' },
  'auction-round': { code: 0x3f670d, schema: auctionRoundSchema, maxBytes: 72 * KIB, maxLifetimeMs: 7 * DAY, replayKey: 'payload' },
  'job-cancel': { code: 0x3f670e, schema: jobCancelSchema, maxBytes: 2 * KIB, maxLifetimeMs: 1 * HOUR, replayKey: 'payload' }
} as const satisfies Record<string, KindSpec>

/** Every kind's spec; `signerField` is optional on all of them. */
export const KINDS: { readonly [K in keyof typeof KIND_TABLE]: typeof KIND_TABLE[K] & Pick<KindSpec, 'signerField'> } = KIND_TABLE

export type Kind = keyof typeof KINDS
export type PayloadOf<K extends Kind> = z.infer<typeof KINDS[K]['schema']>

export const ALL_KINDS = Object.keys(KINDS) as Kind[]

const payloadTypes = new Map<Kind, Uint8Array>()
const kindsByPayloadType = new Map<string, Kind>()
for (const kind of ALL_KINDS) {
  const type = encodeVarint(KINDS[kind].code)
  payloadTypes.set(kind, type)
  kindsByPayloadType.set(toHex(type, 'base16'), kind)
}

/** The payload type bytes (varint multicodec) of `kind`. */
export function payloadTypeOf (kind: Kind): Uint8Array {
  return payloadTypes.get(kind) as Uint8Array
}

/** The kind whose payload type is `type`, if any. */
export function kindOfPayloadType (type: Uint8Array): Kind | undefined {
  return kindsByPayloadType.get(toHex(type, 'base16'))
}
