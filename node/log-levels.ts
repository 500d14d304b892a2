/**
 * Log levels per component: the `--log-level` spec (`info,libp2p:kad-dht=debug,gpumesh:market=trace`),
 * its parser, the longest-prefix lookup of a component's level, and the reading of libp2p's DEBUG
 * variable onto the same spec. Plain data: a parsed spec survives structuredClone.
 */
export const LOG_LEVELS = ['trace', 'debug', 'info', 'warn', 'error', 'silent'] as const
export type LogLevel = typeof LOG_LEVELS[number]

/** Lower is more verbose; a line is written when its level's rank is at least the component's. */
export const LEVEL_RANK: Readonly<Record<LogLevel, number>> = Object.freeze({ trace: 10, debug: 20, info: 30, warn: 40, error: 50, silent: 100 })

/** The level of every component the spec does not name (libp2p's excepted, see libp2p-logger.ts). */
export const DEFAULT_LOG_LEVEL: LogLevel = 'info'

/** Every component name starts with one of these (gpumesh's own, and libp2p's through the bridge). */
export const COMPONENT_ROOTS = ['gpumesh', 'libp2p'] as const

export interface ComponentLevel {
  /** A component name prefix, matched at `:` boundaries: `libp2p:kad-dht` covers `libp2p:kad-dht:network`. */
  component: string
  level: LogLevel
}

export interface LogLevelSpec {
  /** The level of components no entry names. */
  level: LogLevel
  /** Longest component first, so the first match is the longest prefix. */
  components: ComponentLevel[]
}

export type LogLevelSpecProblem = 'EMPTY' | 'EMPTY_ENTRY' | 'UNKNOWN_LEVEL' | 'BAD_COMPONENT' | 'DUPLICATE_DEFAULT' | 'DUPLICATE_COMPONENT'

/** A `--log-level` spec that cannot be read; `part` is the entry at fault, as written. */
export class LogLevelSpecError extends Error {
  override readonly name = 'LogLevelSpecError'
  constructor (readonly code: LogLevelSpecProblem, readonly part: string, message: string) {
    super(message)
  }
}

export const LOG_LEVEL_SPEC_FORM = 'LEVEL[,COMPONENT=LEVEL…], e.g. info,libp2p:kad-dht=debug,gpumesh:market=trace'

const SEGMENT = /^[A-Za-z0-9._/-]+$/

function isLevel (value: string): value is LogLevel {
  return (LOG_LEVELS as readonly string[]).includes(value)
}

/** A component name as a spec entry gives it, with a trailing `:*` dropped; undefined when it is not one. */
function componentName (text: string): string | undefined {
  const name = text.endsWith(':*') ? text.slice(0, -2) : text
  const segments = name.split(':')
  if (!(COMPONENT_ROOTS as readonly string[]).includes(segments[0] as string)) return undefined
  return segments.every((s) => SEGMENT.test(s)) ? name : undefined
}

function byLength (entries: Map<string, LogLevel>): ComponentLevel[] {
  return [...entries].map(([component, level]) => ({ component, level }))
    .sort((a, b) => b.component.length - a.component.length || (a.component < b.component ? -1 : 1))
}

/**
 * Read a spec: comma-separated entries, each a bare level (the default, at most one) or
 * `component=level` (each component at most once). Throws LogLevelSpecError naming the entry at fault.
 */
export function parseLogLevelSpec (text: string): LogLevelSpec {
  if (text.trim() === '') throw new LogLevelSpecError('EMPTY', text, `empty log level: expected ${LOG_LEVEL_SPEC_FORM}`)
  let level: LogLevel | undefined
  const components = new Map<string, LogLevel>()
  const levels = LOG_LEVELS.join(', ')
  for (const raw of text.split(',')) {
    const part = raw.trim()
    if (part === '') throw new LogLevelSpecError('EMPTY_ENTRY', raw, `empty entry in "${text}": expected ${LOG_LEVEL_SPEC_FORM}`)
    const at = part.indexOf('=')
    if (at < 0) {
      if (!isLevel(part)) throw new LogLevelSpecError('UNKNOWN_LEVEL', part, `unknown level "${part}" (expected ${levels}, or COMPONENT=LEVEL)`)
      if (level !== undefined) throw new LogLevelSpecError('DUPLICATE_DEFAULT', part, `two default levels ("${level}" and "${part}"): give one bare level`)
      level = part
      continue
    }
    const name = part.slice(0, at).trim()
    const value = part.slice(at + 1).trim()
    const component = componentName(name)
    if (component === undefined) {
      throw new LogLevelSpecError('BAD_COMPONENT', part, `bad component "${name}" in "${part}": a name starts with ${COMPONENT_ROOTS.join(' or ')} and has :-separated parts (letters, digits, . _ / -), optionally ending in :*`)
    }
    if (!isLevel(value)) throw new LogLevelSpecError('UNKNOWN_LEVEL', part, `unknown level "${value}" in "${part}" (expected ${levels})`)
    if (components.has(component)) throw new LogLevelSpecError('DUPLICATE_COMPONENT', part, `"${component}" is given twice (again in "${part}")`)
    components.set(component, value)
  }
  return { level: level ?? DEFAULT_LOG_LEVEL, components: byLength(components) }
}

