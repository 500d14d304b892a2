/**
 * The job description a user writes (a JSON/YAML file, CLI flags, or the body of `POST /v1/jobs`)
 * and its translation into a wire JobRequest (DESIGN §5).
 *
 * Two forms:
 * - the **spec** (`jobSpecSchema`): canonical keys, friendly units — durations in seconds, the bid
 *   window in ms, the price cap in credits per GPU-hour, VRAM in GB — and `inputs[].file` absolute.
 *   This is what the daemon's API accepts.
 * - the **friendly form** (files and flags), turned into spec keys by `normaliseJobSpec`, the one
 *   normalisation. Besides every spec key it accepts:
 *     maxRuntime, maxStartDelay   "90s", "15m", "2h", "1h30m" or a number of seconds
 *     bidWindow                   "2s", "500ms" or a number of milliseconds
 *     maxRtt                      "80ms", "1s" or a number of milliseconds → maxRttMs
 *     minVram                     40, "40", "40GB"
 *     gpu                         a model or whole words of one ("h100", "NVIDIA H100 80GB"; "a10" is not an A100: protocol/README.md §7.4a), a comma list or a list → models
 *     region                      a region, a comma list or a list → regions
 *     inputs                      a list (or comma list) of "file" (placed under its base name),
 *                                 "path=file" or { path?, file }; a relative file is resolved against
 *                                 the job file's directory (the working directory for flags); a file
 *                                 name with a comma or `=` needs the { path, file } form
 *     outputs                     a list or a comma list
 *     env                         a record, or a list of "KEY=VALUE"
 *   Numbers may be given as numeric strings. A key and its alias together (maxRuntime and
 *   maxRuntimeSec) is an error.
 */
import { readFile, stat } from 'node:fs/promises'
import { basename, dirname, extname, isAbsolute, resolve } from 'node:path'
import { parse as parseYaml } from 'yaml'
import { z } from 'zod'
import type { CID } from '../../crypto/index.js'
import { DAY_MS, HOUR_MS, KINDS, MAX_JOB_FILES, MINUTE_MS, PROTOCOL_VERSION, SECOND_MS, encodePayload, jobRequestSchema, modelSlug, placement, resources, sla, verification, workload, type JobRequest } from '../../protocol/index.js'
import { paymentRule, relativePath } from '../../protocol/messages/common.js'
import { GPU_ENV_NAMES } from '../executors/jobfs.js'

/** Longest a job request may live (the job-request kind's limit). */
const MAX_REQUEST_LIFETIME_MS = KINDS['job-request'].maxLifetimeMs
/** Room left in the job-request envelope for the key, payload type and signature. */
const ENVELOPE_OVERHEAD = 256

/** An unreadable, malformed or impossible job description; `problems` holds one `field: message` each. */
export class JobSpecError extends Error {
  override readonly name = 'JobSpecError'
  constructor (readonly problems: string[], readonly source?: string) {
    super(`invalid job${source !== undefined ? ` (${source})` : ''}:\n  ${problems.join('\n  ')}`)
  }
}

const W = workload.shape
const R = resources.shape

