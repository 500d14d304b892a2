/**
 * A churn schedule (network/churn.ts) applied to the market's providers: a node offline at t = 0 crashes
 * before the run starts, each `leave` crashes it (its streams reset, its work stops: ProviderNode.crash)
 * and each `join` restarts it (a fresh agent, as a restarted daemon: ProviderNode.restart). Times in the
 * schedule are ms since the run's start.
 */
import type { Harness } from '../harness/harness.js'
import type { ProviderNode } from '../harness/provider-node.js'
import { churnEvents, offlineAtStart, type ChurnSchedule } from '../network/churn.js'

/** The schedule names a node the run has no provider for. */
export class ChurnNodeError extends Error {
  readonly code = 'UNKNOWN_CHURN_NODE'
  constructor (readonly node: string) {
    super(`churn: no provider for node ${JSON.stringify(node)}`)
    this.name = 'ChurnNodeError'
  }
}

/** Schedule `schedule`'s crashes and restarts on `providers` (by fleet id), t = 0 at `start`. Returns the events scheduled. */
export function applyChurn (h: Harness, providers: ReadonlyMap<string, ProviderNode>, schedule: ChurnSchedule, start: number): number {
  const of = (node: string): ProviderNode => {
    const p = providers.get(node)
    if (p === undefined) throw new ChurnNodeError(node)
    return p
  }
  for (const node of offlineAtStart(schedule)) of(node).crash()
  const events = churnEvents(schedule)
  for (const e of events) {
    const p = of(e.node)
    h.at(start + Math.round(e.at), e.kind === 'leave' ? () => { p.crash() } : () => { p.restart() })
  }
  return events.length
}
