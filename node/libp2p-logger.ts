/**
 * libp2p's own debug logging (the `debug` package, enabled by the DEBUG environment variable, e.g.
 * `DEBUG=libp2p:*`). libp2p asks its component logger for a new logger per connection, per stream and
 * per scope; the default one builds three `debug` instances each time and matches every name against
 * the DEBUG list, even when nothing is enabled, which costs a few percent of a busy node's CPU. When
 * DEBUG names nothing, every component gets one shared logger that does nothing; when it names
 * anything, libp2p's default logger is used unchanged (undefined here), so `DEBUG=libp2p:*` works as
 * libp2p documents.
 */
import type { ComponentLogger, Logger } from '@libp2p/interface'

function silentLogger (): Logger {
  const log = Object.assign(() => {}, {
    enabled: false,
    error: () => {},
    trace: () => {},
    newScope: (): Logger => log
  })
  return log
}

/** One logger for every component and scope, never enabled. */
export const SILENT_LIBP2P_LOGGER: ComponentLogger = Object.freeze({
  forComponent: ((log: Logger) => (): Logger => log)(silentLogger())
})

/** The component logger for libp2p given the DEBUG variable's value: silent unless it names something. */
export function libp2pLogger (debug: string | undefined): ComponentLogger | undefined {
  return debug === undefined || debug.trim() === '' ? SILENT_LIBP2P_LOGGER : undefined
}
