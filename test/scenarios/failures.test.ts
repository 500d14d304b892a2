/**
 * Runs that fail, and a requester that stops paying: a non-zero exit is the job's own outcome (the
 * provider is paid for the run, not blamed); an executor that cannot start (exit −1) fails the
 * attempt and the job runs elsewhere; a requester that withholds an interval payment has the work
 * stopped within one interval plus the grace and is reported for nonpayment.
 */
import assert from 'node:assert/strict'
import { chargeFor, paymentGraceMs } from '../../protocol/market/lifecycle-shared.js'
import { Harness, credits } from '../../simulations/harness/index.js'
import { MIN, assertSettledBooks, awardsOf, ending, lines, market, offerEndings, peer, reports } from './setup.js'

describe('scenario: failed runs', () => {
  it('a run that exits 3: one award, paid for the time run on both sides, nobody blamed, no re-auction', () => {
    const h = market()
    const job = h.requesters.get('buyer')!.submit({ gpus: 1, maxPrice: credits(4) }, { durationMs: 4 * MIN, exitCode: 3 })
    h.runUntilQuiet()
    assert.equal(awardsOf(h, job).length, 1)
    assert.equal(ending(h, job).status, 'settled')
    assert.deepEqual(reports(h, job), [])
    const owed = chargeFor(credits(2), 1, 4 * MIN)
    assert.deepEqual(lines(h, 'cheap', job).map((l) => [l.state, l.cumulative]), [['settled', owed]])
    assert.deepEqual(lines(h, 'buyer', job).map((l) => [l.state, l.cumulative]), [['settled', owed]])
    assertSettledBooks(h)
  })

  it('a run whose executor cannot start (exit −1) on one provider: the attempt fails, the job runs on the next', () => {
    const h = market()
    const job = h.requesters.get('buyer')!.submit({ gpus: 1, maxPrice: credits(4) }, { durationMs: 3 * MIN })
    h.setExecution(job, { exitCode: -1 }, 'cheap')
    h.runUntilQuiet()
    assert.deepEqual(awardsOf(h, job).map((a) => a.provider), [peer('cheap'), peer('mid')])
    assert.deepEqual(reports(h, job), [[peer('cheap'), 'crashed']])
    assert.equal(ending(h, job).status, 'settled')
    assert.ok(offerEndings(h, job).includes('cheap: failed'))
    assertSettledBooks(h)
  })
})

describe('scenario: a requester that stops paying', () => {
  it('has the work stopped within one interval plus the grace, and is reported for nonpayment', () => {
    const h = new Harness({ seed: 4 })
    h.provider('p', { region: 'eu-west', gpus: { h100: 1 }, floor: credits(2) })
    const buyer = h.requester('buyer', { region: 'eu-west', behaviour: { stopPayingAfter: 1 } })
    const job = buyer.submit({ gpus: 1, maxPrice: credits(4) }, { durationMs: 60 * MIN })
    h.runUntilQuiet()
    const interval = h.params.billingIntervalSec * 1000
    const ended = h.recorder.offers.find((o) => o.node === peer('p') && o.job === job)
    assert.equal(ended?.status, 'stopped-unpaid')
    const award = awardsOf(h, job)[0]!
    // one interval paid; the second withheld: the provider stops at the end of the second interval plus the grace
    assert.ok((ended?.at ?? 0) <= award.at + 2 * interval + paymentGraceMs(interval) + 10_000, `stopped ${(ended!.at - award.at) / 1000} s after the award`)
    const theirs = h.recorder.ledgerOf(peer('p'), award.award)
    assert.equal(theirs?.cumulative, chargeFor(credits(2), 1, interval))
    assert.equal(theirs?.state, 'stopped-unpaid')
    assert.deepEqual(reports(h, job, 'p'), [[peer('buyer'), 'nonpayment']])
    assert.deepEqual(h.ledgerMismatches(), [])
  })
})
