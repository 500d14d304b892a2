/**
 * The requester's money and blame, carried out (protocol/README §5.8, §7.7): payments sealed, kept,
 * sent and written to the ledger; the ledger ending of every award (a final payment names it, or the
 * agent's `end-award` when none is due); failure reports sealed and gossiped. The agent decided each
 * amount, ending and subject (protocol/market/requester-agent.ts).
 */
import { EVIDENCE_TOPIC, awardKey, type RequesterAgentEffect } from '../../protocol/index.js'
import { EXEC_CLOSE_TIMEOUT_MS } from '../services/exec.js'
import { sealFailureReport, sealJobCancel, sealPayment } from './requester-messages.js'
import type { ActiveJob, RequesterShell } from './requester-job.js'
import type { LedgerEntry } from './views.js'

type Effect<T extends RequesterAgentEffect['type']> = Extract<RequesterAgentEffect, { type: T }>

export async function pay (shell: RequesterShell, active: ActiveJob, effect: Effect<'pay'>): Promise<void> {
  const { store, signer } = shell.options
  const now = shell.scheduler.now()
  const attempt = active.attempts.get(awardKey(effect.attempt, effect.payee))
  if (attempt === undefined) throw new Error(`no award for attempt ${effect.attempt} to ${effect.payee}`)
  attempt.paySeq++
  const grown = effect.cumulative - (attempt.spent ?? 0)
  if (grown > 0) {
    shell.options.metrics?.creditsSpent.inc(grown)
    attempt.spent = effect.cumulative
  }
  const payment = sealPayment(signer, active.request, attempt.award, attempt.paySeq, effect, now)
  attempt.evidence['last-payment'] = payment.bytes
  await store.putEnvelope(payment.cid.toString(), payment.bytes)
  await store.putLedger({
    job: active.id,
    award: attempt.award.cid.toString(),
    role: 'requester',
    counterparty: effect.payee,
    price: attempt.price,
    cumulative: effect.cumulative,
    seq: attempt.paySeq,
    gpuSeconds: effect.gpuSeconds,
    ...(effect.final ? { owed: effect.cumulative } : {}),
    state: effect.final ? (effect.ending ?? 'final') : 'open',
    updatedAt: now
  })
  await attempt.channel?.sendMessage(payment.bytes).catch((err: unknown) => {
    shell.options.log.debug('payment not delivered', { job: active.id, error: (err as Error).message })
  })
  shell.dispatch(active, { type: 'payment-sent', now: shell.scheduler.now(), job: active.id, attempt: effect.attempt, cumulative: effect.cumulative, provider: effect.payee })
}

/**
 * An award that ended without a final payment: its ledger entry ends at what was committed, and is
 * written when no payment was made yet, so the buyer's ledger holds every award it sent.
 */
export async function endAward (shell: RequesterShell, active: ActiveJob, effect: Effect<'end-award'>): Promise<void> {
  const attempt = active.attempts.get(awardKey(effect.attempt, effect.payee))
  if (attempt === undefined) return // the award was never sealed: nobody holds it
  const store = shell.options.store
  const award = attempt.award.cid.toString()
  const entry = await store.get<LedgerEntry>('ledger', award)
  await store.putLedger({
    job: active.id,
    award,
    role: 'requester',
    counterparty: effect.payee,
    price: attempt.price,
    cumulative: Math.max(entry?.cumulative ?? 0, effect.cumulative),
    seq: entry?.seq ?? attempt.paySeq,
    gpuSeconds: entry?.gpuSeconds ?? 0,
    owed: Math.max(entry?.cumulative ?? 0, effect.cumulative),
    state: effect.ending,
    updatedAt: shell.scheduler.now()
  })
}

/**
 * Seal the failure report with its evidence, keep it, end the attempt's stream, gossip it. The stream
 * ends with a `job-cancel` first: a provider keeps running work for a lease after a stream merely
 * drops (the requester may resume, §7.7), so it must be told the award is over — and the cancel must
 * reach it, so the stream is half-closed after it (the close flushes what is queued), not reset: a
 * reset throws away frames not yet written. Only a close that does not finish within
 * `cancelCloseMs`, or fails, ends in a reset. A stream that broke (a bad frame: the channel aborted
 * it already) gets no cancel.
 */
export async function recordFailure (shell: RequesterShell, active: ActiveJob, effect: Effect<'record-failure'>): Promise<void> {
  const attempt = active.attempts.get(awardKey(effect.attempt, effect.subject))
  const now = shell.scheduler.now()
  shell.options.metrics?.failures.inc({ side: 'requester', kind: effect.reason })
  const report = sealFailureReport(shell.options.signer, active.request, effect, effect.evidence.map((ref) => attempt?.evidence[ref]), now)
  await shell.options.store.putEnvelope(report.cid.toString(), report.bytes)
  const channel = attempt?.channel
  if (attempt !== undefined && channel !== undefined) {
    const why = `attempt failed: ${effect.reason}`
    const cancel = channel.writable ? sealJobCancel(shell.options.signer, active.request, attempt.award, why, now) : undefined
    const closed = cancel !== undefined && await within(shell, shell.options.cancelCloseMs ?? EXEC_CLOSE_TIMEOUT_MS, async () => {
      await channel.sendMessage(cancel.bytes)
      return await channel.close()
    })
    if (!closed) channel.abort(new Error(why))
  }
  await shell.options.gossip.publish(report, [EVIDENCE_TOPIC])
}

/** `work`'s answer, or false when it fails or takes longer than `ms` on the shell's clock. */
async function within (shell: RequesterShell, ms: number, work: () => Promise<boolean>): Promise<boolean> {
  let cancel: (() => void) | undefined
  const late = new Promise<boolean>((resolve) => { cancel = shell.scheduler.at(shell.scheduler.now() + ms, () => { resolve(false) }) })
  try {
    return await Promise.race([work().catch(() => false), late])
  } finally {
    cancel?.()
  }
}
