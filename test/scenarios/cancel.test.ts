/**
 * Cancels: before the award (nothing to settle), after the award but before the run (both ledgers
 * close the award as cancelled at 0), and during the run (both ledgers record the same final
 * payment for the time run, ending cancelled: issue 9, bug 7).
 */
import assert from 'node:assert/strict'
import { Harness, credits, fixedNetwork } from '../../simulations/harness/index.js'
import { MIN, assertSettledBooks, awardsOf, ending, lines, market, offerEndings, peer } from './setup.js'

describe('scenario: cancel', () => {
  it('before the award: the job is cancelled, no award is made, the bids lapse', () => {
    const h = market()
    const buyer = h.requesters.get('buyer')!
    const job = buyer.submit({ gpus: 1, maxPrice: credits(4) })
    h.advance(500)
    buyer.cancel(job)
    h.runUntilQuiet()
    assert.equal(ending(h, job).status, 'cancelled')
    assert.deepEqual(awardsOf(h, job), [])
    assert.deepEqual(h.recorder.ledgers, [])
    assert.ok(offerEndings(h, job).every((e) => e.endsWith(': lost')), offerEndings(h, job).join(', '))
    assertSettledBooks(h)
  })

  it('after the award, while the inputs are fetched: both sides close the award as cancelled, unpaid', () => {
    const h = new Harness({ seed: 2, network: () => fixedNetwork(10), bandwidthBytesPerSec: 100_000_000 })
    h.provider('p', { region: 'eu-west', gpus: { h100: 1 }, floor: credits(2) })
    const buyer = h.requester('buyer', { region: 'eu-west' })
    const job = buyer.submit({ gpus: 1, maxPrice: credits(4), bidWindowMs: 2_000 }, { durationMs: 10 * MIN, inputBytes: 500_000_000 })
    // the award goes out at the window's close (2 s); the inputs take 5 s to fetch
    h.advance(3_000)
    assert.equal(awardsOf(h, job).length, 1)
    buyer.cancel(job)
    h.runUntilQuiet()
    assert.equal(ending(h, job).status, 'cancelled')
    assert.deepEqual(offerEndings(h, job), ['p: cancelled'])
    const award = awardsOf(h, job)[0]!.award
    for (const node of ['buyer', 'p']) {
      const line = h.recorder.ledgerOf(peer(node), award)
      assert.deepEqual([line?.state, line?.cumulative], ['cancelled', 0], node)
    }
    assertSettledBooks(h)
  })

  it('during the run: the provider stops, and both ledgers hold the same final payment, ending cancelled', () => {
    const h = market()
    const buyer = h.requesters.get('buyer')!
    const job = buyer.submit({ gpus: 1, maxPrice: credits(4) }, { durationMs: 60 * MIN })
    h.advance(12 * MIN)
    buyer.cancel(job)
    h.runUntilQuiet()
    assert.equal(ending(h, job).status, 'cancelled')
    assert.deepEqual(offerEndings(h, job), ['cheap: cancelled', 'dear: lost', 'mid: lost'])
    const [mine] = lines(h, 'buyer', job)
    const [theirs] = lines(h, 'cheap', job)
    assert.equal(mine?.state, 'cancelled')
    assert.equal(theirs?.state, 'cancelled')
    assert.equal(mine?.cumulative, theirs?.cumulative)
    // about 12 minutes at 2 credits/h: more than the two whole intervals, at most the time run
    const paid = theirs?.cumulative ?? 0
    assert.ok(paid > Math.floor(credits(2) * 10 / 60) && paid <= Math.ceil(credits(2) * 12.1 / 60), `paid ${paid}`)
    assert.equal(h.recorder.count('receipt').count, 0)
    assertSettledBooks(h)
  })
})
