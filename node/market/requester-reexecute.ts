/**
 * The requester's own run of a deterministic (wasm) job, the tie-break when its replicas split with no
 * majority (protocol/README.md §5.9): the job's inputs from this node's own blobs (it published them),
 * the wasm executor with its determinism rules (node/executors/wasm-determinism.ts), and the outputs
 * manifest built as a provider builds it (manifest.ts, provider-io.ts storeResult), so an honest
 * provider's receipt names the very same CID. Nothing is stored or granted: only the CID is compared.
 *
 * A provider passes the job only the env names it allows; this run passes all the job's env (the
 * requester allows its own job everything), so a provider that left names out may differ honestly —
 * §5.9 "Not covered".
 */
import { cidOfRaw, cidOfValue, type CID } from '../../crypto/index.js'
import { jobIdOf, type JobRequest } from '../../protocol/index.js'
import type { BlobStore } from '../blobs/store.js'
import { WasmExecutor } from '../executors/wasm.js'
import { buildManifest } from './manifest.js'
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
/** Exit codes of a run that ended on its own (§5.9): only such a run says anything about the output. */
const MAX_OWN_EXIT_CODE = 127

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
  const executor = new WasmExecutor({ envAllowlist: Object.keys(workload.env), ...(opts.tmpRoot !== undefined ? { tmpRoot: opts.tmpRoot } : {}) })
  const result = await executor.run({
    job: jobIdOf(request).toString(),
    argv: workload.argv,
    env: workload.env,
    inputs: files,
    outputs: workload.outputs,
    timeoutMs: workload.maxRuntimeSec * 1000,
    network: false,
    gpus: []
  }, { signal })
  if (result.exitCode < 0 || result.exitCode > MAX_OWN_EXIT_CODE) {
    throw new ReexecuteError(`the run did not end on its own: exit ${result.exitCode}${result.detail !== undefined ? ` (${result.detail})` : ''}`)
  }
  const produced = new Map(result.outputs.map((o) => [o.path, o.bytes]))
  const listed = [...new Set(workload.outputs)].flatMap((path) => {
    const bytes = produced.get(path)
    return bytes === undefined ? [] : [{ path, size: bytes.byteLength, cid: cidOfRaw(bytes) }]
  })
  return cidOfValue(buildManifest(listed)).cid
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
