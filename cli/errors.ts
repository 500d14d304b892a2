/** A flag value the command cannot use (exit code 1, one clear line). */
export class UsageError extends Error {
  override readonly name = 'UsageError'
}

/** A market command (job …, ledger) sent to a bootstrap peer, whose API has no market routes. */
export class NoMarketError extends Error {
  override readonly name = 'NoMarketError'
}

/** A command that needs the network (providers, job submit) on a daemon connected to no peer. */
export class NotConnectedError extends Error {
  override readonly name = 'NotConnectedError'
}
