/**
 * `process` executor (DESIGN §6): runs argv directly (never through a shell) in a fresh work dir, with an env
 * allowlist, a wall-clock timeout, best-effort resource limits through `prlimit`, and a bubblewrap sandbox when
 * available (no host files beyond the system's read-only /usr tree, no network unless the job may use it).
 *
 * Limits: `limits.memoryBytes` → RLIMIT_AS and `limits.cpuSeconds` → RLIMIT_CPU, applied with util-linux
 * `prlimit` when it is installed; without it the limits are not enforced (best effort, `limitsEnforced`).
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process'
import { constants as fsConstants } from 'node:fs'
import { access, lstat, readlink } from 'node:fs/promises'
import { constants as osConstants, tmpdir } from 'node:os'
import { delimiter, isAbsolute, join } from 'node:path'
import { beginRun, collectOutputs, DEFAULT_MAX_OUTPUT_BYTES, GPU_ENV_NAMES, jobEnv, makeWorkDir, placeInputs, relativeSegments, removeDir } from './jobfs.js'
import type { ExecutionEvent, ExecutionRequest, ExecutionResult, Executor } from './types.js'

export interface ProcessExecutorOptions {
  /** Where fresh work dirs are made (default: the OS temp dir). */
  workRoot?: string
  /** Env names a job may set (default DEFAULT_ENV_ALLOWLIST). */
  envAllowlist?: string[]
  /** 'auto' = bubblewrap when `bwrap` is on PATH and works, else none; 'bwrap' = required (runs fail without it). */
  sandbox?: 'auto' | 'bwrap' | 'none'
  /** Time between SIGTERM and SIGKILL when stopping a job (default 2000 ms). */
  killGraceMs?: number
  /** Largest output file collected, in bytes (default 64 MiB); bigger ones are left out. */
  maxOutputBytes?: number
  /** Extra host paths made visible read-only inside the sandbox (e.g. a toolchain outside /usr). */
  readOnlyPaths?: string[]
}

export const DEFAULT_ENV_ALLOWLIST = ['PATH', 'HOME', 'LANG', 'LC_ALL', 'TZ', 'PYTHONUNBUFFERED']
const DEFAULT_PATH = '/usr/local/bin:/usr/bin:/bin'
/** How long to wait for stdio to drain after the job's process has exited. */
const DRAIN_MS = 1000

/** Finds `name` on PATH (`pathVar`), or undefined. */
async function which (name: string, pathVar: string): Promise<string | undefined> {
  for (const dir of pathVar.split(delimiter)) {
    if (dir === '') continue
    const full = join(dir, name)
    try {
      await access(full, fsConstants.X_OK)
      if ((await lstat(full)).isDirectory()) continue
      return full
    } catch {}
  }
  return undefined
}

let bwrapProbe: Promise<string | undefined> | undefined
/** Path of a working `bwrap` (probed once: `bwrap --ro-bind / / --unshare-net true`), or undefined. */
export async function bwrapAvailable (): Promise<string | undefined> {
  bwrapProbe ??= (async () => {
    const path = await which('bwrap', process.env.PATH ?? DEFAULT_PATH)
    if (path === undefined) return undefined
    const probe = spawnSync(path, ['--ro-bind', '/', '/', '--unshare-net', 'true'], { stdio: 'ignore', timeout: 5000 })
    return probe.status === 0 ? path : undefined
  })()
  return await bwrapProbe
}

let prlimitProbe: Promise<string | undefined> | undefined
/** Path of util-linux `prlimit`, or undefined. */
export async function prlimitPath (): Promise<string | undefined> {
  prlimitProbe ??= which('prlimit', `${process.env.PATH ?? ''}${delimiter}/usr/bin${delimiter}/bin`)
  return await prlimitProbe
}

/**
 * A job-relative path as a host path inside its dir, or undefined when it is not plain relative
 * (see {@link relativeSegments}: absolute, `..`, `.`, empty segments, backslash, NUL).
 */
export function safeRelative (path: string): string | undefined {
  const segments = relativeSegments(path)
  return segments === undefined ? undefined : join(...segments)
}

/** Exit code of a finished child: its code, or 128 + n when killed by signal n. */
function exitCodeOf (code: number | null, signal: NodeJS.Signals | null): number {
  if (code !== null) return code
  const n = signal === null ? undefined : osConstants.signals[signal]
  return n === undefined ? -1 : 128 + n
}

