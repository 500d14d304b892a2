import assert from 'node:assert/strict'
import fc from 'fast-check'
import { bidWindowClosesAt } from '../../../../protocol/market/bid-window.js'
import { DEFAULT_CLOCK_SKEW_MS, MessageRejectedError, RejectReason, openMessage, sealMessage, type JobRequest } from '../../../../protocol/index.js'
import { Identity } from '../../../../crypto/index.js'

const T = 1_767_225_600_000
const W = 2_000
const SKEW = DEFAULT_CLOCK_SKEW_MS
/** Gossip delay between the requester's issue and the provider's receipt, true time. */
const DELAY = 40

/** May a provider whose clock is off by `skew` ms bid `after` ms (its clock) after receiving the job? */
function mayBid (skew: number, after: number): boolean {
  const receivedAt = T + DELAY + skew
  return receivedAt + after < bidWindowClosesAt(T, W, receivedAt)
}

describe('the bid window by the provider\'s clock (bidWindowClosesAt)', () => {
  it('a provider on time has the whole window from receipt, as before', () => {
    assert.equal(bidWindowClosesAt(T, W, T), T + W)
    assert.equal(bidWindowClosesAt(T, W, T + DELAY), T + DELAY + W)
  })

  it('5 s ahead or behind, a 2 s window stays 2 s long from receipt', () => {
    for (const skew of [5_000, -5_000]) {
      assert.equal(bidWindowClosesAt(T, W, T + DELAY + skew), T + DELAY + skew + W, `skew ${skew}`)
      assert.ok(mayBid(skew, 0) && mayBid(skew, W - 1), `skew ${skew}`)
      assert.ok(!mayBid(skew, W), `skew ${skew}: the window closes after bidWindowMs`)
    }
  })

  it('the window opens no later than issuedAt + the skew allowance: exactly at it, and one past', () => {
    assert.equal(bidWindowClosesAt(T, W, T + SKEW), T + SKEW + W)
    assert.equal(bidWindowClosesAt(T, W, T + SKEW + 1), T + SKEW + W)
    assert.equal(bidWindowClosesAt(T, W, T + SKEW + W), T + SKEW + W, 'received as the bounded window closes: no bid')
    assert.equal(bidWindowClosesAt(T, W, T + SKEW + W - 1), T + SKEW + W, 'one ms left')
  })

  it('120 s ahead: the job is older than the allowance and the window, so it has closed', () => {
    assert.ok(!mayBid(120_000, 0))
    assert.equal(bidWindowClosesAt(T, W, T + DELAY + 120_000), T + SKEW + W)
  })

  it('120 s behind: the job is refused as FUTURE_DATED before any window is timed', () => {
    const requester = new Identity(new Uint8Array(32).fill(4))
    const job: JobRequest = {
      v: 1, issuedAt: T, expiresAt: T + 3_600_000, nonce: new Uint8Array(16).fill(1),
      workload: { executor: 'process', argv: ['true'], env: {}, inputs: [], outputs: [], maxRuntimeSec: 60, network: false },
      resources: { gpus: 1, minVramGB: 0, models: [], cpuCores: 1, memoryMiB: 1024, diskMiB: 1024 },
      sla: { tier: 'silver', maxPrice: 2_500_000, maxStartDelaySec: 300 },
      placement: { regions: [], residency: 'prefer' },
      verification: { mode: 'none' },
      auction: { bidWindowMs: W, paymentRule: 'first-price' }
    }
    const bytes = sealMessage(requester, 'job-request', job).bytes
    assert.throws(() => openMessage(bytes, 'job-request', { now: T + DELAY - 120_000 }),
      (err: unknown) => err instanceof MessageRejectedError && err.reason === RejectReason.FUTURE_DATED)
    // 5 s behind is within the allowance: opened, and the window runs from receipt
    assert.doesNotThrow(() => openMessage(bytes, 'job-request', { now: T + DELAY - 5_000 }))
  })

  it('the window never closes later than issuedAt + skew + bidWindowMs, nor lasts more than bidWindowMs from receipt', () => {
    fc.assert(fc.property(
      fc.integer({ min: -SKEW, max: 10 * SKEW }), fc.integer({ min: 50, max: 600_000 }), fc.integer({ min: 0, max: 2 * SKEW }),
      (lag, window, skew) => {
        const closes = bidWindowClosesAt(T, window, T + lag, skew)
        assert.ok(closes <= T + skew + window)
        assert.ok(closes <= T + lag + window)
        // within the allowance, the whole window from receipt
        if (lag <= skew) assert.equal(closes, T + lag + window)
      }
    ))
  })
})
