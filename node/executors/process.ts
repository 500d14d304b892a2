/**
 * `process` executor (DESIGN §6): runs argv directly (never through a shell) in a fresh work dir, with an env
 * allowlist, a wall-clock timeout, best-effort resource limits through `prlimit`, and a bubblewrap sandbox
 * (no host files beyond the system's read-only /usr tree, no network unless the job may use it).
 *
 * Safe by default: the sandbox is required (`sandbox: 'bwrap'`) and a run without a working bubblewrap is
 * refused; `sandbox: 'none'` is the owner's explicit opt-out. Whatever the sandbox, a daemon running as root
 * never runs a job as root: the job (and bwrap itself) runs as an unprivileged user (nobody, 65534), in a
 * work dir owned by that user under a root-owned 0711 directory outside the data dir, so it can neither
 * read `identity.key`/`api.token` nor pass off a root-owned file (e.g. a hard link) as an output.
 *
 * A run is its process group: when the first process exits, whatever it left in the group is killed. While
 * it runs the group is recorded (`registry`, orphans.ts), so a daemon killed without stopping it has the
 * group ended at its next start; bubblewrap's `--die-with-parent` ends a sandboxed one at once.
 *
 * Limits: `limits.memoryBytes` → RLIMIT_AS and `limits.cpuSeconds` → RLIMIT_CPU, applied with util-linux
 * `prlimit` when it is installed; without it the limits are not enforced (best effort, `limitsEnforced`).
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process'
import { constants as fsConstants } from 'node:fs'
import { access, chmod, lchown, lstat, mkdir, readdir, readlink } from 'node:fs/promises'
import { constants as osConstants, tmpdir } from 'node:os'
import { delimiter, isAbsolute, join } from 'node:path'
import { beginRun, collectOutputs, DEFAULT_MAX_OUTPUT_BYTES, GPU_ENV_NAMES, jobEnv, makeWorkDir, placeInputs, relativeSegments, removeDir } from './jobfs.js'
import type { ProcessSandbox } from '../../protocol/index.js'
import type { ExecutionEvent, ExecutionRequest, ExecutionResult, Executor } from './types.js'
import type { ProcessGroupRegistry, SweepResult } from './orphans.js'

export interface ProcessExecutorOptions {
  /** Where fresh work dirs are made (default: the OS temp dir). */
  workRoot?: string
  /** Env names a job may set (default DEFAULT_ENV_ALLOWLIST). */
  envAllowlist?: string[]
  /** 'bwrap' (default) = bubblewrap required: runs are refused without a working one; 'none' = the owner's opt-out. */
  sandbox?: SandboxMode
  /** PATH searched for `bwrap` and `prlimit` (default: the daemon's PATH at construction). */
  searchPath?: string
  /**
   * Who jobs run as: 'self' (the daemon's user) or an unprivileged user. Default: UNPRIVILEGED_USER when the
   * daemon runs as root, else 'self' (a non-root process cannot switch users).
   */
  runAs?: JobUser | 'self'
  /** Where work dirs are made when jobs run as another user (default: `<os temp dir>/gpumesh-jobs-<uid>`). */
  sharedWorkRoot?: string
  /** Time between SIGTERM and SIGKILL when stopping a job (default 2000 ms). */
  killGraceMs?: number
  /** Largest output file collected, in bytes (default 64 MiB); bigger ones are left out. */
  maxOutputBytes?: number
  /** Extra host paths made visible read-only inside the sandbox (e.g. a toolchain outside /usr). */
  readOnlyPaths?: string[]
  /** Where running jobs' process groups are recorded, so the next start ends any left behind (orphans.ts). */
  registry?: ProcessGroupRegistry
}

export const DEFAULT_ENV_ALLOWLIST = ['PATH', 'HOME', 'LANG', 'LC_ALL', 'TZ', 'PYTHONUNBUFFERED']
const DEFAULT_PATH = '/usr/local/bin:/usr/bin:/bin'

