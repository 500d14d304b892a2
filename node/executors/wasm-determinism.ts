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
 * - `fd_readdir`: the directory's entries sorted by name (bytewise), each with `d_ino` 0 and
 *   `d_next` its 1-based position in that order, so the cookie a module resumes from is a position in
 *   the sorted listing, not in the host file system's (which differs between ext4, tmpfs, overlayfs).
 *
 * Not covered (say so where it matters): `poll_oneoff` sleeps in real time (it returns no time
 * itself), and a directory entry whose name does not fit the module's buffer at all is listed as the
 * host lists it (the sorted listing is read through that buffer).
 */
import { createHash } from 'node:crypto'

/** WASI errno values used here. */
const ESUCCESS = 0
const EFAULT = 21

/** Domain of the random stream (versioned: a change of the stream is a wire change). */
export const WASM_RANDOM_DOMAIN = 'gpumesh/wasm-random/1\n'

/** Size of a WASI `dirent` header: d_next u64 @0, d_ino u64 @8, d_namlen u32 @16, d_type u8 @20. */
const DIRENT_BYTES = 24

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
  const hostReaddir = wasi.fd_readdir as unknown as HostReaddir
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
    }) as WasiImports[string],
    fd_readdir: ((fd: number, buf: number, bufLen: number, cookie: bigint, usedPtr: number): number => {
      const m = memory()
      if (m === undefined) return EFAULT
      return sortedReaddir(hostReaddir, new DataView(m.buffer), fd, buf, bufLen, cookie, usedPtr)
    }) as WasiImports[string]
  }
  return { ...imports, wasi_snapshot_preview1: { ...wasi, ...replaced } }
}

type HostReaddir = (fd: number, buf: number, bufLen: number, cookie: bigint, usedPtr: number) => number

interface DirEntry { name: Uint8Array, type: number }

function compareBytes (a: Uint8Array, b: Uint8Array): number {
  const n = Math.min(a.length, b.length)
  for (let i = 0; i < n; i++) if (a[i] !== b[i]) return (a[i] as number) - (b[i] as number)
  return a.length - b.length
}

/**
 * `fd_readdir` over the whole directory sorted by name. The host's listing is read through the
 * module's own buffer (it is the call's output buffer, overwritten with the answer afterwards), one
 * bufferful at a time from the host's cookies; then the sorted entries from position `cookie` on are
 * written as WASI does: whole entries while they fit, the last one cut at the buffer's end (`bufused`
 * equal to `bufLen` tells the module to ask again). An entry too long for the buffer on its own makes
 * the host's answer pass through unchanged (nothing sorted could be read).
 */
function sortedReaddir (host: HostReaddir, v: DataView, fd: number, buf: number, bufLen: number, cookie: bigint, usedPtr: number): number {
  if (buf < 0 || bufLen < 0 || buf + bufLen > v.byteLength || usedPtr < 0 || usedPtr + 4 > v.byteLength) return EFAULT
  const bytes = new Uint8Array(v.buffer)
  const entries: DirEntry[] = []
  let next = 0n
  for (;;) {
    const errno = host(fd, buf, bufLen, next, usedPtr)
    if (errno !== ESUCCESS) return errno
    const used = v.getUint32(usedPtr, true)
    let at = 0
    let read = 0
    while (at + DIRENT_BYTES <= used) {
      const namlen = v.getUint32(buf + at + 16, true)
      if (at + DIRENT_BYTES + namlen > used) break
      next = v.getBigUint64(buf + at, true)
      entries.push({ name: bytes.slice(buf + at + DIRENT_BYTES, buf + at + DIRENT_BYTES + namlen), type: v.getUint8(buf + at + 20) })
      at += DIRENT_BYTES + namlen
      read++
    }
    if (used < bufLen) break
    if (read === 0) return host(fd, buf, bufLen, cookie, usedPtr)
  }
  entries.sort((a, b) => compareBytes(a.name, b.name))
  const out = new Uint8Array(bufLen)
  const header = new DataView(new ArrayBuffer(DIRENT_BYTES))
  let used = 0
  for (let i = cookie < BigInt(entries.length) ? Number(cookie) : entries.length; i < entries.length && used < bufLen; i++) {
    const e = entries[i] as DirEntry
    header.setBigUint64(0, BigInt(i + 1), true)
    header.setBigUint64(8, 0n, true)
    header.setUint32(16, e.name.length, true)
    header.setUint32(20, e.type, true)
    const record = new Uint8Array(DIRENT_BYTES + e.name.length)
    record.set(new Uint8Array(header.buffer), 0)
    record.set(e.name, DIRENT_BYTES)
    const k = Math.min(record.length, bufLen - used)
    out.set(record.subarray(0, k), used)
    used += k
  }
  bytes.set(out.subarray(0, used), buf)
  v.setUint32(usedPtr, used, true)
  return ESUCCESS
}