/** Canonical job spec. Limits come from the wire schema, so a valid spec makes a valid request. */
export const jobSpecSchema = z.strictObject({
  label: jobRequestSchema.shape.label,
  executor: W.executor.default('process'),
  /** argv, run without a shell; for `wasm`, command[0] is the module's path among the inputs. */
  command: W.argv,
  image: W.image,
  env: W.env.default({}),
  inputs: z.array(z.strictObject({
    /** Where the file is placed in the job's work dir. */
    path: relativePath,
    /** The local file (absolute). */
    file: z.string().min(1).refine(isAbsolute, { message: 'expected an absolute path' })
  })).max(MAX_JOB_FILES).default([]),
  outputs: W.outputs.default([]),
  maxRuntimeSec: W.maxRuntimeSec.default(3600),
  network: W.network.default(false),
  gpus: R.gpus.default(1),
  minVramGB: R.minVramGB.default(0),
  models: R.models.default([]),
  tier: sla.shape.tier.default('silver'),
  /** Credits per GPU-hour (sent as integer micros). */
  maxPrice: z.number().nonnegative().max(1e9).default(10),
  maxStartDelaySec: z.int().nonnegative().max(MAX_REQUEST_LIFETIME_MS / 1000).default(300),
  regions: placement.shape.regions.default([]),
  residency: placement.shape.residency.default('prefer'),
  /** Prefer near providers: scoring weighs RTT heavily (protocol/market/scoring.ts LATENCY_SENSITIVE_*). */
  latencySensitive: z.boolean().default(false),
  /** Consider only providers whose RTT (measured or estimated) is at most this, ms. */
  maxRttMs: placement.shape.maxRttMs,
  bidWindowMs: jobRequestSchema.shape.auction.shape.bidWindowMs.default(2000),
  paymentRule: paymentRule.default('first-price'),
  cpuCores: R.cpuCores.default(0),
  memoryMiB: R.memoryMiB.default(0),
  diskMiB: R.diskMiB.default(0),
  verification: verification.default({ mode: 'none' })
}).superRefine((spec, ctx) => {
  const problem = (path: Array<string | number>, message: string): void => { ctx.addIssue({ code: 'custom', path, message }) }
  if (spec.executor === 'docker' && spec.image === undefined) problem(['image'], 'the docker executor needs an image')
  if (spec.executor !== 'docker' && spec.image !== undefined) problem(['image'], `only the docker executor takes an image (executor is ${spec.executor})`)
  if (spec.executor === 'wasm' && !spec.inputs.some((i) => i.path === spec.command[0])) {
    problem(['command', 0], 'for the wasm executor, command[0] must be the path of the module among the inputs')
  }
  if (spec.gpus === 0 && (spec.minVramGB > 0 || spec.models.length > 0)) problem(['gpus'], 'minVramGB or models given, but gpus is 0')
  for (const name of GPU_ENV_NAMES) if (name in spec.env) problem(['env', name], 'set by the provider from the allocated GPUs; a job cannot set it')
  // §5.9 "What a deterministic run sees": a wasm guest gets an empty environment on every provider and in every
  // re-execution, so an env given here would be dropped silently and the job would not run as its author meant
  if (spec.executor === 'wasm' && Object.keys(spec.env).length > 0) {
    problem(['env'], 'a wasm job runs with an empty environment (protocol/README.md §5.9); pass values as arguments or an input file')
  }
  const paths = spec.inputs.map((i) => i.path)
  paths.forEach((p, i) => { if (paths.indexOf(p) !== i) problem(['inputs', i, 'path'], `two inputs at ${p}`) })
})

/** A valid job spec. */
export type JobSpec = z.output<typeof jobSpecSchema>
/** Spec keys with values not validated yet (what normaliseJobSpec returns). */
export type JobSpecFields = Record<string, unknown>

/** `field: message` lines for zod issues, naming unknown keys. */
export function issueProblems (issues: readonly z.core.$ZodIssue[]): string[] {
  return issues.flatMap((issue) => {
    const path = issue.path.map(String).join('.')
    if (issue.code === 'unrecognized_keys') return issue.keys.map((k) => `${path === '' ? '' : `${path}.`}${k}: unknown key`)
    return [`${path === '' ? 'job' : path}: ${issue.message}`]
  })
}

const UNIT_MS: Record<string, number> = { ms: 1, s: SECOND_MS, m: MINUTE_MS, h: HOUR_MS, d: DAY_MS }

/**
 * A duration in ms: "90s", "15m", "2h", "1h30m", "500ms", or a number (or numeric string) in
 * `bareUnit`. Undefined when unreadable or negative.
 */
export function parseDuration (value: unknown, bareUnit: 's' | 'ms'): number | undefined {
  const number = toNumber(value)
  if (number !== undefined) return number >= 0 ? number * (UNIT_MS[bareUnit] as number) : undefined
  if (typeof value !== 'string') return undefined
  const s = value.trim().toLowerCase()
  if (!/^(\d+(\.\d+)?\s*(ms|s|m|h|d)\s*)+$/.test(s)) return undefined
  let ms = 0
  for (const [, n, , unit] of s.matchAll(/(\d+(\.\d+)?)\s*(ms|s|m|h|d)/g)) ms += Number(n) * (UNIT_MS[unit as string] as number)
  return ms
}

