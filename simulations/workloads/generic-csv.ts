/**
 * The generic job CSV (format in workloads/README.md): one job per row — submit time, duration, GPUs, and
 * optionally id, GPU share, models, VRAM, tier, region, residency and price cap. A column mapping says which
 * column holds each field, in which time unit, and how its values translate, so another public trace loads
 * without code. Every bad value is a CsvValueError with its line and column; rows asking for 0 GPUs
 * (CPU-only work) are counted and left out.
 */
import type { SimJob, Tier } from '../model.js'
import { type CsvRow, type CsvTable, type NumberRule, parseCsv } from './csv.js'

export type JobField = 'id' | 'submitAt' | 'durationMs' | 'gpus' | 'gpuMilli' | 'models' | 'minVramGB' | 'tier' | 'region' | 'residency' | 'maxPrice'

export type TimeUnit = 'ms' | 's' | 'min' | 'h'

const UNIT_MS: Record<TimeUnit, number> = { ms: 1, s: 1000, min: 60_000, h: 3_600_000 }

/** Where one field comes from. A bare string is a column name. */
export type ColumnSpec = string | {
  column: string
  /** Time fields (submitAt, durationMs): the column's unit (default `s`). */
  unit?: TimeUnit
  /** durationMs only: duration = column − minus (e.g. deletion_time − scheduled_time). */
  minus?: string
  /** Translate raw values (`{ LS: 'gold', BE: 'bronze' }`); a value not listed is an error. */
  values?: Record<string, string>
  /** Used when the field is empty. */
  default?: string
}

export type JobCsvMapping = Partial<Record<JobField, ColumnSpec>>

/** The column names a file in the documented format uses. */
export const DEFAULT_JOB_COLUMNS: Readonly<Record<JobField, string>> = {
  id: 'id',
  submitAt: 'submit_s',
  durationMs: 'duration_s',
  gpus: 'gpus',
  gpuMilli: 'gpu_milli',
  models: 'models',
  minVramGB: 'vram_gb',
  tier: 'tier',
  region: 'region',
  residency: 'residency',
  maxPrice: 'max_price'
}

const REQUIRED: readonly JobField[] = ['submitAt', 'durationMs', 'gpus']
const TIERS: readonly Tier[] = ['gold', 'silver', 'bronze']
const SLUG = /^[a-z0-9]+(-[a-z0-9]+)*$/

export interface JobCsvOptions {
  mapping?: JobCsvMapping
  /** Tier of a row without one (default silver: on demand). */
  defaultTier?: Tier
  /** Subtract the earliest submit time, so the run starts at the first job (for epoch timestamps). */
  rebase?: boolean
  /** Names the file in errors and in each job's `source`. */
  source?: string
}

export interface JobCsvResult {
  jobs: SimJob[]
  /** Rows asking for 0 GPUs, left out. */
  cpuOnly: number
}

interface Resolved {
  column: string
  unit: TimeUnit
  minus?: string
  values?: Record<string, string>
  default?: string
}

