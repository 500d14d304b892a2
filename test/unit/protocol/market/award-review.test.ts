/**
 * The provider's second look at a job (protocol/market/award-review.ts), called directly: an award is
 * taken with the allocation the policy chooses now (and the provider's exact-search limit for the
 * preemption set), and an accepted job waiting for its start moves earlier only when GPUs are free
 * now without preempting anyone and the calendar allows it.
 */
import assert from 'node:assert/strict'
import type { Allocation, CapabilityAd, Tier } from '../../../../protocol/index.js'
import { reviewAward, startNow } from '../../../../protocol/market/award-review.js'
import { H } from '../../../helpers/market-time.js'
import { NOW, gpu, makeAd, makeJob } from '../../../helpers/provider-agent-harness.js'

function alloc (job: string, tier: Tier, gpus: number[], price: number, startedAt = NOW - H, endsAt = NOW + 3 * H): Allocation {
  return { job, tier, gpus: gpus.map((i) => `GPU-${i}`), price, startedAt, endsAt }
}

const gold = makeJob({ n: 1, gpus: 4, tier: 'gold', maxPrice: 9_000_000, runtimeSec: 600, startDelaySec: 60 })

describe('award review', () => {
  describe('reviewAward', () => {
    // A and B hold two GPUs each, C three: {A, B} loses the least revenue; greedy (limit 0) takes C first
    const seven: CapabilityAd = makeAd({ gpus: [0, 1, 2, 3, 4, 5, 6].map(gpu) })
    const bronze = [alloc('A', 'bronze', [0, 1], 10), alloc('B', 'bronze', [2, 3], 10), alloc('C', 'bronze', [4, 5, 6], 1_000)]

    it('accepts with the allocation chosen now: the award\'s price, from the start for the max runtime', () => {
      const r = reviewAward('job-g', gold.payload, seven, bronze, 2_000_000, 2_500_000, NOW)
      assert.equal(r.kind, 'accept')
      assert.ok(r.kind === 'accept')
      assert.deepEqual(r.decision.preempts, ['A', 'B'])
      assert.deepEqual(r.allocation, { job: 'job-g', gpus: r.decision.gpus, tier: 'gold', price: 2_500_000, startedAt: r.decision.startBy, endsAt: r.decision.startBy + 600_000 })
    })

    it('uses the provider\'s exact-search limit: 0 chooses the preemption set greedily', () => {
      const r = reviewAward('job-g', gold.payload, seven, bronze, 2_000_000, 2_500_000, NOW, 0)
      assert.ok(r.kind === 'accept')
      assert.deepEqual(r.decision.preempts, ['A', 'C'])
      const exact = reviewAward('job-g', gold.payload, seven, bronze, 2_000_000, 2_500_000, NOW, 3)
      assert.ok(exact.kind === 'accept')
      assert.deepEqual(exact.decision.preempts, ['A', 'B'])
    })

    it('declines below the ask, takes exactly the ask, and declines when the node no longer sells', () => {
      assert.deepEqual(reviewAward('j', gold.payload, seven, [], 2_000_000, 1_999_999, NOW), { kind: 'decline', reason: 'the award pays 1999999, below the ask of 2000000' })
      assert.equal(reviewAward('j', gold.payload, seven, [], 2_000_000, 2_000_000, NOW).kind, 'accept')
      assert.deepEqual(reviewAward('j', gold.payload, undefined, [], 2_000_000, 2_000_000, NOW), { kind: 'decline', reason: 'this node no longer sells' })
    })
  })

  describe('startNow', () => {
    const held = alloc('job-g', 'gold', [0, 1, 2, 3], 2_500_000, NOW + 10 * 60_000, NOW + 20 * 60_000)

    it('a held allocation whose start has come (exactly now) is returned as it is', () => {
      assert.equal(startNow(gold.payload, makeAd(), held, [], NOW + 10 * 60_000), held)
    })

    it('moves the start to now, for the whole max runtime, when the GPUs are free now', () => {
      assert.deepEqual(startNow(gold.payload, makeAd(), held, [], NOW), { ...held, gpus: ['GPU-0', 'GPU-1', 'GPU-2', 'GPU-3'], startedAt: NOW, endsAt: NOW + 600_000 })
    })

    it('never starts early by preempting: GPUs held by bronze jobs are not free', () => {
      const bronze = [alloc('B1', 'bronze', [0, 1], 10), alloc('B2', 'bronze', [2, 3], 10)]
      assert.equal(startNow(gold.payload, makeAd(), held, bronze, NOW), undefined)
      assert.equal(startNow(gold.payload, makeAd(), held, bronze, NOW, 0), undefined)
    })

    it('waits while the calendar is closed now, and when the node no longer sells', () => {
      const later = makeAd({ availability: { timeZone: 'UTC', windows: [{ day: 1, start: 11 * 60, end: 1440 }] } })
      assert.equal(startNow(gold.payload, later, held, [], NOW), undefined)
      assert.equal(startNow(gold.payload, undefined, held, [], NOW), undefined)
    })
  })
})
