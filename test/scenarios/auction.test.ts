/**
 * Whole auctions through both agents on the harness: bids (with damping), the award, the run, the
 * receipt, interval payments, the final payment, settlement on both sides; and determinism.
 */
import assert from 'node:assert/strict'
import { chargeFor } from '../../protocol/market/lifecycle-shared.js'
import { Harness, credits, regionNetwork } from '../../simulations/harness/index.js'
import { MIN, assertSettledBooks, awardsOf, ending, lines, market, offerEndings, peer } from './setup.js'

describe('scenario: an auction from bid to settlement', () => {
  it('awards the cheapest of three bids, runs 20 minutes, pays every interval and settles on both sides', () => {
    const h = market()
    const buyer = h.requesters.get('buyer')!
    const job = buyer.submit({ gpus: 1, maxPrice: credits(4), maxRuntimeSec: 3600 }, { durationMs: 20 * MIN, outputBytes: 50_000_000 })
    h.runUntilQuiet()

    assert.equal(h.recorder.count('bid').count, 3, 'every provider bid: none saw five better bids')
    const awards = awardsOf(h, job)
    assert.equal(awards.length, 1)
    assert.equal(awards[0]?.provider, peer('cheap'))
    assert.equal(awards[0]?.price, credits(2))
    assert.equal(ending(h, job).status, 'settled')
    assert.deepEqual(offerEndings(h, job), ['cheap: settled', 'dear: lost', 'mid: lost'])

    const owed = chargeFor(credits(2), 1, 20 * MIN)
    const [mine] = lines(h, 'buyer', job)
    const [theirs] = lines(h, 'cheap', job)
    assert.equal(mine?.cumulative, owed)
    assert.equal(theirs?.cumulative, owed)
    assert.equal(mine?.state, 'settled')
    assert.equal(theirs?.state, 'settled')
    // three interval payments (at 5, 10 and 15 minutes) and the final one, at least
    assert.ok((theirs?.payments ?? 0) >= 4, `${theirs?.payments} payments accepted`)
    // one on the exec stream, one gossiped on the evidence topic (as the daemon does)
    assert.equal(h.recorder.count('receipt').count, 2)
    // the gossiped copy reaches every other node, as every daemon subscribes to the evidence topic
    // (the two providers that lost and the buyer), and the exec stream's copy the buyer: 4 deliveries
    assert.equal(h.recorder.snapshot().delivered.receipt?.count, 4)
    assert.equal(h.recorder.count('output-blob').bytes, 50_000_000)
    assert.deepEqual(h.recorder.failures, [])
    assertSettledBooks(h)
  })

  it('bills a job that asks for no GPU as one unit, on both sides', () => {
    const h = market()
    const job = h.requesters.get('buyer')!.submit({ gpus: 0, maxPrice: credits(4) }, { durationMs: 7 * MIN })
    h.runUntilQuiet()
    assert.equal(ending(h, job).status, 'settled')
    const owed = chargeFor(credits(2), 1, 7 * MIN)
    assert.ok(owed > 0)
    assert.deepEqual(lines(h, 'cheap', job).map((l) => l.cumulative), [owed])
    assert.deepEqual(lines(h, 'buyer', job).map((l) => l.cumulative), [owed])
    assertSettledBooks(h)
  })

  it('keeps bids bounded with damping: a dozen able providers, only the first few cheapest bid', () => {
    const run = (damping: boolean): { bids: number, winner?: string } => {
      const h = new Harness({ seed: 3 })
      for (let i = 0; i < 12; i++) h.provider(`p${i}`, { region: 'eu-west', gpus: { h100: 1 }, floor: credits(2 + 0.2 * i), damping })
      const job = h.requester('buyer', { region: 'eu-west' }).submit({ gpus: 1, maxPrice: credits(5), bidWindowMs: 2_000 }, { durationMs: 2 * MIN })
      h.runUntilQuiet()
      assert.equal(ending(h, job).status, 'settled')
      assertSettledBooks(h)
      return { bids: h.recorder.count('bid').count, winner: awardsOf(h, job)[0]?.provider }
    }
    const damped = run(true)
    const undamped = run(false)
    assert.equal(undamped.bids, 12)
    assert.ok(damped.bids >= 5 && damped.bids < 12, `${damped.bids} bids with damping`)
    assert.equal(damped.winner, peer('p0'))
    assert.equal(undamped.winner, peer('p0'))
  })

  it('explains and expires a job nobody can run (no bid in either round)', () => {
    const h = market()
    const job = h.requesters.get('buyer')!.submit({ gpus: 4, maxPrice: credits(4) })
    h.runUntilQuiet()
    assert.equal(h.recorder.count('bid').count, 0)
    assert.equal(h.recorder.count('auction-round').count, 1, 'the round is re-opened once')
    assert.equal(ending(h, job).status, 'expired')
    assert.deepEqual(h.recorder.awards, [])
    assertSettledBooks(h)
  })
})

