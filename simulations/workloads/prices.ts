/**
 * List prices for the old-way baseline (renters rent on demand from a cloud at list price), from the price
 * snapshot (simulations/data/prices/, columns `provider, gpu, offer, usd_per_gpu_hour_ondemand,
 * usd_per_gpu_hour_spot, source`). The rule that maps a fleet model to a price, in order:
 *
 * 1. Model: the rows whose GPU name, as a family (its slug without form-factor words such as `sxm4`, `pcie`,
 *    and without a parenthesised instance name), is a family of the model (protocol `modelInFamily`, on the
 *    same words); only the most specific matches count (`a100-80gb` beats `a100`).
 * 2. VRAM class, for a model the table lacks (T4, P100, A10…): the rows whose GPU has the nominal VRAM
 *    nearest the model's (absolute GB; a tie goes to the smaller, cheaper class — the baseline is never
 *    made dearer by a guess).
 *
 * The price is the median of the chosen rows' on-demand prices (`pick: 'min'` for the cheapest cloud,
 * `provider` for one cloud); spot is the same over the rows that give one, undefined when none does. Rows
 * whose source says UNVERIFIED are left out unless asked for. 1 credit = 1 USD: micros = USD × 10⁶.
 */
import { modelInFamily, modelSlug, nominalVramGB } from '../../protocol/constants.js'
import { parseCsv } from './csv.js'

export const MICROS_PER_USD = 1_000_000

export interface PriceRow {
  provider: string
  gpu: string
  offer: string
  /** USD per GPU-hour. */
  onDemandUsd: number
  spotUsd?: number
  source: string
  line: number
  /** The GPU name as a family slug (see the rule above). */
  family: string
  /** Nominal VRAM per GPU, GB, from the name (`40GB`) or KNOWN_VRAM_GB; undefined when unknown. */
  vramGB?: number
}

/** Nominal VRAM of the GPU families the snapshot names without a size. */
export const KNOWN_VRAM_GB: Readonly<Record<string, number>> = {
  h100: 80,
  h200: 141,
  a100: 40,
  a6000: 48,
  'rtx-a6000': 48,
  'rtx-a4500': 20,
  'rtx-4090': 24,
  'rtx-3090': 24,
  v100: 16,
  t4: 16,
  l4: 24,
  l40s: 48,
  a10: 24,
  a10g: 24
}

/** Words that name a form factor or memory type, not a model: ignored when matching. */
const FORM_WORDS = new Set(['sxm', 'sxm2', 'sxm3', 'sxm4', 'sxm5', 'pcie', 'nvl', 'hbm2', 'hbm2e', 'hbm3', 'hbm3e', 'nvidia', 'tesla'])

/** `A100 80GB PCIe` → `a100-80gb`; `H100 (p5.48xlarge)` → `h100`. */
export function priceFamily (gpu: string): string {
  return modelSlug(gpu.replace(/\([^)]*\)/g, ' ')).split('-').filter((w) => w !== '' && !FORM_WORDS.has(w)).join('-')
}

/** Parse the price snapshot. */
export function parsePrices (text: string, source = 'gpu_prices_snapshot.csv'): PriceRow[] {
  const table = parseCsv(text, source)
  table.require('provider', 'gpu', 'offer', 'usd_per_gpu_hour_ondemand', 'usd_per_gpu_hour_spot', 'source')
  return table.rows.map((row) => {
    const gpu = table.required(row, 'gpu')
    const family = priceFamily(gpu)
    if (family === '') throw table.error('BAD_VALUE', row, 'gpu', `no model name in ${JSON.stringify(gpu)}`)
    const spotUsd = table.optionalNumber(row, 'usd_per_gpu_hour_spot', { min: 0 })
    const vramGB = vramOf(family)
    return {
      provider: table.required(row, 'provider'),
      gpu,
      offer: table.text(row, 'offer') ?? '',
      onDemandUsd: table.number(row, 'usd_per_gpu_hour_ondemand', { min: 0 }),
      ...(spotUsd === undefined ? {} : { spotUsd }),
      source: table.text(row, 'source') ?? '',
      line: row.line,
      family,
      ...(vramGB === undefined ? {} : { vramGB })
    }
  })
}

