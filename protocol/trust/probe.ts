/**
 * The timed, verifiable probe task (issue 11, protocol/README.md "Attestations and probes"): a product
 * C = A·B of two n×n matrices over the integers mod PROBE_PRIME, both derived from the challenger's
 * nonce, so the provider cannot precompute it and the challenger can check it exactly with Freivalds'
 * algorithm in O(n²) per round instead of redoing the O(n³) product. Pure: no clock, no randomness —
 * the challenger passes in the seed of its Freivalds vectors.
 */
import { sha256 } from '../../crypto/index.js'

/** The largest prime below 2¹⁶: every entry fits a u16, every product a u32, and a sum of up to 2²¹ products stays exact in a double. */
export const PROBE_PRIME = 65_521
/** Domain tag of the matrix derivation (ASCII, hashed before the nonce). */
export const PROBE_DOMAIN = 'gpumesh/probe/1'
/** Smallest, largest and step of the matrix dimension n. PROBE_MAX_N bounds the answer to 2·n² = 8 MiB. */
export const PROBE_MIN_N = 32
export const PROBE_MAX_N = 2048
export const PROBE_N_STEP = 32
/** Freivalds rounds: each uses a vector over F_p, so a wrong product passes one with probability ≤ 1/p < 2⁻¹⁵; two rounds ≤ 2⁻³¹. */
export const PROBE_FREIVALDS_ROUNDS = 2

const DOMAIN_BYTES = new TextEncoder().encode(PROBE_DOMAIN)

export type ProbeErrorCode =
  /** n is not a multiple of PROBE_N_STEP within [PROBE_MIN_N, PROBE_MAX_N]. */
  | 'BAD_SIZE'
  /** The answer is not 2·n² bytes of entries below the prime. */
  | 'BAD_PRODUCT'
  /** The answer does not hash to the digest the provider sent first. */
  | 'DIGEST_MISMATCH'
  /** Freivalds' check found the answer is not A·B. */
  | 'WRONG_PRODUCT'
  /** The provider refused: it was probed by this peer too recently, or is busy with another probe. */
  | 'RATE_LIMITED'
  /** The provider did not answer in time (or at all). */
  | 'NO_ANSWER'
  /** A frame of the probe stream that does not follow the layout. */
  | 'BAD_FRAME'

export class ProbeError extends Error {
  override readonly name = 'ProbeError'
  constructor (readonly code: ProbeErrorCode, message: string) {
    super(`${code}: ${message}`)
  }
}

/** Throws BAD_SIZE unless `n` is a dimension a challenge may ask for. */
export function checkProbeSize (n: number): void {
  if (!Number.isInteger(n) || n < PROBE_MIN_N || n > PROBE_MAX_N || n % PROBE_N_STEP !== 0) {
    throw new ProbeError('BAD_SIZE', `n must be a multiple of ${PROBE_N_STEP} in [${PROBE_MIN_N}, ${PROBE_MAX_N}], got ${n}`)
  }
}

/**
 * Matrix `tag` (`A` or `B`) of the challenge for `nonce`, row-major, n×n. Row i comes from its own
 * generator (so rows can be derived in parallel, on a GPU too): xoshiro128** seeded with the first 16
 * bytes of SHA-256(PROBE_DOMAIN ‖ tag ‖ u32be(n) ‖ u32be(i) ‖ nonce) read as four little-endian u32
 * (an all-zero seed, which xoshiro cannot use, becomes s₀ = 1); entry j is its (j+1)-th output mod p.
 */
export function deriveMatrix (nonce: Uint8Array, tag: 'A' | 'B', n: number): Uint16Array {
  checkProbeSize(n)
  const out = new Uint16Array(n * n)
  deriveMatrixRows(nonce, tag, n, 0, n, out)
  return out
}

/** Rows [from, to) of deriveMatrix(nonce, tag, n) into `out` (n×n, row-major), so a caller can derive in slices. */
export function deriveMatrixRows (nonce: Uint8Array, tag: 'A' | 'B', n: number, from: number, to: number, out: Uint16Array): void {
  checkProbeSize(n)
  if (out.length !== n * n || from < 0 || to > n) throw new RangeError(`rows [${from}, ${to}) of an ${n}×${n} matrix into ${out.length} entries`)
  expand(nonce, tag.charCodeAt(0), n, n, from, to, out)
}

