import { CID } from '../../crypto/index.js'
import { toString as toHex } from 'uint8arrays/to-string'

/** JSON for people and scripts: CIDs as strings, bytes as hex. */
export function toJson (value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) => {
    const cid = CID.asCID(v)
    if (cid != null) return cid.toString()
    if (v instanceof Uint8Array) return toHex(v, 'base16')
    return v
  }, 2)
}
