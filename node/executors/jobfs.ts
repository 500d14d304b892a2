/**
 * Work-dir and environment helpers shared by the process, wasm and docker executors (DESIGN §6): a fresh private
 * work dir per run, inputs placed by relative path only, outputs collected as regular files inside the
 * work dir under a size cap, and an environment reduced to an allowlist plus the allocated GPUs.
 */
import { constants as fsConstants } from 'node:fs'
import { lstat, mkdir, mkdtemp, open, realpath, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { dirname, isAbsolute, join, sep } from 'node:path'
import type { ExecutionResult } from './types.js'

/** Names the executor sets itself from `request.gpus`; a job cannot set them through `env`. */
export const GPU_ENV_NAMES = ['CUDA_VISIBLE_DEVICES', 'NVIDIA_VISIBLE_DEVICES'] as const

/** Default cap on the bytes of collected outputs, all files of one run together. */
export const DEFAULT_MAX_OUTPUT_BYTES = 64 * 1024 * 1024

/**
 * A job-relative path split into segments, or undefined when it is not a plain relative path
 * (empty, absolute, with `..`, `.`, empty segments, a backslash or a NUL byte).
 */
export function relativeSegments (path: string): string[] | undefined {
  if (path === '' || isAbsolute(path) || path.includes('\0') || path.includes('\\')) return undefined
  const segments = path.split('/')
  if (segments.some((s) => s === '' || s === '.' || s === '..')) return undefined
  return segments
}

/**
 * Create a fresh work dir (mode 0700) under `root` (default: the OS temp dir; created when missing)
 * and return its real path.
 */
export async function makeWorkDir (root: string = tmpdir(), prefix = 'gpumesh-job-'): Promise<string> {
  await mkdir(root, { recursive: true })
  return await realpath(await mkdtemp(join(root, prefix)))
}

/**
 * The common start of an executor's `run()`: the start time, a maker of -1 failure results, and the
 * result to return at once when `signal` is already aborted.
 */
export function beginRun (signal?: AbortSignal): { startedAt: number, failed: (detail: string, reason?: ExecutionResult['reason']) => ExecutionResult, cancelled?: ExecutionResult } {
  const startedAt = Date.now()
  const failed = (detail: string, reason: ExecutionResult['reason'] = 'start-failed'): ExecutionResult =>
    ({ exitCode: -1, reason, detail, startedAt, endedAt: Date.now(), outputs: [] })
  return signal?.aborted === true ? { startedAt, failed, cancelled: failed('cancelled before start', 'cancelled') } : { startedAt, failed }
}

/** Remove a work dir and everything in it; never throws. */
export async function removeDir (dir: string): Promise<void> {
  await rm(dir, { recursive: true, force: true }).catch(() => {})
}

/**
 * Write the inputs into `dir` (files 0600, dirs 0700); throws on a path that is not plain relative and on
 * a path that already exists (exclusive create: never writes through a symlink or over an earlier input).
 */
export async function placeInputs (dir: string, inputs: Array<{ path: string, bytes: Uint8Array }>): Promise<void> {
  for (const input of inputs) {
    const segments = relativeSegments(input.path)
    if (segments === undefined) throw new Error(`input path not allowed: ${JSON.stringify(input.path)}`)
    const target = join(dir, ...segments)
    await mkdir(dirname(target), { recursive: true, mode: 0o700 })
    await writeFile(target, input.bytes, { flag: 'wx', mode: 0o600 })
  }
}

/** Whether `path` (already real) lies strictly inside `root` (already real). */
function inside (root: string, path: string): boolean {
  return path.startsWith(root.endsWith(sep) ? root : root + sep)
}

/**
 * Read the declared outputs that exist as regular files inside `dir` (symlinks, directories, FIFOs and
 * paths escaping through a symlinked parent are left out), in declaration order, until `maxBytes`
 * are used in all; files that would pass that cap, or are bigger than `maxFileBytes` each, are left out
 * and named in `skipped`. With `owner`, files not owned by that uid are left out too (a job run as another
 * user could hard-link a file it cannot read, hoping the collector reads it for it).
 */
export async function collectOutputs (dir: string, paths: string[], maxBytes = DEFAULT_MAX_OUTPUT_BYTES, maxFileBytes = Infinity, owner?: number): Promise<{ outputs: Array<{ path: string, bytes: Uint8Array }>, skipped: string[] }> {
  const outputs: Array<{ path: string, bytes: Uint8Array }> = []
  const skipped: string[] = []
  const root = await realpath(dir)
  let left = maxBytes
  for (const path of paths) {
    const segments = relativeSegments(path)
    if (segments === undefined) continue
    const full = join(root, ...segments)
    const bytes = await readRegularFile(root, full, Math.min(left, maxFileBytes), owner).catch(() => undefined)
    if (bytes === undefined) continue
    if (bytes === 'too-big') { skipped.push(path); continue }
    left -= bytes.byteLength
    outputs.push({ path, bytes })
  }
  return { outputs, skipped }
}

/** The bytes of `full` when it is a regular file inside `root` of at most `max` bytes (owned by `owner`, when given). */
async function readRegularFile (root: string, full: string, max: number, owner?: number): Promise<Uint8Array | 'too-big' | undefined> {
  const stat = await lstat(full)
  if (!stat.isFile()) return undefined
  if (!inside(root, await realpath(full))) return undefined
  const handle = await open(full, fsConstants.O_RDONLY | fsConstants.O_NOFOLLOW | fsConstants.O_NONBLOCK)
  try {
    const opened = await handle.stat()
    if (!opened.isFile() || (owner !== undefined && opened.uid !== owner)) return undefined
    if (opened.size > max) return 'too-big'
    const bytes = await handle.readFile()
    return bytes.byteLength > max ? 'too-big' : new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  } finally {
    await handle.close()
  }
}

/**
 * The job's environment: requested names on the allowlist (never the GPU names), then
 * CUDA_VISIBLE_DEVICES / NVIDIA_VISIBLE_DEVICES set to the allocated GPU UUIDs when there are any.
 */
export function jobEnv (requested: Record<string, string>, allowlist: readonly string[], gpus: readonly string[]): Record<string, string> {
  const env: Record<string, string> = {}
  const allowed = new Set(allowlist)
  for (const [name, value] of Object.entries(requested)) {
    if (!allowed.has(name) || (GPU_ENV_NAMES as readonly string[]).includes(name)) continue
    if (name === '' || name.includes('=') || name.includes('\0') || value.includes('\0')) continue
    env[name] = value
  }
  if (gpus.length > 0) {
    for (const name of GPU_ENV_NAMES) env[name] = gpus.join(',')
  }
  return env
}
