/**
 * /gpumesh/history/1.0.0 (protocol/README.md §7.11; issue 11), pure: a peer asks another what it holds
 * about one subject (a peer id), or for the fraud proofs of every provider it convicted; the server
 * answers with the complete signed envelopes, in a fixed order, bounded in count and bytes. The frames,
 * the limits, the server's selection and the asker's check of an answer's shape live here; the
 * envelopes themselves are opened by the asker exactly as evidence heard on `gpumesh/2/evidence`.
 *
 *   asker  → {v: 1, q: "subject", subject, kinds?, limit, after?} | {v: 1, q: "convicted", limit, after?}
 *   server → {v: 1, envelopes: [bytes…], next?} | {v: 1, envelopes: [], refused: "RATE_LIMITED"}
 */
import { z } from 'zod'
import { CborError, decodeCanonical, encodeCanonical } from '../../crypto/index.js'
import { bytes, peerId } from '../messages/common.js'
import { MAX_ENVELOPE_BYTES } from '../constants.js'
import { EVIDENCE_KINDS, evidenceSubjects, type EvidenceKind } from './evidence-budget.js'
import type { JobRate } from './budget.js'

/** The most envelopes one answer holds (and the largest `limit` an asker may ask for). */
export const HISTORY_MAX_LIMIT = 32
/** The largest answer frame, encoded: 1 MiB, six fraud proofs at their largest or hundreds of receipts. */
export const HISTORY_MAX_RESPONSE_BYTES = 1024 * 1024
/** The largest request frame (a peer id, five kinds and a cursor fit in well under this). */
export const HISTORY_MAX_REQUEST_BYTES = 512
/** A cursor is the sort key of the last envelope served: at most this many bytes of ASCII. */
export const HISTORY_MAX_CURSOR_BYTES = 128
/**
 * What one asking peer may ask a server: 8 requests at once, then one every 5 s (a node joining asks a
 * few peers once, and one more per provider it meets; a scraper is cut to a trickle).
 */
export const HISTORY_RATE: JobRate = Object.freeze({ burst: 8, refillMs: 5_000 })

/** The order a server serves a subject's evidence in: what weighs most first. */
export const HISTORY_ORDER: readonly EvidenceKind[] = ['fraud-proof', 'failure-report', 'probe-result', 'attestation', 'receipt']

/** Why a history frame or answer is refused. */
export const HistoryErrorCode = {
  /** A request frame that is not CBOR or fails the schema. */
  BAD_REQUEST: 'BAD_REQUEST',
  /** An answer frame that is not CBOR, fails the schema, or does not move its cursor forward. */
  BAD_RESPONSE: 'BAD_RESPONSE',
  /** More envelopes than the asker's `limit`. */
  TOO_MANY: 'TOO_MANY',
  /** An answer frame over HISTORY_MAX_RESPONSE_BYTES. */
  TOO_LARGE: 'TOO_LARGE'
} as const
export type HistoryErrorCode = typeof HistoryErrorCode[keyof typeof HistoryErrorCode]

export class HistoryError extends Error {
  override readonly name = 'HistoryError'
  constructor (readonly code: HistoryErrorCode, message: string) {
    super(`${code}: ${message}`)
  }
}

const cursor = z.string().min(1).max(HISTORY_MAX_CURSOR_BYTES).regex(/^[\x21-\x7e]+$/, { message: 'expected printable ASCII' })
const limit = z.int().min(1).max(HISTORY_MAX_LIMIT)

export const historyRequestSchema = z.discriminatedUnion('q', [
  z.strictObject({
    v: z.literal(1),
    q: z.literal('subject'),
    subject: peerId,
    /** Only these kinds (all when absent); each at most once. */
    kinds: z.array(z.enum(EVIDENCE_KINDS)).min(1).max(EVIDENCE_KINDS.length).refine((k) => new Set(k).size === k.length, { message: 'a kind twice' }).optional(),
    limit,
    after: cursor.optional()
  }),
  z.strictObject({ v: z.literal(1), q: z.literal('convicted'), limit, after: cursor.optional() })
])
export type HistoryRequest = z.infer<typeof historyRequestSchema>

export const historyRefusals = ['RATE_LIMITED'] as const

export const historyResponseSchema = z.strictObject({
  v: z.literal(1),
  envelopes: z.array(bytes(1, MAX_ENVELOPE_BYTES)).max(HISTORY_MAX_LIMIT),
  /** The cursor to ask with for more (absent: nothing more). */
  next: cursor.optional(),
  /** The server did not look (the envelopes are empty). */
  refused: z.enum(historyRefusals).optional()
})
export type HistoryResponse = z.infer<typeof historyResponseSchema>

