/**
 * Where configuration comes from, lowest priority first: embedded defaults, `<dataDir>/config.json`,
 * `GPUMESH_*` environment variables, command-line flags. The layers are merged, then validated once;
 * an error names the field, what was expected and which layer the bad value came from.
 */
import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import type { z } from 'zod'
import { configSchema, DECLARED_GPU_FORM, parseDeclaredGpuSpec, type Config } from './schema.js'

export const CONFIG_FILE = 'config.json'

export interface ConfigIssue { field: string, message: string, source: string }

export class ConfigError extends Error {
  override readonly name = 'ConfigError'
  constructor (readonly issues: ConfigIssue[]) {
    super(issues.map((i) => `${i.field === '' ? 'config' : i.field}: ${i.message} (from ${i.source})`).join('\n'))
  }
}

/** A partial config from one source. */
export interface Layer { source: string, values: Record<string, unknown> }

type Tree = Record<string, unknown>

function isTree (value: unknown): value is Tree {
  return value !== null && typeof value === 'object' && !Array.isArray(value)
}

/** Deep-merge `layers` (later wins, arrays are replaced), remembering which layer set each leaf. */
export function mergeLayers (layers: Layer[]): { values: Tree, sources: Map<string, string> } {
  const sources = new Map<string, string>()
  const merge = (into: Tree, from: Tree, source: string, prefix: string): void => {
    for (const [key, value] of Object.entries(from)) {
      if (value === undefined) continue
      const path = prefix === '' ? key : `${prefix}.${key}`
      if (isTree(value)) {
        // the first layer to set an object is blamed for it as a whole (an unknown section, say)
        if (!sources.has(path)) sources.set(path, source)
        const target = isTree(into[key]) ? into[key] as Tree : {}
        into[key] = target
        merge(target, value, source, path)
      } else {
        into[key] = value
        sources.set(path, source)
      }
    }
  }
  const values: Tree = {}
  for (const layer of layers) merge(values, layer.values, layer.source, '')
  return { values, sources }
}

function sourceOf (path: string, sources: Map<string, string>): string {
  for (let p = path; p !== ''; p = p.includes('.') ? p.slice(0, p.lastIndexOf('.')) : '') {
    const source = sources.get(p)
    if (source !== undefined) return source
  }
  return 'defaults'
}

/** Validate merged layers into a Config, or throw ConfigError listing every problem. */
export function resolveConfig (layers: Layer[]): Config {
  const { values, sources } = mergeLayers(layers)
  const result = configSchema.safeParse(values)
  if (result.success) return result.data
  throw new ConfigError(result.error.issues.flatMap((issue: z.core.$ZodIssue) => {
    const parent = issue.path.map(String)
    // an unknown key is reported on its parent: one issue per key, blamed on the layer that set it
    if (issue.code === 'unrecognized_keys') {
      return issue.keys.map((key) => {
        const path = [...parent, key].join('.')
        return { field: path, message: 'unknown setting', source: sourceOf(path, sources) }
      })
    }
    const path = parent.join('.')
    return [{ field: path, message: issue.message, source: sourceOf(path, sources) }]
  }))
}

/** Read `<dataDir>/config.json` as a layer; a missing file is an empty layer. */
export async function readConfigFile (dataDir: string): Promise<Layer> {
  const path = join(dataDir, CONFIG_FILE)
  let text: string
  try {
    text = await readFile(path, 'utf8')
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return { source: path, values: {} }
    throw new ConfigError([{ field: '', message: `cannot read: ${(err as Error).message}`, source: path }])
  }
  let values: unknown
  try {
    values = JSON.parse(text)
  } catch (err) {
    throw new ConfigError([{ field: '', message: `not valid JSON: ${jsonErrorAt(text, (err as Error).message)}`, source: path }])
  }
  if (!isTree(values)) throw new ConfigError([{ field: '', message: 'expected a JSON object', source: path }])
  return { source: path, values }
}

/** A JSON.parse message with its "position N" (or the end of input) given as line and column, and that line quoted. */
export function jsonErrorAt (text: string, message: string): string {
  const match = /at position (\d+)/.exec(message)
  if (match === null && !/end of JSON input/.test(message)) return message
  const position = match === null ? text.length : Math.min(Number(match[1]), text.length)
  const detail = message.replace(/\s*\(line \d+ column \d+\)/, '').replace(/ in JSON at position \d+/, '')
  const before = text.slice(0, position)
  const line = before.split('\n').length
  const column = position - before.lastIndexOf('\n')
  const shown = (text.split('\n')[line - 1] ?? '').replace(/\r$/, '').trim()
  return `line ${line}, column ${column}: ${detail}${shown === '' ? '' : ` (at ${JSON.stringify(shown.length > 80 ? `${shown.slice(0, 80)}…` : shown)})`}`
}

