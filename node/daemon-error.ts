/** The daemon's start errors (node/daemon.ts), apart from it so the CLI can name them without loading libp2p. */
export type DaemonErrorCode = 'LISTEN_FAILED' | 'START_FAILED'

export class DaemonError extends Error {
  override readonly name = 'DaemonError'
  constructor (readonly code: DaemonErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options)
  }
}
