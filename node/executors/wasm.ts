/**
 * The `wasm` executor (DESIGN §6): runs a WASI preview1 module with node:wasi.
 *
 * - `argv[0]` is the module's plain relative path inside the work dir (it arrives as an input); the
 *   guest sees the work dir as the preopen `/work` (fd 3) and gets `argv` as its arguments.
 * - Fresh work dir per run (mkdtemp, 0700), removed after the outputs are collected; outputs are
 *   regular files inside the work dir, under a total size cap (see jobfs.ts).
 * - Environment: only allow-listed names from the request. Unlike the other executors, no
 *   CUDA_VISIBLE_DEVICES / NVIDIA_VISIBLE_DEVICES: a module cannot use a GPU, and the UUIDs of
 *   whichever GPUs were allocated would make two runs of one job differ.
 * - stdout/stderr go to files in a private temp dir and are read back after the run: **wasm logs
 *   arrive at the end**, as 'log' events, stdout first then stderr (their interleaving is lost), each
 *   stream capped at `maxLogBytes`.
 * - Determinism: the WASI calls that would hand the module the host's state (clocks, randomness,
 *   file ids and times) are replaced by wasm-determinism.ts, so a run is reproducible byte for byte
 *   (protocol/README.md §5.9); directory listing order and real-time sleeps are not covered.
 * - node:wasi runs synchronously, so the module runs in a worker thread; on timeout or cancellation
 *   the worker is terminated and the result is exitCode 137 (128 + SIGKILL, as if killed) with reason
 *   'timeout' / 'cancelled'. A run cancelled before the module starts gives -1 / 'cancelled'.
 *   Termination interrupts running wasm code, but not a host call that blocks (e.g. a long
 *   `poll_oneoff` sleep) until that call returns.
 * - A trap (unreachable, out-of-bounds, stack overflow …) gives exitCode 134 (128 + SIGABRT, as
 *   wasmtime reports it) with the message in `detail`; a module that cannot be read, compiled or
 *   instantiated, or lacks `_start`/`memory`, gives -1 / 'start-failed'.
 * - Limits: `limits.cpuSeconds` caps the wall clock too (a module is one thread of compute);
 *   `limits.memoryBytes` is not enforced (wasm32 memory is capped at 4 GiB by the format).
 * - node:wasi documents that it is not a complete file-system sandbox; the preopen confines path
 *   resolution (`..` and absolute paths are refused), but run untrusted modules in a process sandbox
 *   as well when that matters.
 */
import { closeSync, openSync, readSync, fstatSync } from 'node:fs'
import { lstat, mkdtemp } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Worker } from 'node:worker_threads'
import { beginRun, collectOutputs, DEFAULT_MAX_OUTPUT_BYTES, jobEnv, makeWorkDir, placeInputs, relativeSegments, removeDir } from './jobfs.js'
import type { ExecutionEvent, ExecutionRequest, ExecutionResult, Executor } from './types.js'
import type { WasmWorkerData, WasmWorkerReply } from './wasm-worker.js'

export interface WasmExecutorOptions {
  /** Env names a job may set (default: none). GPU names are always set by the executor. */
  envAllowlist?: string[]
  /** Where work dirs and log dirs are created (default: the OS temp dir). */
  tmpRoot?: string
  /** Cap on collected output bytes per run (default 64 MiB). */
  maxOutputBytes?: number
  /** Cap on each log stream per run (default 16 MiB); the rest is dropped and noted in `detail`. */
  maxLogBytes?: number
}

/** Exit code reported when the module was stopped (128 + SIGKILL). */
export const WASM_KILLED_EXIT_CODE = 137
/** Exit code reported when the module trapped (128 + SIGABRT). */
export const WASM_TRAP_EXIT_CODE = 134

const DEFAULT_MAX_LOG_BYTES = 16 * 1024 * 1024
const LOG_CHUNK_BYTES = 64 * 1024

/** How the worker ended, from the parent's side. */
type Ending = WasmWorkerReply | { type: 'stopped', reason: 'timeout' | 'cancelled' } | { type: 'crashed', message: string }

export class WasmExecutor implements Executor {
  readonly kind = 'wasm' as const
  private readonly options: WasmExecutorOptions

  constructor (options: WasmExecutorOptions = {}) {
    this.options = options
  }

  /** Run one module in a fresh work dir; never throws for job failures. */
  async run (request: ExecutionRequest, options: { signal?: AbortSignal, onEvent?: (event: ExecutionEvent) => void } = {}): Promise<ExecutionResult> {
    const { startedAt, failed, cancelled } = beginRun(options.signal)
    if (cancelled !== undefined) return cancelled
    const moduleSegments = request.argv[0] === undefined ? undefined : relativeSegments(request.argv[0])
    if (moduleSegments === undefined) return failed(`argv[0] must be the module's relative path in the work dir, got ${JSON.stringify(request.argv[0])}`)

    let workdir: string | undefined
    let logdir: string | undefined
    try {
      workdir = await makeWorkDir(this.options.tmpRoot)
      logdir = await mkdtemp(join(this.options.tmpRoot ?? tmpdir(), 'gpumesh-wasmlog-'))
      try {
        await placeInputs(workdir, request.inputs)
      } catch (err) {
        return failed((err as Error).message)
      }
      const modulePath = join(workdir, ...moduleSegments)
      const stat = await lstat(modulePath).catch(() => undefined)
      if (stat?.isFile() !== true) return failed(`module not found in the work dir: ${request.argv[0] ?? ''}`)
      return await this.execute(request, options, { workdir, logdir, modulePath, startedAt })
    } catch (err) {
      return failed((err as Error).message)
    } finally {
      if (workdir !== undefined) await removeDir(workdir)
      if (logdir !== undefined) await removeDir(logdir)
    }
  }

