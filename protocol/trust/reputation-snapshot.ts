/**
 * The reputation store's snapshot: plain data (arrays, strings, numbers), so it survives structuredClone
 * and JSON, and node/ can keep it in its level store. Pairs are listed in the store's order, which the
 * scores depend on bit for bit. Loading checks every field and throws a typed error for a bad snapshot.
 */

/** [signer, subject, ok weight, failed weight, at, ok count, failed count]. */
export type SnapshotPair = [string, string, number, number, number, number, number]

export interface ReputationSnapshot {
  v: 1
  /** The node whose view this is: a snapshot only loads into the same node's store. */
  self: string
  clock: number
  dropped: number
  pairs: SnapshotPair[]
  /** Convicted subjects and the id of the fraud proof that convicted each (absent when none). */
  convicted?: Array<[string, string]>
}

/** A snapshot that is not one, or another node's. */
export class InvalidReputationSnapshotError extends Error {
  override readonly name = 'InvalidReputationSnapshotError'
  constructor (readonly field: string, message: string) {
    super(`${field}: ${message}`)
  }
}

const isWeight = (x: unknown): x is number => typeof x === 'number' && Number.isFinite(x) && x >= 0
const isCount = (x: unknown): x is number => Number.isSafeInteger(x) && (x as number) >= 0
const isPeer = (x: unknown): x is string => typeof x === 'string' && x.length > 0

/** `value` as a snapshot of `self`'s store, or InvalidReputationSnapshotError. */
export function loadSnapshot (value: unknown, self: string): ReputationSnapshot {
  const bad = (field: string, message: string): never => { throw new InvalidReputationSnapshotError(field, message) }
  if (typeof value !== 'object' || value === null) return bad('snapshot', 'expected an object')
  const s = value as Partial<ReputationSnapshot>
  if (s.v !== 1) bad('v', `unsupported version ${String(s.v)}`)
  if (s.self !== self) bad('self', 'the snapshot is of another node\'s view')
  if (!isCount(s.clock)) bad('clock', 'expected a time in ms ≥ 0')
  if (!isCount(s.dropped)) bad('dropped', 'expected a count ≥ 0')
  if (!Array.isArray(s.pairs)) return bad('pairs', 'expected an array')
  s.pairs.forEach((p: unknown, i) => {
    if (!Array.isArray(p) || p.length !== 7) bad(`pairs[${i}]`, 'expected [signer, subject, ok, failed, at, okCount, failedCount]')
    const [signer, subject, ok, failed, at, okCount, failedCount] = p as unknown[]
    if (!isPeer(signer) || !isPeer(subject) || signer === subject) bad(`pairs[${i}]`, 'expected two different peer ids')
    if (!isWeight(ok) || !isWeight(failed)) bad(`pairs[${i}]`, 'expected weights ≥ 0')
    if (!isCount(at) || !isCount(okCount) || !isCount(failedCount)) bad(`pairs[${i}]`, 'expected a time and counts ≥ 0')
  })
  if (s.convicted !== undefined) {
    if (!Array.isArray(s.convicted)) bad('convicted', 'expected an array')
    s.convicted.forEach((c: unknown, i) => {
      if (!Array.isArray(c) || c.length !== 2 || !isPeer(c[0]) || c[0] === self || typeof c[1] !== 'string' || c[1] === '') bad(`convicted[${i}]`, 'expected [subject, proof id]')
    })
  }
  return s as ReputationSnapshot
}
