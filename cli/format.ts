import { CID } from '../crypto/index.js'
import { toString as toHex } from 'uint8arrays/to-string'

/** JSON for people and scripts: CIDs as strings, bytes as hex. */
export function toJson (value: unknown): string {
  // read the holder's raw value: JSON.stringify has already called CID.toJSON on `v`
  return JSON.stringify(value, function (this: Record<string, unknown>, key: string, v: unknown) {
    const raw = this[key]
    const cid = CID.asCID(raw)
    if (cid != null) return cid.toString()
    if (raw instanceof Uint8Array) return toHex(raw, 'base16')
    return v
  }, 2)
}

/** A plain text table with padded columns. */
export function table (header: string[], rows: string[][]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)))
  const line = (cells: string[]): string => cells.map((c, i) => i === cells.length - 1 ? c : c.padEnd(widths[i] ?? 0)).join('  ')
  return [line(header), ...rows.map(line)].join('\n')
}
