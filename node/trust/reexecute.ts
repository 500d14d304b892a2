/**
 * Re-execution of a deterministic job (protocol/README.md §5.9): run a `wasm` job request with its
 * input bytes exactly as a provider's daemon does (node/executors/wasm.ts with the determinism rules of
 * wasm-determinism.ts, the daemon's empty env allow-list, no network, no GPUs) in a fresh temp dir, and
 * return the output manifest CID a provider's receipt names for that run (node/market/provider-io.ts
 * storeResult: the produced outputs in the job's declared order, each a raw blob). Nothing is stored
 * and nothing is fetched: the caller brings the inputs. Used to settle `wrong-output` fraud proofs
 * and by `gpumesh job verify`.
 *
 * Caps: the wall time is the job's own maxRuntimeSec, tightened by `maxWallMs`; collected outputs by
 * `maxOutputBytes`. Memory: a wasm32 module addresses at most 4 GiB and node:wasi has no finer cap, so
 * `maxMemoryBytes` refuses, before running, a module whose declared memory minimum exceeds it (its
 * growth at run time is not limited).
 */
import { mkdir } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { cidOfRaw, cidOfValue, type CID } from '../../crypto/index.js'
import type { JobRequest } from '../../protocol/index.js'
import { isDeterministic } from '../../protocol/trust/fraud-proof.js'
import { WasmExecutor } from '../executors/wasm.js'
import { buildManifest } from '../market/manifest.js'
import type { JobInput } from '../market/provider-io.js'

/** Default cap on one re-execution's wall time (the job's own limit applies when lower). */
export const DEFAULT_REEXECUTE_WALL_MS = 5 * 60_000
/** Default cap on a re-execution's collected outputs. */
export const DEFAULT_REEXECUTE_OUTPUT_BYTES = 64 * 1024 * 1024
/** Default cap on a module's declared initial memory. */
export const DEFAULT_REEXECUTE_MEMORY_BYTES = 1024 * 1024 * 1024

export interface ReexecuteOptions {
  /** The job id (its CID string): the guest's random stream is derived from it. */
  job: string
  maxWallMs?: number
  maxOutputBytes?: number
  maxMemoryBytes?: number
  /** Where the run's temp dirs go (default: the OS temp dir). */
  tmpRoot?: string
  signal?: AbortSignal
}

/** Why a job could not be re-executed: no verdict on anyone follows from it. */
export class ReexecutionError extends Error {
  override readonly name = 'ReexecutionError'
  constructor (readonly reason: 'not-deterministic' | 'over-memory' | 'incomplete', message: string) {
    super(message)
  }
}

/**
 * Re-execute `request` with `inputs` (the files the provider placed: path → bytes, as
 * node/market/provider-io.ts fetchInputs gives them) and return its output manifest CID. Throws
 * ReexecutionError when the job is not deterministic, too large, or its run did not end on its own
 * (exit code outside 0…127, a timeout, a start failure).
 */
export async function reexecuteJob (request: JobRequest, inputs: readonly JobInput[], options: ReexecuteOptions): Promise<CID> {
  if (!isDeterministic(request)) throw new ReexecutionError('not-deterministic', `a ${request.workload.executor} job cannot be re-executed to the same bytes`)
  const module = inputs.find((i) => i.path === request.workload.argv[0])
  const maxMemory = options.maxMemoryBytes ?? DEFAULT_REEXECUTE_MEMORY_BYTES
  const declared = module === undefined ? 0 : declaredMemoryBytes(module.bytes)
  if (declared > maxMemory) throw new ReexecutionError('over-memory', `the module declares ${declared} bytes of memory, over the cap of ${maxMemory}`)
  const tmpRoot = options.tmpRoot ?? join(tmpdir(), 'gpumesh-reexecute')
  await mkdir(tmpRoot, { recursive: true, mode: 0o700 })
  const executor = new WasmExecutor({ tmpRoot, maxOutputBytes: options.maxOutputBytes ?? DEFAULT_REEXECUTE_OUTPUT_BYTES })
  const result = await executor.run({
    job: options.job,
    argv: request.workload.argv,
    env: request.workload.env,
    inputs: [...inputs],
    outputs: request.workload.outputs,
    timeoutMs: Math.min(request.workload.maxRuntimeSec * 1000, options.maxWallMs ?? DEFAULT_REEXECUTE_WALL_MS),
    network: false,
    gpus: []
  }, options.signal !== undefined ? { signal: options.signal } : {})
  if (result.reason !== undefined || result.exitCode < 0 || result.exitCode > 127) {
    throw new ReexecutionError('incomplete', `the re-execution ended with exit code ${result.exitCode}${result.reason !== undefined ? ` (${result.reason})` : ''}${result.detail !== undefined ? `: ${result.detail}` : ''}`)
  }
  return outputsManifestCid(request.workload.outputs, result.outputs)
}

/** The manifest CID of `outputs` as a provider stores them: the declared outputs produced, in declared order. */
export function outputsManifestCid (declared: readonly string[], outputs: ReadonlyArray<{ path: string, bytes: Uint8Array }>): CID {
  const produced = new Map(outputs.map((o) => [o.path, o.bytes]))
  const files: Array<{ path: string, size: number, cid: CID }> = []
  for (const path of new Set(declared)) {
    const bytes = produced.get(path)
    if (bytes !== undefined) files.push({ path, size: bytes.byteLength, cid: cidOfRaw(bytes) })
  }
  return cidOfValue(buildManifest(files)).cid
}

/** The initial memory a wasm binary declares (its memory section's first minimum, in bytes); 0 when it has none or is unreadable. */
function declaredMemoryBytes (bytes: Uint8Array): number {
  try {
    return memoryMinimum(bytes) * 65536
  } catch {
    return 0
  }
}

/** The first memory's minimum pages: the binary's sections walked (id, LEB128 size) to the memory section (id 5). */
function memoryMinimum (bytes: Uint8Array): number {
  let at = 8
  const leb = (): number => {
    let result = 0
    let shift = 0
    for (;;) {
      const b = bytes[at++]
      if (b === undefined) throw new RangeError('truncated')
      result += (b & 0x7f) * 2 ** shift
      if ((b & 0x80) === 0) return result
      shift += 7
    }
  }
  while (at < bytes.length) {
    const id = bytes[at++]
    const size = leb()
    if (id === 5) {
      leb() // count
      leb() // flags
      return leb()
    }
    at += size
  }
  return 0
}
