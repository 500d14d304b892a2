import assert from 'node:assert/strict'
import { PLACEHOLDER_CODES, RttTableError, parseRttTable } from '../../../../simulations/network/rtt-table.js'
import { rttTable, rttText } from './rtt-file.js'

const HEADER = 'cty1,cty2,rtt_cnt,rtt_avg,rtt_std,rtt_min,rtt_max'

function fails (text: string, code: string, line: number): void {
  assert.throws(() => parseRttTable(text), (err: unknown) => err instanceof RttTableError && err.code === code && err.line === line && err.message.startsWith(`rtt table line ${line}: `), `${code} at ${line}`)
}

describe('simulations/network rtt-table', () => {
  it('parses all 6,827 pairs of the RIPE Atlas table: 173 codes, 170 countries and EU besides the two placeholders', () => {
    const t = rttTable()
    assert.equal(t.rows.length, 6827)
    assert.equal(t.codes.length, 173)
    assert.deepEqual(t.codes.filter((c) => !t.countries.includes(c)), [...PLACEHOLDER_CODES].sort())
    assert.equal(t.countries.length, 171)
    assert.ok(t.countries.includes('EU'))
    const deFr = t.rows.find((r) => r.a === 'DE' && r.b === 'FR')
    assert.deepEqual(deFr, { a: 'DE', b: 'FR', count: 17299508, avg: 43.19790735517013, std: 60.931751918023174, min: 0.336101, max: 44816.54 })
  })

  it('reads an empty rtt_std (the 187 single-measurement rows) as 0', () => {
    const t = rttTable()
    const single = t.rows.filter((r) => r.count === 1)
    assert.equal(single.length, 187)
    assert.ok(single.every((r) => r.std === 0))
    assert.deepEqual(parseRttTable(`${HEADER}\nAE,AL,1,41.2570686340332,,41.25707,41.25707\n`).rows[0]?.std, 0)
  })

  it('accepts CRLF and no trailing newline', () => {
    const lf = rttText()
    const crlf = parseRttTable(lf.replace(/\n/g, '\r\n').trimEnd())
    assert.equal(crlf.rows.length, 6827)
  })

  it('refuses bad input with one typed error per condition, naming the line', () => {
    const row = 'DE,FR,10,43,60,0.3,100'
    fails('', 'HEADER', 1)
    fails(`cty1,cty2,rtt_cnt,rtt_avg,rtt_std,rtt_min\n${row}`, 'HEADER', 1)
    fails(`${HEADER}\n`, 'EMPTY', 1)
    fails(`${HEADER}\n${row}\nDE,FR,10,43,60,0.3`, 'COLUMNS', 3)
    fails(`${HEADER}\nDE,FR,10,43,60,0.3,100,1`, 'COLUMNS', 2)
    fails(`${HEADER}\nde,FR,10,43,60,0.3,100`, 'CODE', 2)
    fails(`${HEADER}\nDEU,FR,10,43,60,0.3,100`, 'CODE', 2)
    fails(`${HEADER}\nDE,FR,0,43,60,0.3,100`, 'NUMBER', 2)
    fails(`${HEADER}\nDE,FR,1.5,43,60,0.3,100`, 'NUMBER', 2)
    fails(`${HEADER}\nDE,FR,10,,60,0.3,100`, 'NUMBER', 2)
    fails(`${HEADER}\nDE,FR,10,43,-1,0.3,100`, 'NUMBER', 2)
    fails(`${HEADER}\nDE,FR,10,43,60,0.3,Infinity`, 'NUMBER', 2)
    fails(`${HEADER}\nDE,FR,10,43,60,0.3,abc`, 'NUMBER', 2)
    fails(`${HEADER}\nDE,FR,10,43,60,50,40`, 'ORDER', 2)
    fails(`${HEADER}\nDE,FR,10,101,60,0.3,100`, 'ORDER', 2)
    fails(`${HEADER}\nDE,FR,10,0.2,60,0.3,100`, 'ORDER', 2)
    fails(`${HEADER}\n${row}\nFR,DE,10,43,60,0.3,100`, 'DUPLICATE', 3)
  })

  it('lets avg pass min or max by float rounding only (the table\'s float32 samples)', () => {
    assert.equal(parseRttTable(`${HEADER}\nAL,BE,1,42.57502746582031,,42.575027,42.575027`).rows.length, 1)
    fails(`${HEADER}\nAL,BE,1,42.58,,42.575027,42.575027`, 'ORDER', 2)
  })
})
