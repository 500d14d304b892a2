/**
 * Damping with many tied providers, through both agents on the harness: 300 providers of one model at
 * one floor, all able to run the job. Without the suppression timer they share one delay and all bid
 * before any sees another's bid; with it a few bid first and the rest, having seen enough equal bids,
 * stay silent. The job is still awarded to one of them and settles.
 */
import assert from 'node:assert/strict'
import { Harness, credits, regionNetwork } from '../../simulations/harness/index.js'
import { MIN, ending } from './setup.js'

function tiedMarket (spreadShare?: number): { h: Harness, job: string } {
  const h = new Harness({ seed: 5, trace: false, params: spreadShare === undefined ? {} : { bidSpreadShare: spreadShare }, network: (p) => regionNetwork(p) })
  for (let i = 0; i < 300; i++) h.provider(`p${i}`, { region: i % 2 === 0 ? 'eu-west' : 'eu-north', gpus: { t4: 1 }, floor: credits(0.2) })
  const buyer = h.requester('buyer', { region: 'eu-west' })
  const job = buyer.submit({ gpus: 1, maxPrice: credits(0.5) }, { durationMs: 5 * MIN })
  h.runUntilQuiet()
  return { h, job }
}

describe('scenario: damping among 300 tied providers', () => {
  it('keeps bids to a handful with the suppression timer (almost all 300 bid without it), and the job settles', () => {
    const timed = tiedMarket()
    const bids = timed.h.recorder.count('bid').count
    assert.ok(bids >= 5 && bids <= 20, `${bids} bids`)
    assert.equal(ending(timed.h, timed.job).status, 'settled')
    // without it they share one delay: almost all bid before the first bids reach them (latency jitter lets a few see five)
    const untimed = tiedMarket(0).h.recorder.count('bid').count
    assert.ok(untimed > 250, `${untimed} bids without the timer`)
  })
})
