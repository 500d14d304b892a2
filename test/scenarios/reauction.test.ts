/**
 * Re-auctions: after a no-show (the winner is gone before it answers the award), after a decline
 * (the winner's owner took the GPUs back between bid and award), after outputs that do not match
 * the receipt; and the end of a job that runs out of attempts.
 */
import assert from 'node:assert/strict'
import { credits } from '../../simulations/harness/index.js'
import { MIN, assertSettledBooks, awardsOf, ending, market, offerEndings, peer, reports } from './setup.js'

describe('scenario: re-auction', () => {
  it('re-auctions after a no-show: the winner crashed after bidding; the next provider runs the job', () => {
    const h = market()
    const job = h.requesters.get('buyer')!.submit({ gpus: 1, maxPrice: credits(4) }, { durationMs: 5 * MIN })
    h.advance(1_000) // bids are out, the window still open
    h.providers.get('cheap')!.crash()
    h.runUntilQuiet()
    const awards = awardsOf(h, job)
    assert.equal(awards[0]?.provider, peer('cheap'))
    assert.equal(awards[1]?.provider, peer('mid'))
    assert.equal(ending(h, job).status, 'settled')
    assert.deepEqual(reports(h, job), [[peer('cheap'), 'no-show']])
    assertSettledBooks(h)
  })

  it('re-auctions after a decline: the owner withdrew the GPUs between bid and award', () => {
    const h = market()
    const job = h.requesters.get('buyer')!.submit({ gpus: 1, maxPrice: credits(4) }, { durationMs: 5 * MIN })
    h.advance(1_000)
    h.providers.get('cheap')!.setAd({ region: 'eu-west', gpus: { h100: 1 }, floor: credits(2), windows: [] })
    h.runUntilQuiet()
    assert.deepEqual(awardsOf(h, job).map((a) => a.provider), [peer('cheap'), peer('mid')])
    assert.equal(ending(h, job).status, 'settled')
    assert.ok(offerEndings(h, job).includes('cheap: declined'))
    assert.deepEqual(reports(h, job), [[peer('cheap'), 'declined']])
    assertSettledBooks(h)
  })

  it('re-auctions after outputs that do not match the receipt, and pays the cheat nothing for a run shorter than an interval', () => {
    const h = market()
    h.provider('cheat', { region: 'eu-west', gpus: { h100: 1 }, floor: credits(1), behaviour: { tamperOutputs: true } })
    const job = h.requesters.get('buyer')!.submit({ gpus: 1, maxPrice: credits(4) }, { durationMs: 3 * MIN })
    h.runUntilQuiet()
    assert.deepEqual(awardsOf(h, job).map((a) => a.provider), [peer('cheat'), peer('cheap')])
    assert.deepEqual(reports(h, job), [[peer('cheat'), 'output-mismatch']])
    assert.equal(ending(h, job).status, 'settled')
    const cheated = awardsOf(h, job)[0]!.award
    assert.deepEqual([h.recorder.ledgerOf(peer('buyer'), cheated)?.state, h.recorder.ledgerOf(peer('buyer'), cheated)?.cumulative], ['failed', 0])
    assertSettledBooks(h)
  })

  it('fails a job whose every run crashes (exit −1) once its attempts are used up', () => {
    const h = market()
    const job = h.requesters.get('buyer')!.submit({ gpus: 1, maxPrice: credits(4) }, { exitCode: -1 })
    h.runUntilQuiet()
    assert.equal(ending(h, job).status, 'failed')
    assert.deepEqual(awardsOf(h, job).map((a) => a.provider), [peer('cheap'), peer('mid'), peer('dear')])
    assert.deepEqual(reports(h, job).map(([, reason]) => reason), ['crashed', 'crashed', 'crashed'])
    assert.deepEqual(h.recorder.offers.filter((o) => o.job === job && o.awarded).map((o) => `${o.node}: ${o.status}`), ['cheap', 'mid', 'dear'].map((n) => `${peer(n)}: failed`))
    assertSettledBooks(h)
  })
})
