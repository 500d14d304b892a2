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

/** `failed: no acceptable bids`, but `cancelled by the requester` (not `cancelled: cancelled by …`). */
export function statusText (status: string, reason?: string): string {
  if (reason === undefined || reason === '') return status
  return reason === status || reason.startsWith(`${status} `) ? reason : `${status}: ${reason}`
}

/** 45s, 2m05s, 1h02m. */
export function elapsed (ms: number): string {
  const s = Math.max(0, Math.floor(ms / 1000))
  if (s < 60) return `${s}s`
  if (s < 3600) return `${Math.floor(s / 60)}m${String(s % 60).padStart(2, '0')}s`
  return `${Math.floor(s / 3600)}h${String(Math.floor(s / 60) % 60).padStart(2, '0')}m`
}

/**
 * Text from elsewhere (a job's output, run on someone else's machine) made safe for one terminal
 * line: control characters (escape sequences, carriage returns) become spaces; cut to `width`.
 */
export function oneLine (text: string, width: number): string {
  const plain = text.replace(/[\u0000-\u001f\u007f-\u009f]/g, ' ').trimEnd()
  return plain.length > width ? `${plain.slice(0, Math.max(0, width - 1))}…` : plain
}

/**
 * A provider's score in this node's reputation view, in a few words: the score, then what it rests on —
 * this node's own receipts and failures, and how many other reporters it trusts of those it heard.
 */
export function reputationText (r: { score: number, own: { okCount: number, failedCount: number }, others: { reporters: number, trusted: number }, known: boolean, convicted?: string }): string {
  if (r.convicted !== undefined) return `CONVICTED (fraud proof ${r.convicted}; never awarded)`
  if (!r.known) return `${r.score.toFixed(2)} (no history: the prior)`
  const own = `own ${r.own.okCount} ok / ${r.own.failedCount} failed`
  const others = r.others.reporters === 0 ? 'no reports from others' : `${r.others.trusted} of ${r.others.reporters} reporters trusted`
  return `${r.score.toFixed(2)} (${own}; ${others})`
}
