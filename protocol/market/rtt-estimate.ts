/**
 * The RTT a requester assumes for a provider it has not measured, from where the two say they are
 * (their `region` and optional `country`; a bid carries both, the requester's own come from its
 * config): RIPE Atlas country-pair means (country-rtt-table.ts). Pure and deterministic.
 *
 *  1. Both countries known and the pair (either order) measured → that pair's mean RTT.
 *  2. Otherwise each side stands for a set of countries: its country if it has one, else the countries
 *     of its region (region-countries.ts). The estimate is the mean over the measured pairs between
 *     the two sets (same-country pairs included), rounded to whole ms.
 *  3. No country and a region that stands for none on either side, or no measured pair between the
 *     sets → undefined: scoring then uses `defaultRttMs` (scoring.ts).
 *
 * An estimate is a prior only: a measured RTT (rtt-view.ts) always replaces it.
 */
import { COUNTRY_RTT_ROWS } from './country-rtt-table.js'
import { countriesOfRegion } from './region-countries.js'

/** Where a node says it is. */
export interface NodeLocation {
  region?: string | undefined
  /** ISO 3166-1 alpha-2. */
  country?: string | undefined
}

let pairs: Map<string, number> | undefined

function pairKey (a: string, b: string): string {
  return a <= b ? `${a}${b}` : `${b}${a}`
}

/** The table, parsed once on first use. */
function table (): Map<string, number> {
  if (pairs !== undefined) return pairs
  const parsed = new Map<string, number>()
  for (const [a, row] of Object.entries(COUNTRY_RTT_ROWS)) {
    if (row.length === 0) continue
    for (const item of row.split(' ')) parsed.set(pairKey(a, item.slice(0, 2)), Number(item.slice(2)))
  }
  pairs = parsed
  return parsed
}

/** The measured mean RTT between two countries, whole ms (either order); undefined if not measured. */
export function countryRttMs (a: string, b: string): number | undefined {
  return table().get(pairKey(a, b))
}

function countriesOf (at: NodeLocation): readonly string[] {
  if (at.country !== undefined) return [at.country]
  return at.region === undefined ? [] : countriesOfRegion(at.region)
}

/** Estimates by the two sides' country sets (regions repeat: a market has few). */
const memo = new Map<string, number | undefined>()
const MAX_MEMO = 4096

/** The estimated RTT between `from` and `to` (see the file comment), whole ms, or undefined. */
export function estimateRttMs (from: NodeLocation, to: NodeLocation): number | undefined {
  if (from.country !== undefined && to.country !== undefined) {
    const direct = countryRttMs(from.country, to.country)
    if (direct !== undefined) return direct
  }
  const [xs, ys] = [countriesOf(from), countriesOf(to)]
  if (xs.length === 0 || ys.length === 0) return undefined
  const key = `${xs.join(',')}|${ys.join(',')}`
  if (memo.has(key)) return memo.get(key)
  let [sum, n] = [0, 0]
  for (const x of xs) {
    for (const y of ys) {
      const ms = countryRttMs(x, y)
      if (ms !== undefined) { sum += ms; n++ }
    }
  }
  const estimate = n === 0 ? undefined : Math.round(sum / n)
  if (memo.size >= MAX_MEMO) memo.clear()
  memo.set(key, estimate)
  return estimate
}
