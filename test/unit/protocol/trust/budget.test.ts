import assert from 'node:assert/strict'
import {
  BudgetRefusal, MAX_OPEN_OFFERS, RequesterBudget, STRANGER_JOB_RATE, TRUSTED_JOB_RATE, offerAdmitted, rateForTrust, takeToken, type Bucket, type JobRate
} from '../../../../protocol/trust/budget.js'
import { Harness, makeJob } from '../../../helpers/provider-agent-harness.js'

const RATE: JobRate = { burst: 3, refillMs: 1_000 }
const T0 = 1_700_000_000_000

/** Take `n` tokens at `now`; how many were granted, and the bucket after. */
function takeMany (bucket: Bucket | undefined, n: number, now: number, rate = RATE): { granted: number, bucket: Bucket | undefined } {
  let granted = 0
  for (let i = 0; i < n; i++) {
    const r = takeToken(bucket, rate, now)
    bucket = r.bucket
    if (r.ok) granted++
  }
  return { granted, bucket }
}

describe('token bucket (protocol/trust/budget.ts)', () => {
  it('a new requester has exactly its burst: the burst-th request passes, the next is refused', () => {
    const { granted, bucket } = takeMany(undefined, RATE.burst, T0)
    assert.equal(granted, RATE.burst)
    assert.deepEqual(bucket, { tokens: 0, since: T0 })
    assert.equal(takeToken(bucket, RATE, T0).ok, false)
  })

  it('one token comes back exactly at refillMs, not a millisecond before', () => {
    const empty = takeMany(undefined, RATE.burst, T0).bucket
    assert.equal(takeToken(empty, RATE, T0 + RATE.refillMs - 1).ok, false)
    const r = takeToken(empty, RATE, T0 + RATE.refillMs)
    assert.equal(r.ok, true)
    assert.deepEqual(r.bucket, { tokens: 0, since: T0 + RATE.refillMs })
  })

  it('the remainder carries over: a refused take at 1.5 intervals keeps the half interval for the next token', () => {
    const empty = takeMany(undefined, RATE.burst, T0).bucket
    // 1.5 intervals: one token (taken), half an interval kept
    const first = takeToken(empty, RATE, T0 + 1_500)
    assert.equal(first.ok, true)
    assert.deepEqual(first.bucket, { tokens: 0, since: T0 + 1_000 })
    // at 1.9: nothing yet; at exactly 2.0 the second token (counted from 1.0, not from 1.5)
    const refused = takeToken(first.bucket, RATE, T0 + 1_900)
    assert.equal(refused.ok, false)
    assert.equal(takeToken(refused.bucket, RATE, T0 + 2_000).ok, true)
  })

  it('a bucket refills to its burst and no further, however long it waited', () => {
    const empty = takeMany(undefined, RATE.burst, T0).bucket
    const { granted } = takeMany(empty, RATE.burst + 2, T0 + 100 * RATE.refillMs)
    assert.equal(granted, RATE.burst)
  })

  it('filling up exactly to the burst: burst−1 tokens plus one interval is full, and the clock restarts', () => {
    const one = takeToken(undefined, RATE, T0).bucket
    const r = takeToken(one, RATE, T0 + RATE.refillMs)
    assert.deepEqual(r.bucket, { tokens: RATE.burst - 1, since: T0 + RATE.refillMs })
  })

  it('a clock that goes back earns nothing', () => {
    const empty = takeMany(undefined, RATE.burst, T0).bucket
    const back = takeToken(empty, RATE, T0 - 10 * RATE.refillMs)
    assert.equal(back.ok, false)
    // and loses nothing: no debt, the refill clock where it was
    assert.deepEqual(back.bucket, { tokens: 0, since: T0 })
  })

  it('refuses a rate that is not whole and positive', () => {
    assert.throws(() => takeToken(undefined, { burst: 0, refillMs: 1_000 }, T0), RangeError)
    assert.throws(() => takeToken(undefined, { burst: 1, refillMs: 0 }, T0), RangeError)
    assert.throws(() => takeToken(undefined, { burst: 1.5, refillMs: 10 }, T0), RangeError)
  })
})

