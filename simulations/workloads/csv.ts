/**
 * A strict CSV reader (RFC 4180): a header row, comma-separated fields, double-quoted fields that may hold
 * commas, quotes (`""`) and line breaks, LF or CRLF line ends, an optional UTF-8 BOM and empty lines at the
 * end. Anything else — a row with the wrong number of fields, a quote inside an unquoted field, text after
 * a closing quote, an unterminated quote, a bare CR — is a `CsvError` naming the line, never a guess.
 *
 * It takes the file's text (the CLI reads files; simulations/ does no I/O). `CsvTable` reads typed values
 * out of rows and throws `CsvValueError` with the line and column of a bad value.
 */

export type CsvErrorCode =
  /** The text has no header row. */
  | 'NO_HEADER'
  /** Two header columns have the same name. */
  | 'DUPLICATE_COLUMN'
  /** A row has more or fewer fields than the header. */
  | 'FIELD_COUNT'
  /** A `"` inside an unquoted field, or text after a closing quote. */
  | 'STRAY_QUOTE'
  /** A quoted field runs to the end of the text. */
  | 'UNTERMINATED_QUOTE'
  /** A CR not followed by LF outside quotes. */
  | 'BARE_CR'

/** The text is not well-formed CSV. */
export class CsvError extends Error {
  constructor (readonly code: CsvErrorCode, readonly line: number, detail: string, readonly source = 'csv') {
    super(`${source}:${line}: ${detail}`)
    this.name = 'CsvError'
  }
}

export type CsvValueErrorCode =
  /** The header lacks a column the reader needs. */
  | 'MISSING_COLUMN'
  /** A required field is empty. */
  | 'EMPTY'
  /** A field that must be a number is not one. */
  | 'NOT_A_NUMBER'
  /** A number outside its allowed range (or not whole where it must be). */
  | 'OUT_OF_RANGE'
  /** A field whose value is not one of the allowed ones. */
  | 'BAD_VALUE'

/** A well-formed row holds a value the reader cannot use. `line` is 1-based (the header is line 1); 0 for a missing column. */
export class CsvValueError extends Error {
  constructor (readonly code: CsvValueErrorCode, readonly line: number, readonly column: string, detail: string, readonly source = 'csv') {
    super(`${source}:${line}: column ${column}: ${detail}`)
    this.name = 'CsvValueError'
  }
}

export interface CsvRow {
  /** The line the row starts on (1-based; the header is line 1). */
  line: number
  fields: string[]
}

export interface NumberRule {
  min?: number
  max?: number
  integer?: boolean
}

export class CsvTable {
  private readonly index = new Map<string, number>()

  constructor (readonly header: string[], readonly rows: CsvRow[], readonly source = 'csv') {
    header.forEach((name, i) => this.index.set(name, i))
  }

  has (column: string): boolean {
    return this.index.has(column)
  }

  /** Throws MISSING_COLUMN unless every column is in the header. */
  require (...columns: string[]): void {
    for (const c of columns) {
      if (!this.index.has(c)) throw new CsvValueError('MISSING_COLUMN', 0, c, `the header has no column ${c} (it has ${this.header.join(', ')})`, this.source)
    }
  }

  /** The raw field (undefined when the table has no such column). */
  text (row: CsvRow, column: string): string | undefined {
    const i = this.index.get(column)
    return i === undefined ? undefined : row.fields[i]
  }

  /** A field that must be present and non-empty. */
  required (row: CsvRow, column: string): string {
    const v = this.text(row, column)
    if (v === undefined) throw new CsvValueError('MISSING_COLUMN', row.line, column, 'no such column', this.source)
    if (v === '') throw new CsvValueError('EMPTY', row.line, column, 'empty field', this.source)
    return v
  }

  /** A finite decimal number, checked against `rule`. */
  number (row: CsvRow, column: string, rule: NumberRule = {}): number {
    return this.numberOf(row, column, this.required(row, column), rule)
  }

  /** A number, or undefined when the column is absent or the field empty. */
  optionalNumber (row: CsvRow, column: string, rule: NumberRule = {}): number | undefined {
    const v = this.text(row, column)
    return v === undefined || v === '' ? undefined : this.numberOf(row, column, v, rule)
  }

  /** A value error for this table (for checks the reader makes itself). */
  error (code: CsvValueErrorCode, row: CsvRow, column: string, detail: string): CsvValueError {
    return new CsvValueError(code, row.line, column, detail, this.source)
  }

