/**
 * Preemption: a gold job that cannot wait displaces a bronze one on the only provider that can run
 * it; the bronze job gets notice, is paid for the time it ran, is re-auctioned and runs elsewhere.
 */
import assert from 'node:assert/strict'
import { Harness, credits } from '../../simulations/harness/index.js'
import { MIN, assertSettledBooks, awardsOf, ending, lines, peer } from './setup.js'

describe('scenario: preemption', () => {
  it('preempts a bronze job for a gold one; the bronze job is re-auctioned, runs elsewhere and both settle', () => {
    const h = new Harness({ seed: 5, params: { preemptNoticeMs: 2_000 } })
    h.provider('h100', { region: 'eu-west', gpus: { h100: 1 }, floor: credits(2) })
    const buyer = h.requester('buyer', { region: 'eu-west' })
    const bronze = buyer.submit({ gpus: 1, tier: 'bronze', maxPrice: credits(4), maxRuntimeSec: 7_200 }, { durationMs: 60 * MIN })
    h.advance(5 * MIN)
    assert.equal(awardsOf(h, bronze)[0]?.provider, peer('h100'))
    // an A100 provider joins; the gold job wants an H100 now, which only the busy provider has
    h.provider('a100', { region: 'eu-west', gpus: { a100: 1 }, floor: credits(2.5) })
    const gold = h.requester('lab', { region: 'eu-west' }).submit({ gpus: 1, tier: 'gold', models: ['nvidia-h100-80gb-hbm3'], maxPrice: credits(6), maxStartDelaySec: 60 }, { durationMs: 10 * MIN })
    h.runUntilQuiet()

    assert.equal(ending(h, gold).status, 'settled')
    assert.equal(awardsOf(h, gold)[0]?.provider, peer('h100'))
    assert.equal(ending(h, bronze).status, 'settled')
    const bronzeAwards = awardsOf(h, bronze)
    assert.deepEqual(bronzeAwards.map((a) => a.provider), [peer('h100'), peer('a100')], 're-auctioned and run elsewhere')
    // the first award ended preempted on both sides, paid for about five minutes of work
    const first = bronzeAwards[0]!.award
    const mine = h.recorder.ledgerOf(peer('buyer'), first)
    const theirs = h.recorder.ledgerOf(peer('h100'), first)
    assert.equal(mine?.state, 'preempted')
    assert.equal(theirs?.state, 'preempted')
    assert.equal(mine?.cumulative, theirs?.cumulative)
    assert.ok((theirs?.cumulative ?? 0) >= Math.floor(credits(2) * 5 / 60), `paid ${theirs?.cumulative} for ~5 minutes`)
    // nobody is blamed for a preemption
    assert.deepEqual(h.recorder.failures.filter((f) => f.job === bronze), [])
    assert.deepEqual(lines(h, 'a100', bronze).map((l) => l.state), ['settled'])
    assertSettledBooks(h)
  })
})
