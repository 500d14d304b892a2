/**
 * The requester's exec stream for one award (protocol/README §5.7): open it, send the award, take in
 * what the provider sends (award response, statuses, receipt — opened and checked here, decided on by
 * the agent), pace the log with credit and write it out, and tell the agent when the stream ends
 * before the receipt.
 */
import { messageKindOf } from './message-kind.js'
import { appendFile } from 'node:fs/promises'
import { join } from 'node:path'
import { peerIdFromString } from '@libp2p/peer-id'
import { MessageRejectedError, nextBackoff, openMessage, type OpenedMessage } from '../../protocol/index.js'
import { LOG_WINDOW, ExecStreamError, type ExecChannel } from '../services/exec.js'
import { MAX_LOG_BYTES } from './provider-io.js'
import { short, type ActiveJob, type Attempt, type RequesterShell } from './requester-job.js'

/** Most bytes of log kept for one job, all attempts together (the provider's own cap); the rest is cut. */
export const MAX_JOB_LOG_BYTES = MAX_LOG_BYTES

/** Open the exec stream and send the award on it; undefined (the agent told) when the provider cannot be reached. */
export async function openStream (shell: RequesterShell, active: ActiveJob, attempt: Attempt): Promise<ExecChannel | undefined> {
  try {
    const channel = await shell.options.node.services.exec.open(peerIdFromString(attempt.provider))
    attempt.channel = channel
    await channel.sendMessage(attempt.award.bytes)
    return channel
  } catch (err) {
    if (!shell.stopping) shell.dispatch(active, { type: 'unreachable', now: shell.scheduler.now(), job: active.id, attempt: attempt.number, provider: attempt.provider, detail: (err as Error).message })
    return undefined
  }
}

/** Handle what the provider sends on the attempt's stream (opened by openStream) until it ends. */
export async function talk (shell: RequesterShell, active: ActiveJob, attempt: Attempt): Promise<void> {
  const channel = await attempt.opened
  if (channel === undefined) return
  let failure: ExecStreamError | undefined
  try {
    for await (const frame of channel.frames()) {
      if (frame.type === 'log') onLog(shell, active, attempt, frame.offset, frame.data)
      else if (frame.type === 'message') onProviderMessage(shell, active, attempt, frame.bytes)
    }
  } catch (err) {
    // the channel aborts the stream on its own failures; onLog's (credit, disk) are aborted here
    failure = channel.fail(err instanceof ExecStreamError ? err : new ExecStreamError('LOCAL', (err as Error).message))
  }
  // before the receipt nothing more can come on it: the agent ends the attempt now, blaming the
  // provider only for what it did (remote), never for this node's own limits (local)
  if (shell.stopping || attempt.evidence.receipt !== undefined) return
  // a stream replaced by a resumed one (reconnect) ends without news
  if (attempt.channel !== channel) return
  const fault = failure?.fault ?? 'remote'
  const detail = failure?.message ?? 'the provider closed the exec stream before its receipt'
  // dropped, not broken: no frame was bad, so the stream may be re-opened (§7.7 "Resuming")
  const resumable = failure === undefined || failure.code === 'RESET' || failure.code === 'GONE'
  shell.options.log.debug('exec stream ended', { job: active.id, fault, code: failure?.code ?? 'CLOSED', error: detail })
  shell.dispatch(active, { type: 'stream-failed', now: shell.scheduler.now(), job: active.id, attempt: attempt.number, provider: attempt.provider, fault, detail, resumable })
}

/**
 * A provider's status going back from its run (`running`, `preempted`) to before it (`accepted`,
 * `fetching-inputs`): it restarted and runs the job again (§7.7 "Resuming"). Nothing else goes back.
 */
export function providerRestarted (previous: string | undefined, state: string): boolean {
  return (previous === 'running' || previous === 'preempted') && (state === 'accepted' || state === 'fetching-inputs')
}

/**
 * Re-open the attempt's exec stream (§7.7 "Resuming"): the award again, a log credit that says how
 * much of the log this node holds, and the last payment (which may not have reached the provider).
 * Tried with back-off (RECONNECT_FIRST_MS doubling to RECONNECT_MAX_MS, protocol/market/output-fetch.ts)
 * while `current()` says the award still stands; the lifecycle's lease ends it otherwise. One loop
 * per attempt at a time.
 */
