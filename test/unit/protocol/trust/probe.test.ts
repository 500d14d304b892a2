import assert from 'node:assert/strict'
import {
  PROBE_MAX_N, PROBE_MIN_N, PROBE_N_STEP, PROBE_PRIME, ProbeError, checkProbeSize, decodeProduct, deriveMatrix, deriveMatrixRows,
  encodeProduct, freivalds, freivaldsVectors, multiply
} from '../../../../protocol/trust/probe.js'

const NONCE = new Uint8Array(16).map((_, i) => i + 1)
const SEED = new Uint8Array(32).fill(9)

/** The textbook product, one BigInt term at a time: the reference the kernel is checked against. */
function naive (a: Uint16Array, b: Uint16Array, n: number): Uint16Array {
  const out = new Uint16Array(n * n)
  for (let i = 0; i < n; i++) {
    for (let j = 0; j < n; j++) {
      let sum = 0n
      for (let k = 0; k < n; k++) sum += BigInt(a[i * n + k]!) * BigInt(b[k * n + j]!)
      out[i * n + j] = Number(sum % BigInt(PROBE_PRIME))
    }
  }
  return out
}

function code (fn: () => unknown): string {
  try { fn() } catch (err) { assert.ok(err instanceof ProbeError, String(err)); return err.code }
  assert.fail('no ProbeError')
}

describe('protocol/trust/probe: the challenge and its check', () => {
  const n = 64
  const a = deriveMatrix(NONCE, 'A', n)
  const b = deriveMatrix(NONCE, 'B', n)
  const c = multiply(a, b, n)
  const vectors = freivaldsVectors(SEED, n)

  it('derives the same matrices from the same nonce, different ones from another nonce, tag or n', () => {
    assert.deepEqual(deriveMatrix(NONCE, 'A', n), a)
    assert.notDeepEqual(a, b)
    const other = NONCE.slice(); other[15] = 0
    assert.notDeepEqual(deriveMatrix(other, 'A', n), a)
    assert.notDeepEqual(deriveMatrix(NONCE, 'A', 96).subarray(0, n), a.subarray(0, n))
    assert.ok(a.every((x) => x < PROBE_PRIME))
  })

  it('derives the same matrix in slices of rows as in one call', () => {
    const sliced = new Uint16Array(n * n)
    for (const [from, to] of [[0, 1], [1, 40], [40, n]] as const) deriveMatrixRows(NONCE, 'A', n, from, to, sliced)
    assert.deepEqual(sliced, a)
    assert.throws(() => deriveMatrixRows(NONCE, 'A', n, 0, n + 1, sliced), RangeError)
    assert.equal(code(() => deriveMatrix(NONCE, 'A', 33)), 'BAD_SIZE')
  })

  it('the kernel computes the textbook product mod p, including the largest entries', () => {
    assert.deepEqual(c, naive(a, b, n))
    // all entries p − 1: each sum is n·(p−1)², the worst case for exactness
    const worst = new Uint16Array(n * n).fill(PROBE_PRIME - 1)
    assert.deepEqual(multiply(worst, worst, n), naive(worst, worst, n))
  })

  it('Freivalds passes the right product and catches a single wrong entry anywhere', () => {
    assert.equal(freivalds(a, b, c, n, vectors), true)
    for (const at of [0, 1, n - 1, n, (n * n) >> 1, n * n - 1]) {
      const wrong = c.slice()
      wrong[at] = (wrong[at]! + 1) % PROBE_PRIME
      assert.equal(freivalds(a, b, wrong, n, vectors), false, `entry ${at}`)
    }
  })

  it('Freivalds catches a product of the wrong matrices (another nonce)', () => {
    const other = NONCE.slice(); other[0] = 0xff
    const stale = multiply(deriveMatrix(other, 'A', n), deriveMatrix(other, 'B', n), n)
    assert.equal(freivalds(a, b, stale, n, vectors), false)
  })

  it('the answer round-trips; a wrong length or an entry ≥ p is BAD_PRODUCT', () => {
    const bytes = encodeProduct(c)
    assert.equal(bytes.byteLength, 2 * n * n)
    assert.deepEqual(decodeProduct(bytes, n), c)
    assert.equal(code(() => decodeProduct(bytes.subarray(1), n)), 'BAD_PRODUCT')
    const edge = bytes.slice()
    new DataView(edge.buffer).setUint16(2 * (n * n - 1), PROBE_PRIME - 1, true)
    assert.equal(decodeProduct(edge, n)[n * n - 1], PROBE_PRIME - 1)
    new DataView(edge.buffer).setUint16(2 * (n * n - 1), PROBE_PRIME, true)
    assert.equal(code(() => decodeProduct(edge, n)), 'BAD_PRODUCT')
  })

  it('n must be a multiple of the step within the limits', () => {
    for (const ok of [PROBE_MIN_N, PROBE_MIN_N + PROBE_N_STEP, PROBE_MAX_N]) checkProbeSize(ok)
    for (const bad of [0, PROBE_MIN_N - PROBE_N_STEP, PROBE_MIN_N + 1, PROBE_MAX_N + PROBE_N_STEP, 1.5 * PROBE_N_STEP * 2 + 1]) {
      assert.equal(code(() => checkProbeSize(bad)), 'BAD_SIZE', String(bad))
    }
  })

  it('the Freivalds vectors come from the seed: n entries per round, below p', () => {
    assert.equal(vectors.length, 2)
    assert.ok(vectors.every((v) => v.length === n && v.every((x) => x < PROBE_PRIME)))
    assert.notDeepEqual(vectors[0], vectors[1])
    assert.deepEqual(freivaldsVectors(SEED, n), vectors)
    assert.throws(() => freivaldsVectors(SEED, n, 0), RangeError)
  })
})
