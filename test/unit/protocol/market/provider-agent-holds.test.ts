/**
 * The owner's own work on a provider (`holds-changed`): the agent sells only what the holds leave
 * free — it bids around them, places jobs on other GPUs, starts late when the start delay allows,
 * declines an award the holds have since made impossible, and never preempts a hold.
 */
import assert from 'node:assert/strict'
import { createMarketParams, type OwnerHold } from '../../../../protocol/index.js'
import { H, M } from '../../../helpers/market-time.js'
import { Harness, NOW, find, has, makeJob } from '../../../helpers/provider-agent-harness.js'

const hold = (gpus: number[], from: number, until: number, label = 'own'): OwnerHold => ({ gpus: gpus.map((i) => `GPU-${i}`), from, until, label })

describe('provider agent: owner holds', () => {
  it('places a job on the GPUs a hold leaves free', () => {
    const h = new Harness(createMarketParams({}), false)
    h.send({ type: 'holds-changed', now: NOW, holds: [hold([0, 1], NOW, NOW + 2 * H)] })
    const bid = find(h.send({ type: 'job-seen', now: NOW, job: makeJob({ gpus: 2 }) }), 'send-bid')
    assert.ok(bid !== undefined)
    assert.deepEqual(bid.decision.gpus, ['GPU-2', 'GPU-3'])
  })

  it('declines when the holds leave too few GPUs for the whole run, and bids once they end before it would start', () => {
    const h = new Harness(createMarketParams({}), false)
    h.send({ type: 'holds-changed', now: NOW, holds: [hold([0, 1, 2], NOW + 5 * M, NOW + 3 * H)] })
    // 2 GPUs for 10 min: only GPU-3 stays free through [NOW, NOW + 10 min)
    const e = h.send({ type: 'job-seen', now: NOW, job: makeJob({ n: 1, gpus: 2, runtimeSec: 600, startDelaySec: 600 }) })
    assert.ok(!has(e, 'send-bid'))
    // with a start delay past the hold's end, it bids to start when the hold ends
    const late = find(h.send({ type: 'job-seen', now: NOW, job: makeJob({ n: 2, gpus: 2, runtimeSec: 600, startDelaySec: 4 * 3600 }) }), 'send-bid')
    assert.ok(late !== undefined)
    assert.equal(late.decision.startBy, NOW + 3 * H)
  })

  it('a hold ending exactly when the job would start does not block it; one ending a millisecond later does', () => {
    const h = new Harness(createMarketParams({}), false)
    h.send({ type: 'holds-changed', now: NOW, holds: [hold([0, 1, 2, 3], NOW - H, NOW)] })
    assert.ok(has(h.send({ type: 'job-seen', now: NOW, job: makeJob({ n: 3, gpus: 4, startDelaySec: 0 }) }), 'send-bid'))
    h.send({ type: 'holds-changed', now: NOW, holds: [hold([0, 1, 2, 3], NOW - H, NOW + 1)] })
    assert.ok(!has(h.send({ type: 'job-seen', now: NOW, job: makeJob({ n: 4, gpus: 4, startDelaySec: 0 }) }), 'send-bid'))
  })

  it('never preempts a hold for a better-paying job, though it preempts bronze work', () => {
    const h = new Harness(createMarketParams({}), false)
    h.send({ type: 'holds-changed', now: NOW, holds: [hold([0, 1], NOW, NOW + 5 * H)] })
    h.running(makeJob({ n: 5, gpus: 2, tier: 'bronze', runtimeSec: 4 * 3600 }))
    const gold = find(h.send({ type: 'job-seen', now: NOW, job: makeJob({ n: 6, gpus: 2, tier: 'gold', maxPrice: 9_000_000, startDelaySec: 0 }) }), 'send-bid')
    assert.ok(gold !== undefined, 'bids by preempting the bronze job')
    assert.equal(gold.decision.preempts.length, 1)
    assert.ok(!gold.decision.gpus.includes('GPU-0') && !gold.decision.gpus.includes('GPU-1'))
    const four = h.send({ type: 'job-seen', now: NOW, job: makeJob({ n: 7, gpus: 4, tier: 'gold', maxPrice: 9_000_000, startDelaySec: 0 }) })
    assert.ok(!has(four, 'send-bid'), 'the held GPUs are never taken')
  })

  it('declines an award that a hold set after its bid has made impossible', () => {
    const h = new Harness(createMarketParams({}), false)
    const job = makeJob({ n: 8, gpus: 4 })
    const bid = h.bidOn(job)
    h.send({ type: 'holds-changed', now: NOW, holds: [hold([3], NOW, NOW + H)] })
    const award = h.award(job, bid)
    assert.ok(has(award.effects, 'respond-award', (e) => e.decision === 'decline'), JSON.stringify(award.effects.filter((e) => e.type !== 'note')))
  })

  it('an empty list lifts every hold', () => {
    const h = new Harness(createMarketParams({}), false)
    h.send({ type: 'holds-changed', now: NOW, holds: [hold([0, 1, 2, 3], NOW, NOW + H)] })
    assert.ok(!has(h.send({ type: 'job-seen', now: NOW, job: makeJob({ n: 9, gpus: 1, startDelaySec: 0 }) }), 'send-bid'))
    h.send({ type: 'holds-changed', now: NOW, holds: [] })
    assert.ok(has(h.send({ type: 'job-seen', now: NOW, job: makeJob({ n: 10, gpus: 1, startDelaySec: 0 }) }), 'send-bid'))
  })
})