/** bubblewrap arguments for one run: read-only system tree, private /proc, /dev, /tmp, and the work dir. */
async function bwrapArgs (workDir: string, request: ExecutionRequest, readOnlyPaths: string[]): Promise<string[]> {
  const args = ['--die-with-parent', '--unshare-all']
  if (request.network) args.push('--share-net')
  args.push('--ro-bind', '/usr', '/usr')
  // merged-/usr systems have /bin etc. as symlinks into /usr; recreate them as links, else bind the dirs
  for (const top of ['/bin', '/sbin', '/lib', '/lib32', '/lib64', '/libx32']) {
    try {
      const st = await lstat(top)
      if (st.isSymbolicLink()) args.push('--symlink', await readlink(top), top)
      else if (st.isDirectory()) args.push('--ro-bind', top, top)
    } catch {}
  }
  const etc = ['/etc/alternatives', '/etc/ld.so.cache', '/etc/ld.so.conf', '/etc/ld.so.conf.d', '/etc/localtime',
    '/etc/nsswitch.conf', '/etc/ssl', '/etc/ca-certificates', '/etc/pki']
  if (request.network) etc.push('/etc/resolv.conf', '/etc/hosts', '/etc/gai.conf')
  for (const p of [...etc, ...readOnlyPaths]) args.push('--ro-bind-try', p, p)
  args.push('--proc', '/proc', '--dev', '/dev', '--tmpfs', '/tmp')
  if (request.gpus.length > 0) {
    for (const dev of ['/dev/nvidiactl', '/dev/nvidia-uvm', '/dev/nvidia-uvm-tools', '/dev/nvidia-modeset']) {
      args.push('--dev-bind-try', dev, dev)
    }
    for (let i = 0; i < 64; i++) args.push('--dev-bind-try', `/dev/nvidia${i}`, `/dev/nvidia${i}`)
  }
  args.push('--bind', workDir, workDir, '--chdir', workDir, '--new-session', '--')
  return args
}

/** Runs jobs as local processes; see the module comment. */
export class ProcessExecutor implements Executor {
  readonly kind = 'process' as const
  private readonly workRoot: string
  private readonly envAllowlist: readonly string[]
  private readonly sandbox: 'auto' | 'bwrap' | 'none'
  private readonly killGraceMs: number
  private readonly maxOutputBytes: number
  private readonly readOnlyPaths: string[]

  constructor (options: ProcessExecutorOptions = {}) {
    this.workRoot = options.workRoot ?? tmpdir()
    this.envAllowlist = options.envAllowlist ?? DEFAULT_ENV_ALLOWLIST
    this.sandbox = options.sandbox ?? 'auto'
    this.killGraceMs = options.killGraceMs ?? 2000
    this.maxOutputBytes = options.maxOutputBytes ?? DEFAULT_MAX_OUTPUT_BYTES
    this.readOnlyPaths = options.readOnlyPaths ?? []
  }

  /** The bwrap binary this executor will use, or undefined when it runs unsandboxed. */
  async sandboxPath (): Promise<string | undefined> {
    return this.sandbox === 'none' ? undefined : await bwrapAvailable()
  }

  /** Whether `limits` are enforced (util-linux `prlimit` present). */
  async limitsEnforced (): Promise<boolean> {
    return (await prlimitPath()) !== undefined
  }

  async run (request: ExecutionRequest, options: { signal?: AbortSignal, onEvent?: (event: ExecutionEvent) => void } = {}): Promise<ExecutionResult> {
    const { startedAt, failed, cancelled } = beginRun(options.signal)
    if (cancelled !== undefined) return cancelled
    let workDir: string
    try {
      workDir = await makeWorkDir(this.workRoot)
    } catch (err) {
      return failed(`work dir: ${(err as Error).message}`)
    }
    try {
      const prepared = await this.prepare(workDir, request)
      if (typeof prepared === 'string') return failed(prepared)
      const ended = await this.spawnAndWait(prepared, workDir, request, options)
      if (ended.reason === 'start-failed') return { ...ended, startedAt, outputs: [] }
      // maxOutputBytes caps each file here (no total cap beyond it), as documented in the options
      const { outputs } = await collectOutputs(workDir, request.outputs, Infinity, this.maxOutputBytes)
      return { ...ended, startedAt, endedAt: Date.now(), outputs }
    } catch (err) {
      return failed(`executor: ${(err as Error).message}`)
    } finally {
      await removeDir(workDir)
    }
  }

  /** Writes inputs and builds the command line; returns a failure detail instead when the job cannot start. */
  private async prepare (workDir: string, request: ExecutionRequest): Promise<{ command: string[], env: Record<string, string> } | string> {
    try {
      await placeInputs(workDir, request.inputs)
    } catch (err) {
      return (err as Error).message
    }
    const env = this.environment(workDir, request)
    const program = request.argv[0]
    if (program === undefined || program === '') return 'empty argv'
    const resolved = program.includes('/') ? (isAbsolute(program) ? program : join(workDir, program)) : await which(program, env.PATH ?? DEFAULT_PATH)
    try {
      if (resolved === undefined) throw new Error('not found on PATH')
      await access(resolved, fsConstants.X_OK)
    } catch (err) {
      return `cannot run ${JSON.stringify(program)}: ${(err as Error).message}`
    }
    let command = [...request.argv]
    if (this.sandbox !== 'none') {
      const bwrap = await bwrapAvailable()
      if (bwrap !== undefined) command = [bwrap, ...await bwrapArgs(workDir, request, this.readOnlyPaths), ...command]
      else if (this.sandbox === 'bwrap') return 'sandbox required but bubblewrap is not available'
    }
    const limits = this.limitArgs(request)
    if (limits.length > 0) {
      const prlimit = await prlimitPath()
      if (prlimit !== undefined) command = [prlimit, ...limits, '--', ...command]
    }
    return { command, env }
  }

