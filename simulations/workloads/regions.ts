/**
 * Where the fleet's nodes are. A trace says nothing about geography, so each node is given a country
 * (for the latency model, whose table is by ISO country) and a gpumesh region slug (for placement and
 * gossip topics), drawn from a weighted fleet distribution — deterministically: the draw for a node
 * depends only on the seed and the node's id, so adding or dropping nodes does not move the others.
 *
 * The distribution and the country → region table are one concept in one place: network/geo.ts
 * (`GPU_FLEET_DISTRIBUTION`, an assumption it documents; `placementById`). This file only binds a seed.
 */
import { Prng, type Seed } from '../harness/prng.js'
import { GPU_FLEET_DISTRIBUTION, placementById, type FleetShare, type Placement } from '../network/geo.js'

/** A weighted place of a fleet distribution (network/geo.ts FleetShare). */
export type Place = FleetShare

/** The default fleet distribution (network/geo.ts GPU_FLEET_DISTRIBUTION). */
export const DEFAULT_PLACES: readonly Place[] = GPU_FLEET_DISTRIBUTION

/** Draws each node's place from `places`, by seed and node id; throws InvalidFleetDistributionError on a bad distribution. */
export class PlaceAssigner {
  private readonly draw: (id: string) => Placement

  constructor (seed: Seed, places: readonly Place[] = DEFAULT_PLACES) {
    this.draw = placementById(new Prng(seed), places)
  }

  placeOf (nodeId: string): Placement {
    return this.draw(nodeId)
  }
}
