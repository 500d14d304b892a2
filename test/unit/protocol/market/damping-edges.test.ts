/**
 * damping at its edges (issue 9, mutation audit): `stayingSilent` is "at least `enough`" — so 0 means always
 * silent, with or without bids seen — and counts only scores at least as good as its own.
 */
import assert from 'node:assert/strict'
import { stayingSilent } from '../../../../protocol/market/damping.js'

describe('market/damping at its edges', () => {
  it('enough = 0: silent with nothing seen and with only worse bids seen', () => {
    assert.equal(stayingSilent(100, [], 0), true)
    assert.equal(stayingSilent(100, [101, 200], 0), true)
  })

  it('enough = 1: one bid exactly as good silences, a worse one does not', () => {
    assert.equal(stayingSilent(100, [101], 1), false)
    assert.equal(stayingSilent(100, [101, 100], 1), true)
    assert.equal(stayingSilent(100, [], 1), false)
  })

  it('counts across any iterable, not only arrays', () => {
    assert.equal(stayingSilent(100, new Set([1, 2, 3]), 3), true)
    assert.equal(stayingSilent(100, new Set([1, 2, 300]), 3), false)
  })
})
