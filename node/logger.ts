/**
 * Structured, levelled logs, one logger per component (`gpumesh:dht`, `gpumesh:api`, …). JSON lines
 * for machines, a compact line for people on a terminal. Logs go to stderr, so stdout stays free for
 * command output.
 */
export type LogLevel = 'trace' | 'debug' | 'info' | 'warn' | 'error' | 'silent'
const RANK: Record<LogLevel, number> = { trace: 10, debug: 20, info: 30, warn: 40, error: 50, silent: 100 }

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
  forComponent (name: string): Logger
}

function plainValue (value: unknown): unknown {
  if (value instanceof Error) return { name: value.name, message: value.message, ...('code' in value ? { code: value.code } : {}) }
  if (typeof value === 'bigint') return value.toString()
  if (value instanceof Uint8Array) return `<${value.byteLength} bytes>`
  return value
}

export function createLoggerFactory (options: { level: LogLevel, format: 'json' | 'pretty', sink?: LogSink, now?: () => number }): LoggerFactory {
  const sink = options.sink ?? process.stderr
  const now = options.now ?? Date.now
  const threshold = RANK[options.level]
  const emit = (component: string, level: LogLevel, msg: string, fields?: LogFields): void => {
    if (RANK[level] < threshold) return
    const time = now()
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
    const clock = new Date(time).toISOString().slice(11, 23)
    sink.write(`${clock} ${level.toUpperCase().padEnd(5)} ${component} ${msg}${extras === '' ? '' : ` ${extras}`}\n`)
  }
  return {
    forComponent (name: string): Logger {
      const component = name.startsWith('gpumesh') ? name : `gpumesh:${name}`
      return {
        trace: (msg, fields) => { emit(component, 'trace', msg, fields) },
        debug: (msg, fields) => { emit(component, 'debug', msg, fields) },
        info: (msg, fields) => { emit(component, 'info', msg, fields) },
        warn: (msg, fields) => { emit(component, 'warn', msg, fields) },
        error: (msg, fields) => { emit(component, 'error', msg, fields) },
        enabled: (level) => RANK[level] >= threshold
      }
    }
  }
}

/** A factory that drops everything (tests, benchmarks). */
export const silentLoggers: LoggerFactory = createLoggerFactory({ level: 'silent', format: 'json' })