/** Parse a job CSV. Columns not in the mapping use DEFAULT_JOB_COLUMNS; optional fields may be absent. */
export function parseJobCsv (text: string, opts: JobCsvOptions = {}): JobCsvResult {
  const source = opts.source ?? 'jobs.csv'
  const table = parseCsv(text, source)
  const spec = resolve(opts.mapping ?? {})
  for (const f of REQUIRED) table.require(spec[f].column)
  const minus = spec.durationMs.minus
  if (minus !== undefined) table.require(minus)
  for (const f of Object.keys(opts.mapping ?? {}) as JobField[]) table.require(spec[f].column)
  const defaultTier = opts.defaultTier ?? 'silver'
  const jobs: SimJob[] = []
  let cpuOnly = 0
  for (const row of table.rows) {
    const read = (f: JobField): string | undefined => {
      const s = spec[f]
      const raw = table.text(row, s.column)
      const v = raw === undefined || raw === '' ? s.default : raw
      if (v === undefined || s.values === undefined) return v
      const mapped = Object.hasOwn(s.values, v) ? s.values[v] : undefined
      if (mapped === undefined) throw table.error('BAD_VALUE', row, s.column, `${JSON.stringify(v)} is not one of ${Object.keys(s.values).join(', ')}`)
      return mapped
    }
    const num = (f: JobField, rule: NumberRule): number | undefined => {
      const v = read(f)
      return v === undefined ? undefined : table.numberOf(row, spec[f].column, v, rule)
    }
    const gpus = num('gpus', { integer: true, min: 0 }) ?? missing(table, row, spec.gpus.column)
    if (gpus === 0) {
      cpuOnly++
      continue
    }
    const submitAt = (num('submitAt', { min: 0 }) ?? missing(table, row, spec.submitAt.column)) * UNIT_MS[spec.submitAt.unit]
    let duration = num('durationMs', {}) ?? missing(table, row, spec.durationMs.column)
    if (minus !== undefined) duration -= table.number(row, minus)
    const durationMs = Math.round(duration * UNIT_MS[spec.durationMs.unit])
    if (!(durationMs > 0)) throw table.error('OUT_OF_RANGE', row, spec.durationMs.column, `duration must be > 0 ms, got ${durationMs}`)
    const tier = read('tier') ?? defaultTier
    if (!(TIERS as readonly string[]).includes(tier)) throw table.error('BAD_VALUE', row, spec.tier.column, `tier must be gold, silver or bronze, got ${JSON.stringify(tier)}`)
    const residency = read('residency') ?? 'prefer'
    if (residency !== 'strict' && residency !== 'prefer') throw table.error('BAD_VALUE', row, spec.residency.column, `residency must be strict or prefer, got ${JSON.stringify(residency)}`)
    const region = read('region')
    if (region !== undefined && !SLUG.test(region)) throw table.error('BAD_VALUE', row, spec.region.column, `region must be a slug (eu-west), got ${JSON.stringify(region)}`)
    const models = (read('models') ?? '').split('|').filter((m) => m !== '')
    for (const m of models) if (!SLUG.test(m)) throw table.error('BAD_VALUE', row, spec.models.column, `model must be a slug or family (nvidia-tesla-t4, a100-80gb), got ${JSON.stringify(m)}`)
    const maxPrice = num('maxPrice', { integer: true, min: 0 })
    jobs.push({
      id: read('id') ?? `${source}:${row.line}`,
      submitAt: Math.round(submitAt),
      durationMs,
      gpus,
      gpuMilli: num('gpuMilli', { integer: true, min: 1, max: 1000 }) ?? 1000,
      models,
      minVramGB: num('minVramGB', { min: 0 }) ?? 0,
      tier: tier as Tier,
      ...(region === undefined ? {} : { region }),
      residency,
      ...(maxPrice === undefined ? {} : { maxPrice }),
      source: `csv:${source}:${row.line}`
    })
  }
  if (opts.rebase === true && jobs.length > 0) {
    let first = Number.POSITIVE_INFINITY
    for (const j of jobs) first = Math.min(first, j.submitAt)
    for (const j of jobs) j.submitAt -= first
  }
  return { jobs, cpuOnly }
}

function resolve (mapping: JobCsvMapping): Record<JobField, Resolved> {
  for (const key of Object.keys(mapping)) {
    if (!Object.hasOwn(DEFAULT_JOB_COLUMNS, key)) throw new RangeError(`mapping: unknown field ${JSON.stringify(key)} (fields: ${Object.keys(DEFAULT_JOB_COLUMNS).join(', ')})`)
  }
  const out = {} as Record<JobField, Resolved>
  for (const f of Object.keys(DEFAULT_JOB_COLUMNS) as JobField[]) {
    const s = mapping[f] ?? DEFAULT_JOB_COLUMNS[f]
    const o = typeof s === 'string' ? { column: s } : s
    if (o.unit !== undefined && !Object.hasOwn(UNIT_MS, o.unit)) throw new RangeError(`mapping.${f}: unit must be ms, s, min or h, got ${String(o.unit)}`)
    if (o.minus !== undefined && f !== 'durationMs') throw new RangeError(`mapping.${f}: minus is for durationMs only`)
    out[f] = { column: o.column, unit: o.unit ?? 's', ...(o.minus === undefined ? {} : { minus: o.minus }), ...(o.values === undefined ? {} : { values: o.values }), ...(o.default === undefined ? {} : { default: o.default }) }
  }
  return out
}

function missing (table: CsvTable, row: CsvRow, column: string): never {
  throw table.error('EMPTY', row, column, 'empty field')
}
