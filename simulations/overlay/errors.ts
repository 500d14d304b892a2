/**
 * Errors raised by the overlay models. One class per condition; `code` is a stable string.
 */

/** A Kademlia or gossip parameter out of range: `field` names it (`k`, `Dhi`). */
export class InvalidOverlayParamsError extends Error {
  override readonly name = 'InvalidOverlayParamsError'
  readonly code = 'INVALID_OVERLAY_PARAMS'
  constructor (readonly field: string, message: string) {
    super(`overlay.${field}: ${message}`)
  }
}

/** A node index that is not in the model (or not a member of the topic, for the gossip mesh). */
export class UnknownOverlayNodeError extends Error {
  override readonly name = 'UnknownOverlayNodeError'
  readonly code = 'UNKNOWN_OVERLAY_NODE'
  constructor (readonly node: number, message: string) {
    super(message)
  }
}

/** The node id list handed to a model has a duplicate: two nodes would share one Kademlia id. */
export class DuplicateOverlayNodeError extends Error {
  override readonly name = 'DuplicateOverlayNodeError'
  readonly code = 'DUPLICATE_OVERLAY_NODE'
  constructor (readonly id: string) {
    super(`node id ${JSON.stringify(id)} appears twice`)
  }
}

/** [field, value, min, max, integer]: one range rule for `checkRange`. */
export type RangeRule = [field: string, value: unknown, min: number, max: number, integer: boolean]

/** Throws InvalidOverlayParamsError unless every rule holds. */
export function checkRanges (rules: readonly RangeRule[]): void {
  for (const [field, value, min, max, integer] of rules) {
    const ok = typeof value === 'number' && Number.isFinite(value) && value >= min && value <= max && (!integer || Number.isInteger(value))
    if (!ok) throw new InvalidOverlayParamsError(field, `expected ${integer ? 'an integer' : 'a number'} in ${min} … ${max}, got ${String(value)}`)
  }
}
