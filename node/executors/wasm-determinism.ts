/**
 * What makes a wasm run deterministic (protocol/README.md §5.9, "What a deterministic run sees"): the
 * WASI calls through which node:wasi would hand a module the host's state are replaced, so the same
 * module, arguments, environment and inputs give the same outputs on every run and every provider.
 * A fraud proof (two receipts of one provider naming different outputs for one job) is sound only then.
 *
 * - `clock_time_get`: every clock is virtual — it starts at 0 ns and each read advances it by 1 ns, so
 *   a module sees time move forward (a wait loop still ends, slowly) but never the host's time.
 * - `clock_res_get`: 1 ns for every clock.
 * - `random_get`: bytes of SHA-256 in counter mode over `"gpumesh/wasm-random/1\n" ‖ job id (UTF-8) ‖
 *   counter (u64, big-endian, from 0)`, 32 bytes per block, consumed in order across calls.
 * - `fd_filestat_get` / `path_filestat_get`: the host's answer with `dev`, `ino` and the three
 *   timestamps set to 0 (the work dir is fresh per run, so they would differ every time).
 *
 * Not covered (say so where it matters): `fd_readdir` lists a directory in the host file system's order
 * with host inode numbers, and `poll_oneoff` sleeps in real time (it returns no time itself).
 */
import { createHash } from 'node:crypto'

/** WASI errno values used here. */
const ESUCCESS = 0
const EFAULT = 21

/** Domain of the random stream (versioned: a change of the stream is a wire change). */
export const WASM_RANDOM_DOMAIN = 'gpumesh/wasm-random/1\n'

/** A WASI preview1 import object, by function name. */
type WasiImports = Record<string, (...args: never[]) => unknown>

/** The deterministic random stream of a job: `take(n)` returns the next `n` bytes. */
export class JobRandom {
  private readonly prefix: Uint8Array
  private counter = 0n
  private block = new Uint8Array(0)
  private used = 0

  constructor (job: string) {
    this.prefix = new TextEncoder().encode(WASM_RANDOM_DOMAIN + job)
  }

  take (n: number): Uint8Array {
    const out = new Uint8Array(n)
    let filled = 0
    while (filled < n) {
      if (this.used === this.block.length) this.refill()
      const k = Math.min(n - filled, this.block.length - this.used)
      out.set(this.block.subarray(this.used, this.used + k), filled)
      this.used += k
      filled += k
    }
    return out
  }

  private refill (): void {
    const ctr = new Uint8Array(8)
    new DataView(ctr.buffer).setBigUint64(0, this.counter)
    this.counter++
    this.block = createHash('sha256').update(this.prefix).update(ctr).digest()
    this.used = 0
  }
}

/**
 * `imports` (node:wasi's `getImportObject()`) with the host-state calls replaced. `memory` is read
 * late because the instance, and so its memory, exists only after instantiation.
 */
export function deterministicImports (imports: { wasi_snapshot_preview1: WasiImports }, job: string, memory: () => { buffer: ArrayBuffer } | undefined): { wasi_snapshot_preview1: WasiImports } {
  const wasi = imports.wasi_snapshot_preview1
  const random = new JobRandom(job)
  let now = 0n
  const view = (): DataView | undefined => {
    const m = memory()
    return m === undefined ? undefined : new DataView(m.buffer)
  }
  const inBounds = (v: DataView, ptr: number, len: number): boolean => ptr >= 0 && len >= 0 && ptr + len <= v.byteLength
  const zeroStat = (ptr: number): void => {
    const v = view()
    // filestat: dev u64 @0, ino u64 @8, filetype u8 @16, nlink u64 @24, size u64 @32, atim @40, mtim @48, ctim @56
    if (v === undefined || !inBounds(v, ptr, 64)) return
    for (const at of [0, 8, 40, 48, 56]) v.setBigUint64(ptr + at, 0n, true)
  }
  const fdFilestatGet = wasi.fd_filestat_get as unknown as (fd: number, ptr: number) => number
  const pathFilestatGet = wasi.path_filestat_get as unknown as (fd: number, flags: number, path: number, len: number, ptr: number) => number
  const replaced: WasiImports = {
    clock_time_get: ((_id: number, _precision: bigint, ptr: number): number => {
      const v = view()
      if (v === undefined || !inBounds(v, ptr, 8)) return EFAULT
      v.setBigUint64(ptr, now, true)
      now += 1n
      return ESUCCESS
    }) as WasiImports[string],
    clock_res_get: ((_id: number, ptr: number): number => {
      const v = view()
      if (v === undefined || !inBounds(v, ptr, 8)) return EFAULT
      v.setBigUint64(ptr, 1n, true)
      return ESUCCESS
    }) as WasiImports[string],
    random_get: ((ptr: number, len: number): number => {
      const m = memory()
      if (m === undefined || ptr < 0 || len < 0 || ptr + len > m.buffer.byteLength) return EFAULT
      new Uint8Array(m.buffer, ptr, len).set(random.take(len))
      return ESUCCESS
    }) as WasiImports[string],
    fd_filestat_get: ((fd: number, ptr: number): number => {
      const errno = fdFilestatGet(fd, ptr)
      if (errno === ESUCCESS) zeroStat(ptr)
      return errno
    }) as WasiImports[string],
    path_filestat_get: ((fd: number, flags: number, path: number, len: number, ptr: number): number => {
      const errno = pathFilestatGet(fd, flags, path, len, ptr)
      if (errno === ESUCCESS) zeroStat(ptr)
      return errno
    }) as WasiImports[string]
  }
  return { ...imports, wasi_snapshot_preview1: { ...wasi, ...replaced } }
}