/** How `process` jobs are isolated (config `executors.process.sandbox`, capability ad `processSandbox`). */
export type SandboxMode = ProcessSandbox

/** A user jobs run as. */
export interface JobUser { uid: number, gid: number, name: string }
/** The user a root daemon runs jobs as. */
export const UNPRIVILEGED_USER: JobUser = { uid: 65534, gid: 65534, name: 'nobody' }

/** What the executor will do with a job, for the start-up log, `status` and the capability ad. */
export interface SandboxReport {
  mode: SandboxMode
  /** False when jobs are refused (mode 'bwrap' without a working bubblewrap). */
  ready: boolean
  /** The bwrap binary used (mode 'bwrap', ready). */
  bwrap?: string
  /** Who the job runs as: `self` = the daemon's own user, who can read identity.key and api.token. */
  user: { uid: number, gid: number, name: string, self: boolean }
  /** One line saying all of the above, for people. */
  detail: string
}
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

/** Probe results by search PATH and user: a result found with one PATH never answers for another. */
const bwrapProbes = new Map<string, Promise<{ path: string } | { reason: string }>>()

/** The arguments the probe runs: the same namespaces and mounts as a job (--unshare-all, /proc, /dev, /tmp). */
const PROBE_ARGS = ['--die-with-parent', '--unshare-all', '--ro-bind', '/', '/', '--proc', '/proc', '--dev', '/dev', '--tmpfs', '/tmp', '--', 'true']

/**
 * A working `bwrap` on `searchPath` for jobs run as `user` (probed once per PATH and user with the namespaces
 * and mounts a job gets), or why there is none (not found, or e.g. user namespaces blocked in a container).
 */
export async function probeBwrap (searchPath: string = process.env.PATH ?? DEFAULT_PATH, user?: JobUser): Promise<{ path: string } | { reason: string }> {
  const key = `${user?.uid ?? 'self'}:${user?.gid ?? ''}:${searchPath}`
  let probe = bwrapProbes.get(key)
  if (probe === undefined) {
    probe = (async () => {
      const path = await which('bwrap', searchPath)
      if (path === undefined) return { reason: `bwrap not found on PATH (${searchPath === '' ? 'empty' : searchPath}); install bubblewrap` }
      const run = spawnSync(path, PROBE_ARGS, {
        stdio: ['ignore', 'ignore', 'pipe'], timeout: 5000, env: { PATH: DEFAULT_PATH }, ...(user !== undefined ? { uid: user.uid, gid: user.gid } : {})
      })
      if (run.status === 0) return { path }
      const said = run.error?.message ?? run.stderr?.toString('utf8').trim().split('\n')[0] ?? ''
      return { reason: `${path} cannot create a sandbox${user !== undefined ? ` as ${user.name} (${user.uid})` : ''}: ${said === '' ? `exit ${String(run.status ?? run.signal)}` : said} (user namespaces may be disabled or blocked)` }
    })()
    bwrapProbes.set(key, probe)
  }
  return await probe
}

/** Path of a working `bwrap` on `searchPath` (default: this process's PATH), or undefined. */
export async function bwrapAvailable (searchPath?: string, user?: JobUser): Promise<string | undefined> {
  const probe = await probeBwrap(searchPath, user)
  return 'path' in probe ? probe.path : undefined
}

/** Path of util-linux `prlimit` on `searchPath` (default: this process's PATH), or undefined. */
export async function prlimitPath (searchPath: string = process.env.PATH ?? DEFAULT_PATH): Promise<string | undefined> {
  return await which('prlimit', searchPath)
}

/** The default of `runAs`: an unprivileged user when running as root (never run a buyer's job as root). */
function defaultRunAs (): JobUser | 'self' {
  return process.getuid?.() === 0 ? UNPRIVILEGED_USER : 'self'
}