export async function reconnect (shell: RequesterShell, active: ActiveJob, attempt: Attempt, current: () => boolean): Promise<void> {
  if (attempt.reconnecting === true) return
  attempt.reconnecting = true
  try {
    while (!shell.stopping && current()) {
      // the back-off carries over tries whose stream opened but dropped again (a provider that refuses); a status resets it
      const wait = attempt.reconnectWait ?? nextBackoff(undefined)
      attempt.reconnectWait = nextBackoff(wait)
      await new Promise<void>((resolve) => { shell.scheduler.at(shell.scheduler.now() + wait, resolve) })
      if (shell.stopping || !current()) return
      if (await reopen(shell, active, attempt)) return
    }
  } finally {
    attempt.reconnecting = false
  }
}

/** One try at re-opening the attempt's exec stream (see reconnect); true when it is open again and talked to. */
export async function reopen (shell: RequesterShell, active: ActiveJob, attempt: Attempt): Promise<boolean> {
  try {
    const channel = await shell.options.node.services.exec.open(peerIdFromString(attempt.provider))
    const old = attempt.channel
    attempt.channel = channel
    attempt.opened = Promise.resolve(channel)
    old?.abort(new Error('replaced by a resumed stream'))
    await channel.sendMessage(attempt.award.bytes)
    attempt.logAtResume = attempt.logReceived
    attempt.logCredit = attempt.logReceived + LOG_WINDOW
    attempt.grants.add(attempt.logCredit)
    await channel.send({ type: 'credit', upTo: attempt.logCredit })
    const payment = attempt.evidence['last-payment']
    if (payment !== undefined) await channel.sendMessage(payment)
    shell.options.log.info('exec stream re-opened', { job: active.id, provider: attempt.provider })
    void talk(shell, active, attempt)
    return true
  } catch (err) {
    shell.options.log.debug('re-opening the exec stream failed', { job: active.id, error: (err as Error).message })
    return false
  }
}

function onProviderMessage (shell: RequesterShell, active: ActiveJob, attempt: Attempt, bytes: Uint8Array): void {
  const now = shell.scheduler.now()
  let message: OpenedMessage<'award-response' | 'job-status' | 'receipt'>
  try {
    message = openMessage(bytes, ['award-response', 'job-status', 'receipt'], { now })
  } catch (err) {
    if (!(err instanceof MessageRejectedError)) throw err
    shell.options.metrics?.messagesRejected.inc({ kind: messageKindOf(bytes), reason: err.reason, via: 'exec' })
    shell.options.log.warn('bad message on the exec stream', { job: active.id, error: err.message })
    return
  }
  const p = message.payload
  if (message.signer !== attempt.provider || !p.job.equals(active.request.cid)) return
  if ('award' in p && !p.award.equals(attempt.award.cid)) return
  const base = { now, job: active.id, attempt: attempt.number, provider: attempt.provider }
  if (message.kind === 'award-response') {
    const r = message.payload as OpenedMessage<'award-response'>['payload']
    attempt.evidence['award-response'] = bytes
    shell.dispatch(active, { type: 'award-response', ...base, decision: r.decision, ...(r.reason !== undefined ? { reason: r.reason } : {}) })
  } else if (message.kind === 'job-status') {
    const s = message.payload as OpenedMessage<'job-status'>['payload']
    attempt.evidence['last-status'] = bytes
    attempt.reconnectWait = undefined
    // back from running to before it: the provider restarted, and its new run's log (and the
    // receipt's log blob) began where this node's copy stood when the stream was re-opened
    if (providerRestarted(attempt.providerState, s.state)) attempt.logBase = attempt.logAtResume ?? 0
    attempt.providerState = s.state
    shell.dispatch(active, { type: 'job-status', ...base, seq: s.seq, state: s.state, gpuSeconds: s.gpuSeconds, ...(s.message !== undefined ? { message: s.message } : {}) })
  } else {
    onReceipt(shell, active, attempt, message as OpenedMessage<'receipt'>, bytes)
  }
}

