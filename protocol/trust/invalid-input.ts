/** A verification decision (replicate, spotcheck) was called with values it cannot work with. */
export class InvalidVerificationInputError extends Error {
  override readonly name = 'InvalidVerificationInputError'
  constructor (readonly field: string, message: string) {
    super(`${field}: ${message}`)
  }
}
