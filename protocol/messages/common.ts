/**
 * Field schemas shared by the message kinds. Every object is strict (unknown keys are rejected at
 * any depth); every number is a non-negative safe integer unless said otherwise. No floats appear on
 * the wire: shares are per-mille, money is integer micro-credits.
 */
import { z } from 'zod'
import { CID, DAG_CBOR_CODEC, RAW_CODEC, SHA2_256, isPeerId } from '../../crypto/index.js'
import { PROTOCOL_VERSION } from '../constants.js'
import { TIME_ZONE_MAX_LENGTH, TIME_ZONE_NAME } from '../time-zone.js'

export const uint = z.int().nonnegative()
/** Milliseconds since the Unix epoch. */
export const timestampMs = uint
/** Integer micro-credits (1 credit = 1e6 micros ≈ 1 USD of compute). Prices are micros per GPU-hour. */
export const micros = uint

const SHA2_256_BYTES = 32

function cidOf (codecs: readonly number[], what: string) {
  return z.custom<CID>((value) => {
    const c = CID.asCID(value)
    return c != null && c.version === 1 && codecs.includes(c.code) && c.multihash.code === SHA2_256 && c.multihash.size === SHA2_256_BYTES
  }, { message: `expected a CIDv1 (${what}, sha2-256)` })
}

/** A signed message's payload or another DAG-CBOR document (an output manifest). */
export const cborCid = cidOf([DAG_CBOR_CODEC], 'dag-cbor')
/** A blob: raw bytes. */
export const blobCid = cidOf([RAW_CODEC], 'raw')
/** A blob or a DAG-CBOR manifest of blobs. */
export const contentCid = cidOf([RAW_CODEC, DAG_CBOR_CODEC], 'raw or dag-cbor')

export const peerId = z.string().max(64).refine(isPeerId, { message: 'expected an Ed25519 peer id' })

export const bytes = (min: number, max: number): z.ZodType<Uint8Array> =>
  z.instanceof(Uint8Array).refine((b) => b.byteLength >= min && b.byteLength <= max, {
    message: `expected ${min}–${max} bytes`
  })

/** A request's random nonce (8–32 bytes). */
export const nonce = bytes(8, 32)

/** UTF-8 length of `s` without allocating (lone surrogates count as the 3 bytes of U+FFFD). */
export function utf8Length (s: string): number {
  let bytes = 0
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i)
    if (c < 0x80) bytes += 1
    else if (c < 0x800) bytes += 2
    else if (c >= 0xd800 && c <= 0xdbff && i + 1 < s.length && (s.charCodeAt(i + 1) & 0xfc00) === 0xdc00) { bytes += 4; i++ }
    else bytes += 3
  }
  return bytes
}

/** A string of at most `max` UTF-8 bytes (the limit is on the wire size, not on characters). */
export const text = (max: number) => z.string().refine((s) => utf8Length(s) <= max, { message: `at most ${max} UTF-8 bytes` })

/** Lower-case slug: `nvidia-h100-80gb-hbm3`, `eu-west`. */
export const slug = (max = 64) => z.string().max(max).regex(/^[a-z0-9]+(-[a-z0-9]+)*$/, { message: 'expected a lower-case slug' })

/** Hierarchical region slug: `eu`, `eu-west`, `us-east-1`. */
export const region = slug(32)

/** ISO 3166-1 alpha-2 country code. */
export const country = z.string().regex(/^[A-Z]{2}$/, { message: 'expected an ISO 3166-1 alpha-2 code' })

export const gpuUuid = z.string().min(1).max(64).regex(/^[A-Za-z0-9-]+$/, { message: 'expected a GPU UUID' })

/** A relative path inside a job's work dir: no leading `/`, no `..` or empty segments, no NUL. */
export const relativePath = z.string().min(1).refine((p) => utf8Length(p) <= 256, { message: 'at most 256 UTF-8 bytes' }).refine((p) =>
  !p.startsWith('/') && !p.includes('\0') && !p.includes('\\') && p.split('/').every((s) => s !== '' && s !== '.' && s !== '..'),
{ message: 'expected a relative path without . or .. segments' })

export const executor = z.enum(['process', 'docker', 'wasm'])
export const tier = z.enum(['gold', 'silver', 'bronze'])
export const paymentRule = z.enum(['first-price', 'second-score'])

export const uniqueArray = <T extends z.ZodType>(item: T, max: number, min = 0) =>
  z.array(item).min(min).max(max).refine((items) => new Set(items.map((i) => JSON.stringify(i))).size === items.length, {
    message: 'expected unique items'
  })

/** A weekly window in the owner's time zone: ISO day (1 = Monday … 7 = Sunday), minutes from midnight. */
export const weeklyWindow = z.strictObject({
  day: z.int().min(1).max(7),
  start: z.int().min(0).max(1439),
  end: z.int().min(1).max(1440)
}).refine((w) => w.end > w.start, { message: 'window must end after it starts' })

/**
 * IANA time-zone name (`Europe/Berlin`, `UTC`): its form only (protocol/time-zone.ts), so a message's
 * validity does not depend on the receiver's tz data; the config and the decisions also need it known.
 */
export const timeZone = z.string().max(TIME_ZONE_MAX_LENGTH).regex(TIME_ZONE_NAME, { message: 'expected an IANA time zone' })

/** Fields every payload carries (DESIGN §3). */
export const header = {
  v: z.literal(PROTOCOL_VERSION),
  issuedAt: timestampMs,
  expiresAt: timestampMs
}
