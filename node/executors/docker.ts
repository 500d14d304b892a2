/**
 * The `docker` executor (DESIGN §6). Its core is {@link dockerRunArgs}, a pure function building the
 * `docker run` argv; `run()` spawns the docker client with it (never through a shell).
 *
 * Sandbox: `--rm`, `--network none` unless the job asked for the network AND the provider allows it
 * (`allowNetwork`, default false), read-only root with a `/tmp` tmpfs, the fresh work dir bound at
 * `/work` (also the working dir), the provider's uid:gid, `--pids-limit`, no new privileges, all
 * capabilities dropped.
 *
 * GPUs by UUID: `--gpus '"device=GPU-a,GPU-b"'` — the argv element carries the double quotes, because
 * docker parses `--gpus` as CSV and a bare `device=a,b` would split at the comma — plus
 * NVIDIA_VISIBLE_DEVICES / CUDA_VISIBLE_DEVICES set to the UUIDs. With no GPUs allocated the job gets
 * NVIDIA_VISIBLE_DEVICES=void and CUDA_VISIBLE_DEVICES= (empty), so an image whose own env says
 * `NVIDIA_VISIBLE_DEVICES=all` cannot reach the host's GPUs under an nvidia default runtime.
 *
 * Limits: `limits.memoryBytes` → `--memory` and `--memory-swap` (no swap beyond it);
 * `limits.cpuSeconds` → `--ulimit cpu=N:N` (RLIMIT_CPU per process); the provider's `cpus` option →
 * `--cpus`.
 *
 * Exit codes: the container's own; 125 from `docker run` (docker itself failed: no engine, unknown
 * image, bad flags) and 126/127 with docker's "Error response from daemon" (command not found or not
 * executable in the image) are reported as -1 / 'start-failed' with docker's stderr in `detail`.
 * Timeout / cancel: `docker kill <name>`, so the result is 137 (SIGKILL) with reason 'timeout' /
 * 'cancelled'; if the client still has not exited after a grace period it is killed and the container
 * removed with `docker rm -f`.
 *
 * The docker client itself runs with the provider's environment (DOCKER_HOST etc.); only the `-e`
 * arguments reach the job.
 */
import { spawn } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { constants as osConstants } from 'node:os'
import { beginRun, collectOutputs, DEFAULT_MAX_OUTPUT_BYTES, jobEnv, makeWorkDir, placeInputs, removeDir } from './jobfs.js'
import type { ExecutionEvent, ExecutionRequest, ExecutionResult, Executor } from './types.js'

/** Env names a docker job may set unless the provider configures its own list. */
export const DOCKER_DEFAULT_ENV_ALLOWLIST = ['LANG', 'LC_ALL', 'TZ', 'PYTHONUNBUFFERED']
/** Default `--pids-limit`. */
export const DEFAULT_PIDS_LIMIT = 512
/** How long `run()` waits after `docker kill` before killing the client and removing the container. */
const KILL_GRACE_MS = 5_000
/** How much of docker's stderr is kept for `detail`. */
const STDERR_TAIL_BYTES = 4_096

/** Everything `dockerRunArgs` needs besides the request. */
export interface DockerRunOptions {
  /** Container name (`--name`). */
  name: string
  /** Host path of the fresh work dir, bound at /work. */
  workdir: string
  uid: number
  gid: number
  /** Env names a job may set (default DOCKER_DEFAULT_ENV_ALLOWLIST). */
  envAllowlist?: string[]
  /** Whether the provider lets jobs that ask for it reach the network (default false). */
  allowNetwork?: boolean
  /** `--pids-limit` (default 512). */
  pidsLimit?: number
  /** `--cpus`, the provider's CPU allocation per job (omitted when unset). */
  cpus?: number
}

export interface DockerExecutorOptions {
  /** The docker client (default `docker`, found on PATH). */
  dockerPath?: string
  envAllowlist?: string[]
  allowNetwork?: boolean
  pidsLimit?: number
  cpus?: number
  /** uid:gid inside the container (default: this process's, so the work dir stays writable). */
  uid?: number
  gid?: number
  /** Where work dirs are created (default: the OS temp dir). */
  tmpRoot?: string
  /** Cap on collected output bytes per run (default 64 MiB). */
  maxOutputBytes?: number
}

