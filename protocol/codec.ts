/**
 * Payload encoding: canonical DAG-CBOR, validated against the kind's schema on the way out and on
 * the way in, with every failure mapped to a RejectReason.
 */
import type { z } from 'zod'
import { CborError, decodeCanonical, encodeCanonical, cidOfCborBytes, type CID } from '../crypto/index.js'
import { PROTOCOL_VERSION } from './constants.js'
import { RejectReason, reject } from './errors.js'
import { KINDS, type Kind, type PayloadOf } from './kinds.js'

function describe (issue: z.core.$ZodIssue): string {
  const path = issue.path.map(String).join('.')
  return path === '' ? issue.message : `${path}: ${issue.message}`
}

/** Validate `value` as a `kind` payload; throws MessageRejectedError(UNKNOWN_FIELD | INVALID_FIELD | UNSUPPORTED_VERSION). */
export function validatePayload<K extends Kind> (kind: K, value: unknown): PayloadOf<K> {
  if (typeof value === 'object' && value !== null && 'v' in value && value.v !== PROTOCOL_VERSION) {
    reject(RejectReason.UNSUPPORTED_VERSION, `${kind} version ${String(value.v)}, this node speaks ${PROTOCOL_VERSION}`, 'v')
  }
  const result = KINDS[kind].schema.safeParse(value)
  if (result.success) return result.data as PayloadOf<K>
  const issue = result.error.issues[0] as z.core.$ZodIssue
  const reason = issue.code === 'unrecognized_keys' ? RejectReason.UNKNOWN_FIELD : RejectReason.INVALID_FIELD
  return reject(reason, `${kind}: ${describe(issue)}`, issue.path.map(String).join('.'))
}

/** Remove keys whose value is undefined (optional fields left unset), which DAG-CBOR cannot encode. */
function dropUndefined (value: unknown): unknown {
  if (Array.isArray(value)) return value.map(dropUndefined)
  if (value === null || typeof value !== 'object' || value instanceof Uint8Array || (value as { asCID?: unknown }).asCID === value) return value
  const out: Record<string, unknown> = {}
  for (const [key, field] of Object.entries(value)) if (field !== undefined) out[key] = dropUndefined(field)
  return out
}

export interface EncodedPayload<K extends Kind> {
  readonly payload: PayloadOf<K>
  readonly bytes: Uint8Array
  /** CIDv1(dag-cbor, sha2-256) of `bytes`: the payload's id (a job request's job id). */
  readonly cid: CID
}

/** Validate and canonically encode a payload. */
export function encodePayload<K extends Kind> (kind: K, payload: PayloadOf<K>): EncodedPayload<K> {
  const valid = validatePayload(kind, dropUndefined(payload))
  const bytes = encodeCanonical(valid)
  return { payload: valid, bytes, cid: cidOfCborBytes(bytes) }
}

/** Decode and validate payload bytes (no signature, no freshness: see openMessage for those). */
export function decodePayload<K extends Kind> (kind: K, bytes: Uint8Array): EncodedPayload<K> {
  let value: unknown
  try {
    value = decodeCanonical(bytes)
  } catch (err) {
    if (err instanceof CborError) {
      reject(err.code === 'CBOR_NON_CANONICAL' ? RejectReason.NON_CANONICAL : RejectReason.MALFORMED_PAYLOAD, err.message)
    }
    throw err
  }
  return { payload: validatePayload(kind, value), bytes, cid: cidOfCborBytes(bytes) }
}

/** The job id: the CID of the job request payload. */
export function jobIdOf (job: PayloadOf<'job-request'>): CID {
  return encodePayload('job-request', job).cid
}