  /** Run the prepared module, then stream logs and collect outputs. */
  private async execute (request: ExecutionRequest, options: { signal?: AbortSignal, onEvent?: (event: ExecutionEvent) => void },
    at: { workdir: string, logdir: string, modulePath: string, startedAt: number }): Promise<ExecutionResult> {
    const stdin = openSync(join(at.logdir, 'stdin'), 'w+', 0o600)
    const stdout = openSync(join(at.logdir, 'stdout'), 'w+', 0o600)
    const stderr = openSync(join(at.logdir, 'stderr'), 'w+', 0o600)
    let ending: Ending
    let endedAt: number
    try {
      const data: WasmWorkerData = {
        modulePath: at.modulePath,
        job: request.job,
        args: request.argv,
        env: jobEnv(request.env, this.options.envAllowlist ?? [], []),
        workdir: at.workdir,
        stdin,
        stdout,
        stderr
      }
      ending = await runWorker(data, wallClockMs(request), options.signal)
      endedAt = Date.now()
      const notes: string[] = []
      const maxLog = this.options.maxLogBytes ?? DEFAULT_MAX_LOG_BYTES
      for (const [stream, fd] of [['stdout', stdout], ['stderr', stderr]] as const) {
        if (emitLog(fd, stream, maxLog, options.onEvent)) notes.push(`${stream} truncated at ${maxLog} bytes`)
      }
      const { outputs, skipped } = await collectOutputs(at.workdir, request.outputs, this.options.maxOutputBytes ?? DEFAULT_MAX_OUTPUT_BYTES)
      if (skipped.length > 0) notes.push(`outputs over the size cap left out: ${skipped.join(', ')}`)
      return { ...resultOf(ending, notes), startedAt: at.startedAt, endedAt, outputs }
    } finally {
      for (const fd of [stdin, stdout, stderr]) closeSync(fd)
    }
  }
}

/** The wall-clock budget: the request's timeout, tightened by its CPU-seconds limit. */
function wallClockMs (request: ExecutionRequest): number {
  const cpu = request.limits?.cpuSeconds
  return cpu === undefined ? request.timeoutMs : Math.min(request.timeoutMs, cpu * 1000)
}

/** Exit code, reason and detail for an ending (outputs and times are added by the caller). */
function resultOf (ending: Ending, notes: string[]): Pick<ExecutionResult, 'exitCode' | 'reason' | 'detail'> {
  const detail = (first?: string): { detail?: string } => {
    const all = first === undefined ? notes : [first, ...notes]
    return all.length === 0 ? {} : { detail: all.join('; ') }
  }
  switch (ending.type) {
    case 'exit': return { exitCode: ending.code, ...detail() }
    case 'trap': return { exitCode: WASM_TRAP_EXIT_CODE, ...detail(`trap: ${ending.message}`) }
    case 'crashed': return { exitCode: WASM_TRAP_EXIT_CODE, ...detail(`worker failed: ${ending.message}`) }
    case 'start-failed': return { exitCode: -1, reason: 'start-failed', ...detail(ending.message) }
    case 'stopped': return { exitCode: WASM_KILLED_EXIT_CODE, reason: ending.reason, ...detail(ending.reason === 'timeout' ? 'stopped at the timeout' : 'cancelled') }
  }
}

/** Start the worker and wait for its reply, terminating it on timeout or abort. */
async function runWorker (data: WasmWorkerData, timeoutMs: number, signal: AbortSignal | undefined): Promise<Ending> {
  const worker = new Worker(new URL('./wasm-worker.js', import.meta.url), { workerData: data, stdout: true, stderr: true })
  return await new Promise<Ending>((resolve) => {
    let ending: Ending | undefined
    const finish = (value: Ending, stop: boolean): void => {
      if (ending !== undefined) return
      ending = value
      clearTimeout(timer)
      signal?.removeEventListener('abort', onAbort)
      // Resolve once the thread is gone, so the fds and work dir are no longer in use.
      if (stop) void worker.terminate().then(() => { resolve(value) }, () => { resolve(value) })
      else worker.once('exit', () => { resolve(value) })
    }
    const onAbort = (): void => { finish({ type: 'stopped', reason: 'cancelled' }, true) }
    const timer = setTimeout(() => { finish({ type: 'stopped', reason: 'timeout' }, true) }, Math.max(0, timeoutMs))
    signal?.addEventListener('abort', onAbort, { once: true })
    // aborted while the run was prepared: the event has fired already
    if (signal?.aborted === true) onAbort()
    worker.once('message', (reply: WasmWorkerReply) => { finish(reply, false) })
    worker.once('error', (err) => { finish({ type: 'crashed', message: err.message }, true) })
    worker.once('exit', (code) => {
      if (ending !== undefined) return
      ending = { type: 'crashed', message: `worker exited with ${code}` }
      clearTimeout(timer)
      signal?.removeEventListener('abort', onAbort)
      resolve(ending)
    })
  })
}

/** Read a log file back and emit it in chunks; returns whether it was truncated at `max`. */
function emitLog (fd: number, stream: 'stdout' | 'stderr', max: number, onEvent: ((event: ExecutionEvent) => void) | undefined): boolean {
  const size = fstatSync(fd).size
  if (onEvent === undefined) return size > max
  let position = 0
  const end = Math.min(size, max)
  while (position < end) {
    const chunk = new Uint8Array(Math.min(LOG_CHUNK_BYTES, end - position))
    const n = readSync(fd, chunk, 0, chunk.byteLength, position)
    if (n <= 0) break
    position += n
    onEvent({ type: 'log', stream, data: n === chunk.byteLength ? chunk : chunk.subarray(0, n) })
  }
  return size > max
}
