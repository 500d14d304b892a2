/**
 * What every baseline shares: whether a node can run a job (the protocol's own rules, no second copy),
 * a price cap per job, the tiers' start delays, and an index of the fleet by GPU model and region, so a
 * job looks only at the nodes that could fit it instead of scanning the whole fleet.
 *
 * Fit, as a provider's bid policy decides it (protocol/market/bid-policy.ts): the node's model is one of
 * the job's models (`modelInFamily`; none listed = any), its per-GPU memory meets the job's minimum
 * (`vramMeetsGB`, the nominal-GB rule), it has at least the job's GPUs, and a `strict` job's region holds
 * the node (`regionWithin`); a `prefer` job or one with no region accepts any region.
 */
import { modelInFamily, regionWithin, vramMeetsGB } from '../../protocol/constants.js'
import type { FleetNode, SimJob, Tier } from '../model.js'

/** Micros per GPU-hour a node asks (its owner's price floor). */
export type FloorOf = (node: FleetNode) => number
/** The list (on-demand cloud) price of a GPU model, micros per GPU-hour; undefined when the table has none. */
export type ListPrice = (modelSlug: string) => number | undefined

/** The tiers' start delays: one table for the market and every baseline (simulations/model.ts). */
export { DEFAULT_MAX_START_DELAY_MS } from '../model.js'

/** The tiers in priority order: at the same submit instant gold is served first, bronze last. */
export const TIERS: readonly Tier[] = ['gold', 'silver', 'bronze']

export function tierRank (tier: Tier): number {
  return TIERS.indexOf(tier)
}

/** True when a GPU of `model` with `vramMiB` per GPU is one the job accepts. */
export function gpuFits (job: SimJob, model: string, vramMiB: number): boolean {
  const modelOk = job.models.length === 0 || job.models.some((m) => modelInFamily(model, m))
  return modelOk && vramMeetsGB(vramMiB, job.minVramGB)
}

/** True when the job may run in `region` (a `prefer` residency never excludes). */
export function regionFits (job: SimJob, region: string): boolean {
  return job.residency !== 'strict' || job.region === undefined || regionWithin(region, job.region)
}

/** True when the node could ever run the job (hardware, size and region; not time or price). */
export function nodeFits (job: SimJob, node: FleetNode): boolean {
  return node.gpus >= job.gpus && gpuFits(job, node.model, node.vramMiB) && regionFits(job, node.region)
}

/** The cap a job's price must not exceed: its own `maxPrice`, else the caller's `capOf`, else none. */
export function capOf (job: SimJob, fallback?: (job: SimJob) => number | undefined): number {
  return job.maxPrice ?? fallback?.(job) ?? Number.POSITIVE_INFINITY
}

/** Nodes of one GPU model, VRAM and region, cheapest ask first (then by id). */
export interface FleetGroup { model: string, vramMiB: number, region: string, nodes: FleetNode[] }

/**
 * The fleet indexed for fitting: nodes grouped by (model, VRAM, region), each group sorted by ask then
 * id. A job checks a group's hardware and region once, so it looks at the groups (a few dozen) and
 * within the fitting ones only at what it needs — not at the fleet.
 */
export class FleetIndex {
  private readonly all: FleetGroup[] = []
  private readonly fitsCache = new Map<string, FleetNode[]>()
  private readonly groupCache = new Map<string, FleetGroup[]>()

  constructor (fleet: readonly FleetNode[], private readonly floorOf: FloorOf) {
    const byKey = new Map<string, FleetGroup>()
    for (const node of fleet) {
      const key = `${node.model}\u0000${node.vramMiB}\u0000${node.region}`
      let group = byKey.get(key)
      if (group === undefined) {
        group = { model: node.model, vramMiB: node.vramMiB, region: node.region, nodes: [] }
        byKey.set(key, group)
        this.all.push(group)
      }
      group.nodes.push(node)
    }
    for (const g of this.all) g.nodes.sort((a, b) => byAsk(a, b, floorOf))
  }

  /** The groups whose hardware and region fit the job (in fleet order; cached by the job's terms). */
  groups (job: SimJob): readonly FleetGroup[] {
    const key = `${job.models.join(',')}\u0000${job.minVramGB}\u0000${job.residency === 'strict' ? job.region ?? '' : ''}`
    let groups = this.groupCache.get(key)
    if (groups === undefined) {
      groups = this.all.filter((g) => gpuFits(job, g.model, g.vramMiB) && regionFits(job, g.region))
      this.groupCache.set(key, groups)
    }
    return groups
  }

  /**
   * Every node that could run the job (hardware, GPU count, region), cheapest ask first, then by id.
   * Jobs with the same terms share one list (cached by their terms).
   */
  candidates (job: SimJob): readonly FleetNode[] {
    const key = `${job.models.join(',')}\u0000${job.minVramGB}\u0000${job.residency === 'strict' ? job.region ?? '' : ''}\u0000${job.gpus}`
    const cached = this.fitsCache.get(key)
    if (cached !== undefined) return cached
    const fitting: FleetNode[] = []
    for (const g of this.groups(job)) for (const n of g.nodes) if (n.gpus >= job.gpus) fitting.push(n)
    fitting.sort((a, b) => byAsk(a, b, this.floorOf))
    this.fitsCache.set(key, fitting)
    return fitting
  }
}

/** Cheapest ask first, then by node id. */
export function byAsk (a: FleetNode, b: FleetNode, floorOf: FloorOf): number {
  const d = floorOf(a) - floorOf(b)
  if (d !== 0) return d
  return a.id < b.id ? -1 : a.id > b.id ? 1 : 0
}
