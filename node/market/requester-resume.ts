/**
 * A job read back after the requester's daemon restarted with an award in flight (protocol/README.md
 * §7.7 "Resuming"): the shell's side of the award rebuilt from the store — the signed award, the
 * payment sequence from the ledger, how much of the award's log is on disk, the receipt when one
 * came — and the inputs granted to the provider again (grants live in memory). The agent decides
 * whether the job goes on (requester-lifecycle.ts resumeRequesterJob); this only makes it possible.
 */
import { stat } from 'node:fs/promises'
import { join } from 'node:path'
import { awardKey } from '../../protocol/index.js'
import { LOG_WINDOW } from '../services/exec.js'
import type { ActiveJob, Attempt, RequesterShell } from './requester-job.js'
import type { LedgerEntry } from './views.js'

/** The statuses whose award the agent may resume. */
const IN_FLIGHT = new Set(['awarded', 'running', 'verifying'])

/**
 * Rebuild the attempt of a restored job's current award, when it has one in flight and everything
 * it needs is in the store; false (nothing changed) otherwise, and the agent ends the job as before.
 */
export async function restoreAttempt (shell: RequesterShell, active: ActiveJob): Promise<boolean> {
  const { store, blobs, log } = shell.options
  const state = active.record.state
  const engagement = state.award
  const view = active.record.award
  if (engagement === undefined || view === undefined || !IN_FLIGHT.has(state.status)) return false
  if (active.request.payload.verification.mode === 'replicate') return false
  if (view.attempt !== engagement.attempt || view.provider !== engagement.provider) return false
  const now = shell.scheduler.now()
  const award = await store.openEnvelope(view.cid, 'award', now, (err) => { log.warn('a stored award does not open: the job cannot resume', { job: active.id, error: err }) })
  if (award === undefined) return false
  const entry = await store.get<LedgerEntry>('ledger', view.cid)
  // the log file is the truth (the record's count may be a write behind); the award's part starts at logStart
  const onDisk = await stat(join(shell.jobDir(active.id), 'log')).then((s) => s.size, () => 0)
  active.record.logBytes = onDisk
  const received = Math.max(0, onDisk - (active.record.logStart ?? 0))
  const attempt: Attempt = {
    number: engagement.attempt,
    award,
    provider: engagement.provider,
    price: engagement.price,
    evidence: { award: award.bytes },
    paySeq: entry?.seq ?? 0,
    // paid before the restart: not spent again in this process's counters
    ...(entry !== undefined ? { spent: entry.cumulative } : {}),
    logReceived: received,
    logBytes: received,
    logCredit: received + LOG_WINDOW,
    grants: new Set([LOG_WINDOW, received + LOG_WINDOW])
  }
  if (state.status === 'verifying') {
    const receipt = await store.openEnvelope(active.record.receipt?.cid, 'receipt', now)
    if (receipt === undefined) return false
    attempt.receipt = receipt
    attempt.evidence.receipt = receipt.bytes
    attempt.logAtReceipt = received
  }
  active.attempts.set(awardKey(attempt.number, attempt.provider), attempt)
  for (const input of active.request.payload.workload.inputs) blobs.grant(input.cid, attempt.provider)
  return true
}