  /** `v` (a field of `row`, or a value translated from one) as a number, checked against `rule`. */
  numberOf (row: CsvRow, column: string, v: string, rule: NumberRule = {}): number {
    const s = v.trim()
    const n = /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/.test(s) ? Number(s) : Number.NaN
    if (!Number.isFinite(n)) throw this.error('NOT_A_NUMBER', row, column, `not a number: ${JSON.stringify(v)}`)
    if (rule.integer === true && !Number.isInteger(n)) throw this.error('OUT_OF_RANGE', row, column, `not a whole number: ${v}`)
    if (rule.min !== undefined && n < rule.min) throw this.error('OUT_OF_RANGE', row, column, `${v} is below ${rule.min}`)
    if (rule.max !== undefined && n > rule.max) throw this.error('OUT_OF_RANGE', row, column, `${v} is above ${rule.max}`)
    return n
  }
}

/** Parse CSV text with a header row. `source` names the file in error messages. */
export function parseCsv (text: string, source = 'csv'): CsvTable {
  const records = splitRecords(text.charCodeAt(0) === 0xfeff ? text.slice(1) : text, source)
  // Empty lines at the very end are a file's final newline(s), not rows.
  while (records.length > 0 && isBlank(records[records.length - 1] as CsvRow)) records.pop()
  const head = records.shift()
  if (head === undefined) throw new CsvError('NO_HEADER', 1, 'empty text: no header row', source)
  const seen = new Set<string>()
  for (const name of head.fields) {
    if (seen.has(name)) throw new CsvError('DUPLICATE_COLUMN', head.line, `duplicate column ${JSON.stringify(name)}`, source)
    seen.add(name)
  }
  for (const r of records) {
    if (r.fields.length !== head.fields.length) {
      throw new CsvError('FIELD_COUNT', r.line, `${r.fields.length} field(s), the header has ${head.fields.length}`, source)
    }
  }
  return new CsvTable(head.fields, records, source)
}

function isBlank (r: CsvRow): boolean {
  return r.fields.length === 1 && r.fields[0] === ''
}

const QUOTE = 0x22
const COMMA = 0x2c
const LF = 0x0a
const CR = 0x0d

/** Split text into records of fields, tracking the line each record starts on. */
function splitRecords (text: string, source: string): CsvRow[] {
  const rows: CsvRow[] = []
  let fields: string[] = []
  let line = 1
  let rowLine = 1
  let i = 0
  const n = text.length
  const endRecord = (): void => {
    rows.push({ line: rowLine, fields })
    fields = []
  }
  if (n === 0) return rows
  for (;;) {
    // At the start of a field.
    if (text.charCodeAt(i) === QUOTE) {
      const open = line
      let value = ''
      let from = ++i
      for (;;) {
        if (i >= n) throw new CsvError('UNTERMINATED_QUOTE', open, 'a quoted field is never closed', source)
        const c = text.charCodeAt(i)
        if (c === QUOTE) {
          if (text.charCodeAt(i + 1) === QUOTE) {
            value += text.slice(from, i + 1)
            i += 2
            from = i
            continue
          }
          value += text.slice(from, i)
          i++
          break
        }
        if (c === LF) line++
        i++
      }
      fields.push(value)
      const c = i < n ? text.charCodeAt(i) : -1
      if (c !== COMMA && c !== LF && c !== CR && c !== -1) throw new CsvError('STRAY_QUOTE', line, 'text after a closing quote', source)
    } else {
      const from = i
      while (i < n) {
        const c = text.charCodeAt(i)
        if (c === COMMA || c === LF || c === CR) break
        if (c === QUOTE) throw new CsvError('STRAY_QUOTE', line, 'a quote inside an unquoted field', source)
        i++
      }
      fields.push(text.slice(from, i))
    }
    // After a field: a comma, a line end, or the end of the text.
    if (i >= n) {
      endRecord()
      return rows
    }
    const c = text.charCodeAt(i)
    if (c === COMMA) {
      i++
      continue
    }
    if (c === CR) {
      if (text.charCodeAt(i + 1) !== LF) throw new CsvError('BARE_CR', line, 'a CR not followed by LF', source)
      i++
    }
    i++ // the LF
    line++
    endRecord()
    rowLine = line
    if (i >= n) return rows
  }
}