describe('scenario: determinism', () => {
  const scenario = (seed: number): ReturnType<Harness['recorder']['snapshot']> => {
    const h = new Harness({ seed })
    for (let i = 0; i < 6; i++) h.provider(`p${i}`, { region: i % 2 === 0 ? 'eu-west' : 'eu-north', gpus: { h100: 1, a100: 1 }, floor: credits(2 + 0.1 * i) })
    const buyer = h.requester('buyer', { region: 'eu-west' })
    for (let k = 0; k < 4; k++) h.at(h.scheduler.now() + k * 30_000, () => { buyer.submit({ gpus: 1, maxPrice: credits(4), tier: k % 2 === 0 ? 'silver' : 'bronze' }, { durationMs: (3 + k) * MIN }) })
    h.runUntilQuiet()
    return h.recorder.snapshot()
  }

  it('gives the same record for the same seed, and other timings for another seed', () => {
    const a = scenario(11)
    assert.deepEqual(scenario(11), a)
    assert.equal(JSON.stringify(scenario(11)), JSON.stringify(a))
    const b = scenario(12)
    assert.notDeepEqual(b.trace, a.trace)
    assert.deepEqual(b.jobs.map((j) => j.status), a.jobs.map((j) => j.status))
    assert.ok(a.trace.length > 100)
  })
})

describe('scenario: a lossy network', () => {
  it('still settles every job when a fifth of the gossip deliveries are lost, and the books agree', () => {
    const h = new Harness({ seed: 21, network: (p) => regionNetwork(p, {}, { loss: 0.2 }) })
    for (let i = 0; i < 8; i++) h.provider(`p${i}`, { region: 'eu-west', gpus: { h100: 1 }, floor: credits(2 + 0.1 * i) })
    const buyer = h.requester('buyer', { region: 'eu-west' })
    const jobs = [0, 1, 2, 3, 4].map((k) => buyer.submit({ gpus: 1, maxPrice: credits(4), label: `job ${k}` }, { durationMs: (2 + k) * MIN }))
    h.runUntilQuiet()
    assert.ok(h.recorder.snapshot().lost > 0)
    assert.deepEqual(jobs.map((j) => ending(h, j).status), ['settled', 'settled', 'settled', 'settled', 'settled'])
    assertSettledBooks(h)
  })
})

describe('scenario: a node that both sells and buys', () => {
  it('never bids on its own job, runs another node\'s, and keeps both sides of its ledger', () => {
    const h = new Harness({ seed: 8 })
    h.provider('both', { region: 'eu-west', gpus: { h100: 1 }, floor: credits(1) })
    const both = h.requester('both', { region: 'eu-west' })
    h.provider('other', { region: 'eu-west', gpus: { h100: 1 }, floor: credits(3) })
    const buyer = h.requester('buyer', { region: 'eu-west' })
    const mine = both.submit({ gpus: 1, maxPrice: credits(4) }, { durationMs: 3 * MIN })
    const theirs = buyer.submit({ gpus: 1, maxPrice: credits(4) }, { durationMs: 3 * MIN })
    h.runUntilQuiet()
    assert.deepEqual(awardsOf(h, mine).map((a) => a.provider), [peer('other')])
    assert.deepEqual(awardsOf(h, theirs).map((a) => a.provider), [peer('both')])
    assert.deepEqual([ending(h, mine).status, ending(h, theirs).status], ['settled', 'settled'])
    assert.deepEqual(h.recorder.ledgers.filter((l) => l.node === peer('both')).map((l) => l.role).sort(), ['provider', 'requester'])
    assertSettledBooks(h)
  })
})