/** Keep the receipt (record, evidence, store) and tell the agent at once: the lease stops running there. */
function onReceipt (shell: RequesterShell, active: ActiveJob, attempt: Attempt, receipt: OpenedMessage<'receipt'>, bytes: Uint8Array): void {
  // a resumed stream brings the receipt again (§7.7 "Resuming"): the one in hand stands
  if (attempt.receipt?.cid.equals(receipt.cid) === true) return
  const r = receipt.payload
  attempt.evidence.receipt = bytes
  attempt.logAtReceipt = attempt.logReceived
  attempt.receipt = receipt
  active.record.receipt = receiptRecord(attempt.provider, receipt, false)
  shell.dispatch(active, {
    type: 'receipt', now: shell.scheduler.now(), job: active.id, attempt: attempt.number, provider: attempt.provider,
    exitCode: r.exitCode, gpuSeconds: r.gpuSeconds, forThisRequester: r.requester === shell.options.signer.peerId, receipt
  })
  void shell.options.store.putEnvelope(receipt.cid.toString(), receipt.bytes).catch((err: unknown) => {
    shell.options.log.error('cannot store the receipt', { job: active.id, error: err })
  })
}

/**
 * A log frame: it must stay within the credit given (else the provider broke the pacing: a remote
 * fault); taken in order and written out behind the stream (so reading never waits for the disk),
 * up to the job's log cap; each write done gives more credit, while the cap leaves room.
 */
function onLog (shell: RequesterShell, active: ActiveJob, attempt: Attempt, offset: number, data: Uint8Array): void {
  const end = offset + data.byteLength
  if (end > attempt.logCredit) {
    cutLog(shell, active, `the provider sent log past the credit given (${end} > ${attempt.logCredit} bytes)`)
    throw new ExecStreamError('LOG_CREDIT', `log up to byte ${end}, past the credit of ${attempt.logCredit}`)
  }
  if (offset !== attempt.logReceived) return // a gap or a repeat: the receipt's log blob is authoritative
  attempt.logReceived = end
  writeLog(shell, active, attempt, async () => {
    attempt.logBytes = end
    await keepLog(shell, active, data)
    const upTo = attempt.logBytes + Math.min(LOG_WINDOW, MAX_JOB_LOG_BYTES - active.record.logBytes)
    if (upTo - attempt.logCredit >= LOG_WINDOW / 4) {
      attempt.logCredit = upTo
      attempt.grants.add(upTo)
      attempt.channel?.send({ type: 'credit', upTo }).catch(() => {})
    }
  })
}

/** Append to the job's log file what fits under MAX_JOB_LOG_BYTES; say so when some is cut. Call inside writeLog. */
export async function keepLog (shell: RequesterShell, active: ActiveJob, data: Uint8Array): Promise<void> {
  const room = MAX_JOB_LOG_BYTES - active.record.logBytes
  const kept = data.subarray(0, Math.max(0, room))
  if (kept.byteLength > 0) {
    try {
      await appendFile(join(shell.jobDir(active.id), 'log'), kept, { mode: 0o600 })
    } catch (err) {
      throw new ExecStreamError('LOCAL', `cannot write the job's log: ${(err as Error).message}`)
    }
    active.record.logBytes += kept.byteLength
  }
  if (active.record.logBytes >= MAX_JOB_LOG_BYTES) cutLog(shell, active, `this node keeps at most ${MAX_JOB_LOG_BYTES} bytes of log per job`)
}

export function cutLog (shell: RequesterShell, active: ActiveJob, why: string): void {
  if (active.record.logCut !== undefined) return
  active.record.logCut = why
  shell.note(active, 'log-cut', `log cut at ${active.record.logBytes} bytes: ${why}`)
}

/** Queue a write to the job's log; one that fails ends the stream as this node's fault (LOCAL). */
export function writeLog (shell: RequesterShell, active: ActiveJob, attempt: Attempt, work: () => Promise<void>): void {
  active.logQueue = active.logQueue.then(work).catch((err: unknown) => {
    const failure = err instanceof ExecStreamError ? err : new ExecStreamError('LOCAL', (err as Error).message)
    shell.options.log.warn('the job log could not be written', { job: active.id, error: failure.message })
    attempt.channel?.fail(failure)
  })
}

/** The job record's view of a receipt (`outputsValid`: its outputs were fetched and every CID matched). */
export function receiptRecord (provider: string, receipt: OpenedMessage<'receipt'>, outputsValid: boolean): NonNullable<ActiveJob['record']['receipt']> {
  const r = receipt.payload
  return {
    cid: receipt.cid.toString(),
    provider,
    exitCode: r.exitCode,
    startedAt: r.startedAt,
    endedAt: r.endedAt,
    gpuSeconds: r.gpuSeconds,
    outputs: r.outputs.toString(),
    outputsValid
  }
}
