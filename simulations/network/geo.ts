/**
 * Where nodes are: a country → gpumesh region table covering every country of the RTT table
 * (simulations/data/latency/), and a documented distribution of a GPU fleet over countries for callers
 * to draw placements from.
 *
 * Regions are protocol/README §2 slugs, hierarchical by `-`: a country's region is a sub-region of a
 * top-level area (`eu-west` ⊂ `eu`), or a top-level area itself where the table cannot split it
 * (`us`, `ca`, `sa`, `me`, `oc`). One country is one region: the RTT table is per country, so a
 * sub-region below a country (`us-east`, `us-west`) is chosen by the fleet distribution, never by
 * the latency model.
 */
import { regionWithin } from '../../protocol/constants.js'
import { REGION_COUNTRIES } from '../../protocol/market/region-countries.js'
import type { Prng } from '../harness/prng.js'

/** The countries of each region: protocol/'s table, the one the requester's RTT estimate reads. */
const REGIONS = REGION_COUNTRIES

/** Country (ISO 3166 alpha-2, and RIPE's `EU`) → its gpumesh region. */
export const COUNTRY_REGIONS: Readonly<Record<string, string>> = Object.freeze(Object.fromEntries(
  Object.entries(REGIONS).flatMap(([region, countries]) => countries.map((c) => [c, region]))
))

/** A country the region table does not know. */
export class UnknownCountryError extends Error {
  override readonly name = 'UnknownCountryError'
  readonly code = 'UNKNOWN_COUNTRY'
  constructor (readonly country: string) {
    super(`unknown country ${JSON.stringify(country)} (expected an ISO 3166 alpha-2 code in simulations/network/geo.ts)`)
  }
}

/** The gpumesh region of `country`; throws UnknownCountryError. */
export function countryRegion (country: string): string {
  const region = COUNTRY_REGIONS[country]
  if (region === undefined) throw new UnknownCountryError(country)
  return region
}

/** The top-level area of a region (`eu-west` → `eu`, `us` → `us`). */
export function regionArea (region: string): string {
  const dash = region.indexOf('-')
  return dash < 0 ? region : region.slice(0, dash)
}

/** One entry of a fleet distribution: `weight` of the fleet sits in `country`, at `region` (inside the country's region). */
export interface FleetShare { country: string, region: string, weight: number }

/**
 * The default fleet distribution, in percent of GPU boxes. AN ASSUMPTION, NOT A MEASUREMENT: no public
 * census of GPUs by country was found. It follows, roughly, where data-centre GPU capacity and rentable
 * GPUs are advertised (the US first, split east and west; then western Europe, China, Japan and Korea;
 * a thin tail elsewhere) and gives every area of the RTT table some nodes so that long paths are
 * exercised. Scenarios that test a claim sensitive to geography should pass their own.
 */
export const GPU_FLEET_DISTRIBUTION: readonly FleetShare[] = Object.freeze([
  { country: 'US', region: 'us-east', weight: 18 },
  { country: 'US', region: 'us-west', weight: 14 },
  { country: 'CA', region: 'ca', weight: 3 },
  { country: 'DE', region: 'eu-central', weight: 7 },
  { country: 'GB', region: 'eu-west', weight: 5 },
  { country: 'NL', region: 'eu-west', weight: 4 },
  { country: 'FR', region: 'eu-west', weight: 3 },
  { country: 'IE', region: 'eu-west', weight: 1.5 },
  { country: 'ES', region: 'eu-west', weight: 1 },
  { country: 'SE', region: 'eu-north', weight: 2 },
  { country: 'FI', region: 'eu-north', weight: 1.5 },
  { country: 'NO', region: 'eu-north', weight: 1 },
  { country: 'PL', region: 'eu-central', weight: 1.5 },
  { country: 'CH', region: 'eu-central', weight: 1 },
  { country: 'IT', region: 'eu-south', weight: 1 },
  { country: 'RU', region: 'eu-east', weight: 1 },
  { country: 'TR', region: 'eu-east', weight: 0.5 },
  { country: 'CN', region: 'ap-east', weight: 7 },
  { country: 'JP', region: 'ap-east', weight: 5 },
  { country: 'KR', region: 'ap-east', weight: 3 },
  { country: 'TW', region: 'ap-east', weight: 2 },
  { country: 'HK', region: 'ap-east', weight: 1.5 },
  { country: 'SG', region: 'ap-southeast', weight: 3 },
  { country: 'ID', region: 'ap-southeast', weight: 0.5 },
  { country: 'VN', region: 'ap-southeast', weight: 0.5 },
  { country: 'TH', region: 'ap-southeast', weight: 0.5 },
  { country: 'IN', region: 'ap-south', weight: 3 },
  { country: 'AU', region: 'oc', weight: 2.5 },
  { country: 'BR', region: 'sa', weight: 1.5 },
  { country: 'CL', region: 'sa', weight: 0.5 },
  { country: 'MX', region: 'mesoamerica', weight: 0.5 },
  { country: 'AE', region: 'me', weight: 1 },
  { country: 'IL', region: 'me', weight: 1 },
  { country: 'SA', region: 'me', weight: 0.5 },
  { country: 'ZA', region: 'af-south', weight: 0.5 }
].map((s) => Object.freeze(s)))