/** Image references docker accepts, never starting with '-' (so it cannot pass as a flag). */
const IMAGE_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._/:@-]*$/

/**
 * The `docker run` argv (without `docker`) for a request. Pure; throws when the request has no
 * usable image or the work dir cannot be expressed in `-v` syntax.
 */
export function dockerRunArgs (request: ExecutionRequest, options: DockerRunOptions): string[] {
  const image = request.image
  if (image === undefined || !IMAGE_PATTERN.test(image)) throw new Error(`docker needs a valid image, got ${JSON.stringify(image)}`)
  if (options.workdir.includes(':') || options.workdir.includes(',')) throw new Error(`work dir path not usable with -v: ${options.workdir}`)
  const network = request.network && options.allowNetwork === true ? 'bridge' : 'none'
  const args = [
    'run', '--rm', '--name', options.name,
    '--network', network,
    '--read-only', '--tmpfs', '/tmp',
    '-v', `${options.workdir}:/work`, '-w', '/work',
    '--user', `${options.uid}:${options.gid}`,
    '--pids-limit', String(options.pidsLimit ?? DEFAULT_PIDS_LIMIT),
    '--security-opt', 'no-new-privileges',
    '--cap-drop', 'ALL'
  ]
  if (options.cpus !== undefined) args.push('--cpus', String(options.cpus))
  const memory = request.limits?.memoryBytes
  if (memory !== undefined) args.push('--memory', String(Math.floor(memory)), '--memory-swap', String(Math.floor(memory)))
  const cpuSeconds = request.limits?.cpuSeconds
  if (cpuSeconds !== undefined) args.push('--ulimit', `cpu=${Math.ceil(cpuSeconds)}:${Math.ceil(cpuSeconds)}`)
  if (request.gpus.length > 0) args.push('--gpus', `"device=${request.gpus.join(',')}"`)
  const env = jobEnv(request.env, options.envAllowlist ?? DOCKER_DEFAULT_ENV_ALLOWLIST, request.gpus)
  if (request.gpus.length === 0) {
    env.NVIDIA_VISIBLE_DEVICES = 'void'
    env.CUDA_VISIBLE_DEVICES = ''
  }
  for (const [name, value] of Object.entries(env)) args.push('-e', `${name}=${value}`)
  args.push(image, ...request.argv)
  return args
}

/** A docker-legal container name for a job: `gpumesh-<job slice>-<random>`. */
export function containerName (job: string): string {
  const slice = job.replace(/[^A-Za-z0-9_.-]/g, '').slice(-24)
  return `gpumesh-${slice === '' ? 'job' : slice}-${randomBytes(4).toString('hex')}`
}

export class DockerExecutor implements Executor {
  readonly kind = 'docker' as const
  private readonly options: DockerExecutorOptions

  constructor (options: DockerExecutorOptions = {}) {
    this.options = options
  }

  /** Run one container in a fresh work dir; never throws for job failures. */
  async run (request: ExecutionRequest, options: { signal?: AbortSignal, onEvent?: (event: ExecutionEvent) => void } = {}): Promise<ExecutionResult> {
    const { startedAt, failed, cancelled } = beginRun(options.signal)
    if (cancelled !== undefined) return cancelled
    let workdir: string | undefined
    try {
      workdir = await makeWorkDir(this.options.tmpRoot)
      const name = containerName(request.job)
      let args: string[]
      try {
        await placeInputs(workdir, request.inputs)
        args = dockerRunArgs(request, { ...this.runOptions(), name, workdir })
      } catch (err) {
        return failed((err as Error).message)
      }
      const ended = await this.spawnRun(args, name, request.timeoutMs, options)
      const endedAt = Date.now()
      if ('startFailed' in ended) return { ...failed(ended.startFailed), endedAt }
      const { outputs, skipped } = await collectOutputs(workdir, request.outputs, this.options.maxOutputBytes ?? DEFAULT_MAX_OUTPUT_BYTES)
      const notes = [...(ended.reason === undefined ? [] : [ended.reason === 'timeout' ? 'stopped at the timeout' : 'cancelled']),
        ...(skipped.length > 0 ? [`outputs over the size cap left out: ${skipped.join(', ')}`] : [])]
      const result: ExecutionResult = { exitCode: ended.exitCode, startedAt, endedAt, outputs }
      if (ended.reason !== undefined) result.reason = ended.reason
      if (notes.length > 0) result.detail = notes.join('; ')
      return result
    } catch (err) {
      return failed((err as Error).message)
    } finally {
      if (workdir !== undefined) await removeDir(workdir)
    }
  }

