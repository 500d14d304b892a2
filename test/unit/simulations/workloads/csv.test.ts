/**
 * simulations/workloads/csv.ts: the strict CSV reader every loader uses. Quoted fields, CRLF, a final
 * newline, and a typed error naming the line for each kind of malformed text.
 */
import assert from 'node:assert/strict'
import { CsvError, type CsvErrorCode, CsvValueError, parseCsv } from '../../../../simulations/workloads/csv.js'

function fails (text: string, code: CsvErrorCode, line: number): void {
  assert.throws(() => parseCsv(text, 'f.csv'), (e: unknown) => {
    assert.ok(e instanceof CsvError, String(e))
    assert.equal(e.code, code)
    assert.equal(e.line, line, e.message)
    assert.match(e.message, new RegExp(`^f\\.csv:${line}: `))
    return true
  })
}

describe('simulations/workloads: CSV reader', () => {
  it('reads a header and rows, with and without a final newline', () => {
    for (const text of ['a,b\n1,2\n3,4', 'a,b\n1,2\n3,4\n', 'a,b\n1,2\n3,4\n\n\n']) {
      const t = parseCsv(text)
      assert.deepEqual(t.header, ['a', 'b'])
      assert.deepEqual(t.rows.map((r) => r.fields), [['1', '2'], ['3', '4']])
      assert.deepEqual(t.rows.map((r) => r.line), [2, 3])
    }
  })

  it('reads CRLF line ends like LF ones, and drops a UTF-8 BOM', () => {
    const t = parseCsv('\ufeffa,b\r\n1,2\r\n"x\r\ny",\r\n')
    assert.deepEqual(t.header, ['a', 'b'])
    assert.deepEqual(t.rows.map((r) => r.fields), [['1', '2'], ['x\r\ny', '']])
  })

  it('reads quoted fields: commas, doubled quotes, line breaks (and counts lines through them)', () => {
    const t = parseCsv('name,note\n"a, b","say ""hi"""\n"multi\nline",x\nlast,""\n')
    assert.deepEqual(t.rows.map((r) => r.fields), [['a, b', 'say "hi"'], ['multi\nline', 'x'], ['last', '']])
    assert.deepEqual(t.rows.map((r) => r.line), [2, 3, 5], 'the row after a quoted line break starts on line 5')
  })

  it('keeps empty fields, including a last empty field', () => {
    const t = parseCsv('a,b,c\n,,\n1,,3\n')
    assert.deepEqual(t.rows.map((r) => r.fields), [['', '', ''], ['1', '', '3']])
  })

  it('a header alone is a table with no rows; an empty text has no header', () => {
    assert.equal(parseCsv('a,b\n').rows.length, 0)
    fails('', 'NO_HEADER', 1)
    fails('\n\n', 'NO_HEADER', 1)
  })

  it('names the line of a row with too many or too few fields, and of a blank line inside the data', () => {
    fails('a,b\n1,2\n3\n', 'FIELD_COUNT', 3)
    fails('a,b\n1,2,3\n', 'FIELD_COUNT', 2)
    fails('a,b\n1,2\n\n3,4\n', 'FIELD_COUNT', 3)
    fails('a,b\r\n"x\ny",1\r\n5\r\n', 'FIELD_COUNT', 4)
  })

  it('refuses stray quotes, an unterminated quote, a bare CR and duplicate columns', () => {
    fails('a,b\n1,x"y\n', 'STRAY_QUOTE', 2)
    fails('a,b\n1,"x"y\n', 'STRAY_QUOTE', 2)
    fails('a,b\n1,2\n"open,3\n', 'UNTERMINATED_QUOTE', 3)
    fails('a,b\n1,2\r3,4\n', 'BARE_CR', 2)
    fails('a,a\n1,2\n', 'DUPLICATE_COLUMN', 1)
  })

  it('reads typed values with the line and column of a bad one', () => {
    const t = parseCsv('n,x\n5,\n1.5,2\nabc,1e3\n-1,0x10\n', 'v.csv')
    const [r1, r2, r3, r4] = t.rows as [never, never, never, never]
    assert.equal(t.number(r1, 'n', { integer: true, min: 0, max: 5 }), 5, 'exactly at the maximum')
    assert.equal(t.optionalNumber(r1, 'x'), undefined)
    assert.equal(t.number(r3, 'x'), 1000)
    const value = (f: () => unknown, code: string, line: number, column: string): void => {
      assert.throws(f, (e: unknown) => e instanceof CsvValueError && e.code === code && e.line === line && e.column === column && e.message.startsWith(`v.csv:${line}: column ${column}`))
    }
    value(() => t.number(r1, 'x'), 'EMPTY', 2, 'x')
    value(() => t.number(r2, 'n', { integer: true }), 'OUT_OF_RANGE', 3, 'n')
    value(() => t.number(r3, 'n'), 'NOT_A_NUMBER', 4, 'n')
    value(() => t.number(r4, 'n', { min: 0 }), 'OUT_OF_RANGE', 5, 'n')
    value(() => t.number(r4, 'x'), 'NOT_A_NUMBER', 5, 'x')
    value(() => t.number(r1, 'n', { max: 4 }), 'OUT_OF_RANGE', 2, 'n')
    value(() => t.require('n', 'missing'), 'MISSING_COLUMN', 0, 'missing')
  })
})
