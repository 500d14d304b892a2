/**
 * Structured, levelled logs, one logger per component (`gpumesh:dht`, `gpumesh:api`, …), each at the
 * level the spec gives it (node/log-levels.ts: `info,gpumesh:market=trace`). JSON lines for machines
 * (`time` in ISO 8601, UTC), a compact line for people on a terminal. Logs go to stderr, so stdout stays
 * free for command output. libp2p's component loggers write through the same factory
 * (node/libp2p-logger.ts).
 */
import { LEVEL_RANK, levelOf, levelSpec, type LogLevel, type LogLevelSpec } from './log-levels.js'

export type { LogLevel, LogLevelSpec } from './log-levels.js'

export type LogFields = Record<string, unknown>

export interface Logger {
  trace (msg: string, fields?: LogFields): void
  debug (msg: string, fields?: LogFields): void
  info (msg: string, fields?: LogFields): void
  warn (msg: string, fields?: LogFields): void
  error (msg: string, fields?: LogFields): void
  enabled (level: LogLevel): boolean
}

export interface LogSink { write (line: string): void }

export interface LoggerFactory {
  /** A logger for `name`, put under `gpumesh:` unless it starts with gpumesh. */
  forComponent (name: string): Logger
  /** The levels this factory writes at, for bridges that resolve a component's level themselves. */
  readonly spec: LogLevelSpec
  /** Write one line for a full component name, whatever its level (the caller has checked it). */
  write (component: string, level: LogLevel, msg: string, fields?: LogFields): void
}

function plainValue (value: unknown): unknown {
  if (value instanceof Error) return { name: value.name, message: value.message, ...('code' in value ? { code: value.code } : {}) }
  if (typeof value === 'bigint') return value.toString()
  if (value instanceof Uint8Array) return `<${value.byteLength} bytes>`
  return value
}

export interface LoggerFactoryOptions {
  /** One level for every component, or a spec with per-component levels. */
  level: LogLevel | LogLevelSpec
  format: 'json' | 'pretty'
  sink?: LogSink
  /** Epoch ms. */
  now?: () => number
}

export function createLoggerFactory (options: LoggerFactoryOptions): LoggerFactory {
  const sink = options.sink ?? process.stderr
  const now = options.now ?? Date.now
  const spec = typeof options.level === 'string' ? levelSpec(options.level) : options.level
  const write = (component: string, level: LogLevel, msg: string, fields?: LogFields): void => {
    const time = new Date(now()).toISOString()
    if (options.format === 'json') {
      const record: Record<string, unknown> = { time, level, component, msg }
      for (const [k, v] of Object.entries(fields ?? {})) record[k] = plainValue(v)
      sink.write(`${JSON.stringify(record)}\n`)
      return
    }
    const extras = Object.entries(fields ?? {}).map(([k, v]) => {
      const value = plainValue(v)
      return `${k}=${typeof value === 'string' ? value : JSON.stringify(value)}`
    }).join(' ')
    sink.write(`${time.slice(11, 23)} ${level.toUpperCase().padEnd(5)} ${component} ${msg}${extras === '' ? '' : ` ${extras}`}\n`)
  }
  return {
    spec,
    write,
    forComponent (name: string): Logger {
      const component = name.startsWith('gpumesh') ? name : `gpumesh:${name}`
      const threshold = LEVEL_RANK[levelOf(spec, component)]
      const at = (level: LogLevel) => (msg: string, fields?: LogFields): void => {
        if (LEVEL_RANK[level] >= threshold) write(component, level, msg, fields)
      }
      return {
        trace: at('trace'),
        debug: at('debug'),
        info: at('info'),
        warn: at('warn'),
        error: at('error'),
        enabled: (level) => LEVEL_RANK[level] >= threshold
      }
    }
  }
}

/** A factory that drops everything (tests, benchmarks). */
export const silentLoggers: LoggerFactory = createLoggerFactory({ level: 'silent', format: 'json' })
