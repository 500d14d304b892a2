/**
 * Sybil identities (issue 11) on hand-checkable fleets: a provider that delivers its first award and
 * then vanishes (`noShowAfter`), and a ring of identities vouching for each other with gossiped payments
 * that reach the requester's reputation view the daemon's way (requester-node.ts `evidence`) — worth
 * nothing from strangers, and something once the requester trusts one of them from its own receipt.
 */
import assert from 'node:assert/strict'
import { Harness, credits, scheduleSybilRing } from '../../simulations/harness/index.js'
import { MIN, awardsOf, ending, peer } from './setup.js'

describe('scenario: Sybil identities (issue 11)', () => {
  it('a provider with noShowAfter 1 settles its first award and no-shows on the next; that job re-auctions and settles elsewhere', () => {
    const h = new Harness({ seed: 31 })
    h.provider('sybil', { region: 'eu-west', gpus: { h100: 1 }, floor: credits(1), behaviour: { noShowAfter: 1 } })
    h.provider('honest', { region: 'eu-west', gpus: { h100: 1 }, floor: credits(3) })
    const buyer = h.requester('buyer', { region: 'eu-west' })
    const first = buyer.submit({ gpus: 1, maxPrice: credits(4), lifetimeMs: 60 * MIN }, { durationMs: 5 * MIN })
    let second = ''
    h.at(h.scheduler.now() + 20 * MIN, () => { second = buyer.submit({ gpus: 1, maxPrice: credits(4), lifetimeMs: 60 * MIN }, { durationMs: 5 * MIN }) })
    h.runUntilQuiet()
    assert.deepEqual(awardsOf(h, first).map((a) => a.provider), [peer('sybil')])
    assert.equal(ending(h, first).status, 'settled')
    assert.deepEqual(awardsOf(h, second).map((a) => a.provider), [peer('sybil'), peer('honest')], 'it won on its receipt, then vanished')
    assert.equal(ending(h, second).status, 'settled')
    assert.deepEqual(h.recorder.failures.filter((f) => f.job === second).map((f) => [f.subject, f.reason]), [[peer('sybil'), 'no-show']])
  })

  it('a ring of strangers vouching for each other reaches the view but counts for nothing; the prior stays', () => {
    const h = new Harness({ seed: 32 })
    for (const n of ['s1', 's2', 's3']) h.provider(n, { region: 'eu-west', gpus: { h100: 1 }, floor: credits(1) })
    const buyer = h.requester('buyer', { region: 'eu-west', evidence: true })
    const deaf = h.requester('deaf', { region: 'eu-west' })
    const now = h.scheduler.now()
    const sent = scheduleSybilRing(h.world, { members: ['s1', 's2', 's3'].map(peer), periodMs: 10 * MIN, fanout: 5, fromMs: now, untilMs: now + 20 * MIN })
    assert.equal(sent, 3 * 3 * 2, 'fanout capped at the 2 others, 3 rounds')
    h.runUntilQuiet()
    assert.equal(h.recorder.count('payment').count, 18)
    const rep = buyer.agent.reputation
    for (const s of ['s1', 's2', 's3']) {
      const x = rep.explain(peer(s))
      assert.equal(x.known, true, 'the evidence reached the view')
      assert.deepEqual([x.others.reporters, x.others.trusted], [2, 0])
      assert.equal(x.score, rep.params.priorMean)
    }
    assert.equal(deaf.agent.reputation.explain(peer('s1')).known, false, 'without `evidence` the view takes none')
  })

  it('once the requester has its own receipt from one Sybil, that Sybil\'s vouches lift the others above the prior (damped, capped)', () => {
    const h = new Harness({ seed: 33 })
    h.provider('s1', { region: 'eu-west', gpus: { h100: 1 }, floor: credits(1) })
    h.provider('s2', { region: 'eu-west', gpus: { h100: 1 }, floor: credits(3) })
    const buyer = h.requester('buyer', { region: 'eu-west', evidence: true })
    const job = buyer.submit({ gpus: 1, maxPrice: credits(4), lifetimeMs: 60 * MIN }, { durationMs: 5 * MIN })
    const now = h.scheduler.now()
    scheduleSybilRing(h.world, { members: [peer('s1'), peer('s2')], periodMs: 10 * MIN, fanout: 1, fromMs: now + 20 * MIN, untilMs: now + 40 * MIN })
    h.runUntilQuiet()
    assert.equal(ending(h, job).status, 'settled')
    assert.deepEqual(awardsOf(h, job).map((a) => a.provider), [peer('s1')])
    const rep = buyer.agent.reputation
    const s2 = rep.explain(peer('s2'))
    assert.equal(s2.others.trusted, 1, 's1 is trusted from the buyer\'s own receipt')
    assert.ok(s2.score > rep.params.priorMean, `s2 ${s2.score} above the prior ${rep.params.priorMean}`)
    assert.ok(rep.trustIn(peer('s1')) <= rep.params.reporterWeightCap)
    assert.ok(s2.score < rep.explain(peer('s1')).score, 'the vouched-for one stays below the one the buyer saw deliver')
  })
})
