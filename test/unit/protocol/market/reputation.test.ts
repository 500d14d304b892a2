import assert from 'node:assert/strict'
import { Reputation } from '../../../../protocol/market/reputation.js'
import { UNKNOWN_RELIABILITY, rankBids } from '../../../../protocol/market/scoring.js'

describe('Reputation (the requester\'s own view)', () => {
  it('knows nothing of a newcomer and scores it at the unknown default', () => {
    assert.equal(new Reputation().reliability('peer-new'), undefined)
  })

  it('puts a provider that failed once below a newcomer and one that delivered once above', () => {
    const reputation = new Reputation()
    reputation.record('failed-once', false)
    reputation.record('ok-once', true)
    const failed = reputation.reliability('failed-once') as number
    const ok = reputation.reliability('ok-once') as number
    assert.ok(failed < UNKNOWN_RELIABILITY, `one failure: ${failed}`)
    assert.ok(ok > UNKNOWN_RELIABILITY, `one success: ${ok}`)
    const ranked = rankBids(['failed-once', 'peer-new', 'ok-once'].map((provider) => ({
      provider, cid: 'c', price: 1_000_000, rttMs: 20, reliability: reputation.reliability(provider)
    })), 'silver').map((b) => b.provider)
    assert.deepEqual(ranked, ['ok-once', 'peer-new', 'failed-once'])
  })

  it('keeps each peer\'s outcomes apart and counts them all', () => {
    const reputation = new Reputation()
    for (let i = 0; i < 3; i++) reputation.record('a', true)
    reputation.record('a', false)
    reputation.record('b', false)
    assert.equal(reputation.reliability('a'), (3 + 1) / (4 + 4))
    assert.equal(reputation.reliability('b'), 1 / 5)
  })

  it('gives a peer\'s history as a copy, and none for a peer never seen', () => {
    const reputation = new Reputation()
    assert.equal(reputation.history('never'), undefined)
    reputation.record('a', false)
    const h = reputation.history('a')
    assert.deepEqual(h, { ok: 0, failed: 1 })
    if (h !== undefined) h.failed = 99
    assert.deepEqual(reputation.history('a'), { ok: 0, failed: 1 })
  })
})
