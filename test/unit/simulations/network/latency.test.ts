import assert from 'node:assert/strict'
import { Prng } from '../../../../simulations/harness/prng.js'
import { UnknownCountryError } from '../../../../simulations/network/geo.js'
import { type JitterModel, LatencyMatrix } from '../../../../simulations/network/latency.js'
import { parseRttTable } from '../../../../simulations/network/rtt-table.js'
import { rttMatrix, rttTable } from './rtt-file.js'

const HEADER = 'cty1,cty2,rtt_cnt,rtt_avg,rtt_std,rtt_min,rtt_max'

/** A small table whose fills are worked out by hand below. */
const SMALL = [
  HEADER,
  'DE,DE,5,10,2,4,20',
  'FR,FR,5,20,4,8,40',
  'DE,FR,5,30,6,12,60',
  'DE,JP,5,200,10,150,400',
  'FR,JP,5,220,20,160,500',
  'JP,KR,5,40,5,20,80',
  'BR,BR,5,50,5,25,100',
  'SE,None,5,70,5,25,100'
].join('\n')
const SMALL_REGIONS: Record<string, string> = { DE: 'eu-central', FR: 'eu-west', SE: 'eu-north', JP: 'ap-east', KR: 'ap-east', BR: 'sa' }

function close (actual: { avg: number, std: number, min: number, max: number }, expected: [number, number, number, number], label: string): void {
  const got = [actual.avg, actual.std, actual.min, actual.max]
  for (let i = 0; i < 4; i++) assert.ok(Math.abs((got[i] as number) - expected[i]!) < 1e-9, `${label}: ${got.join('/')} ≠ ${expected.join('/')}`)
}

