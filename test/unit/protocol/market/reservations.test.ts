/**
 * Reservations (protocol/market/reservations.ts): what an outstanding bid holds, and each way the hold
 * ends — the award seen for another bid, a bid seen to beat it, its `until`, a release — and the
 * BUSY jobs decided again when a hold ends.
 */
import assert from 'node:assert/strict'
import {
  BusyJobs, MAX_BUSY_JOBS, MAX_REQUESTER_RECORDS, Reservations, allocationFor, beats, decideBid, defaultScoringParams,
  type AgentJob, type Reservation
} from '../../../../protocol/index.js'
import { NOW, REQUESTER, makeAd, makeJob, otherBid } from '../../../helpers/provider-agent-harness.js'

const CLOSES = NOW + 5_000

function reservation (job: AgentJob, over: Partial<Reservation> = {}): Reservation {
  const decision = decideBid(job.payload, { ad: makeAd(), allocations: [] }, NOW)
  assert.equal(decision.kind, 'bid')
  const id = job.cid.toString()
  return { job: id, request: job, round: 1, attempt: 1, requester: REQUESTER, hold: allocationFor(id, job.payload, decision), closesAt: CLOSES, until: CLOSES + 10_000, ...over }
}

const seen = (job: AgentJob, bid: string, attempt = 1, signer = REQUESTER): { job: string, bid: string, attempt: number, signer: string } =>
  ({ job: job.cid.toString(), bid, attempt, signer })

