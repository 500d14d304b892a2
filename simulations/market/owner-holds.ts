/**
 * The owners' own work as holds on named GPUs. A workload says how many GPUs of a node the owner's
 * work takes over [start, end) (OwnerWork); the provider agent needs GPU UUIDs, as the daemon's
 * allocations name them. Work is taken in start order and given the lowest-numbered GPUs free over
 * its whole interval (intervals on one line: greedy in start order never needs more GPUs than the
 * most work at one instant, so it succeeds whenever the counts fit).
 */
import { CapacityError } from '../capacity.js'
import type { FleetNode, OwnerWork } from '../model.js'
import type { OwnerHold } from '../../protocol/market/provider-agent-types.js'

/** The UUID the harness gives GPU `index` of node `name` (simulations/harness/payloads.ts capabilityAd). */
export function gpuUuid (name: string, index: number): string {
  return `GPU-${name}-${index}`
}

/** Each node's holds, in start order. Throws CapacityError when a node's work needs more GPUs than it has. */
export function ownerHolds (fleet: readonly FleetNode[], work: readonly OwnerWork[]): Map<string, OwnerHold[]> {
  const gpusOf = new Map(fleet.map((n) => [n.id, n.gpus]))
  const freeAt = new Map<string, number[]>()
  const out = new Map<string, OwnerHold[]>()
  const sorted = [...work].sort((a, b) => a.start - b.start || a.end - b.end || (a.node < b.node ? -1 : a.node > b.node ? 1 : 0))
  for (const w of sorted) {
    const total = gpusOf.get(w.node)
    if (total === undefined) throw new RangeError(`owner work on unknown node ${w.node}`)
    if (!(w.end > w.start) || w.gpus === 0) continue
    const busyUntil = freeAt.get(w.node) ?? new Array<number>(total).fill(Number.NEGATIVE_INFINITY)
    freeAt.set(w.node, busyUntil)
    const picked: number[] = []
    for (let i = 0; i < total && picked.length < w.gpus; i++) if ((busyUntil[i] as number) <= w.start) picked.push(i)
    if (picked.length < w.gpus) throw new CapacityError(w.node, w.start, w.end, w.gpus, picked.length)
    for (const i of picked) busyUntil[i] = w.end
    const list = out.get(w.node) ?? []
    list.push({ gpus: picked.map((i) => gpuUuid(w.node, i)), from: w.start, until: w.end, label: w.source ?? `${w.node}@${w.start}` })
    out.set(w.node, list)
  }
  return out
}

/** The holds of `holds` (sorted by start) that overlap [from, to). */
export function holdsWithin (holds: readonly OwnerHold[], from: number, to: number): OwnerHold[] {
  const out: OwnerHold[] = []
  for (const h of holds) {
    if (h.from >= to) break
    if (h.until > from) out.push(h)
  }
  return out
}
