/**
 * One-way delays between countries from the RIPE Atlas RTT table: a dense, symmetric matrix over the
 * table's countries with every missing pair filled, and a seeded draw of one message's delay.
 *
 * - Measured pairs are the table's row (either order).
 * - A missing same-country pair (`KE,KE`) is the mean of the measured same-country rows of the
 *   country's region, else of its area (`af`), else of every measured same-country row.
 * - A missing pair of two countries is the mean of the measured rows between the two countries'
 *   regions (any two different countries, one in each), else between their areas, else of every
 *   measured row between two different countries.
 * A mean is taken per statistic (avg, std, min, max), each measured pair counting once. Fills read
 * measured rows only, so they do not depend on the order they are made in; `fills` counts them.
 *
 * One message's one-way delay (`sampleOneWayMs`), by jitter model:
 * - `lognormal` (default): rtt_min/2 + X, X log-normal with mean (rtt_avg − rtt_min)/2 and standard
 *   deviation rtt_std/2, truncated at rtt_max/2. So a draw never goes below half the fastest
 *   round trip measured, the mean stays rtt_avg/2 and the spread rtt_std/2, and the long right tail
 *   the table shows (DE–FR: 43 ms mean, 61 ms std, 44.8 s max) is kept. Rows with one measurement
 *   (rtt_std 0) give rtt_avg/2 every time.
 * - `normal`: N(rtt_avg/2, rtt_std/2) truncated (clamped) to [rtt_min/2, rtt_max/2]. With the table's
 *   large spreads this puts much mass at rtt_min/2 (a quarter of DE–FR draws): kept for comparison.
 * - `none`: rtt_avg/2 every time.
 */
import type { Prng } from '../harness/prng.js'
import { lognormalParams, standardNormal } from './distributions.js'
import { UnknownCountryError, countryRegion, regionArea } from './geo.js'
import { isPlaceholderCode, type RttStats, type RttTable } from './rtt-table.js'

export type JitterModel = 'lognormal' | 'normal' | 'none'

export const JITTER_MODELS: readonly JitterModel[] = Object.freeze(['lognormal', 'normal', 'none'])

/** How many matrix pairs (unordered, same-country included) were filled, by the rule that filled them. */
export interface FillCounts {
  sameCountry: { region: number, area: number, global: number }
  crossCountry: { region: number, area: number, global: number }
  total: number
}

type Acc = [avg: number, std: number, min: number, max: number, n: number]

function add (acc: Map<string, Acc>, key: string, s: RttStats): void {
  const a = acc.get(key) ?? [0, 0, 0, 0, 0]
  a[0] += s.avg; a[1] += s.std; a[2] += s.min; a[3] += s.max; a[4]++
  acc.set(key, a)
}

function mean (a: Acc | undefined): RttStats | undefined {
  return a === undefined || a[4] === 0 ? undefined : { avg: a[0] / a[4], std: a[1] / a[4], min: a[2] / a[4], max: a[3] / a[4] }
}

function pairKey (x: string, y: string): string {
  return x < y ? `${x}|${y}` : `${y}|${x}`
}

export class LatencyMatrix {
  /** The countries, sorted; a country's index is its position. */
  readonly countries: readonly string[]
  readonly fills: Readonly<FillCounts>
  private readonly index = new Map<string, number>()
  private readonly n: number
  private readonly avg: Float64Array
  private readonly std: Float64Array
  private readonly min: Float64Array
  private readonly max: Float64Array
  private readonly mu: Float64Array
  private readonly sigma: Float64Array
  private readonly measured: Uint8Array

