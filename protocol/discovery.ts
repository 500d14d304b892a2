/**
 * Provider discovery decisions (DESIGN §4), pure: which capability key to look up for a query, and
 * whether a fetched ad answers it. The node does the lookups and fetches; the simulator reuses this.
 */
import { marketTopic, modelInFamily, modelSlug, regionWithin, topRegion, vramLookupBucket, vramMeetsGB } from './constants.js'
import type { CapabilityAd } from './messages/capability-ad.js'
import type { JobRequest } from './messages/job-request.js'

export interface ProviderQuery {
  /** Words of a GPU model name: `h100`, `A100 80GB`, `nvidia-l40s` (see modelMatches). */
  gpu?: string
  /** Per-GPU VRAM, nominal GB. */
  minVramGB?: number
  /** The provider's region equals it or lies inside it (`eu` matches `eu-west`). */
  region?: string
}

/**
 * The single capability key whose providers are a superset of the answer: the most selective one the
 * query allows. A partial model name cannot be looked up directly (keys hold full slugs), so `gpu` is
 * filtered after the fetch; with nothing else to go on, every provider with ≥ 8 GB is listed.
 */
export function lookupKeyFor (query: ProviderQuery): string {
  const bucket = query.minVramGB !== undefined ? vramLookupBucket(query.minVramGB) : undefined
  if (query.region !== undefined && bucket !== undefined) return `market/${topRegion(query.region)}/${bucket}`
  if (query.region !== undefined) return `region/${query.region}`
  return `vram/${bucket ?? 8}`
}

/**
 * True when `model` (a slug) answers a person's search words (`gpumesh providers --gpu …`, §7.4): the
 * words appear in the slug in any order (`A100 80GB` matches `nvidia-a100-sxm4-80gb`), or the query's slug
 * is a substring (`rtx-40` finds the whole 40 series). Deliberately loose, because a search only lists
 * providers: `a10` also lists A100s. A job's `models` never use this rule; they use `modelInFamily`.
 */
export function modelMatches (model: string, wanted: string): boolean {
  const slug = modelSlug(wanted)
  return model.includes(slug) || modelInFamily(model, slug)
}

/** True when one GPU of `ad` meets the model and VRAM terms and the ad's region is inside the query's. */
export function adMatches (ad: CapabilityAd, query: ProviderQuery): boolean {
  if (query.region !== undefined && !regionWithin(ad.region, query.region)) return false
  return ad.gpus.some((gpu) =>
    (query.gpu === undefined || modelMatches(gpu.model, query.gpu)) &&
    (query.minVramGB === undefined || vramMeetsGB(gpu.vramMiB, query.minVramGB)))
}

/**
 * The market topics a job is gossiped on (DESIGN §5): one per top-level region it accepts, plus
 * `global` when it has no region or only prefers its regions (a provider elsewhere may still bid).
 * Sorted, without duplicates.
 */
export function jobTopics (placement: JobRequest['placement']): string[] {
  const topics = new Set(placement.regions.map((r) => marketTopic(topRegion(r))))
  if (placement.regions.length === 0 || placement.residency === 'prefer') topics.add(marketTopic())
  return [...topics].sort()
}

/** The market topics a provider in `region` listens on: its top-level region's and `global`. */
export function providerTopics (region: string): string[] {
  return [...new Set([marketTopic(topRegion(region)), marketTopic()])].sort()
}
