/**
 * SeenBids at its edges (mutation survivors of protocol/market/seen-bids.ts): which of a provider's
 * bids is kept, the round's opening instant, and when expired jobs are swept.
 */
import assert from 'node:assert/strict'
import { SeenBids } from '../../../../protocol/index.js'
import { M } from '../../../helpers/market-time.js'
import { NOW, makeJob, otherBid } from '../../../helpers/provider-agent-harness.js'

describe('SeenBids at its edges', () => {
  it('a provider\'s older bid never replaces its newer one; one issued at the same instant does', () => {
    const seen = new SeenBids({ maxJobs: 4, maxPerJob: 4 })
    const job = makeJob({ n: 21 })
    const id = job.cid.toString()
    seen.add(otherBid(job, 1, 200, { issuedAt: NOW + 10 }), NOW)
    seen.add(otherBid(job, 1, 100, { issuedAt: NOW + 9 }), NOW)
    assert.deepEqual(seen.bids(id, undefined, NOW).map((b) => b.payload.price), [200])
    seen.add(otherBid(job, 1, 150, { issuedAt: NOW + 10 }), NOW)
    assert.deepEqual(seen.bids(id, undefined, NOW).map((b) => b.payload.price), [150])
  })

  it('a bid issued exactly when the round opened counts for it; one a millisecond earlier does not', () => {
    const seen = new SeenBids({ maxJobs: 4, maxPerJob: 4 })
    const job = makeJob({ n: 22 })
    seen.add(otherBid(job, 1, 100, { issuedAt: NOW + 5 }), NOW)
    seen.add(otherBid(job, 2, 100, { issuedAt: NOW + 4 }), NOW)
    assert.deepEqual(seen.bids(job.cid.toString(), NOW + 5, NOW).map((b) => b.signer), ['peer-1'])
  })

  it('expired jobs are swept on an add at most every 10 s, not sooner', () => {
    const seen = new SeenBids({ maxJobs: 8, maxPerJob: 4 })
    const [a, b, c, d] = [23, 24, 25, 26].map((n) => makeJob({ n }))
    // the first add sweeps (nothing yet) and starts the 10 s period
    seen.add(otherBid(a as ReturnType<typeof makeJob>, 1, 1, { expiresAt: NOW + 1_000 }), NOW)
    seen.add(otherBid(b as ReturnType<typeof makeJob>, 1, 1, { expiresAt: NOW + M }), NOW + 2_000)
    // 9.999 s after the last sweep: a has expired but is still held
    seen.add(otherBid(c as ReturnType<typeof makeJob>, 1, 1, { expiresAt: NOW + M }), NOW + 9_999)
    assert.equal(seen.size, 3)
    // exactly 10 s: a is swept, b and c (not expired) stay
    seen.add(otherBid(d as ReturnType<typeof makeJob>, 1, 1, { expiresAt: NOW + M }), NOW + 10_000)
    assert.equal(seen.size, 3)
    assert.deepEqual(seen.bids((a as ReturnType<typeof makeJob>).cid.toString(), undefined, NOW), [])
    assert.equal(seen.bids((b as ReturnType<typeof makeJob>).cid.toString(), undefined, NOW + 10_000).length, 1)
  })
})
