/**
 * libp2p's ComponentLogger bridged onto gpumesh's logger (node/logger.ts): libp2p's lines come out in
 * the same format and sink, each under its component name (`libp2p:kad-dht`, `libp2p:tcp:connection:
 * outbound:1f:yamux`), at the level the `--log-level` spec gives that name. libp2p's `log()` is debug,
 * `.trace()` trace, `.error()` error; the printf-style arguments are rendered by libp2p-format.ts.
 *
 * Names: libp2p's own already start with `libp2p:`; gpumesh's services, which log through libp2p's
 * components too, start with `gpumesh:`; any other (e.g. `dns:…`) is put under `libp2p:`.
 *
 * Levels: a gpumesh name falls back to the spec's default; a libp2p name to silent, so libp2p writes
 * only what the spec names (`libp2p=debug`, `libp2p:kad-dht=trace`, `libp2p=error`). libp2p logs
 * routine network failures (a refused dial, a reset stream) at error and its debug lines are per
 * connection and per stream: at the default `info` they would drown gpumesh's own lines.
 *
 * Cost: libp2p asks for a new logger per connection, per stream and per scope. When a component's
 * level writes nothing (and no spec entry below it writes anything), forComponent returns one shared
 * no-op logger, and that path allocates nothing: no closure, no iterator, no string (indexed loops over
 * the spec's few entries with startsWith and charCodeAt). Only a name outside gpumesh and libp2p
 * (@libp2p's dns resolver, once per resolver) costs one string, its `libp2p:` prefix. Not measured:
 * read from the code. An enabled component costs one logger object and its closures per call.
 */
import type { ComponentLogger, Logger } from '@libp2p/interface'
import { formatLibp2pArgs } from './libp2p-format.js'
import { LEVEL_RANK, coversComponent, hasComponentRoot, hasDescendantAt, levelOf, type LogLevel } from './log-levels.js'
import type { LoggerFactory } from './logger.js'

type LogFn = ((formatter: any, ...args: any[]) => void) & { enabled: boolean }

const OFF: LogFn = Object.assign((): void => {}, { enabled: false })

/**
 * One logger for every component and scope, never enabled. Not frozen, like the silent logger before it:
 * a library that sets a property on its logger must not throw in strict mode.
 */
export const NOOP_LIBP2P_LOGGER: Logger = Object.assign((): void => {}, {
  enabled: false,
  error: OFF,
  trace: OFF,
  newScope: (): Logger => NOOP_LIBP2P_LOGGER
})

/** A component logger that writes nothing: every component gets NOOP_LIBP2P_LOGGER. */
export const SILENT_LIBP2P_LOGGER: ComponentLogger = Object.freeze({
  forComponent: (): Logger => NOOP_LIBP2P_LOGGER
})

function isGpumesh (name: string): boolean {
  return coversComponent('gpumesh', name)
}

/** libp2p's component logger writing through `loggers`. */
export function libp2pLogger (loggers: LoggerFactory): ComponentLogger {
  const { spec } = loggers
  const forComponent = (name: string): Logger => {
    const component = hasComponentRoot(name) ? name : `libp2p:${name}`
    const level = levelOf(spec, component, isGpumesh(component) ? spec.level : 'silent')
    const threshold = LEVEL_RANK[level]
    if (threshold > LEVEL_RANK.error && !hasDescendantAt(spec, component, 'error')) return NOOP_LIBP2P_LOGGER
    const at = (lineLevel: LogLevel): LogFn => {
      if (LEVEL_RANK[lineLevel] < threshold) return OFF
      return Object.assign((formatter: unknown, ...args: unknown[]): void => {
        const { msg, error } = formatLibp2pArgs(formatter, args)
        loggers.write(component, lineLevel, msg, error === undefined ? undefined : { err: error })
      }, { enabled: true })
    }
    const log = at('debug')
    return Object.assign((formatter: unknown, ...args: unknown[]): void => { log(formatter, ...args) }, {
      enabled: log.enabled,
      error: at('error'),
      trace: at('trace'),
      newScope: (scope: string): Logger => forComponent(`${component}:${scope}`)
    })
  }
  return { forComponent }
}
