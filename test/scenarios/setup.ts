/**
 * What the scenario tests share: a small market (three honest providers and a buyer in Europe),
 * shortcuts for reading the record, and the checks every scenario ends with.
 */
import assert from 'node:assert/strict'
import { Harness, credits, type AwardRecord, type HarnessOptions, type JobEnding, type LedgerLine } from '../../simulations/harness/index.js'

export const MIN = 60_000

/** Three H100 providers at 2.0, 2.5 and 3.0 credits/GPU-h and a buyer, all in eu-west. */
export function market (options: HarnessOptions = {}): Harness {
  const h = new Harness({ seed: 1, ...options })
  h.provider('cheap', { region: 'eu-west', gpus: { h100: 1 }, floor: credits(2) })
  h.provider('mid', { region: 'eu-west', gpus: { h100: 1 }, floor: credits(2.5) })
  h.provider('dear', { region: 'eu-west', gpus: { h100: 1 }, floor: credits(3) })
  h.requester('buyer', { region: 'eu-west' })
  return h
}

export function peer (name: string): string {
  return `peer:${name}`
}

/** The job's ending on the requester's side (fails the test when it has none). */
export function ending (h: Harness, job: string): JobEnding {
  const e = h.recorder.jobEnding(job)
  assert.ok(e !== undefined, `job ${job} has not ended`)
  return e
}

/** The ledger lines of `job`'s awards on `node`'s side. */
export function lines (h: Harness, node: string, job: string): LedgerLine[] {
  return h.recorder.ledgers.filter((l) => l.node === peer(node) && l.job === job)
}

/** The awards of `job`, in order. */
export function awardsOf (h: Harness, job: string): AwardRecord[] {
  return h.recorder.awards.filter((a) => a.job === job)
}

/** Provider-side endings of `job` (every bid), as `name: status`. */
export function offerEndings (h: Harness, job: string): string[] {
  return h.recorder.offers.filter((o) => o.job === job).map((o) => `${o.node.slice(5)}: ${o.status}`).sort()
}

/** Every scenario ends here: both honest ledgers agree on every award, and nothing is left scheduled. */
export function assertSettledBooks (h: Harness): void {
  assert.deepEqual(h.ledgerMismatches(), [])
  assert.equal(h.scheduler.pending, 0, 'the run is quiet')
}

/** Failure reports `reporter` filed about `job`, as [subject, reason]. */
export function reports (h: Harness, job: string, reporter = 'buyer'): Array<[string, string]> {
  return h.recorder.failures.filter((f) => f.job === job && f.reporter === peer(reporter)).map((f) => [f.subject, f.reason])
}
