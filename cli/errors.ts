/** A flag value the command cannot use (exit code 1, one clear line). */
export class UsageError extends Error {
  override readonly name = 'UsageError'
}
