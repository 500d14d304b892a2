/**
 * A region partition: over [fromMs, untilMs) every message between a node in one region set and a
 * node in the other is dropped, both ways; messages inside one side, or between nodes on neither
 * side, pass. A side lists regions; a region includes its sub-regions (`eu` holds `eu-west`), as in
 * a job's placement (protocol/README §2). A message is judged by the time it is sent.
 */
import { regionWithin } from '../../protocol/constants.js'
import type { NetworkModel } from '../harness/network.js'

export interface RegionPartition {
  sideA: readonly string[]
  sideB: readonly string[]
  fromMs: number
  untilMs: number
}

export type PartitionErrorCode = 'EMPTY_SIDE' | 'OVERLAP' | 'WINDOW'

/** A partition that cannot be applied. */
export class InvalidPartitionError extends Error {
  override readonly name = 'InvalidPartitionError'
  constructor (readonly code: PartitionErrorCode, message: string) {
    super(`partition: ${message}`)
  }
}

/** Throw InvalidPartitionError unless both sides have regions, no region is on both, and fromMs < untilMs. */
export function validatePartition (p: RegionPartition): void {
  if (p.sideA.length === 0 || p.sideB.length === 0) throw new InvalidPartitionError('EMPTY_SIDE', 'each side needs at least one region')
  for (const a of p.sideA) {
    for (const b of p.sideB) {
      if (regionWithin(a, b) || regionWithin(b, a)) throw new InvalidPartitionError('OVERLAP', `${a} and ${b} are on both sides`)
    }
  }
  if (!(Number.isFinite(p.fromMs) && p.untilMs > p.fromMs)) throw new InvalidPartitionError('WINDOW', `expected fromMs < untilMs, got [${String(p.fromMs)}, ${String(p.untilMs)})`)
}

function on (side: readonly string[], region: string): boolean {
  return side.some((r) => regionWithin(region, r))
}

/** True when a message from `fromRegion` to `toRegion` sent at `at` is dropped by `p`. */
export function partitioned (p: RegionPartition, fromRegion: string, toRegion: string, at: number): boolean {
  if (!(at >= p.fromMs && at < p.untilMs)) return false
  return (on(p.sideA, fromRegion) && on(p.sideB, toRegion)) || (on(p.sideB, fromRegion) && on(p.sideA, toRegion))
}

/**
 * `model` with `partitions` on top (any harness NetworkModel: the region one, the country one): its
 * `drops` also answers true for a pair a partition separates at the send time. Validates each
 * partition (throws InvalidPartitionError).
 */
export function partitionedNetwork (model: NetworkModel, partitions: readonly RegionPartition[]): NetworkModel {
  for (const p of partitions) validatePartition(p)
  if (partitions.length === 0) return model
  const own = model.drops
  return {
    ...model,
    drops: (from, to, at, channel) => partitions.some((p) => partitioned(p, from.region, to.region, at)) || (own !== undefined && own(from, to, at, channel))
  }
}
