/**
 * Field schemas shared by the message kinds. Every object is strict (unknown keys are rejected at
 * any depth); every number is a non-negative safe integer unless said otherwise. No floats appear on
 * the wire: shares are per-mille, money is integer micro-credits.
 */
import { z } from 'zod'
import { CID, SHA2_256, isPeerId } from '../../crypto/index.js'
import { PROTOCOL_VERSION } from '../constants.js'

export const uint = z.int().nonnegative()
/** Milliseconds since the Unix epoch. */
export const timestampMs = uint
/** Integer micro-credits (1 credit = 1e6 micros ≈ 1 USD of compute). Prices are micros per GPU-hour. */
export const micros = uint

export const cid = z.custom<CID>((value) => {
  const c = CID.asCID(value)
  return c != null && c.version === 1 && c.multihash.code === SHA2_256
}, { message: 'expected a CIDv1 with sha2-256' })

export const peerId = z.string().max(64).refine(isPeerId, { message: 'expected an Ed25519 peer id' })

export const bytes = (min: number, max: number): z.ZodType<Uint8Array> =>
  z.instanceof(Uint8Array).refine((b) => b.byteLength >= min && b.byteLength <= max, {
    message: `expected ${min}–${max} bytes`
  })

/** A request's random nonce (8–32 bytes). */
export const nonce = bytes(8, 32)

export const text = (max: number) => z.string().max(max)

/** Lower-case slug: `nvidia-h100-80gb-hbm3`, `eu-west`. */
export const slug = (max = 64) => z.string().max(max).regex(/^[a-z0-9]+(-[a-z0-9]+)*$/, { message: 'expected a lower-case slug' })

/** Hierarchical region slug: `eu`, `eu-west`, `us-east-1`. */
export const region = slug(32)

/** ISO 3166-1 alpha-2 country code. */
export const country = z.string().regex(/^[A-Z]{2}$/, { message: 'expected an ISO 3166-1 alpha-2 code' })

export const gpuUuid = z.string().min(1).max(64).regex(/^[A-Za-z0-9-]+$/, { message: 'expected a GPU UUID' })

/** A relative path inside a job's work dir: no leading `/`, no `..` or empty segments, no NUL. */
export const relativePath = z.string().min(1).max(256).refine((p) =>
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

/** IANA time-zone name (`Europe/Berlin`, `UTC`). Its validity against tz data is checked by the node. */
export const timeZone = z.string().max(64).regex(/^[A-Za-z][A-Za-z0-9_+-]*(\/[A-Za-z0-9_+-]+)*$/, { message: 'expected an IANA time zone' })

/** Fields every payload carries (DESIGN §3). */
export const header = {
  v: z.literal(PROTOCOL_VERSION),
  issuedAt: timestampMs,
  expiresAt: timestampMs
}
