import assert from 'node:assert/strict'
import { createHash } from 'node:crypto'
import fc from 'fast-check'
import { cidOfValue } from '../../../../crypto/index.js'
import { InvalidVerificationInputError } from '../../../../protocol/trust/invalid-input.js'
import { compareSpotcheck, drawSelects, spotcheckDraw, spotchecked } from '../../../../protocol/trust/spotcheck.js'
import { openedJob, outputs, provider, receipt } from '../../../helpers/trust-fixtures.js'

const SEED = new Uint8Array(32).fill(0x5e)
const jobId = (n: number) => cidOfValue({ job: n }).cid

/** The spec's formula, computed with node:crypto instead of the code under test. */
function specDraw (job: Uint8Array, seed: Uint8Array): number {
  const digest = createHash('sha256').update('gpumesh/spotcheck/1\n').update(seed).update(job).digest()
  return digest.readUInt32BE(0)
}

describe('protocol/trust/spotcheck', () => {
  it('draws what the spec\'s formula gives', () => {
    fc.assert(fc.property(fc.integer(), fc.uint8Array({ minLength: 32, maxLength: 32 }), (n, seed) => {
      assert.equal(spotcheckDraw(jobId(n), seed), specDraw(jobId(n).bytes, seed))
    }), { numRuns: 50 })
  })

  it('re-runs a job exactly when draw × 1000 < perMille × 2³²: at the threshold per-mille, not one below', () => {
    for (let n = 0; n < 20; n++) {
      const draw = spotcheckDraw(jobId(n), SEED)
      const threshold = Math.floor(draw * 1000 / 2 ** 32) + 1
      assert.equal(spotchecked(jobId(n), SEED, threshold), true)
      if (threshold > 1) assert.equal(spotchecked(jobId(n), SEED, threshold - 1), false)
      assert.equal(spotchecked(jobId(n), SEED, 1000), true)
    }
  })

  it('selects a draw strictly below perMille × 2³² / 1000: at 125 ‰ the draw 2²⁹ − 1 is in, 2²⁹ is out', () => {
    assert.equal(drawSelects(2 ** 29 - 1, 125), true)
    assert.equal(drawSelects(2 ** 29, 125), false)
    assert.equal(drawSelects(0, 1), true)
    assert.equal(drawSelects(2 ** 32 - 1, 1000), true)
    assert.equal(drawSelects(2 ** 32 - 1, 999), false)
  })

  it('checks about perMille of the jobs, and another seed picks other jobs', () => {
    const jobs = Array.from({ length: 2000 }, (_, n) => jobId(n))
    const picked = jobs.filter((j) => spotchecked(j, SEED, 100))
    assert.ok(picked.length > 150 && picked.length < 250, String(picked.length))
    const other = jobs.filter((j) => spotchecked(j, new Uint8Array(32).fill(0x5f), 100))
    assert.notDeepEqual(other.map(String), picked.map(String))
  })

  it('refuses a seed that is not 32 bytes and a per-mille outside 1 … 1000', () => {
    for (const seed of [new Uint8Array(31), new Uint8Array(33), new Uint8Array(0)]) assert.throws(() => spotcheckDraw(jobId(1), seed), InvalidVerificationInputError)
    for (const p of [0, 1001, 0.5, Number.NaN]) assert.throws(() => spotchecked(jobId(1), SEED, p), InvalidVerificationInputError)
  })

  it('compares the check with the original: agreement is a majority of two, a mismatch goes to the buyer', () => {
    const job = openedJob()
    const [a, b] = [provider(1), provider(2)]
    const agree = compareSpotcheck({ request: job, original: a.peerId, checker: b.peerId, receipts: [receipt(a, job), receipt(b, job)] })
    assert.equal(agree.kind, 'majority')
    const differ = compareSpotcheck({ request: job, original: a.peerId, checker: b.peerId, receipts: [receipt(a, job), receipt(b, job, { outputs: outputs('7') })] })
    assert.equal(differ.kind, 'no-majority')
    assert.throws(() => compareSpotcheck({ request: job, original: a.peerId, checker: a.peerId, receipts: [] }), InvalidVerificationInputError)
  })
})