function parse<T> (schema: z.ZodType<T>, data: Uint8Array, code: HistoryErrorCode): T {
  let value: unknown
  try {
    value = decodeCanonical(data)
  } catch (err) {
    if (err instanceof CborError) throw new HistoryError(code, err.message)
    throw err
  }
  const parsed = schema.safeParse(value)
  if (!parsed.success) throw new HistoryError(code, parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; '))
  return parsed.data
}

const defined = <T extends object>(value: T): T => Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as T

export function encodeHistoryRequest (request: HistoryRequest): Uint8Array {
  const bytes = encodeCanonical(defined(historyRequestSchema.parse(request)))
  if (bytes.byteLength > HISTORY_MAX_REQUEST_BYTES) throw new HistoryError('BAD_REQUEST', `${bytes.byteLength} bytes, over ${HISTORY_MAX_REQUEST_BYTES}`)
  return bytes
}

/** Decode a request frame. Throws HistoryError BAD_REQUEST. */
export function decodeHistoryRequest (data: Uint8Array): HistoryRequest {
  if (data.byteLength > HISTORY_MAX_REQUEST_BYTES) throw new HistoryError('BAD_REQUEST', `${data.byteLength} bytes, over ${HISTORY_MAX_REQUEST_BYTES}`)
  return parse(historyRequestSchema, data, 'BAD_REQUEST')
}

export function encodeHistoryResponse (response: HistoryResponse): Uint8Array {
  const bytes = encodeCanonical(defined(historyResponseSchema.parse(response)))
  if (bytes.byteLength > HISTORY_MAX_RESPONSE_BYTES) throw new HistoryError('TOO_LARGE', `${bytes.byteLength} bytes, over ${HISTORY_MAX_RESPONSE_BYTES}`)
  return bytes
}

/**
 * Decode an answer to `request` and check its shape: at most `limit` envelopes, a `next` cursor past
 * the request's (a server cannot keep an asker paging in place). Throws HistoryError.
 */
export function decodeHistoryResponse (data: Uint8Array, request: HistoryRequest): HistoryResponse {
  if (data.byteLength > HISTORY_MAX_RESPONSE_BYTES) throw new HistoryError('TOO_LARGE', `${data.byteLength} bytes, over ${HISTORY_MAX_RESPONSE_BYTES}`)
  const response = parse(historyResponseSchema, data, 'BAD_RESPONSE')
  if (response.envelopes.length > request.limit) throw new HistoryError('TOO_MANY', `${response.envelopes.length} envelopes, asked for ${request.limit}`)
  if (response.refused !== undefined && (response.envelopes.length > 0 || response.next !== undefined)) throw new HistoryError('BAD_RESPONSE', 'a refusal with envelopes')
  if (response.next !== undefined && request.after !== undefined && response.next <= request.after) throw new HistoryError('BAD_RESPONSE', `cursor ${response.next} is not past ${request.after}`)
  return response
}

/** One envelope a server holds, as its index knows it (the bytes are loaded only once selected). */
export interface HistoryEntry {
  /** The sort key: `<rank>/<payload cid>` for a subject (rank in HISTORY_ORDER), the subject for a conviction. */
  key: string
  kind: EvidenceKind
  /** The envelope's payload CID string (where its bytes are kept). */
  cid: string
  /** The envelope's size in bytes. */
  size: number
  expiresAt: number
}

/** The sort key of a subject's envelope of `kind`. */
export function historyKey (kind: EvidenceKind, cid: string): string {
  return `${HISTORY_ORDER.indexOf(kind)}/${cid}`
}

/** Bytes of a CBOR major-type header for a length `n`. */
function headerBytes (n: number): number {
  return n < 24 ? 1 : n < 0x100 ? 2 : n < 0x10000 ? 3 : n < 0x100000000 ? 5 : 9
}

/**
 * The encoded size of an answer holding envelopes of `sizes` bytes and `next` (canonical DAG-CBOR:
 * a map of `v`, `envelopes` and `next`), so a server can fill an answer up to the cap without encoding it.
 */
export function historyResponseBytes (sizes: readonly number[], next?: string): number {
  let n = 1 + 2 + 1 + 10 + headerBytes(sizes.length)
  for (const s of sizes) n += headerBytes(s) + s
  if (next !== undefined) n += 5 + headerBytes(next.length) + next.length
  return n
}

/**
 * What a server answers `request` with from the `entries` it holds about the subject (or its
 * convictions): those past the cursor, of the kinds asked for, not expired at `now`, in key order,
 * as many as fit `limit` and HISTORY_MAX_RESPONSE_BYTES (`next` included). `next` is the key of the
 * last one taken when more remain. An entry larger than any answer can hold is stepped over.
 */
export function selectHistory (entries: readonly HistoryEntry[], request: HistoryRequest, now: number, maxBytes = HISTORY_MAX_RESPONSE_BYTES): { entries: HistoryEntry[], next?: string } {
  const kinds = request.q === 'subject' ? request.kinds : ['fraud-proof' as const]
  const after = request.after
  const eligible = entries
    .filter((e) => (after === undefined || e.key > after) && e.expiresAt > now && (kinds === undefined || kinds.includes(e.kind)))
    .sort((a, b) => a.key < b.key ? -1 : a.key > b.key ? 1 : 0)
  const taken: HistoryEntry[] = []
  for (const [i, e] of eligible.entries()) {
    const more = i + 1 < eligible.length
    const sizes = [...taken.map((t) => t.size), e.size]
    if (taken.length < request.limit && historyResponseBytes(sizes, more ? e.key : undefined) <= maxBytes) {
      taken.push(e)
      continue
    }
    if (taken.length === 0) {
      // too large for any answer: step over it, or the asker would page here for ever
      if (more) return { entries: [], next: e.key }
      return { entries: [] }
    }
    return { entries: taken, next: (taken[taken.length - 1] as HistoryEntry).key }
  }
  return { entries: taken }
}

/**
 * Whether an envelope served for `request` is one that was asked for: its kind among those asked,
 * and, for a subject, naming the subject among the peers it concerns (evidence-budget.ts); for
 * convictions, a fraud proof. Undefined when it is, else `IRRELEVANT` (the server sent what it was
 * not asked for, which counts against it).
 */
export function servedRefusal (request: HistoryRequest, kind: string, payload: Record<string, unknown>, signer: string): 'IRRELEVANT' | undefined {
  if (!(EVIDENCE_KINDS as readonly string[]).includes(kind)) return 'IRRELEVANT'
  const k = kind as EvidenceKind
  if (request.q === 'convicted') return k === 'fraud-proof' ? undefined : 'IRRELEVANT'
  if (request.kinds !== undefined && !request.kinds.includes(k)) return 'IRRELEVANT'
  return evidenceSubjects(k, payload, signer).peers.includes(request.subject) ? undefined : 'IRRELEVANT'
}