const list = (value: string): string[] => value.split(',').map((s) => s.trim()).filter((s) => s !== '')
const bool = (value: string): boolean | string => {
  if (/^(1|true|yes|on)$/i.test(value)) return true
  if (/^(0|false|no|off)$/i.test(value)) return false
  return value // left as a string, so validation names the variable
}
const num = (value: string): number | string => value.trim() !== '' && Number.isFinite(Number(value)) ? Number(value) : value

/** A value in an environment variable or flag that cannot even be read as its setting's type. */
export class SettingSyntaxError extends Error {
  override readonly name = 'SettingSyntaxError'
}

/** `"NVIDIA H100 80GB HBM3:81559"` or `"…:81559x8"` → a declared GPU entry (validated later). */
export function declaredGpuFromSpec (spec: string): Record<string, unknown> {
  const gpu = parseDeclaredGpuSpec(spec)
  if (gpu === undefined) throw new SettingSyntaxError(`expected ${DECLARED_GPU_FORM}, got "${spec}"`)
  return gpu
}

/** One entry per environment variable, so `--help` and the docs can list them. */
export const ENV_VARS: Record<string, { path: string, parse: (value: string) => unknown }> = {
  GPUMESH_LISTEN: { path: 'listen', parse: list },
  GPUMESH_ANNOUNCE: { path: 'announce', parse: list },
  GPUMESH_BOOTSTRAP: { path: 'bootstrap', parse: list },
  GPUMESH_COMMUNITY_BOOTSTRAP: { path: 'communityBootstrap', parse: bool },
  GPUMESH_MAX_CONNECTIONS: { path: 'connections.max', parse: num },
  GPUMESH_CONNECTIONS_ALLOW: { path: 'connections.allow', parse: list },
  GPUMESH_DHT_MODE: { path: 'dht.mode', parse: (v) => v },
  GPUMESH_GOSSIP_ALLOW_COLOCATION: { path: 'gossip.allowColocation', parse: bool },
  GPUMESH_API_PORT: { path: 'api.port', parse: num },
  GPUMESH_LOG_LEVEL: { path: 'log.level', parse: (v) => v },
  GPUMESH_LOG_FORMAT: { path: 'log.format', parse: (v) => v },
  GPUMESH_SELL: { path: 'provider.sell', parse: bool },
  GPUMESH_REGION: { path: 'provider.region', parse: (v) => v },
  GPUMESH_COUNTRY: { path: 'provider.country', parse: (v) => v },
  GPUMESH_DETECT_GPUS: { path: 'provider.detectGpus', parse: bool },
  GPUMESH_GPUS: { path: 'provider.gpus', parse: (v) => v.split(';').map((s) => s.trim()).filter((s) => s !== '').map(declaredGpuFromSpec) },
  GPUMESH_PRICE_FLOOR: { path: 'provider.priceFloor', parse: num },
  GPUMESH_TIME_ZONE: { path: 'provider.availability.timeZone', parse: (v) => v },
  GPUMESH_WINDOWS: { path: 'provider.availability.windows', parse: (v) => v.split(';').map((s) => s.trim()).filter((s) => s !== '') },
  GPUMESH_PROCESS_SANDBOX: { path: 'executors.process.sandbox', parse: (v) => v },
  GPUMESH_PROBES: { path: 'probes.enabled', parse: bool },
  GPUMESH_REPLICA_INDEPENDENCE: { path: 'verification.replicaIndependence', parse: (v) => v }
}

/** Set `value` at a dotted `path` in a fresh tree. */
export function treeAt (path: string, value: unknown): Tree {
  const keys = path.split('.')
  const root: Tree = {}
  let node = root
  keys.forEach((key, i) => {
    if (i === keys.length - 1) node[key] = value
    else node = (node[key] = {}) as Tree
  })
  return root
}

/** Run a setting's parser, turning a SettingSyntaxError into a ConfigError that names the source. */
export function parseSetting (parse: (value: any) => unknown, raw: unknown, path: string, source: string): unknown {
  try {
    return parse(raw)
  } catch (err) {
    if (err instanceof SettingSyntaxError) throw new ConfigError([{ field: path, message: err.message, source }])
    throw err
  }
}

/** The GPUMESH_* variables that are set, as one layer per variable (so errors name the variable). */
export function envLayers (env: NodeJS.ProcessEnv): Layer[] {
  const layers: Layer[] = []
  for (const [name, { path, parse }] of Object.entries(ENV_VARS)) {
    const raw = env[name]
    if (raw === undefined || raw === '') continue
    layers.push({ source: name, values: treeAt(path, parseSetting(parse, raw, path, name)) })
  }
  return layers
}

/** Load the full configuration for `dataDir`: defaults < config.json < env < flags. */
export async function loadConfig (dataDir: string, options: { env?: NodeJS.ProcessEnv, flags?: Layer[] } = {}): Promise<Config> {
  return resolveConfig([await readConfigFile(dataDir), ...envLayers(options.env ?? process.env), ...(options.flags ?? [])])
}