  /** prlimit options for the request's limits. */
  private limitArgs (request: ExecutionRequest): string[] {
    const out: string[] = []
    const mem = request.limits?.memoryBytes
    const cpu = request.limits?.cpuSeconds
    if (mem !== undefined && mem > 0) out.push(`--as=${Math.floor(mem)}`)
    if (cpu !== undefined && cpu > 0) out.push(`--cpu=${Math.ceil(cpu)}`)
    return out
  }

  /**
   * The job's environment: PATH (default DEFAULT_PATH), allow-listed names it asked for (see jobEnv),
   * HOME = work dir, and its GPUs by UUID — set (empty) even with none, so no GPU is visible by default.
   */
  private environment (workDir: string, request: ExecutionRequest): Record<string, string> {
    const env: Record<string, string> = { PATH: DEFAULT_PATH, ...jobEnv(request.env, this.envAllowlist, request.gpus) }
    env.HOME = workDir
    for (const name of GPU_ENV_NAMES) env[name] = request.gpus.join(',')
    return env
  }

  /** Spawns the command in its own process group, streams logs, and enforces timeout and cancellation. */
  private async spawnAndWait (prepared: { command: string[], env: Record<string, string> }, workDir: string, request: ExecutionRequest,
    options: { signal?: AbortSignal, onEvent?: (event: ExecutionEvent) => void }): Promise<Omit<ExecutionResult, 'outputs' | 'startedAt'>> {
    const [file, ...args] = prepared.command as [string, ...string[]]
    return await new Promise((resolve) => {
      let reason: ExecutionResult['reason']
      let child: ChildProcess
      let settled = false
      let exited = false
      const timers: NodeJS.Timeout[] = []
      const finish = (result: Omit<ExecutionResult, 'outputs' | 'startedAt'>): void => {
        if (settled) return
        settled = true
        for (const t of timers) clearTimeout(t)
        options.signal?.removeEventListener('abort', onAbort)
        resolve(result)
      }
      /** Signals the whole process group (falls back to the child when the group is gone). */
      const kill = (sig: NodeJS.Signals): void => {
        if (exited || child.pid === undefined) return
        try { process.kill(-child.pid, sig) } catch { try { child.kill(sig) } catch {} }
      }
      const stop = (why: 'timeout' | 'cancelled'): void => {
        if (exited || reason !== undefined) return
        reason = why
        kill('SIGTERM')
        timers.push(setTimeout(() => kill('SIGKILL'), this.killGraceMs))
      }
      const onAbort = (): void => stop('cancelled')
      try {
        child = spawn(file, args, { cwd: workDir, env: prepared.env, shell: false, detached: true, stdio: ['ignore', 'pipe', 'pipe'] })
      } catch (err) {
        finish({ exitCode: -1, reason: 'start-failed', detail: (err as Error).message, endedAt: Date.now() })
        return
      }
      child.on('error', (err) => {
        if (child.pid === undefined) finish({ exitCode: -1, reason: 'start-failed', detail: err.message, endedAt: Date.now() })
      })
      for (const stream of ['stdout', 'stderr'] as const) {
        child[stream]?.on('data', (data: Buffer) => {
          try { options.onEvent?.({ type: 'log', stream, data: new Uint8Array(data) }) } catch {}
        })
      }
      let exit: { code: number | null, signal: NodeJS.Signals | null } | undefined
      const done = (): void => {
        if (exit === undefined) return
        const result: Omit<ExecutionResult, 'outputs' | 'startedAt'> = { exitCode: exitCodeOf(exit.code, exit.signal), endedAt: Date.now() }
        if (reason !== undefined) result.reason = reason
        finish(result)
      }
      child.on('exit', (code, signal) => {
        exited = true
        exit = { code, signal }
        // a leftover process may keep the pipes open: stop waiting for them after a short drain
        timers.push(setTimeout(() => { child.stdout?.destroy(); child.stderr?.destroy(); done() }, DRAIN_MS))
      })
      child.on('close', (code, signal) => { exit ??= { code, signal }; exited = true; done() })
      timers.push(setTimeout(() => stop('timeout'), Math.max(0, request.timeoutMs)))
      options.signal?.addEventListener('abort', onAbort, { once: true })
    })
  }
}