  /** Build from a parsed table; `regionOf` maps a country to its region (geo.ts's table unless given). */
  constructor (table: RttTable, regionOf: (country: string) => string = countryRegion) {
    this.countries = Object.freeze([...table.countries])
    const n = this.n = this.countries.length
    this.countries.forEach((c, i) => this.index.set(c, i))
    const size = n * n
    this.avg = new Float64Array(size)
    this.std = new Float64Array(size)
    this.min = new Float64Array(size)
    this.max = new Float64Array(size)
    this.mu = new Float64Array(size)
    this.sigma = new Float64Array(size)
    this.measured = new Uint8Array(size)
    const region = this.countries.map((c) => regionOf(c))
    const area = region.map(regionArea)
    const same = { region: new Map<string, Acc>(), area: new Map<string, Acc>(), all: new Map<string, Acc>() }
    const cross = { region: new Map<string, Acc>(), area: new Map<string, Acc>(), all: new Map<string, Acc>() }
    for (const row of table.rows) {
      if (isPlaceholderCode(row.a) || isPlaceholderCode(row.b)) continue
      const i = this.index.get(row.a) as number
      const j = this.index.get(row.b) as number
      this.set(i, j, row)
      this.measured[i * n + j] = this.measured[j * n + i] = 1
      const acc = i === j ? same : cross
      add(acc.region, pairKey(region[i] as string, region[j] as string), row)
      add(acc.area, pairKey(area[i] as string, area[j] as string), row)
      add(acc.all, '', row)
    }
    const fills: FillCounts = { sameCountry: { region: 0, area: 0, global: 0 }, crossCountry: { region: 0, area: 0, global: 0 }, total: 0 }
    for (let i = 0; i < n; i++) {
      for (let j = i; j < n; j++) {
        if (this.measured[i * n + j] === 1) continue
        const acc = i === j ? same : cross
        const count = i === j ? fills.sameCountry : fills.crossCountry
        const byRegion = mean(acc.region.get(pairKey(region[i] as string, region[j] as string)))
        const byArea = byRegion === undefined ? mean(acc.area.get(pairKey(area[i] as string, area[j] as string))) : undefined
        const stats = byRegion ?? byArea ?? mean(acc.all.get(''))
        if (stats === undefined) throw new RangeError('latency matrix: the table has no row to fill from')
        if (byRegion !== undefined) count.region++
        else if (byArea !== undefined) count.area++
        else count.global++
        fills.total++
        this.set(i, j, stats)
      }
    }
    this.fills = Object.freeze(fills)
  }

  /** The index of `country` in `countries`; throws UnknownCountryError. */
  indexOf (country: string): number {
    const i = this.index.get(country)
    if (i === undefined) throw new UnknownCountryError(country)
    return i
  }

  has (country: string): boolean {
    return this.index.has(country)
  }

  /** The round-trip statistics between two countries (either order), ms. */
  rtt (a: string, b: string): RttStats {
    const k = this.indexOf(a) * this.n + this.indexOf(b)
    return { avg: this.avg[k] as number, std: this.std[k] as number, min: this.min[k] as number, max: this.max[k] as number }
  }

  /** True when the pair is the table's own row, false when it was filled. */
  isMeasured (a: string, b: string): boolean {
    return this.measured[this.indexOf(a) * this.n + this.indexOf(b)] === 1
  }

  /** The mean one-way delay, ms: rtt_avg / 2. */
  meanOneWayMs (a: string, b: string): number {
    return (this.avg[this.indexOf(a) * this.n + this.indexOf(b)] as number) / 2
  }

  /** One message's one-way delay between the countries at indexes `i` and `j` (see the file's comment), ms. */
  sampleByIndex (i: number, j: number, prng: Prng, jitter: JitterModel = 'lognormal'): number {
    const k = i * this.n + j
    const avg = (this.avg[k] as number) / 2
    if (jitter === 'none') return avg
    const lo = (this.min[k] as number) / 2
    const hi = (this.max[k] as number) / 2
    if (jitter === 'normal') return Math.min(hi, Math.max(lo, avg + ((this.std[k] as number) / 2) * standardNormal(prng)))
    const sigma = this.sigma[k] as number
    if (sigma === 0) return avg
    return Math.min(hi, lo + Math.exp((this.mu[k] as number) + sigma * standardNormal(prng)))
  }

  /** One message's one-way delay from `a` to `b`, ms. */
  sampleOneWayMs (a: string, b: string, prng: Prng, jitter: JitterModel = 'lognormal'): number {
    return this.sampleByIndex(this.indexOf(a), this.indexOf(b), prng, jitter)
  }

  /** Store one pair; min and max widen to take in avg where the table's float rounding put it a hair outside. */
  private set (i: number, j: number, stats: RttStats): void {
    const s = { avg: stats.avg, std: stats.std, min: Math.min(stats.min, stats.avg), max: Math.max(stats.max, stats.avg) }
    const { mu, sigma } = s.std > 0 && s.avg > s.min ? lognormalParams((s.avg - s.min) / 2, s.std / 2) : { mu: 0, sigma: 0 }
    for (const k of [i * this.n + j, j * this.n + i]) {
      this.avg[k] = s.avg
      this.std[k] = s.std
      this.min[k] = s.min
      this.max[k] = s.max
      this.mu[k] = mu
      this.sigma[k] = sigma
    }
  }
}