describe('Reservations', () => {
  it('holds a bid\'s GPUs over its start and max runtime, at its tier and ask, until `until` (released exactly then)', () => {
    const job = makeJob({ n: 1, runtimeSec: 600 })
    const holds = new Reservations()
    holds.hold('a', reservation(job))
    const [held] = holds.active(NOW)
    assert.deepEqual(held, { job: job.cid.toString(), gpus: ['GPU-0', 'GPU-1'], tier: 'silver', price: 2_000_000, startedAt: NOW, endsAt: NOW + 600_000 })
    assert.equal(holds.active(CLOSES + 10_000 - 1).length, 1)
    assert.equal(holds.active(CLOSES + 10_000).length, 0)
    assert.equal(holds.size, 0, 'a hold that ran out is gone')
  })

  it('a new decision sees held GPUs as taken: the second of two concurrent 2-GPU jobs on 4 GPUs gets the other two, a third is BUSY', () => {
    const holds = new Reservations()
    const [a, b, c] = [2, 3, 4].map((n) => makeJob({ n, startDelaySec: 60 })) as [AgentJob, AgentJob, AgentJob]
    holds.hold('a', reservation(a))
    const second = decideBid(b.payload, { ad: makeAd(), allocations: holds.active(NOW) }, NOW)
    assert.ok(second.kind === 'bid')
    assert.deepEqual(second.gpus, ['GPU-2', 'GPU-3'])
    holds.hold('b', { ...reservation(b), hold: allocationFor(b.cid.toString(), b.payload, second) })
    const third = decideBid(c.payload, { ad: makeAd(), allocations: holds.active(NOW) }, NOW)
    assert.equal(third.kind === 'decline' && third.reason, 'BUSY')
  })

  it('keeps no hold for a job that takes no GPU', () => {
    const holds = new Reservations()
    holds.hold('cpu', reservation(makeJob({ n: 5, gpus: 0 })))
    assert.equal(holds.size, 0)
  })

  it('an award seen for another bid of the same job and attempt releases; one for this bid, another job, a lower attempt or another signer does not', () => {
    const job = makeJob({ n: 6 })
    const other = makeJob({ n: 7 })
    const holds = new Reservations()
    holds.hold('a', reservation(job, { attempt: 2 }))
    holds.sealed('a', 'my-bid')
    assert.deepEqual(holds.awardSeen(seen(job, 'my-bid', 2)), [], 'this node won')
    assert.deepEqual(holds.awardSeen(seen(other, 'their-bid', 2)), [], 'another job')
    assert.deepEqual(holds.awardSeen(seen(job, 'their-bid', 1)), [], 'an earlier attempt')
    assert.deepEqual(holds.awardSeen(seen(job, 'their-bid', 2, 'peer-mallory')), [], 'not signed by the job\'s requester')
    assert.deepEqual(holds.awardSeen(seen(job, 'their-bid', 2)), ['a'])
    assert.equal(holds.size, 0)
  })

  it('an award seen before this node\'s bid is sealed releases it too (the bid can only lose)', () => {
    const job = makeJob({ n: 8 })
    const holds = new Reservations()
    holds.hold('a', reservation(job))
    assert.deepEqual(holds.awardSeen(seen(job, 'their-bid', 3)), ['a'])
  })

  it('a seen bid releases when it scores below this one: a stranger at the prior against this provider at its record with the requester', () => {
    const job = makeJob({ n: 9 })
    const mine = 2_000_000
    const at = (price: number, settled = 0): string[] => {
      const holds = new Reservations()
      for (let i = 0; i < settled; i++) holds.outcome(REQUESTER, true)
      holds.hold('a', reservation(job))
      return holds.bidSeen(otherBid(job, 1, price), defaultScoringParams)
    }
    // no record: both at the prior, so the cheaper ask wins and a tie (decided by CID) does not release
    assert.deepEqual(at(mine - 1), ['a'])
    assert.deepEqual(at(mine), [])
    // three settled awards from this requester: 4/7 reliability, silver 1.214… × 2.0 against 1.375 × theirs
    assert.deepEqual(at(1_766_233, 3), ['a'])
    assert.deepEqual(at(1_766_234, 3), [])
    assert.equal(beats(1_766_233, mine, 4 / 7, job, defaultScoringParams), true)
    assert.equal(beats(1_766_234, mine, 4 / 7, job, defaultScoringParams), false)
  })

  it('the requester\'s record: settled awards raise this provider\'s reliability there, failures lower it, other requesters keep the prior', () => {
    const holds = new Reservations()
    const prior = holds.reliabilityAt(REQUESTER, defaultScoringParams)
    assert.equal(prior, defaultScoringParams.unknownReliability)
    holds.outcome(REQUESTER, true)
    assert.equal(holds.reliabilityAt(REQUESTER, defaultScoringParams), 2 / 5)
    holds.outcome(REQUESTER, false)
    assert.equal(holds.reliabilityAt(REQUESTER, defaultScoringParams), 2 / 6)
    assert.equal(holds.reliabilityAt('peer-other', defaultScoringParams), prior)
  })

  it(`keeps at most ${MAX_REQUESTER_RECORDS} requesters' records: the least recently updated gives way`, () => {
    const holds = new Reservations()
    for (let i = 0; i < MAX_REQUESTER_RECORDS; i++) holds.outcome(`peer-${i}`, true)
    holds.outcome('peer-0', true)
    holds.outcome('peer-new', true)
    assert.equal(holds.reliabilityAt('peer-1', defaultScoringParams), defaultScoringParams.unknownReliability)
    assert.equal(holds.reliabilityAt('peer-0', defaultScoringParams), 3 / 6)
  })

  it('expire releases exactly the holds that are due, and nextUntil is the earliest left', () => {
    const holds = new Reservations()
    holds.hold('a', reservation(makeJob({ n: 13 }), { until: NOW + 5 }))
    holds.hold('b', reservation(makeJob({ n: 14 }), { until: NOW + 9 }))
    assert.equal(holds.nextUntil(), NOW + 5)
    assert.deepEqual(holds.expire(NOW + 4), [])
    assert.deepEqual(holds.expire(NOW + 5), ['a'])
    assert.equal(holds.nextUntil(), NOW + 9)
    assert.deepEqual(holds.expire(NOW + 9), ['b'])
    assert.equal(holds.nextUntil(), undefined)
  })

  it('a seen bid that fails screening, comes from an excluded provider, is for another job or an earlier round releases nothing', () => {
    const job = makeJob({ n: 10 })
    const cheap = 100_000
    const check = (over: Partial<Reservation>, bid = otherBid(job, 1, cheap)): string[] => {
      const holds = new Reservations()
      holds.hold('a', reservation(job, over))
      return holds.bidSeen(bid, defaultScoringParams)
    }
    assert.deepEqual(check({}), ['a'])
    assert.deepEqual(check({}, otherBid(job, 1, cheap, { expiresAt: CLOSES })), [], 'expired at the close')
    assert.deepEqual(check({}, otherBid(job, 1, cheap, { model: 'nvidia-t4' , vramMiB: 15_360 })), [], 'hardware the job does not take')
    assert.deepEqual(check({ excluded: ['peer-1'] }), [], 'an excluded provider')
    assert.deepEqual(check({ opensAt: NOW + 1 }), [], 'a bid issued before the round opened')
    assert.deepEqual(check({ opensAt: NOW }), ['a'], 'one issued exactly when it opened counts')
    assert.deepEqual(check({}, otherBid(makeJob({ n: 11 }), 1, cheap)), [], 'another job')
  })

  it('release says whether there was a hold', () => {
    const holds = new Reservations()
    holds.hold('a', reservation(makeJob({ n: 12 })))
    assert.equal(holds.release('a'), true)
    assert.equal(holds.release('a'), false)
  })
})

describe('BusyJobs', () => {
  it('hands back the waiting jobs whose window is still open (closing exactly now: dropped), oldest first, once', () => {
    const busy = new BusyJobs<string>()
    busy.add('a', 'A', NOW + 2)
    busy.add('b', 'B', NOW + 1)
    busy.add('c', 'C', NOW + 3)
    assert.deepEqual(busy.take(NOW + 1), ['A', 'C'])
    assert.deepEqual(busy.take(NOW + 1), [])
  })

  it(`keeps at most ${MAX_BUSY_JOBS} jobs: the oldest give way; adding a key again makes it the newest`, () => {
    const busy = new BusyJobs<number>()
    for (let i = 0; i < MAX_BUSY_JOBS; i++) busy.add(`k${i}`, i, NOW + 1)
    busy.add('k0', 0, NOW + 1)
    assert.equal(busy.size, MAX_BUSY_JOBS)
    busy.add('extra', -1, NOW + 1)
    assert.equal(busy.size, MAX_BUSY_JOBS)
    const left = busy.take(NOW)
    assert.equal(left.includes(1), false, 'k1, now the oldest, gave way')
    assert.equal(left[left.length - 2], 0)
    assert.equal(left[left.length - 1], -1)
  })
})
