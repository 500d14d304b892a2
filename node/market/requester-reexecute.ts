/**
 * The requester's own run of a deterministic (wasm) job, the tie-break when its replicas split with no
 * majority (protocol/README.md §5.9): the job's inputs from this node's own blobs (it published them),
 * run by the trust layer's re-execution (node/trust/reexecute.ts: the wasm executor with the daemon's
 * determinism rules and the env a provider's wasm executor passes, none), so an honest provider's
 * receipt names the very same outputs manifest CID. Nothing is stored or granted: only the CID is compared.
 */
import type { CID } from '../../crypto/index.js'
import { jobIdOf, type JobRequest } from '../../protocol/index.js'
import type { BlobStore } from '../blobs/store.js'
import { ReexecutionError, reexecuteJob as reexecute } from '../trust/reexecute.js'
import { fetchInputs } from './provider-io.js'
import type { ActiveJob, RequesterShell } from './requester-job.js'

/** Where the inputs come from: this node's blob store (never the network). */
export type BlobSource = BlobStore

export interface ReexecuteOptions {
  /** Work dirs go here (default: the OS temp dir). */
  tmpRoot?: string
  /** All inputs together may not exceed this (default 1 GiB). */
  maxInputBytes?: number
  signal?: AbortSignal
}

/** The re-execution could not give an output to compare (not wasm, an input missing, a run that did not end on its own). */
export class ReexecuteError extends Error {
  override readonly name = 'ReexecuteError'
}

const DEFAULT_MAX_INPUT_BYTES = 1024 * 1024 * 1024

/** Run the job locally and return the CID of its outputs manifest. Throws ReexecuteError. */
export async function reexecuteJob (request: JobRequest, inputs: BlobSource, opts: ReexecuteOptions = {}): Promise<CID> {
  const { workload } = request
  if (workload.executor !== 'wasm') throw new ReexecuteError(`a ${workload.executor} job is not deterministic: only wasm jobs are re-executed`)
  const signal = opts.signal ?? new AbortController().signal
  let files
  try {
    files = await fetchInputs(workload.inputs, {
      blobs: inputs,
      fetch: async (cid) => { throw new ReexecuteError(`input ${cid.toString()} is not held by this node`) },
      maxBytes: opts.maxInputBytes ?? DEFAULT_MAX_INPUT_BYTES,
      signal
    })
  } catch (err) {
    throw new ReexecuteError((err as Error).message)
  }
  try {
    return await reexecute(request, files, { job: jobIdOf(request).toString(), signal, ...(opts.tmpRoot !== undefined ? { tmpRoot: opts.tmpRoot } : {}) })
  } catch (err) {
    if (err instanceof ReexecutionError) throw new ReexecuteError(err.message)
    throw err
  }
}

/** Carry out the agent's `reexecute`: run the job, answer `reexecuted` or `reexecute-failed`. */
export async function reexecuteAndTell (shell: RequesterShell, active: ActiveJob): Promise<void> {
  let output: string | undefined
  let detail = ''
  try {
    output = (await reexecuteJob(active.request.payload, shell.options.blobs)).toString()
  } catch (err) {
    detail = (err as Error).message
  }
  if (shell.stopping) return
  const base = { now: shell.scheduler.now(), job: active.id }
  shell.dispatch(active, output !== undefined ? { type: 'reexecuted', ...base, output } : { type: 'reexecute-failed', ...base, detail })
}