describe('simulations/network latency', () => {
  it('is symmetric for every pair of the table\'s countries', () => {
    const m = rttMatrix()
    for (const a of m.countries) {
      for (const b of m.countries) {
        assert.deepEqual(m.rtt(a, b), m.rtt(b, a))
        assert.equal(m.isMeasured(a, b), m.isMeasured(b, a))
      }
    }
  })

  it('uses the table\'s own rows, either order, and the same-country row where the table has one', () => {
    const m = rttMatrix()
    for (const row of rttTable().rows) {
      if (row.a === 'None' || row.a === 'Unknown' || row.b === 'None' || row.b === 'Unknown') continue
      assert.equal(m.rtt(row.b, row.a).avg, row.avg)
      assert.equal(m.isMeasured(row.a, row.b), true)
    }
    assert.equal(m.meanOneWayMs('DE', 'DE'), 26.794371583648235 / 2)
    assert.equal(m.meanOneWayMs('FR', 'DE'), 43.19790735517013 / 2)
  })

  it('draws DE–FR one-way delays with the table\'s mean (rtt_avg / 2) inside its [min, max] / 2, right-skewed', () => {
    const m = rttMatrix()
    const { avg, min, max } = m.rtt('DE', 'FR')
    const prng = new Prng('de-fr')
    const n = 20_000
    const draws = Array.from({ length: n }, () => m.sampleOneWayMs('DE', 'FR', prng))
    const mean = draws.reduce((s, x) => s + x, 0) / n
    assert.ok(Math.abs(mean - avg / 2) < 0.05 * avg / 2, `mean ${mean} vs ${avg / 2}`)
    assert.ok(draws.every((d) => d >= min / 2 && d <= max / 2))
    const median = [...draws].sort((a, b) => a - b)[n / 2] as number
    assert.ok(median < mean, `median ${median} < mean ${mean}`)
    assert.equal(m.sampleOneWayMs('DE', 'FR', prng, 'none'), avg / 2)
  })

  it('keeps every draw within [rtt_min / 2, rtt_max / 2] for every pair and jitter model', () => {
    const m = rttMatrix()
    const prng = new Prng('bounds')
    for (const jitter of ['lognormal', 'normal'] as JitterModel[]) {
      for (let i = 0; i < m.countries.length; i++) {
        for (let j = i; j < m.countries.length; j++) {
          const a = m.countries[i] as string
          const b = m.countries[j] as string
          const { min, max } = m.rtt(a, b)
          for (let k = 0; k < 3; k++) {
            const d = m.sampleByIndex(i, j, prng, jitter)
            assert.ok(d >= min / 2 && d <= max / 2, `${jitter} ${a}-${b}: ${d} outside [${min / 2}, ${max / 2}]`)
          }
        }
      }
    }
  })

  it('clamps the normal model at rtt_min / 2 (the point mass the file\'s comment warns of)', () => {
    const m = rttMatrix()
    const { min } = m.rtt('DE', 'FR')
    const prng = new Prng('normal')
    const atMin = Array.from({ length: 4000 }, () => m.sampleOneWayMs('DE', 'FR', prng, 'normal')).filter((d) => d === min / 2).length
    // P(N(21.6, 30.5) < 0.17) ≈ 0.24
    assert.ok(atMin > 800 && atMin < 1150, String(atMin))
  })

  it('gives a single-measurement pair (rtt_std 0) its mean every time', () => {
    const m = rttMatrix()
    const prng = new Prng(3)
    assert.equal(m.rtt('AE', 'AL').std, 0)
    for (const jitter of ['lognormal', 'normal'] as JitterModel[]) assert.equal(m.sampleOneWayMs('AE', 'AL', prng, jitter), 41.2570686340332 / 2)
  })

  it('is deterministic per seed', () => {
    const m = rttMatrix()
    const seq = (seed: number): number[] => { const p = new Prng(seed); return Array.from({ length: 100 }, () => m.sampleOneWayMs('US', 'JP', p)) }
    assert.deepEqual(seq(5), seq(5))
    assert.notDeepEqual(seq(5), seq(6))
  })

  it('fills every missing pair of the real table and counts the fills', () => {
    const m = rttMatrix()
    const n = m.countries.length
    const measured = rttTable().rows.filter((r) => m.has(r.a) && m.has(r.b)).length
    assert.equal(n, 171)
    assert.equal(measured, 6827 - 179)
    assert.equal(m.fills.total, n * (n + 1) / 2 - measured)
    const { sameCountry: s, crossCountry: c } = m.fills
    assert.equal(s.region + s.area + s.global + c.region + c.area + c.global, m.fills.total)
    // 115 same-code rows, one of them None,None.
    assert.equal(s.region + s.area + s.global, n - 114)
    for (const a of m.countries) for (const b of m.countries) assert.ok(m.rtt(a, b).avg > 0, `${a}-${b}`)
  })

  it('fills a small table by the documented rules (worked by hand): region, then area, then everything', () => {
    const m = new LatencyMatrix(parseRttTable(SMALL), (c) => SMALL_REGIONS[c] as string)
    assert.deepEqual(m.countries, ['BR', 'DE', 'FR', 'JP', 'KR', 'SE'])
    // Same country: SE from eu's same-country rows (DE, FR); JP and KR from all three (DE, FR, BR).
    close(m.rtt('SE', 'SE'), [15, 3, 6, 30], 'SE-SE')
    close(m.rtt('JP', 'JP'), [80 / 3, 11 / 3, 37 / 3, 160 / 3], 'JP-JP')
    // Two countries: DE–KR from eu-central×ap-east (DE–JP); SE–JP from eu×ap (DE–JP, FR–JP); BR–DE from every cross row.
    close(m.rtt('KR', 'DE'), [200, 10, 150, 400], 'DE-KR')
    close(m.rtt('FR', 'KR'), [220, 20, 160, 500], 'FR-KR')
    close(m.rtt('SE', 'JP'), [210, 15, 155, 450], 'SE-JP')
    close(m.rtt('DE', 'SE'), [30, 6, 12, 60], 'DE-SE')
    close(m.rtt('BR', 'DE'), [122.5, 10.25, 85.5, 260], 'BR-DE')
    assert.deepEqual(m.fills, { sameCountry: { region: 0, area: 1, global: 2 }, crossCountry: { region: 2, area: 4, global: 5 }, total: 14 })
    assert.equal(m.isMeasured('DE', 'JP'), true)
    assert.equal(m.isMeasured('DE', 'KR'), false)
  })

  it('refuses a country it does not have, placeholders included', () => {
    const m = rttMatrix()
    assert.throws(() => m.rtt('DE', 'XX'), UnknownCountryError)
    assert.throws(() => m.sampleOneWayMs('None', 'DE', new Prng(1)), UnknownCountryError)
  })
})
