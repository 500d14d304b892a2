/**
 * The RIPE Atlas inter-country RTT table (simulations/data/latency/): a parser from its CSV text to
 * rows, so the simulator reads measured delays. Pure: the caller reads the file (cli/, tests).
 *
 * Columns, in this order: `cty1, cty2, rtt_cnt, rtt_avg, rtt_std, rtt_min, rtt_max` (ms, round trip).
 * One row per unordered pair. An empty `rtt_std` (the table's single-measurement rows) reads as 0.
 */

/** The table's codes that are not countries (probes without one): parsed, never used for a node. */
export const PLACEHOLDER_CODES: readonly string[] = Object.freeze(['None', 'Unknown'])

export const RTT_COLUMNS: readonly string[] = Object.freeze(['cty1', 'cty2', 'rtt_cnt', 'rtt_avg', 'rtt_std', 'rtt_min', 'rtt_max'])

/** One pair's round-trip statistics, ms. */
export interface RttStats {
  avg: number
  std: number
  min: number
  max: number
}

export interface RttRow extends RttStats {
  a: string
  b: string
  /** Measurements behind the row. */
  count: number
}

export interface RttTable {
  rows: RttRow[]
  /** Every code in the table, placeholders included, sorted. */
  codes: string[]
  /** The codes that are countries (placeholders left out), sorted. */
  countries: string[]
}

export type RttTableErrorCode =
  /** The first line is not the expected header. */
  | 'HEADER'
  /** A row has not exactly 7 fields. */
  | 'COLUMNS'
  /** A code is neither two capital letters nor a placeholder. */
  | 'CODE'
  /** A number is missing, not finite or negative (rtt_cnt: not a positive integer). */
  | 'NUMBER'
  /** rtt_min > rtt_max, or rtt_avg outside [rtt_min, rtt_max] beyond float rounding. */
  | 'ORDER'
  /** The same unordered pair appears twice. */
  | 'DUPLICATE'
  /** No rows. */
  | 'EMPTY'

/** The RTT table's text is not what the parser reads; `line` is 1-based (1 = the header). */
export class RttTableError extends Error {
  override readonly name = 'RttTableError'
  constructor (readonly code: RttTableErrorCode, readonly line: number, message: string) {
    super(`rtt table line ${line}: ${message}`)
  }
}

const COUNTRY_CODE = /^[A-Z]{2}$/
/** The table's avg is a float64 mean of float32 samples: it may pass min or max by a rounding step. */
const ORDER_TOLERANCE = 1e-6

export function isPlaceholderCode (code: string): boolean {
  return PLACEHOLDER_CODES.includes(code)
}

function code (field: string, line: number): string {
  if (COUNTRY_CODE.test(field) || isPlaceholderCode(field)) return field
  throw new RttTableError('CODE', line, `expected an ISO 3166 alpha-2 code or a placeholder, got ${JSON.stringify(field)}`)
}

function number (field: string, name: string, line: number, emptyAs?: number): number {
  if (field === '' && emptyAs !== undefined) return emptyAs
  const n = field.trim() === '' ? Number.NaN : Number(field)
  if (!Number.isFinite(n) || n < 0) throw new RttTableError('NUMBER', line, `${name}: expected a number ≥ 0, got ${JSON.stringify(field)}`)
  return n
}

/** Parse the table's CSV text (LF or CRLF, a trailing newline or none). Throws RttTableError. */
export function parseRttTable (text: string): RttTable {
  const lines = text.split(/\r?\n/)
  if (lines.at(-1) === '') lines.pop()
  if (lines[0] !== RTT_COLUMNS.join(',')) throw new RttTableError('HEADER', 1, `expected ${RTT_COLUMNS.join(',')}, got ${JSON.stringify(lines[0] ?? '')}`)
  const rows: RttRow[] = []
  const seen = new Set<string>()
  const codes = new Set<string>()
  for (let i = 1; i < lines.length; i++) {
    const line = i + 1
    const f = (lines[i] as string).split(',')
    if (f.length !== RTT_COLUMNS.length) throw new RttTableError('COLUMNS', line, `expected ${RTT_COLUMNS.length} fields, got ${f.length}`)
    const a = code(f[0] as string, line)
    const b = code(f[1] as string, line)
    const count = number(f[2] as string, 'rtt_cnt', line)
    if (!Number.isInteger(count) || count < 1) throw new RttTableError('NUMBER', line, `rtt_cnt: expected a positive integer, got ${JSON.stringify(f[2])}`)
    const avg = number(f[3] as string, 'rtt_avg', line)
    const std = number(f[4] as string, 'rtt_std', line, 0)
    const min = number(f[5] as string, 'rtt_min', line)
    const max = number(f[6] as string, 'rtt_max', line)
    const slack = ORDER_TOLERANCE * Math.max(1, max)
    if (min > max || avg < min - slack || avg > max + slack) throw new RttTableError('ORDER', line, `expected rtt_min ≤ rtt_avg ≤ rtt_max, got ${min} / ${avg} / ${max}`)
    const key = a < b ? `${a},${b}` : `${b},${a}`
    if (seen.has(key)) throw new RttTableError('DUPLICATE', line, `the pair ${key} appears twice`)
    seen.add(key)
    codes.add(a)
    codes.add(b)
    rows.push({ a, b, count, avg, std, min, max })
  }
  if (rows.length === 0) throw new RttTableError('EMPTY', 1, 'no rows')
  const sorted = [...codes].sort()
  return { rows, codes: sorted, countries: sorted.filter((c) => !isPlaceholderCode(c)) }
}
