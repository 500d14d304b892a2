import assert from 'node:assert/strict'
import { sayOnce, timelineOf } from '../../../../node/market/requester-views.js'
import type { JobEvent } from '../../../../node/market/views.js'

const P = '12D3KooWProvider'
const ev = (type: string, text: string, peer?: string): JobEvent => ({ at: 0, type, text, ...(peer !== undefined ? { peer } : {}) })

describe('the job timeline the API shows (requester-views)', () => {
  // the events a settled job records, in order (seen from `gpumesh job status` before the fix)
  const settled = [
    ev('submitted', 'silver job for 1 GPU(s), cap 2.00 cr/GPU-h, bid window 1000 ms'),
    ev('bid', 'bid 0.80 cr/GPU-h (nvidia-l40s, local)', P),
    ev('awarded', 'awarded'),
    ev('award', 'awarded to …5SNMT2cV at 0.80 cr/GPU-h: lowest effective price 1.144 cr (the only bid)', P),
    ev('accepted', '…5SNMT2cV accepted', P),
    ev('running', 'running'),
    ev('completed', 'provider reports completed', P),
    ev('receipt', 'receipt: exit 0, 4 GPU-s, 0 output(s) verified'),
    ev('completed', 'completed'),
    ev('verified', 'verified'),
    ev('paid', 'paid 0.000889 cr in all to …5SNMT2cV (4 GPU-s)', P),
    ev('settled', 'settled: paid in full')
  ]

  it('drops the bare status event next to the event that says it in full (awarded/award, completed twice)', () => {
    assert.deepEqual(timelineOf(settled).map((e) => e.type), ['submitted', 'bid', 'award', 'accepted', 'running', 'completed', 'receipt', 'verified', 'paid', 'settled'])
    assert.equal(timelineOf(settled).find((e) => e.type === 'completed')?.text, 'provider reports completed')
  })

  it('drops the job\'s bare completed when the outputs were fetched after the receipt (verifying in between)', () => {
    const fetched = [ev('running', 'running'), ev('completed', 'provider reports completed', P), ev('receipt', 'receipt: exit 0', P), ev('verifying', 'verifying'),
      ev('outputs', '1 output(s) verified'), ev('completed', 'completed'), ev('verified', 'verified'), ev('settled', 'settled')]
    assert.deepEqual(timelineOf(fetched).map((e) => e.type), ['running', 'completed', 'receipt', 'verifying', 'outputs', 'verified', 'settled'])
    // without the outputs event the job's own completed is the only word for it, and stays
    assert.deepEqual(timelineOf([ev('verifying', 'verifying'), ev('completed', 'completed'), ev('verified', 'verified')]).map((e) => e.type), ['verifying', 'completed', 'verified'])
  })

  it('keeps a bare status event with no twin, and each round of a re-auction', () => {
    const twoRounds = [ev('awarded', 'awarded'), ev('award', 'awarded to A', P), ev('re-auction', 'round 2 (declined)'), ev('bidding', 'bidding'), ev('awarded', 'awarded'), ev('award', 'awarded to B', P), ev('running', 'running')]
    assert.deepEqual(timelineOf(twoRounds).map((e) => e.type), ['award', 're-auction', 'bidding', 'award', 'running'])
    assert.deepEqual(timelineOf([ev('running', 'running')]), [ev('running', 'running')])
    assert.deepEqual(timelineOf([]), [])
  })

  it('says a repeated clause once: cancel events', () => {
    const cancelled = timelineOf([ev('cancelled', 'cancelled: cancelled by the requester'), ev('cancelled', 'provider reports cancelled: cancelled by the requester: cancelled by the requester', P)])
    assert.deepEqual(cancelled.map((e) => e.text), ['cancelled by the requester', 'provider reports cancelled: cancelled by the requester'])
    assert.equal(sayOnce('failed: no acceptable bids in 3 rounds'), 'failed: no acceptable bids in 3 rounds')
    assert.equal(sayOnce('a: a: a'), 'a')
    assert.equal(sayOnce(''), '')
  })
})