/** Rows [from, to) of `width` entries of the stream for (nonce, tag byte, n), into `out` at row · width. */
function expand (nonce: Uint8Array, tag: number, n: number, width: number, from: number, to: number, out: Uint16Array): void {
  const input = new Uint8Array(DOMAIN_BYTES.byteLength + 9 + nonce.byteLength)
  input.set(DOMAIN_BYTES, 0)
  const view = new DataView(input.buffer)
  const at = DOMAIN_BYTES.byteLength
  input[at] = tag
  view.setUint32(at + 1, n)
  input.set(nonce, at + 9)
  for (let row = from; row < to; row++) {
    view.setUint32(at + 5, row)
    const digest = sha256(input)
    const seed = new DataView(digest.buffer, digest.byteOffset, 16)
    let s0 = seed.getUint32(0, true)
    let s1 = seed.getUint32(4, true)
    let s2 = seed.getUint32(8, true)
    let s3 = seed.getUint32(12, true)
    if ((s0 | s1 | s2 | s3) === 0) s0 = 1
    const base = row * width
    for (let j = 0; j < width; j++) {
      // xoshiro128** (Blackman & Vigna): result = rotl(s1 * 5, 7) * 9
      const x = Math.imul(s1, 5)
      const result = Math.imul((x << 7) | (x >>> 25), 9) >>> 0
      const t = s1 << 9
      s2 ^= s0
      s3 ^= s1
      s1 ^= s2
      s0 ^= s3
      s2 ^= t
      s3 = (s3 << 11) | (s3 >>> 21)
      out[base + j] = result % PROBE_PRIME
    }
  }
}

/**
 * Rows [from, to) of A·B mod p into `out` (row-major). The CPU kernel: i-k-j order over a row of
 * doubles, reduced once per row (each term < 2³², n ≤ 2¹¹ terms, so the sum is exact).
 */
export function multiplyRows (a: Uint16Array, b: Uint16Array, n: number, from: number, to: number, out: Uint16Array): void {
  const acc = new Float64Array(n)
  for (let i = from; i < to; i++) {
    acc.fill(0)
    const row = i * n
    for (let k = 0; k < n; k++) {
      const aik = a[row + k] as number
      if (aik === 0) continue
      const bRow = k * n
      for (let j = 0; j < n; j++) acc[j] = (acc[j] as number) + aik * (b[bRow + j] as number)
    }
    for (let j = 0; j < n; j++) out[row + j] = (acc[j] as number) % PROBE_PRIME
  }
}

/** A·B mod p in one call (tests, benchmarks; the service runs multiplyRows in slices so it can yield). */
export function multiply (a: Uint16Array, b: Uint16Array, n: number): Uint16Array {
  const out = new Uint16Array(n * n)
  multiplyRows(a, b, n, 0, n, out)
  return out
}

/** M·v mod p for an n×n matrix and a vector of n entries below p. */
function matVec (m: Uint16Array, v: Uint16Array, n: number): Uint16Array {
  const out = new Uint16Array(n)
  for (let i = 0; i < n; i++) {
    let sum = 0
    const row = i * n
    for (let j = 0; j < n; j++) sum += (m[row + j] as number) * (v[j] as number)
    out[i] = sum % PROBE_PRIME
  }
  return out
}

/**
 * The challenger's Freivalds vectors: `rounds` vectors of n entries over F_p, from its secret `seed`
 * (the same derivation as the matrices, tag `r`, one row per round). The seed must stay secret until the answer is in, or a
 * provider could craft a wrong product that passes.
 */
export function freivaldsVectors (seed: Uint8Array, n: number, rounds = PROBE_FREIVALDS_ROUNDS): Uint16Array[] {
  checkProbeSize(n)
  if (!Number.isInteger(rounds) || rounds < 1) throw new RangeError('rounds must be a positive integer')
  const all = new Uint16Array(rounds * n)
  expand(seed, 'r'.charCodeAt(0), n, n, 0, rounds, all)
  return Array.from({ length: rounds }, (_, r) => all.subarray(r * n, (r + 1) * n))
}

/**
 * Freivalds' check: true when A·(B·r) = C·r for every vector r. A correct C always passes; a wrong one
 * passes a round only when r is orthogonal to (A·B − C)'s nonzero row, probability ≤ 1/p per round.
 */
export function freivalds (a: Uint16Array, b: Uint16Array, c: Uint16Array, n: number, vectors: readonly Uint16Array[]): boolean {
  for (const r of vectors) {
    if (r.length !== n) throw new RangeError(`vector of ${r.length} entries for n = ${n}`)
    const left = matVec(a, matVec(b, r, n), n)
    const right = matVec(c, r, n)
    for (let i = 0; i < n; i++) if (left[i] !== right[i]) return false
  }
  return true
}

/** The answer's wire form: n² little-endian u16 entries, row-major. */
export function encodeProduct (c: Uint16Array): Uint8Array {
  const bytes = new Uint8Array(c.length * 2)
  const view = new DataView(bytes.buffer)
  for (let i = 0; i < c.length; i++) view.setUint16(2 * i, c[i] as number, true)
  return bytes
}

/** Read an answer for dimension n. Throws BAD_PRODUCT on a wrong length or an entry ≥ p. */
export function decodeProduct (bytes: Uint8Array, n: number): Uint16Array {
  checkProbeSize(n)
  if (bytes.byteLength !== 2 * n * n) throw new ProbeError('BAD_PRODUCT', `expected ${2 * n * n} bytes for n = ${n}, got ${bytes.byteLength}`)
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  const out = new Uint16Array(n * n)
  for (let i = 0; i < out.length; i++) {
    const entry = view.getUint16(2 * i, true)
    if (entry >= PROBE_PRIME) throw new ProbeError('BAD_PRODUCT', `entry ${i} is ${entry}, not below ${PROBE_PRIME}`)
    out[i] = entry
  }
  return out
}