/** Hand `dir` and everything in it (created by us: no symlinks followed) to `user`. */
async function chownTree (dir: string, user: JobUser): Promise<void> {
  await lchown(dir, user.uid, user.gid)
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name)
    if (entry.isDirectory()) await chownTree(path, user)
    else await lchown(path, user.uid, user.gid)
  }
}

/**
 * The root-owned directory work dirs of jobs run as another user live in: 0711, so that user can reach its
 * own work dir but not list the others; refused when it is a symlink, not ours, or writable by others.
 */
async function ensureSharedRoot (root: string): Promise<void> {
  await mkdir(root, { recursive: true, mode: 0o711 })
  const st = await lstat(root)
  if (!st.isDirectory() || st.uid !== process.getuid?.()) throw new Error(`${root} is not a directory owned by this user`)
  if ((st.mode & 0o777) !== 0o711) await chmod(root, 0o711)
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
  readonly sandbox: SandboxMode
  private readonly killGraceMs: number
  private readonly maxOutputBytes: number
  private readonly readOnlyPaths: string[]
  private readonly searchPath: string
  private readonly runAs: JobUser | undefined
  private readonly registry: ProcessGroupRegistry | undefined

  constructor (options: ProcessExecutorOptions = {}) {
    this.registry = options.registry
    this.envAllowlist = options.envAllowlist ?? DEFAULT_ENV_ALLOWLIST
    this.sandbox = options.sandbox ?? 'bwrap'
    this.killGraceMs = options.killGraceMs ?? 2000
    this.maxOutputBytes = options.maxOutputBytes ?? DEFAULT_MAX_OUTPUT_BYTES
    this.readOnlyPaths = options.readOnlyPaths ?? []
    this.searchPath = options.searchPath ?? process.env.PATH ?? DEFAULT_PATH
    const runAs = options.runAs ?? defaultRunAs()
    this.runAs = runAs === 'self' ? undefined : runAs
    // the data dir (where workRoot usually is) is closed to another user by design
    this.workRoot = this.runAs === undefined
      ? options.workRoot ?? tmpdir()
      : options.sharedWorkRoot ?? join(tmpdir(), `gpumesh-jobs-${process.getuid?.() ?? 0}`)
  }

  /** What this executor does with a job: sandboxed, refused, or unsandboxed, and as which user. */
  async sandboxReport (): Promise<SandboxReport> {
    const uid = process.getuid?.() ?? -1
    const user = this.runAs === undefined
      ? { uid, gid: process.getgid?.() ?? -1, name: 'the daemon\'s own user', self: true }
      : { ...this.runAs, self: false }
    const who = user.self
      ? `as the daemon's own user (uid ${uid}), who can read identity.key and api.token`
      : `as ${user.name} (uid ${user.uid}, gid ${user.gid})`
    if (this.sandbox === 'none') {
      return { mode: 'none', ready: true, user, detail: `UNSANDBOXED (executors.process.sandbox = "none"): buyers' jobs see the host's files and network and run ${who}` }
    }
    const probe = await probeBwrap(this.searchPath, this.runAs)
    if ('reason' in probe) {
      return { mode: 'bwrap', ready: false, user, detail: `refused: ${probe.reason}. Set executors.process.sandbox to "none" to run buyers' jobs without a sandbox` }
    }
    return { mode: 'bwrap', ready: true, bwrap: probe.path, user, detail: `sandboxed with ${probe.path}, jobs run ${who}` }
  }

  /**
   * End the jobs a previous run of the daemon left running (killed without stopping them) and remove
   * their work dirs; undefined without a registry. Call before any job runs.
   */
  async sweepOrphans (): Promise<SweepResult | undefined> {
    return await this.registry?.sweep(this.workRoot)
  }

  /** Whether `limits` are enforced (util-linux `prlimit` present). */
  async limitsEnforced (): Promise<boolean> {
    return (await prlimitPath(this.searchPath)) !== undefined
  }

  async run (request: ExecutionRequest, options: { signal?: AbortSignal, onEvent?: (event: ExecutionEvent) => void } = {}): Promise<ExecutionResult> {
    const { startedAt, failed, cancelled } = beginRun(options.signal)
    if (cancelled !== undefined) return cancelled
    let workDir: string
    try {
      if (this.runAs !== undefined) await ensureSharedRoot(this.workRoot)
      workDir = await makeWorkDir(this.workRoot)
    } catch (err) {
      return failed(`work dir: ${(err as Error).message}`)
    }
    try {
      const prepared = await this.prepare(workDir, request)
      if (typeof prepared === 'string') return failed(prepared)
      if (this.runAs !== undefined) await chownTree(workDir, this.runAs)
      const ended = await this.spawnAndWait(prepared, workDir, request, options)
      if (ended.reason === 'start-failed') return { ...ended, startedAt, outputs: [] }
      // maxOutputBytes caps each file here (no total cap beyond it), as documented in the options; a job run as
      // another user only hands back files that user owns (not, say, a hard link to a root-owned file)
      const { outputs } = await collectOutputs(workDir, request.outputs, Infinity, this.maxOutputBytes, this.runAs?.uid)
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
    if (this.sandbox === 'bwrap') {
      const probe = await probeBwrap(this.searchPath, this.runAs)
      if ('reason' in probe) return `sandbox required but not available: ${probe.reason}`
      command = [probe.path, ...await bwrapArgs(workDir, request, this.readOnlyPaths), ...command]
    }
    const limits = this.limitArgs(request)
    if (limits.length > 0) {
      const prlimit = await prlimitPath(this.searchPath)
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
      /** The process-group record's removal: the run ends after it, so nothing writes to the data dir later. */
      let forgotten: Promise<void> | undefined
      const timers: NodeJS.Timeout[] = []
      const finish = (result: Omit<ExecutionResult, 'outputs' | 'startedAt'>): void => {
        if (settled) return
        settled = true
        for (const t of timers) clearTimeout(t)
        options.signal?.removeEventListener('abort', onAbort)
        void (forgotten ?? Promise.resolve()).then(() => { resolve(result) })
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
      // aborted while the work dir and the command were prepared: the abort event has fired already
      if (options.signal?.aborted === true) {
        finish({ exitCode: -1, reason: 'cancelled', detail: 'cancelled before start', endedAt: Date.now() })
        return
      }
      try {
        child = spawn(file, args, {
          cwd: workDir, env: prepared.env, shell: false, detached: true, stdio: ['ignore', 'pipe', 'pipe'],
          ...(this.runAs !== undefined ? { uid: this.runAs.uid, gid: this.runAs.gid } : {})
        })
      } catch (err) {
        finish({ exitCode: -1, reason: 'start-failed', detail: (err as Error).message, endedAt: Date.now() })
        return
      }
      child.on('error', (err) => {
        if (child.pid === undefined) finish({ exitCode: -1, reason: 'start-failed', detail: err.message, endedAt: Date.now() })
      })
      // recorded while it runs, so a daemon killed now has the group ended at its next start
      const pid = child.pid
      const recorded = pid === undefined || this.registry === undefined ? undefined : this.registry.add(pid, workDir).catch(() => {})
      // the run is over once its first process exits: what it left in its group (a background child)
      // goes with it, and the record with them
      const forget = (): void => {
        if (pid === undefined || forgotten !== undefined) return
        try { process.kill(-pid, 'SIGKILL') } catch {}
        forgotten = recorded?.then(async () => { await this.registry?.remove(pid) }).catch(() => {})
      }
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
        timers.push(setTimeout(() => { child.stdout?.destroy(); child.stderr?.destroy(); forget(); done() }, DRAIN_MS))
      })
      child.on('close', (code, signal) => { exit ??= { code, signal }; exited = true; forget(); done() })
      timers.push(setTimeout(() => stop('timeout'), Math.max(0, request.timeoutMs)))
      options.signal?.addEventListener('abort', onAbort, { once: true })
    })
  }
}