describe('requester budget', () => {
  it('refuses a stranger\'s job request past its burst with RATE_LIMITED; another requester is not affected', () => {
    const budget = new RequesterBudget()
    for (let i = 0; i < STRANGER_JOB_RATE.burst; i++) assert.equal(budget.admit('spammer', T0), undefined, `request ${i}`)
    assert.equal(budget.admit('spammer', T0), BudgetRefusal.RATE_LIMITED)
    assert.equal(budget.admit('honest', T0), undefined)
    // 1,275 requests in 10 s (issue 11): the burst and one a second pass
    const b = new RequesterBudget()
    let passed = 0
    for (let i = 0; i < 1_275; i++) if (b.admit('spammer', T0 + Math.floor(i * 10_000 / 1_275)) === undefined) passed++
    assert.equal(passed, STRANGER_JOB_RATE.burst + 9)
  })

  it('the trust hook decides each requester\'s rate', () => {
    const budget = new RequesterBudget({ rateFor: (r) => r === 'trusted' ? TRUSTED_JOB_RATE : STRANGER_JOB_RATE })
    let trusted = 0
    for (let i = 0; i < 400; i++) if (budget.admit('trusted', T0) === undefined) trusted++
    assert.equal(trusted, TRUSTED_JOB_RATE.burst)
  })

  it('rateForTrust: a stranger\'s rate at 0 (and below), the trusted rate at 1 (and above), linear between', () => {
    assert.deepEqual(rateForTrust(0), STRANGER_JOB_RATE)
    assert.deepEqual(rateForTrust(-1), STRANGER_JOB_RATE)
    assert.deepEqual(rateForTrust(Number.NaN), STRANGER_JOB_RATE)
    assert.deepEqual(rateForTrust(1), TRUSTED_JOB_RATE)
    assert.deepEqual(rateForTrust(2), TRUSTED_JOB_RATE)
    // half way: burst 176, 5.5 tokens a second (one every 182 ms)
    assert.deepEqual(rateForTrust(0.5), { burst: 176, refillMs: 182 })
  })

  it('tracks a bounded number of requesters, forgetting the least recently seen', () => {
    const budget = new RequesterBudget({ maxTracked: 2, rateFor: () => ({ burst: 1, refillMs: 60_000 }) })
    assert.equal(budget.admit('a', T0), undefined)
    assert.equal(budget.admit('b', T0), undefined)
    assert.equal(budget.admit('a', T0), BudgetRefusal.RATE_LIMITED)
    assert.equal(budget.admit('c', T0), undefined)
    assert.equal(budget.tracked, 2)
    // b was the least recently seen: forgotten, it starts again with a full bucket
    assert.equal(budget.admit('b', T0), undefined)
  })
})

describe('open-offer bound', () => {
  it('admits below the cap and refuses exactly at it', () => {
    assert.equal(offerAdmitted(0), true)
    assert.equal(offerAdmitted(MAX_OPEN_OFFERS - 1), true)
    assert.equal(offerAdmitted(MAX_OPEN_OFFERS), false)
    assert.equal(offerAdmitted(2, 2), false)
    assert.equal(offerAdmitted(1, 2), true)
  })

  it('the agent counts bids out and waiting, not awarded work', () => {
    const h = new Harness(undefined, false)
    assert.equal(h.agent.openOffers, 0)
    const first = makeJob({ n: 1, gpus: 1 })
    const bid = h.bidOn(first)
    h.bidOn(makeJob({ n: 2, gpus: 1 }))
    assert.equal(h.agent.openOffers, 2)
    // the first one wins: it is work now, no longer an open offer
    h.award(first, bid)
    assert.equal(h.agent.openOffers, 1)
  })
})