  /** The provider-side part of DockerRunOptions. */
  private runOptions (): Omit<DockerRunOptions, 'name' | 'workdir'> {
    const o: Omit<DockerRunOptions, 'name' | 'workdir'> = {
      uid: this.options.uid ?? process.getuid?.() ?? 65534,
      gid: this.options.gid ?? process.getgid?.() ?? 65534
    }
    if (this.options.envAllowlist !== undefined) o.envAllowlist = this.options.envAllowlist
    if (this.options.allowNetwork !== undefined) o.allowNetwork = this.options.allowNetwork
    if (this.options.pidsLimit !== undefined) o.pidsLimit = this.options.pidsLimit
    if (this.options.cpus !== undefined) o.cpus = this.options.cpus
    return o
  }

  /** Spawn `docker run`, stream its output, stop it on timeout/abort, and classify how it ended. */
  private async spawnRun (args: string[], name: string, timeoutMs: number, options: { signal?: AbortSignal, onEvent?: (event: ExecutionEvent) => void }):
    Promise<{ startFailed: string } | { exitCode: number, reason?: 'timeout' | 'cancelled' }> {
    const docker = this.options.dockerPath ?? 'docker'
    const child = spawn(docker, args, { stdio: ['ignore', 'pipe', 'pipe'], shell: false })
    let stderrTail = ''
    let stopped: 'timeout' | 'cancelled' | undefined
    let grace: NodeJS.Timeout | undefined
    const stop = (reason: 'timeout' | 'cancelled'): void => {
      if (stopped !== undefined) return
      stopped = reason
      this.dockerQuiet(['kill', name])
      grace = setTimeout(() => {
        child.kill('SIGKILL')
        this.dockerQuiet(['rm', '-f', name])
      }, KILL_GRACE_MS)
    }
    const onAbort = (): void => { stop('cancelled') }
    const timer = setTimeout(() => { stop('timeout') }, Math.max(0, timeoutMs))
    options.signal?.addEventListener('abort', onAbort, { once: true })
    // aborted while the run was prepared: the event has fired already
    if (options.signal?.aborted === true) onAbort()
    child.stdout.on('data', (data: Buffer) => { options.onEvent?.({ type: 'log', stream: 'stdout', data: new Uint8Array(data) }) })
    child.stderr.on('data', (data: Buffer) => {
      stderrTail = (stderrTail + data.toString('utf8')).slice(-STDERR_TAIL_BYTES)
      options.onEvent?.({ type: 'log', stream: 'stderr', data: new Uint8Array(data) })
    })
    try {
      return await new Promise((resolve) => {
        child.once('error', (err) => { resolve({ startFailed: `cannot run ${docker}: ${err.message}` }) })
        child.once('close', (code, signal) => {
          if (stopped !== undefined) { resolve({ exitCode: 137, reason: stopped }); return }
          const fromDocker = code === 125 || ((code === 126 || code === 127) && stderrTail.includes('Error response from daemon'))
          if (fromDocker) { resolve({ startFailed: `docker run failed (${code}): ${stderrTail.trim()}` }); return }
          resolve({ exitCode: code ?? (signal === null ? -1 : 128 + (osConstants.signals[signal] ?? 0)) })
        })
      })
    } finally {
      clearTimeout(timer)
      if (grace !== undefined) clearTimeout(grace)
      options.signal?.removeEventListener('abort', onAbort)
    }
  }

  /** Fire a docker housekeeping command, ignoring its output and failure. */
  private dockerQuiet (args: string[]): void {
    const child = spawn(this.options.dockerPath ?? 'docker', args, { stdio: 'ignore', shell: false })
    child.once('error', () => {})
  }
}
