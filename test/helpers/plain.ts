import { CID } from '../../crypto/index.js'
import { toString as toHex } from 'uint8arrays/to-string'

/** A comparable plain form: CIDs → strings, bytes → hex, undefined-valued keys dropped. */
export function plain (value: unknown): unknown {
  const cid = CID.asCID(value)
  if (cid != null) return `cid:${cid.toString()}`
  if (value instanceof Uint8Array) return `bytes:${toHex(value, 'base16')}`
  if (Array.isArray(value)) return value.map(plain)
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {}
    for (const [k, v] of Object.entries(value)) if (v !== undefined) out[k] = plain(v)
    return out
  }
  return value
}