/** A finite number, or a string holding one; otherwise undefined. */
function toNumber (value: unknown): number | undefined {
  if (typeof value === 'number') return Number.isFinite(value) ? value : undefined
  if (typeof value === 'string' && value.trim() !== '' && Number.isFinite(Number(value))) return Number(value)
  return undefined
}

/** A list, or a comma-separated string, as trimmed non-empty strings (other items pass through). */
function listOf (value: unknown): unknown[] {
  const items = typeof value === 'string' ? value.split(',') : Array.isArray(value) ? value.flatMap((v) => typeof v === 'string' ? v.split(',') : [v]) : [value]
  return items.map((v) => typeof v === 'string' ? v.trim() : v).filter((v) => v !== '')
}

type Parse = (value: unknown, baseDir: string) => unknown
/** Parsers throw this with the message only; normaliseJobSpec names the key. */
class Bad extends Error {}

const numberOr = (what: string): Parse => (v) => toNumber(v) ?? (typeof v === 'string' ? raise(`expected ${what}, got "${v}"`) : v)
const duration = (bareUnit: 's' | 'ms', to: 's' | 'ms'): Parse => (v) => {
  const ms = parseDuration(v, bareUnit)
  if (ms === undefined) raise(`expected a duration like 90s, 15m, 2h or a number of ${bareUnit === 's' ? 'seconds' : 'milliseconds'}, got ${JSON.stringify(v)}`)
  return to === 's' ? Math.ceil(ms / 1000) : Math.round(ms)
}
function raise (message: string): never { throw new Bad(message) }

function inputOf (item: unknown, baseDir: string): unknown {
  if (typeof item === 'string') {
    const eq = item.indexOf('=')
    const [path, file] = eq > 0 ? [item.slice(0, eq), item.slice(eq + 1)] : [basename(item), item]
    if (file === '') raise(`expected "file" or "path=file", got "${item}"`)
    return { path, file: resolve(baseDir, file) }
  }
  if (typeof item === 'object' && item !== null && !Array.isArray(item)) {
    const entry = item as Record<string, unknown>
    if (typeof entry.file !== 'string') return entry
    return { ...entry, path: entry.path ?? basename(entry.file), file: resolve(baseDir, entry.file) }
  }
  return item
}

/** Spec key → [its aliases, how to read a friendly value]. Keys not listed pass through unchanged. */
const FIELDS: Record<string, [string[], Parse]> = {
  maxRuntimeSec: [['maxRuntime'], duration('s', 's')],
  maxStartDelaySec: [['maxStartDelay'], duration('s', 's')],
  bidWindowMs: [['bidWindow'], duration('ms', 'ms')],
  maxRttMs: [['maxRtt'], duration('ms', 'ms')],
  minVramGB: [['minVram'], (v) => numberOr('a number of GB')(typeof v === 'string' ? v.replace(/\s*gb?$/i, '') : v, '')],
  gpus: [[], numberOr('a number of GPUs')],
  maxPrice: [[], numberOr('credits per GPU-hour')],
  cpuCores: [[], numberOr('a number of cores')],
  memoryMiB: [[], numberOr('a number of MiB')],
  diskMiB: [[], numberOr('a number of MiB')],
  models: [['gpu'], (v) => listOf(v).map((m) => typeof m === 'string' ? modelSlug(m) : m)],
  regions: [['region'], (v) => listOf(v)],
  outputs: [[], (v) => listOf(v)],
  inputs: [[], (v, baseDir) => listOf(v).map((item) => inputOf(item, baseDir))],
  command: [[], (v) => {
    if (typeof v === 'string') raise(`expected a list of arguments (run without a shell), e.g. ["python", "train.py"], got ${JSON.stringify(v)}`)
    return Array.isArray(v) ? v.map(scalarText) : v
  }],
  env: [[], (v) => {
    if (!Array.isArray(v)) {
      return typeof v === 'object' && v !== null ? Object.fromEntries(Object.entries(v).map(([k, x]) => [k, scalarText(x)])) : v
    }
    return Object.fromEntries(v.map((item) => {
      const eq = typeof item === 'string' ? item.indexOf('=') : -1
      if (eq <= 0) raise(`expected KEY=VALUE, got ${JSON.stringify(item)}`)
      return [(item as string).slice(0, eq), (item as string).slice(eq + 1)]
    }))
  }]
}

