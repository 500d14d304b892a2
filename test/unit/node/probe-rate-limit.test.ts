import assert from 'node:assert/strict'
import { PROBE_MIN_INTERVAL_MS, ProbeRateLimit } from '../../../node/trust/probe-rate-limit.js'

describe('node/trust/probe-rate-limit', () => {
  it('admits a peer again exactly one interval later, not a millisecond sooner', () => {
    const limit = new ProbeRateLimit()
    assert.equal(limit.admit('a', 1000), 'ok')
    limit.release()
    assert.equal(limit.admit('a', 1000 + PROBE_MIN_INTERVAL_MS - 1), 'RATE_LIMITED')
    assert.equal(limit.admit('a', 1000 + PROBE_MIN_INTERVAL_MS), 'ok')
  })

  it('computes one probe at a time: another peer is BUSY until release', () => {
    const limit = new ProbeRateLimit()
    assert.equal(limit.admit('a', 0), 'ok')
    assert.equal(limit.admit('b', 1), 'BUSY')
    limit.release()
    assert.equal(limit.admit('b', 2), 'ok', 'a BUSY refusal does not count against the peer')
  })

  it('a refused peer is not re-timed: its interval still runs from its last admitted probe', () => {
    const limit = new ProbeRateLimit(100)
    assert.equal(limit.admit('a', 0), 'ok')
    limit.release()
    assert.equal(limit.admit('a', 50), 'RATE_LIMITED')
    assert.equal(limit.admit('a', 100), 'ok')
  })

  it('remembers at most maxPeers peers, forgetting the oldest first', () => {
    const limit = new ProbeRateLimit(1000, 2)
    for (const [peer, at] of [['a', 0], ['b', 1], ['c', 2]] as const) {
      assert.equal(limit.admit(peer, at), 'ok')
      limit.release()
    }
    assert.equal(limit.admit('b', 3), 'RATE_LIMITED', 'b is still remembered')
    assert.equal(limit.admit('a', 3), 'ok', 'a, the oldest, was forgotten')
  })
})
