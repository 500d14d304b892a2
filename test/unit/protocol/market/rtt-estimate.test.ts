/**
 * The RTT estimate before any connection (issue 12): protocol/'s compact copy of the RIPE Atlas table
 * matches the CSV the simulator ships row for row, the region → countries mapping agrees with the
 * simulator's, and estimates follow protocol/market/rtt-estimate.ts's rules.
 */
import assert from 'node:assert/strict'
import { COUNTRY_RTT_ROWS } from '../../../../protocol/market/country-rtt-table.js'
import { REGION_COUNTRIES, countriesOfRegion } from '../../../../protocol/market/region-countries.js'
import { countryRttMs, estimateRttMs } from '../../../../protocol/market/rtt-estimate.js'
import { COUNTRY_REGIONS } from '../../../../simulations/network/geo.js'
import { rttText } from '../../simulations/network/rtt-file.js'

const PLACEHOLDERS = new Set(['None', 'Unknown'])

/** The CSV's rows as [a, b, rtt_avg]. */
function csvRows (): Array<[string, string, number]> {
  return rttText().trim().split('\n').slice(1).map((line) => {
    const [a, b, , avg] = line.split(',')
    return [a as string, b as string, Number(avg)]
  })
}

/** The mean of the CSV's rounded pairs between two sets, rounded: the estimate computed independently. */
function meanBetween (xs: readonly string[], ys: readonly string[]): number | undefined {
  const rows = new Map(csvRows().map(([a, b, avg]) => [[a, b].sort().join('|'), Math.max(1, Math.round(avg))]))
  let [sum, n] = [0, 0]
  for (const x of xs) for (const y of ys) {
    const v = rows.get([x, y].sort().join('|'))
    if (v !== undefined) { sum += v; n++ }
  }
  return n === 0 ? undefined : Math.round(sum / n)
}

describe('protocol/market rtt-estimate', () => {
  describe('the country table', () => {
    it('holds every non-placeholder CSV row, both orders, as its rounded mean (at least 1 ms), and nothing else', () => {
      let rows = 0
      for (const [a, b, avg] of csvRows()) {
        if (PLACEHOLDERS.has(a) || PLACEHOLDERS.has(b)) continue
        rows++
        const want = Math.max(1, Math.round(avg))
        assert.equal(countryRttMs(a, b), want, `${a},${b}`)
        assert.equal(countryRttMs(b, a), want, `${b},${a}`)
      }
      const held = Object.values(COUNTRY_RTT_ROWS).reduce((n, row) => n + (row === '' ? 0 : row.split(' ').length), 0)
      assert.equal(held, rows)
      assert.equal(rows, 6827 - 179)
    })

    it('knows no placeholder and no unmeasured pair', () => {
      assert.equal(countryRttMs('None', 'NP'), undefined)
      assert.equal(countryRttMs('Unknown', 'US'), undefined)
      assert.equal(countryRttMs('DE', 'XX'), undefined)
    })
  })

  describe('regions', () => {
    it('maps each country to the region the simulator places it in', () => {
      const mine = Object.fromEntries(Object.entries(REGION_COUNTRIES).flatMap(([r, cs]) => cs.map((c) => [c, r])))
      assert.deepEqual(mine, { ...COUNTRY_REGIONS })
    })

    it('a listed region is its countries; a top-level area every listed region inside it; a sub-region its nearest listed ancestor', () => {
      assert.deepEqual(countriesOfRegion('eu-west'), [...(REGION_COUNTRIES['eu-west'] ?? [])].sort())
      const eu = countriesOfRegion('eu')
      for (const c of ['DE', 'FR', 'SE', 'IT', 'RO', 'EU']) assert.ok(eu.includes(c), c)
      assert.ok(!eu.includes('US'))
      assert.equal(eu.length, 10 + 9 + 9 + 11 + 10 + 1)
      assert.deepEqual(countriesOfRegion('eu-west-2'), countriesOfRegion('eu-west'))
      assert.deepEqual(countriesOfRegion('us-east-1'), ['US'])
      assert.ok(countriesOfRegion('af').includes('KE'))
      assert.deepEqual(countriesOfRegion('local'), [])
      assert.deepEqual(countriesOfRegion('europe'), [])
    })
  })

  describe('estimateRttMs', () => {
    it('two countries with a measured pair: the pair, either way round', () => {
      assert.equal(estimateRttMs({ country: 'DE' }, { country: 'FR', region: 'ap-east' }), countryRttMs('DE', 'FR'))
      assert.equal(estimateRttMs({ country: 'FR' }, { country: 'DE' }), countryRttMs('DE', 'FR'))
      assert.equal(estimateRttMs({ country: 'DE' }, { country: 'DE' }), countryRttMs('DE', 'DE'))
    })

    it('a region without a country: the mean over the measured pairs between the sets', () => {
      const westIn = estimateRttMs({ country: 'DE' }, { region: 'eu-west' })
      assert.equal(westIn, meanBetween(['DE'], countriesOfRegion('eu-west')))
      assert.equal(estimateRttMs({ region: 'eu-west' }, { region: 'ap-east' }), meanBetween(countriesOfRegion('eu-west'), countriesOfRegion('ap-east')))
      assert.equal(estimateRttMs({ region: 'eu-west' }, { region: 'ap-east' }), estimateRttMs({ region: 'ap-east' }, { region: 'eu-west' }))
      // rounded to the nearest ms, not truncated (DE → eu-north averages 44.875 ms)
      assert.equal(estimateRttMs({ country: 'DE' }, { region: 'eu-north' }), 45)
      assert.equal(meanBetween(['DE'], countriesOfRegion('eu-north')), 45)
      // near is nearer than far
      assert.ok((westIn as number) < (estimateRttMs({ country: 'DE' }, { region: 'oc' }) as number))
    })

    it('two countries without a measured pair: unknown (singletons, nothing to average)', () => {
      const known = new Set(csvRows().map(([a, b]) => [a, b].sort().join('|')))
      const all = Object.values(REGION_COUNTRIES).flat()
      const gap = all.flatMap((a) => all.map((b) => [a, b] as const)).find(([a, b]) => a < b && !known.has(`${a}|${b}`))
      assert.ok(gap !== undefined)
      assert.equal(estimateRttMs({ country: gap[0] }, { country: gap[1], region: 'eu' }), undefined)
    })

    it('no location, or a region that stands for no country, on either side: unknown', () => {
      assert.equal(estimateRttMs({}, { country: 'DE' }), undefined)
      assert.equal(estimateRttMs({ country: 'DE' }, {}), undefined)
      assert.equal(estimateRttMs({ region: 'local' }, { region: 'eu' }), undefined)
      assert.equal(estimateRttMs({ country: 'DE' }, { region: 'local' }), undefined)
    })
  })
})