export interface ListPrice {
  /** Micros per GPU-hour, on demand. */
  onDemand: number
  /** Micros per GPU-hour on spot/interruptible capacity, where the chosen rows give one. */
  spot?: number
  rule: 'model' | 'vram-class'
  /** The rows the price came from. */
  rows: PriceRow[]
}

export type PricesErrorCode = 'NO_ROWS' | 'NO_PRICE'

export class PricesError extends Error {
  constructor (readonly code: PricesErrorCode, detail: string) {
    super(`prices: ${detail}`)
    this.name = 'PricesError'
  }
}

export interface ListPriceOptions {
  /** Only this provider's rows (`Lambda`, `RunPod`, `Vast.ai`, `AWS`): the old way's one cloud. */
  provider?: string
  /** Aggregate over the chosen rows: the median (default) or the cheapest. */
  pick?: 'median' | 'min'
  /** Keep rows whose source says UNVERIFIED (default false). */
  includeUnverified?: boolean
}

export class ListPrices {
  private readonly rows: PriceRow[]
  private readonly cache = new Map<string, ListPrice>()

  constructor (rows: readonly PriceRow[], private readonly opts: ListPriceOptions = {}) {
    this.rows = rows.filter((r) => (opts.provider === undefined || r.provider === opts.provider) &&
      (opts.includeUnverified === true || !/unverified/i.test(r.source)))
    if (this.rows.length === 0) throw new PricesError('NO_ROWS', `no price rows${opts.provider === undefined ? '' : ` for provider ${opts.provider}`}`)
  }

  /** The list price of a GPU model (its slug as the daemon computes it, and its VRAM in MiB). */
  priceFor (model: string, vramMiB: number): ListPrice {
    const key = `${model}\n${vramMiB}`
    const hit = this.cache.get(key)
    if (hit !== undefined) return hit
    const price = this.compute(model, vramMiB)
    this.cache.set(key, price)
    return price
  }

  private compute (model: string, vramMiB: number): ListPrice {
    const words = model.split('-').filter((w) => !FORM_WORDS.has(w)).join('-')
    const matches = this.rows.filter((r) => modelInFamily(words, r.family))
    if (matches.length > 0) {
      const best = Math.max(...matches.map((r) => r.family.split('-').length))
      return this.aggregate(matches.filter((r) => r.family.split('-').length === best), 'model')
    }
    const gb = nominalVramGB(vramMiB)
    const sized = this.rows.filter((r) => r.vramGB !== undefined)
    if (sized.length === 0) throw new PricesError('NO_PRICE', `no row matches ${model} and none has a known VRAM`)
    let nearest = Number.POSITIVE_INFINITY
    let nearestGB = 0
    for (const r of sized) {
      const d = Math.abs((r.vramGB as number) - gb)
      if (d < nearest || (d === nearest && (r.vramGB as number) < nearestGB)) {
        nearest = d
        nearestGB = r.vramGB as number
      }
    }
    return this.aggregate(sized.filter((r) => r.vramGB === nearestGB), 'vram-class')
  }

  private aggregate (rows: PriceRow[], rule: ListPrice['rule']): ListPrice {
    const pick = this.opts.pick ?? 'median'
    const of = (xs: number[]): number => Math.round((pick === 'min' ? Math.min(...xs) : median(xs)) * MICROS_PER_USD)
    const spots = rows.flatMap((r) => (r.spotUsd === undefined ? [] : [r.spotUsd]))
    return { onDemand: of(rows.map((r) => r.onDemandUsd)), ...(spots.length === 0 ? {} : { spot: of(spots) }), rule, rows }
  }
}

function median (xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b)
  const mid = s.length >> 1
  return s.length % 2 === 1 ? s[mid] as number : ((s[mid - 1] as number) + (s[mid] as number)) / 2
}

function vramOf (family: string): number | undefined {
  for (const w of family.split('-')) {
    const m = /^(\d+)gb$/.exec(w)
    if (m !== null) return Number(m[1])
  }
  if (Object.hasOwn(KNOWN_VRAM_GB, family)) return KNOWN_VRAM_GB[family]
  const base = family.split('-')[0] as string
  return Object.hasOwn(KNOWN_VRAM_GB, base) ? KNOWN_VRAM_GB[base] : undefined
}