/** Numbers and booleans as text (YAML reads `SEED: 42` and `[sleep, 5]` as numbers); anything else unchanged. */
function scalarText (value: unknown): unknown {
  return typeof value === 'number' || typeof value === 'boolean' ? String(value) : value
}

export interface NormaliseOptions {
  /** Where relative input files are resolved (default: the working directory). */
  baseDir?: string
  /** How a friendly key is named in errors (e.g. as its CLI flag). */
  name?: (key: string) => string
  /** Named in the error's first line (a file path). */
  source?: string
}

/** The friendly form → spec keys (unvalidated: see validateJobSpec). Throws JobSpecError on unreadable values. */
export function normaliseJobSpec (friendly: unknown, options: NormaliseOptions = {}): JobSpecFields {
  if (typeof friendly !== 'object' || friendly === null || Array.isArray(friendly)) {
    throw new JobSpecError(['job: expected a mapping of job settings'], options.source)
  }
  const name = options.name ?? ((key: string) => key)
  const baseDir = options.baseDir ?? process.cwd()
  const out: JobSpecFields = { ...friendly }
  const problems: string[] = []
  for (const [key, [aliases, parse]] of Object.entries(FIELDS)) {
    const given = [key, ...aliases].filter((k) => out[k] !== undefined)
    for (const alias of aliases) delete out[alias]
    if (given.length > 1) problems.push(`${name(given[0] as string)}: give only one of ${given.map(name).join(', ')}`)
    const used = given[0]
    if (used === undefined) continue
    try {
      out[key] = parse((friendly as JobSpecFields)[used], baseDir)
    } catch (err) {
      if (!(err instanceof Bad)) throw err
      problems.push(`${name(used)}: ${err.message}`)
    }
  }
  verificationOf(out, name, problems)
  if (problems.length > 0) throw new JobSpecError(problems, options.source)
  return out
}

/** The friendly `replicate: K` / `spotcheck: PERMILLE` (flags --replicate, --spotcheck) as the job's `verification`; the schema checks the range. */
function verificationOf (out: JobSpecFields, name: (key: string) => string, problems: string[]): void {
  const { replicate, spotcheck } = out
  delete out.replicate
  delete out.spotcheck
  if (replicate === undefined && spotcheck === undefined) return
  if (replicate !== undefined && spotcheck !== undefined) { problems.push(`${name('replicate')}: give only one of ${name('replicate')}, ${name('spotcheck')}`); return }
  if (out.verification !== undefined) { problems.push(`${name(replicate !== undefined ? 'replicate' : 'spotcheck')}: give only one of it and verification`); return }
  try {
    out.verification = replicate !== undefined
      ? { mode: 'replicate', k: numberOr('a number of replicas')(replicate, '') }
      : { mode: 'spotcheck', perMille: numberOr('a rate per mille (1 … 1000)')(spotcheck, '') }
  } catch (err) {
    if (!(err instanceof Bad)) throw err
    problems.push(`${name(replicate !== undefined ? 'replicate' : 'spotcheck')}: ${err.message}`)
  }
}

/** Validate spec fields; throws JobSpecError listing every problem. */
export function validateJobSpec (fields: JobSpecFields, source?: string): JobSpec {
  const result = jobSpecSchema.safeParse(fields)
  if (!result.success) throw new JobSpecError(issueProblems(result.error.issues), source)
  return result.data
}

/** Read a job file (.json, .yaml/.yml; otherwise JSON, then YAML) into spec fields, unvalidated. */
export async function readJobFile (path: string): Promise<JobSpecFields> {
  let text: string
  try {
    text = await readFile(path, 'utf8')
  } catch (err) {
    throw new JobSpecError([`job: cannot read the job file: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`], path)
  }
  const ext = extname(path).toLowerCase()
  let value: unknown
  try {
    if (ext === '.json') value = JSON.parse(text)
    else if (ext === '.yaml' || ext === '.yml') value = parseYaml(text)
    else {
      try { value = JSON.parse(text) } catch { value = parseYaml(text) }
    }
  } catch (err) {
    throw new JobSpecError([`job: not valid ${ext === '.json' ? 'JSON' : 'YAML'}: ${(err as Error).message.split('\n')[0] ?? ''}`], path)
  }
  return normaliseJobSpec(value, { baseDir: dirname(resolve(path)), source: path })
}

