import assert from 'node:assert/strict'
import { DEFAULT_CLOCK_SKEW_MS } from '../../../../protocol/constants.js'
import { InvalidMarketParamsError, createMarketParams, defaultMarketParams } from '../../../../protocol/market/params.js'

describe('MarketParams', () => {
  it('defaults validate, and overrides merge nested objects field by field', () => {
    assert.deepEqual(createMarketParams(), { ...defaultMarketParams, seenBids: { ...defaultMarketParams.seenBids }, scoring: { ...defaultMarketParams.scoring, tierWeights: { ...defaultMarketParams.scoring.tierWeights } } })
    const p = createMarketParams({ leaseMs: 5_000, seenBids: { maxPerJob: 8 }, scoring: { tierWeights: { gold: 2 } } })
    assert.equal(p.leaseMs, 5_000)
    assert.equal(p.seenBids.maxPerJob, 8)
    assert.equal(p.seenBids.maxJobs, defaultMarketParams.seenBids.maxJobs)
    assert.equal(p.scoring.tierWeights.gold, 2)
    assert.equal(p.scoring.tierWeights.silver, defaultMarketParams.scoring.tierWeights.silver)
  })

  it('accepts each bound exactly and refuses one past it, naming the field', () => {
    const cases: Array<[Parameters<typeof createMarketParams>[0], Parameters<typeof createMarketParams>[0], string]> = [
      [{ leaseMs: 1_000 }, { leaseMs: 999 }, 'leaseMs'],
      [{ leaseMs: 3_600_000 }, { leaseMs: 3_600_001 }, 'leaseMs'],
      [{ billingIntervalSec: 86_400 }, { billingIntervalSec: 0 }, 'billingIntervalSec'],
      [{ heartbeatsPerLease: 1 }, { heartbeatsPerLease: 1.5 }, 'heartbeatsPerLease'],
      [{ bidDelayFraction: 0 }, { bidDelayFraction: 1.01 }, 'bidDelayFraction'],
      [{ enoughBetterBids: 1 }, { enoughBetterBids: 0 }, 'enoughBetterBids'],
      [{ preemptNoticeMs: 0 }, { preemptNoticeMs: -1 }, 'preemptNoticeMs'],
      [{ preemptMarginMs: 600_000 }, { preemptMarginMs: 600_001 }, 'preemptMarginMs'],
      [{ bidHoldMs: 0 }, { bidHoldMs: -1 }, 'bidHoldMs'],
      [{ bidHoldMs: 60_000 }, { bidHoldMs: 60_001 }, 'bidHoldMs'],
      [{ bidGraceMs: 40_000, bidHoldMs: 40_000 }, { bidGraceMs: 40_000, bidHoldMs: 40_001 }, 'bidHoldMs'],
      [{ endedRetentionMs: 60_000 }, { endedRetentionMs: 59_999 }, 'endedRetentionMs'],
      [{ bidGraceMs: DEFAULT_CLOCK_SKEW_MS + 1 }, { bidGraceMs: DEFAULT_CLOCK_SKEW_MS }, 'bidGraceMs'],
      [{ seenBids: { maxJobs: 1 } }, { seenBids: { maxJobs: 0 } }, 'seenBids.maxJobs'],
      [{ maxFailedAttempts: 16 }, { maxFailedAttempts: 17 }, 'maxFailedAttempts'],
      [{ scoring: { unknownReliability: 1 } }, { scoring: { unknownReliability: 1.1 } }, 'scoring.unknownReliability']
    ]
    for (const [ok, bad, field] of cases) {
      createMarketParams(ok)
      assert.throws(() => createMarketParams(bad), (err: unknown) => err instanceof InvalidMarketParamsError && err.field === field && err.message.startsWith(`market.${field}: `), field)
    }
  })

  it('names every parameter out of range in one error, the first as `field`', () => {
    assert.throws(() => createMarketParams({ leaseMs: 999, damping: 'x' as unknown as boolean, endedRetentionMs: 0, scoring: { unknownReliability: 2 } }), (err: unknown) => {
      assert.ok(err instanceof InvalidMarketParamsError)
      assert.deepEqual(err.problems.map((p) => p.field), ['leaseMs', 'endedRetentionMs', 'damping', 'scoring.unknownReliability'])
      assert.equal(err.field, 'leaseMs')
      assert.match(err.message, /^market\.leaseMs: .*; market\.endedRetentionMs: .*; market\.damping: .*; market\.scoring\.unknownReliability: /)
      return true
    })
  })

  it('refuses NaN and non-numbers', () => {
    assert.throws(() => createMarketParams({ leaseMs: Number.NaN }), InvalidMarketParamsError)
    assert.throws(() => createMarketParams({ leaseMs: '30000' as unknown as number }), InvalidMarketParamsError)
  })
})
