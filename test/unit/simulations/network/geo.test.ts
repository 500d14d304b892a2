import assert from 'node:assert/strict'
import { regionWithin } from '../../../../protocol/constants.js'
import { Prng } from '../../../../simulations/harness/prng.js'
import { COUNTRY_REGIONS, GPU_FLEET_DISTRIBUTION, InvalidFleetDistributionError, UnknownCountryError, countryRegion, fleetPlacer, placementById, regionArea, validateFleetDistribution } from '../../../../simulations/network/geo.js'
import { rttTable } from './rtt-file.js'

const SLUG = /^[a-z0-9]+(-[a-z0-9]+)*$/

describe('simulations/network geo', () => {
  it('gives every country of the RTT table a region, and knows no country the table lacks', () => {
    const countries = rttTable().countries
    const missing = countries.filter((c) => COUNTRY_REGIONS[c] === undefined)
    assert.deepEqual(missing, [])
    assert.deepEqual(Object.keys(COUNTRY_REGIONS).sort(), countries)
  })

  it('uses hierarchical region slugs (protocol/README §2), including the ones the demo uses', () => {
    for (const region of new Set(Object.values(COUNTRY_REGIONS))) {
      assert.ok(SLUG.test(region) && region.length <= 32, region)
    }
    assert.equal(countryRegion('DE'), 'eu-central')
    assert.equal(countryRegion('FR'), 'eu-west')
    assert.equal(countryRegion('SE'), 'eu-north')
    assert.equal(countryRegion('IN'), 'ap-south')
    assert.equal(countryRegion('US'), 'us')
    assert.equal(regionArea('eu-west'), 'eu')
    assert.equal(regionArea('us'), 'us')
  })

  it('refuses an unknown country with a typed error', () => {
    assert.throws(() => countryRegion('XX'), (e: unknown) => e instanceof UnknownCountryError && e.country === 'XX' && e.code === 'UNKNOWN_COUNTRY')
    assert.throws(() => countryRegion('None'), UnknownCountryError)
  })

  it('has a valid default fleet distribution: known countries, regions inside them (us-east, us-west in us), 100 %', () => {
    validateFleetDistribution(GPU_FLEET_DISTRIBUTION)
    assert.equal(GPU_FLEET_DISTRIBUTION.reduce((s, x) => s + x.weight, 0), 100)
    for (const s of GPU_FLEET_DISTRIBUTION) assert.ok(regionWithin(s.region, countryRegion(s.country)), `${s.country} ${s.region}`)
    assert.deepEqual(GPU_FLEET_DISTRIBUTION.filter((s) => s.country === 'US').map((s) => s.region), ['us-east', 'us-west'])
  })

  it('refuses a distribution it cannot draw from', () => {
    const cases: Array<[Parameters<typeof validateFleetDistribution>[0], string]> = [
      [[], 'EMPTY'],
      [[{ country: 'DE', region: 'eu-central', weight: 0 }], 'WEIGHT'],
      [[{ country: 'DE', region: 'eu-central', weight: Number.NaN }], 'WEIGHT'],
      [[{ country: 'XX', region: 'eu-central', weight: 1 }], 'COUNTRY'],
      [[{ country: 'DE', region: 'eu-west', weight: 1 }], 'REGION']
    ]
    for (const [shares, code] of cases) {
      assert.throws(() => fleetPlacer(new Prng(1), shares), (e: unknown) => e instanceof InvalidFleetDistributionError && e.code === code, code)
    }
    validateFleetDistribution([{ country: 'DE', region: 'eu-central-1', weight: 1e-9 }])
  })

  it('draws placements by weight, the same for the same seed', () => {
    const shares = [{ country: 'DE', region: 'eu-central', weight: 3 }, { country: 'JP', region: 'ap-east', weight: 1 }]
    const draw = fleetPlacer(new Prng('geo'), shares)
    const n = 8000
    const de = Array.from({ length: n }, draw).filter((p) => p.country === 'DE').length
    // Binomial(8000, 0.75): sd ≈ 39; 4 sd either side.
    assert.ok(Math.abs(de - 6000) < 160, String(de))
    const a = fleetPlacer(new Prng(7))
    const b = fleetPlacer(new Prng(7))
    const c = fleetPlacer(new Prng(8))
    const seqA = Array.from({ length: 50 }, a)
    assert.deepEqual(seqA, Array.from({ length: 50 }, b))
    assert.notDeepEqual(seqA, Array.from({ length: 50 }, c))
    for (const p of seqA) assert.ok(GPU_FLEET_DISTRIBUTION.some((s) => s.country === p.country && s.region === p.region))
  })

  it('places by id: the same id the same place whatever the other nodes, by weight overall', () => {
    const place = placementById(new Prng(9))
    const again = placementById(new Prng(9))
    const ids = Array.from({ length: 4000 }, (_, i) => `n${i}`)
    const all = ids.map(place)
    assert.deepEqual([...ids].reverse().map(again).reverse(), all)
    const us = all.filter((p) => p.country === 'US').length
    // 32 % of the default fleet is in the US: Binomial(4000, 0.32) sd ≈ 30; 4 sd.
    assert.ok(Math.abs(us - 1280) < 120, String(us))
    assert.notDeepEqual(ids.slice(0, 50).map(placementById(new Prng(10))), all.slice(0, 50))
  })
})
