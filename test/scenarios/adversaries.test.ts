/**
 * The simulator's adversaries (issue 10) on the scenario harness: an undercutter that asks almost
 * nothing on every job and vanishes, one that accepts and stalls, and a bid spammer (own bids at the
 * cap beyond the store's size, replays, forgeries). Each test checks the adversary acted (so it fails
 * with the behaviour off) and what the honest market does about it.
 */
import assert from 'node:assert/strict'
import { MAX_BIDS_PER_ROUND } from '../../protocol/market/bid-store.js'
import { credits } from '../../simulations/harness/index.js'
import { MIN, assertSettledBooks, awardsOf, ending, market, peer, reports } from './setup.js'

describe('scenario: adversaries (issue 10)', () => {
  it('an undercutter that vanishes wins the first round; the job re-auctions to the cheapest honest provider and settles', () => {
    const h = market({ seed: 11 })
    h.provider('under', { region: 'eu-west', gpus: { h100: 1 }, floor: credits(2), behaviour: { undercut: { price: 1 }, noShow: true } })
    const job = h.requesters.get('buyer')!.submit({ gpus: 1, maxPrice: credits(4), lifetimeMs: 60 * MIN }, { durationMs: 5 * MIN })
    h.runUntilQuiet()

    const awards = awardsOf(h, job)
    assert.equal(awards[0]?.provider, peer('under'), 'the 1-micro bid wins the first round')
    assert.equal(awards.at(-1)?.provider, peer('cheap'))
    assert.equal(awards.length, 2)
    assert.equal(ending(h, job).status, 'settled', ending(h, job).reason)
    assert.deepEqual(reports(h, job), [[peer('under'), 'no-show']])
    assert.equal(h.recorder.failures.find((f) => f.subject === peer('under'))?.counted, false, 'a newcomer\'s no-show does not use up an attempt')
    assertSettledBooks(h)
  })

  it('an undercutter that accepts and stalls costs the job a lease and a counted failure, then the job settles on an honest provider', () => {
    const h = market({ seed: 12, params: { leaseMs: 60_000 } })
    h.provider('staller', { region: 'eu-west', gpus: { h100: 1 }, floor: credits(2), behaviour: { undercut: { price: 1 }, stall: true } })
    const buyer = h.requesters.get('buyer')!
    const job = buyer.submit({ gpus: 1, maxPrice: credits(4), lifetimeMs: 60 * MIN }, { durationMs: 5 * MIN })
    h.runUntilQuiet()

    const awards = awardsOf(h, job)
    assert.equal(awards[0]?.provider, peer('staller'))
    assert.equal(awards.at(-1)?.provider, peer('cheap'))
    assert.equal(ending(h, job).status, 'settled', ending(h, job).reason)
    assert.deepEqual(reports(h, job), [[peer('staller'), 'no-heartbeat']])
    const failure = h.recorder.failures.find((f) => f.subject === peer('staller'))
    assert.equal(failure?.counted, true, 'an accepted award that never starts counts against the job')
    assert.ok(failure !== undefined && failure.at - awards[0]!.at >= 60_000, 'found out only when the lease ran out')
    assertSettledBooks(h)
  })

  it('a spammer\'s flood (more bids than a round holds, replays, forgeries) does not push out the honest winner', () => {
    const h = market({ seed: 13 })
    const own = MAX_BIDS_PER_ROUND + 44
    h.provider('spammer', { region: 'eu-west', gpus: { h100: 1 }, floor: credits(3.5), behaviour: { spam: { own, replays: 50, forged: 100, firstHop: 6 } } })
    const buyer = h.requesters.get('buyer')!
    const job = buyer.submit({ gpus: 2, maxPrice: credits(4), lifetimeMs: 60 * MIN }, { durationMs: 5 * MIN })
    const small = buyer.submit({ gpus: 1, maxPrice: credits(4), lifetimeMs: 60 * MIN }, { durationMs: 5 * MIN })
    h.runUntilQuiet()

    // the flood went out: own bids on the bus, replays and forgeries dropped at the first hop
    assert.ok(h.recorder.count('bid').count >= 2 * own, `bids sent: ${h.recorder.count('bid').count}`)
    assert.deepEqual(h.recorder.count('bid-replay'), { count: 100, bytes: h.recorder.count('bid-replay').bytes })
    assert.equal(h.recorder.count('bid-forged').count, 200)
    assert.equal(h.recorder.count('bid-forged', 'delivered').count, 200 * 6)
    // the 2-GPU job nobody honest can take: the spammer's claim wins it, its agent refuses, the job fails without running
    assert.equal(awardsOf(h, job)[0]?.provider, peer('spammer'))
    assert.notEqual(ending(h, job).status, 'settled')
    // the 1-GPU job: the spammer's cap-priced flood holds one place in the store, the cheapest honest bid wins
    const view = buyer.agent.view(small)!
    assert.ok(view.bids.filter((b) => b.provider === peer('spammer')).length <= 1, 'one bid per peer per round')
    assert.equal(awardsOf(h, small)[0]?.provider, peer('cheap'))
    assert.equal(ending(h, small).status, 'settled', ending(h, small).reason)
    assert.ok(view.bids.every((b) => !b.provider.startsWith('peer:forged-')), 'no forged bid reached the agent')
    assertSettledBooks(h)
  })
})