/** Read and validate a job file; `overrides` (spec fields, e.g. from flags) win over the file's values. */
export async function parseJobFile (path: string, overrides: JobSpecFields = {}): Promise<JobSpec> {
  return validateJobSpec({ ...await readJobFile(path), ...overrides }, path)
}

/** Check that every input file is a readable regular file; throws JobSpecError naming each that is not. */
export async function checkInputFiles (spec: JobSpec): Promise<void> {
  const problems: string[] = []
  await Promise.all(spec.inputs.map(async (input, i) => {
    const s = await stat(input.file).catch((err: NodeJS.ErrnoException) => err.code ?? 'unreadable')
    if (typeof s === 'string') problems.push(`inputs.${i}.file: cannot read ${input.file} (${s})`)
    else if (!s.isFile()) problems.push(`inputs.${i}.file: ${input.file} is not a regular file`)
  }))
  if (problems.length > 0) throw new JobSpecError(problems.sort())
}

/** Credits (per GPU-hour) → integer micros. */
export const creditsToMicros = (credits: number): number => Math.round(credits * 1e6)

/** How long the request stays open: the start delay, three times the runtime (re-auctions) and a minute; at most 7 days. */
export function requestLifetimeMs (spec: Pick<JobSpec, 'maxStartDelaySec' | 'maxRuntimeSec'>): number {
  return Math.min(MAX_REQUEST_LIFETIME_MS, spec.maxStartDelaySec * 1000 + 3 * spec.maxRuntimeSec * 1000 + 60_000)
}

/**
 * The wire JobRequest for a spec whose input files were stored as blobs (`inputs`: path, CID, size).
 * Throws JobSpecError when the result does not pass jobRequestSchema or would not fit an envelope.
 */
export function buildJobRequest (spec: JobSpec, inputs: Array<{ path: string, cid: CID, size: number }>, now: number, nonce: Uint8Array): JobRequest {
  const request: JobRequest = {
    v: PROTOCOL_VERSION,
    issuedAt: now,
    expiresAt: now + requestLifetimeMs(spec),
    nonce,
    workload: {
      executor: spec.executor,
      argv: spec.command,
      ...(spec.image !== undefined ? { image: spec.image } : {}),
      env: spec.env,
      inputs: inputs.map((i) => ({ path: i.path, cid: i.cid, size: i.size })),
      outputs: spec.outputs,
      maxRuntimeSec: spec.maxRuntimeSec,
      network: spec.network
    },
    resources: { gpus: spec.gpus, minVramGB: spec.minVramGB, models: spec.models, cpuCores: spec.cpuCores, memoryMiB: spec.memoryMiB, diskMiB: spec.diskMiB },
    sla: { tier: spec.tier, maxPrice: creditsToMicros(spec.maxPrice), maxStartDelaySec: spec.maxStartDelaySec },
    placement: {
      regions: spec.regions,
      residency: spec.residency,
      ...(spec.latencySensitive ? { latencySensitive: true as const } : {}),
      ...(spec.maxRttMs !== undefined ? { maxRttMs: spec.maxRttMs } : {})
    },
    verification: spec.verification,
    auction: { bidWindowMs: spec.bidWindowMs, paymentRule: spec.paymentRule },
    ...(spec.label !== undefined ? { label: spec.label } : {})
  }
  const result = jobRequestSchema.safeParse(request)
  if (!result.success) throw new JobSpecError(issueProblems(result.error.issues), 'job request')
  const size = encodePayload('job-request', request).bytes.byteLength
  const limit = KINDS['job-request'].maxBytes - ENVELOPE_OVERHEAD
  if (size > limit) throw new JobSpecError([`job: the request encodes to ${size} bytes, at most ${limit} fit a message (fewer or shorter env values, arguments or inputs)`], 'job request')
  return request
}
