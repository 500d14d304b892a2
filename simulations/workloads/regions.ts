/**
 * Where the fleet's nodes are. A trace says nothing about geography, so each node is given a country
 * (for the latency model, whose table is by ISO country) and a gpumesh region slug (for placement and
 * gossip topics), drawn from a weighted distribution — deterministically: the draw for a node depends only
 * on the seed and the node's id, so adding or dropping nodes does not move the others.
 *
 * DEFAULT_PLACES is an assumption, not a measurement: a rough shape of where rentable GPU capacity sits
 * (North America and Western Europe first, then East Asia), over countries the RIPE Atlas RTT table covers.
 * A caller passes its own distribution to test another geography.
 */
import { Prng, type Seed } from '../harness/prng.js'

export interface Place {
  /** ISO 3166 alpha-2. */
  country: string
  /** gpumesh region slug. */
  region: string
  /** Relative weight (> 0); weights need not sum to 1. */
  weight: number
}

export const DEFAULT_PLACES: readonly Place[] = [
  { country: 'US', region: 'na-east', weight: 0.18 },
  { country: 'US', region: 'na-west', weight: 0.12 },
  { country: 'CA', region: 'na-east', weight: 0.04 },
  { country: 'DE', region: 'eu-central', weight: 0.10 },
  { country: 'NL', region: 'eu-west', weight: 0.06 },
  { country: 'GB', region: 'eu-west', weight: 0.06 },
  { country: 'FR', region: 'eu-west', weight: 0.04 },
  { country: 'CN', region: 'ap-east', weight: 0.14 },
  { country: 'JP', region: 'ap-northeast', weight: 0.06 },
  { country: 'KR', region: 'ap-northeast', weight: 0.04 },
  { country: 'SG', region: 'ap-southeast', weight: 0.06 },
  { country: 'IN', region: 'ap-south', weight: 0.04 },
  { country: 'BR', region: 'sa-east', weight: 0.03 },
  { country: 'AU', region: 'ap-southeast', weight: 0.03 }
]

/** Checks a distribution: non-empty, every weight finite and > 0, country two capital letters, region a slug. */
export function validatePlaces (places: readonly Place[]): void {
  if (places.length === 0) throw new RangeError('places: the distribution is empty')
  for (const p of places) {
    if (!(Number.isFinite(p.weight) && p.weight > 0)) throw new RangeError(`places: weight of ${p.country}/${p.region} must be > 0, got ${p.weight}`)
    if (!/^[A-Z]{2}$/.test(p.country)) throw new RangeError(`places: country must be ISO 3166 alpha-2, got ${JSON.stringify(p.country)}`)
    if (!/^[a-z0-9]+(-[a-z0-9]+)*$/.test(p.region)) throw new RangeError(`places: region must be a slug, got ${JSON.stringify(p.region)}`)
  }
}

/** Draws each node's place from `places`, by seed and node id. */
export class PlaceAssigner {
  private readonly cumulative: number[] = []
  private readonly total: number

  constructor (private readonly seed: Seed, private readonly places: readonly Place[] = DEFAULT_PLACES) {
    validatePlaces(places)
    let sum = 0
    for (const p of places) this.cumulative.push(sum += p.weight)
    this.total = sum
  }

  placeOf (nodeId: string): Place {
    const u = new Prng(this.seed).fork(`place:${nodeId}`).next() * this.total
    let i = 0
    while (i < this.cumulative.length - 1 && u >= (this.cumulative[i] as number)) i++
    return this.places[i] as Place
  }
}
