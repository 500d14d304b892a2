/**
 * The outputs of a receipt (protocol/README §5.7): fetched from the provider on the agent's
 * `fetch-outputs`, every CID recomputed (the blob protocol hash-checks each file), written only as a
 * fully verified set, and the log's tail completed from the receipt's log blob. The agent hears
 * `outputs-verified`, `outputs-mismatch` or (right outputs this node could not write) `outputs-unsaved`;
 * it decides what they mean.
 */
import { mkdir, rename, rm, writeFile } from 'node:fs/promises'
import { dirname, join } from 'node:path'
import { peerIdFromString } from '@libp2p/peer-id'
import { decodeCanonical, type CID } from '../../crypto/index.js'
import { nextOutputFetch, type OutputFetchFailure, type OutputFetchRetries } from '../../protocol/index.js'
import { BlobFetchError, type BlobFetchErrorCode } from '../services/blob.js'
import { checkManifest, type OutputManifest } from './manifest.js'
import { MAX_LOG_BYTES } from './provider-io.js'
import { cutLog, keepLog, receiptRecord, reopen, writeLog } from './requester-exec.js'
import type { ActiveJob, Attempt, RequesterShell } from './requester-job.js'
import type { ResultView } from './views.js'

/** Most bytes of outputs fetched for one job, all files together. */
export const MAX_OUTPUT_BYTES = 256 * 1024 * 1024
const MAX_MANIFEST_BYTES = 1024 * 1024

/** Fetch the outputs the attempt's receipt names and recompute every CID; then tell the agent. */
export async function fetchAndVerify (shell: RequesterShell, active: ActiveJob, attempt: Attempt): Promise<void> {
  const receipt = attempt.receipt
  if (receipt === undefined) return
  const r = receipt.payload
  // a replicated job keeps each replica's set apart (`outputs-<attempt>-<provider>`); the comparison picks the result (keepMatchedOutputs)
  const replicated = active.request.payload.verification.mode !== 'none'
  const failed = await fetchWithRetries(shell, active, attempt, async () => {
    attempt.outputs = await fetchOutputs(shell, active, attempt, r.outputs, replicated ? `outputs-${attempt.number}-${attempt.provider}` : 'outputs')
    if (!replicated || active.record.outputs === undefined) active.record.outputs = attempt.outputs
  })
  if (failed === null) return // the award no longer waits for these outputs (or this node stops)
  const detail = failed?.detail
  if (detail === undefined) await completeLog(shell, active, attempt, r.logs)
  const produced = new Set((attempt.outputs ?? []).map((o) => o.path))
  const missingOutputs = detail === undefined ? [...new Set(active.request.payload.workload.outputs)].filter((p) => !produced.has(p)) : []
  if (active.record.receipt !== undefined && active.record.receipt.cid === receipt.cid.toString()) active.record.receipt.outputsValid = detail === undefined
  const base = { now: shell.scheduler.now(), job: active.id, attempt: attempt.number, provider: attempt.provider }
  shell.dispatch(active, detail === undefined
    ? { type: 'outputs-verified', ...base, files: active.record.outputs?.length ?? 0, ...(missingOutputs.length > 0 ? { missingOutputs } : {}) }
    : failed?.failure === 'local'
      ? { type: 'outputs-unsaved', ...base, detail }
      : { type: 'outputs-mismatch', ...base, detail })
}

/** Blob fetch failures that say the provider was not reached or did not serve, not that it served wrong bytes. */
const UNREACHED: ReadonlySet<BlobFetchErrorCode> = new Set(['UNREACHABLE', 'CLOSED_EARLY', 'TIMEOUT', 'UNAVAILABLE'])

/** Outputs fetched and checked that this node could not write under its data dir (its disk, not the provider). */
export class OutputStoreError extends Error {
  readonly code = 'OUTPUT_STORE'
  constructor (readonly path: string, cause: unknown) {
    super(`cannot store the outputs in ${path}: ${(cause as Error).message}`, { cause })
    this.name = 'OutputStoreError'
  }
}

/** What a failed output fetch says (protocol/market/output-fetch.ts), from its error's type and code. */
export function outputFetchFailure (err: unknown): OutputFetchFailure {
  if (err instanceof OutputStoreError) return 'local'
  return err instanceof BlobFetchError && UNREACHED.has(err.code) ? 'unreachable' : 'mismatch'
}

/**
 * Run `fetch` until it succeeds (undefined), fails for good (its error's message and kind), or the
 * award no longer waits for it (null). A provider that could not be reached, or a store that failed
 * here, is tried again with back-off within one lease (nextOutputFetch), the exec stream re-opened
 * first when it went away, so the final payment has a stream to go on.
 */
