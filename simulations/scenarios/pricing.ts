/**
 * The prices a scenario puts on the market, from the price snapshot (simulations/data/prices/):
 *
 * - **List price** of a GPU model: the snapshot's on-demand price for it (workloads/prices.ts: the most
 *   specific family, else the nearest VRAM class; the median of the rows). The old way pays it, and it is
 *   every strategy's yardstick (`listCost`).
 * - **A renter's cap** (`maxPrice` of a job that names none): the list price of the cheapest model that
 *   fits the job — what the renter would pay the old way, so no renter pays more here than there.
 * - **An owner's floor**: a share of its model's list price, drawn per node (seeded by the node's id) from
 *   [OWNER_FLOOR_MIN, OWNER_FLOOR_MAX]. An assumption, anchored in the snapshot's marketplace rows: Vast.ai
 *   lists an H100 SXM at 1.80 against Lambda's 2.99–3.29 on demand (0.55–0.60), RunPod an RTX A6000 at
 *   0.49 against Lambda's 0.80 (0.61); an idle GPU that would otherwise earn nothing can go lower.
 */
import { Prng, type Seed } from '../harness/prng.js'
import type { FleetNode, SimJob } from '../model.js'
import { ListCatalogue, type ListPrice } from '../baselines/index.js'
import { ListPrices, parsePrices } from '../workloads/prices.js'

export const OWNER_FLOOR_MIN = 0.4
export const OWNER_FLOOR_MAX = 0.7

export interface ScenarioPrices {
  /** List price by model slug, micros per GPU-hour (undefined for a model the fleet does not have). */
  listPrice: ListPrice
  /** The renter's cap of a job: the cheapest fitting list price (undefined when no model fits). */
  capOf: (job: SimJob) => number | undefined
  /** The owner's floor of a node, micros per GPU-hour. */
  floorOf: (node: FleetNode) => number
  catalogue: ListCatalogue
}

export function scenarioPrices (pricesCsv: string, fleet: readonly FleetNode[], seed: Seed): ScenarioPrices {
  const table = new ListPrices(parsePrices(pricesCsv))
  const byModel = new Map<string, number>()
  for (const n of fleet) if (!byModel.has(n.model)) byModel.set(n.model, table.priceFor(n.model, n.vramMiB).onDemand)
  const listPrice: ListPrice = (model) => byModel.get(model)
  const catalogue = new ListCatalogue(fleet.map((n) => ({ model: n.model, vramMiB: n.vramMiB })), listPrice)
  const floors = new Prng(seed).fork('owner-floors')
  const floorCache = new Map<string, number>()
  const floorOf = (node: FleetNode): number => {
    let f = floorCache.get(node.id)
    if (f === undefined) {
      const share = OWNER_FLOOR_MIN + (OWNER_FLOOR_MAX - OWNER_FLOOR_MIN) * floors.fork(node.id).next()
      f = Math.round((byModel.get(node.model) ?? 0) * share)
      floorCache.set(node.id, f)
    }
    return f
  }
  return { listPrice, capOf: (job) => catalogue.cheapest(job)?.price, floorOf, catalogue }
}