/** A single level as a spec (no per-component entries). */
export function levelSpec (level: LogLevel): LogLevelSpec {
  return { level, components: [] }
}

/** Whether `prefix` is `name` or a `:`-bounded prefix of it. Allocates nothing. */
export function coversComponent (prefix: string, name: string): boolean {
  return name.startsWith(prefix) && (name.length === prefix.length || name.charCodeAt(prefix.length) === 58 /* : */)
}

/** The level of `component` (a full name): the longest entry that covers it, else `fallback` (the spec's default). Allocates nothing. */
export function levelOf (spec: LogLevelSpec, component: string, fallback: LogLevel = spec.level): LogLevel {
  const entries = spec.components
  for (let i = 0; i < entries.length; i++) {
    const entry = entries[i] as ComponentLevel
    if (coversComponent(entry.component, component)) return entry.level
  }
  return fallback
}

/** Whether an entry names a component strictly below `component` at `level` or more verbose. Allocates nothing. */
export function hasDescendantAt (spec: LogLevelSpec, component: string, level: LogLevel): boolean {
  const entries = spec.components
  for (let i = 0; i < entries.length; i++) {
    const entry = entries[i] as ComponentLevel
    if (entry.component.length > component.length && coversComponent(component, entry.component) && LEVEL_RANK[entry.level] <= LEVEL_RANK[level]) return true
  }
  return false
}

/** Whether `name` is under one of COMPONENT_ROOTS. Allocates nothing. */
export function hasComponentRoot (name: string): boolean {
  for (let i = 0; i < COMPONENT_ROOTS.length; i++) {
    if (coversComponent(COMPONENT_ROOTS[i] as string, name)) return true
  }
  return false
}

/**
 * libp2p's DEBUG variable (`libp2p:*`, `libp2p:kad-dht*,-libp2p:kad-dht:network`, `*:trace`) read as spec
 * entries, so DEBUG works as libp2p documents but its lines come out structured through gpumesh's sink.
 * Per entry (separated by commas or spaces): a trailing `:trace` gives trace and `:error` error, else
 * debug; a leading `-` gives silent; `*` alone names libp2p and gpumesh; a trailing `:*` or `*` is
 * dropped (so `libp2p:kad*` covers `libp2p:kad` and below, not `libp2p:kademlia`); a name outside
 * gpumesh and libp2p (`dns:*`) is put under libp2p, as the bridge names such a component. Where two
 * entries name one component, silent wins, then the more verbose. Entries with a `*` anywhere else
 * cannot be read as prefixes: they are returned in `ignored`.
 */
export function debugEnvLevels (debug: string): { components: ComponentLevel[], ignored: string[] } {
  const levels = new Map<string, LogLevel>()
  const ignored: string[] = []
  const put = (component: string, level: LogLevel): void => {
    const had = levels.get(component)
    if (had === 'silent') return
    if (had === undefined || level === 'silent' || LEVEL_RANK[level] < LEVEL_RANK[had]) levels.set(component, level)
  }
  for (const entry of debug.split(/[\s,]+/)) {
    if (entry === '') continue
    const skip = entry.startsWith('-')
    let body = skip ? entry.slice(1) : entry
    let level: LogLevel = 'debug'
    if (body.endsWith(':trace')) { level = 'trace'; body = body.slice(0, -':trace'.length) } else if (body.endsWith(':error')) { level = 'error'; body = body.slice(0, -':error'.length) }
    // `-x:trace` turns off what is off unless asked for; `-x:error` keeps x's log lines: neither fits a level
    if (skip && level !== 'debug') { ignored.push(entry); continue }
    if (skip) level = 'silent'
    if (body === '*') {
      put('libp2p', level)
      put('gpumesh', level)
      continue
    }
    const stem = body.endsWith(':*') ? body.slice(0, -2) : body.endsWith('*') ? body.slice(0, -1) : body
    const rooted = hasComponentRoot(stem) ? stem : `libp2p:${stem}`
    const component = stem.includes('*') ? undefined : componentName(rooted)
    if (component === undefined) { ignored.push(entry); continue }
    put(component, level)
  }
  return { components: byLength(levels), ignored }
}

/** `spec` with the DEBUG variable's entries added where the spec does not name the same component (the spec wins). */
export function withDebugEnv (spec: LogLevelSpec, debug: string | undefined): { spec: LogLevelSpec, ignored: string[] } {
  if (debug === undefined || debug.trim() === '') return { spec, ignored: [] }
  const fromDebug = debugEnvLevels(debug)
  const merged = new Map(fromDebug.components.map((c) => [c.component, c.level]))
  for (const c of spec.components) merged.set(c.component, c.level)
  return { spec: { level: spec.level, components: byLength(merged) }, ignored: fromDebug.ignored }
}