export type FleetDistributionErrorCode = 'EMPTY' | 'WEIGHT' | 'COUNTRY' | 'REGION'

/** A fleet distribution that cannot be drawn from. */
export class InvalidFleetDistributionError extends Error {
  override readonly name = 'InvalidFleetDistributionError'
  constructor (readonly code: FleetDistributionErrorCode, message: string) {
    super(`fleet distribution: ${message}`)
  }
}

/** Throw InvalidFleetDistributionError unless every share has a known country, a region inside it and a weight > 0. */
export function validateFleetDistribution (shares: readonly FleetShare[]): void {
  if (shares.length === 0) throw new InvalidFleetDistributionError('EMPTY', 'no shares')
  for (const s of shares) {
    if (!(Number.isFinite(s.weight) && s.weight > 0)) throw new InvalidFleetDistributionError('WEIGHT', `${s.country}/${s.region}: expected a weight > 0, got ${String(s.weight)}`)
    const home = COUNTRY_REGIONS[s.country]
    if (home === undefined) throw new InvalidFleetDistributionError('COUNTRY', `unknown country ${JSON.stringify(s.country)}`)
    if (!regionWithin(s.region, home)) throw new InvalidFleetDistributionError('REGION', `${s.country} is in ${home}; ${JSON.stringify(s.region)} is not inside it`)
  }
}

/** Where one node is placed. */
export interface Placement { country: string, region: string }

/** The index of the share `x` (uniform in [0, total)) falls in. */
function shareAt (cumulative: readonly number[], x: number): number {
  let lo = 0
  let hi = cumulative.length - 1
  while (lo < hi) {
    const mid = (lo + hi) >> 1
    if ((cumulative[mid] as number) > x) hi = mid
    else lo = mid + 1
  }
  return lo
}

function drawer (shares: readonly FleetShare[]): (prng: Prng) => Placement {
  validateFleetDistribution(shares)
  const cumulative: number[] = []
  let total = 0
  for (const s of shares) cumulative.push(total += s.weight)
  return (prng) => {
    const s = shares[shareAt(cumulative, prng.next() * total)] as FleetShare
    return { country: s.country, region: s.region }
  }
}

/**
 * A placer over a fleet distribution (GPU_FLEET_DISTRIBUTION unless given): each call draws the next
 * node's country and region by weight from `prng`. Validates the distribution first.
 */
export function fleetPlacer (prng: Prng, shares: readonly FleetShare[] = GPU_FLEET_DISTRIBUTION): () => Placement {
  const draw = drawer(shares)
  return () => draw(prng)
}

/**
 * The same by node id: a node's placement is drawn from a stream forked by its id (`place:<id>`),
 * so it depends on the seed and the id only, not on which other nodes exist or their order.
 */
export function placementById (prng: Prng, shares: readonly FleetShare[] = GPU_FLEET_DISTRIBUTION): (id: string) => Placement {
  const draw = drawer(shares)
  return (id) => draw(prng.fork(`place:${id}`))
}
