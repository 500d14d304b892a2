/**
 * SeenBids' memory bound at the exact instant (mutation survivor of protocol/market/seen-bids.ts): a
 * job whose bids expire exactly when a sweep runs is forgotten by that sweep.
 */
import assert from 'node:assert/strict'
import { SeenBids } from '../../../../protocol/index.js'
import { NOW, makeJob, otherBid } from '../../../helpers/provider-agent-harness.js'

describe('SeenBids, more', () => {
  it('a job whose bids expire exactly at a sweep is forgotten by it; one expiring 1 ms later is kept', () => {
    const seen = new SeenBids({ maxJobs: 8, maxPerJob: 4 })
    const [a, b, c] = [31, 32, 33].map((n) => makeJob({ n })) as [ReturnType<typeof makeJob>, ReturnType<typeof makeJob>, ReturnType<typeof makeJob>]
    seen.add(otherBid(a, 1, 1, { expiresAt: NOW + 10_000 }), NOW)
    seen.add(otherBid(b, 1, 1, { expiresAt: NOW + 10_001 }), NOW)
    assert.equal(seen.size, 2)
    seen.add(otherBid(c, 1, 1, { expiresAt: NOW + 60_000 }), NOW + 10_000)
    assert.equal(seen.size, 2)
    assert.equal(seen.bids(b.cid.toString(), undefined, NOW + 10_000).length, 1)
  })
})