async function fetchWithRetries (shell: RequesterShell, active: ActiveJob, attempt: Attempt, fetch: () => Promise<void>): Promise<{ detail: string, failure: OutputFetchFailure } | undefined | null> {
  let retries: OutputFetchRetries | undefined
  for (;;) {
    try {
      await fetch()
      return undefined
    } catch (err) {
      const message = (err as Error).message
      const failure = outputFetchFailure(err)
      const next = nextOutputFetch(failure, retries, shell.scheduler.now(), attempt.award.payload.leaseMs)
      if (!next.retry) return { detail: next.why === 'lease' ? `${message} (and still after one lease of tries)` : message, failure }
      retries = next.retries
      shell.options.log.info('output fetch failed: trying again', { job: active.id, provider: attempt.provider, inMs: next.retries.wait, error: message })
      await new Promise<void>((resolve) => { shell.scheduler.at(next.at, resolve) })
      if (shell.stopping || !shell.awaitingOutputs(active, attempt)) return null
      if (attempt.channel?.writable !== true) await reopen(shell, active, attempt)
    }
  }
}

/**
 * Once a replicated job ended: its result, and the receipt it shows (the one `job verify` checks), are
 * those of a replica the comparison paid (none paid: no outputs, the last receipt kept).
 */
export function keepMatchedOutputs (active: ActiveJob): void {
  const replication = active.record.replication
  if (replication === undefined) return
  const matched = replication.replicas.find((r) => r.verdict === 'matched' && r.provider !== undefined)
  const attempt = matched === undefined ? undefined : [...active.attempts.values()].find((a) => a.number === matched.attempt && a.provider === matched.provider)
  active.record.outputs = attempt?.outputs ?? []
  if (attempt?.receipt !== undefined) active.record.receipt = receiptRecord(attempt.provider, attempt.receipt, true)
}

async function fetchOutputs (shell: RequesterShell, active: ActiveJob, attempt: Attempt, manifestCid: CID, dirName: string): Promise<ResultView['outputs']> {
  const blob = shell.options.node.services.blob
  const peer = peerIdFromString(attempt.provider)
  const manifestBytes = await blob.fetch(peer, manifestCid, { maxBytes: MAX_MANIFEST_BYTES })
  const manifest: OutputManifest = checkManifest(decodeCanonical(manifestBytes), active.request.payload.workload.outputs)
  const total = manifest.files.reduce((n, f) => n + f.size, 0)
  if (total > MAX_OUTPUT_BYTES) throw new Error(`outputs of ${total} bytes exceed the ${MAX_OUTPUT_BYTES}-byte limit`)
  const files: Array<{ path: string, size: number, cid: CID, bytes: Uint8Array }> = []
  for (const f of manifest.files) {
    // hash-checked by the blob protocol: a tampered file fails here
    const bytes = await blob.fetch(peer, f.cid, { maxBytes: f.size })
    if (bytes.byteLength !== f.size) throw new Error(`${f.path}: ${bytes.byteLength} bytes, the manifest says ${f.size}`)
    files.push({ ...f, bytes })
  }
  // write only a fully verified set, replacing any earlier attempt's
  const dir = join(shell.jobDir(active.id), dirName)
  const staging = `${dir}.partial`
  try {
    await rm(staging, { recursive: true, force: true })
    for (const f of files) {
      const target = join(staging, f.path)
      await mkdir(dirname(target), { recursive: true, mode: 0o700 })
      await writeFile(target, f.bytes, { mode: 0o600 })
    }
    await mkdir(staging, { recursive: true, mode: 0o700 })
    await rm(dir, { recursive: true, force: true })
    await rename(staging, dir)
  } catch (err) {
    throw new OutputStoreError(dir, err)
  }
  return files.map((f) => ({ path: f.path, size: f.size, cid: f.cid.toString(), file: join(dir, f.path) }))
}

/**
 * What a log blob that begins at offset `base` (0, or after a provider's restart where its new run's
 * log was streamed from) adds after the `received` bytes this node holds; undefined when nothing.
 */
export function logTail (blob: Uint8Array, base: number, received: number): Uint8Array | undefined {
  if (base + blob.byteLength <= received) return undefined
  return blob.subarray(Math.max(0, received - base))
}

/**
 * The receipt's log blob (hash-checked) is the whole log (after a provider's restart, its new run's,
 * from logBase): append what the stream had not brought yet (log frames wait for credit, so a job
 * that prints fast and ends leaves a tail behind).
 */
async function completeLog (shell: RequesterShell, active: ActiveJob, attempt: Attempt, logs: CID | undefined): Promise<void> {
  // every log frame sent before the receipt has arrived before it: a tail can only be missing when
  // the stream stopped exactly at a credit this node gave (the provider waiting for more)
  if (logs === undefined || active.record.logCut !== undefined || !attempt.grants.has(attempt.logAtReceipt ?? -1)) return
  let bytes: Uint8Array
  try {
    bytes = await shell.options.node.services.blob.fetch(peerIdFromString(attempt.provider), logs, { maxBytes: MAX_LOG_BYTES })
  } catch (err) {
    if (err instanceof BlobFetchError && err.code === 'TOO_LARGE') cutLog(shell, active, `the provider's log is over ${MAX_LOG_BYTES} bytes`)
    else shell.options.log.warn('the log blob could not be fetched', { job: active.id, error: err })
    return
  }
  const tail = logTail(bytes, attempt.logBase ?? 0, attempt.logReceived)
  if (tail === undefined) return
  const end = attempt.logReceived + tail.byteLength
  attempt.logReceived = end
  writeLog(shell, active, attempt, async () => {
    attempt.logBytes = end
    await keepLog(shell, active, tail)
  })
  await active.logQueue
}
