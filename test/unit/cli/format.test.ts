import assert from 'node:assert/strict'
import { elapsed, oneLine, reputationText, statusText } from '../../../cli/format.js'

describe('CLI formatting', () => {
  it('statusText says the status once', () => {
    assert.equal(statusText('cancelled', 'cancelled by the requester'), 'cancelled by the requester')
    assert.equal(statusText('failed', 'no acceptable bids in 3 rounds'), 'failed: no acceptable bids in 3 rounds')
    assert.equal(statusText('expired'), 'expired')
    assert.equal(statusText('expired', ''), 'expired')
    assert.equal(statusText('cancelled', 'cancelled'), 'cancelled')
    // a reason that merely starts with the same letters is kept whole
    assert.equal(statusText('failed', 'failedover provider'), 'failed: failedover provider')
  })

  it('elapsed: seconds, then minutes, then hours (edges at 60 s and 1 h)', () => {
    assert.deepEqual([0, 999, 59_999, 60_000, 125_000, 3_599_999, 3_600_000, 3_720_000, -5].map(elapsed),
      ['0s', '0s', '59s', '1m00s', '2m05s', '59m59s', '1h00m', '1h02m', '0s'])
  })

  it('oneLine: control characters (terminal escapes from a job\'s output) become spaces; cut at the width', () => {
    assert.equal(oneLine('\x1b[2J\x1b]0;pwned\x07step 3\r', 80), ' [2J ]0;pwned step 3')
    assert.equal(oneLine('abcdef', 6), 'abcdef')
    assert.equal(oneLine('abcdefg', 6), 'abcde…')
    assert.equal(oneLine('\u009b31m', 10), ' 31m')
    assert.equal(oneLine('', 5), '')
  })
})

describe('reputationText', () => {
  const base = { score: 0.25, own: { okCount: 0, failedCount: 0 }, others: { reporters: 0, trusted: 0 }, known: false }

  it('says CONVICTED with the proof id, whatever else is known', () => {
    assert.equal(reputationText({ ...base, score: 0, known: true, own: { okCount: 3, failedCount: 0 }, convicted: 'bafyproof' }), 'CONVICTED (fraud proof bafyproof; never awarded)')
  })

  it('says a provider with no history scores the prior', () => {
    assert.equal(reputationText(base), '0.25 (no history: the prior)')
  })

  it('gives own counts and how many reporters are trusted', () => {
    assert.equal(reputationText({ ...base, known: true, score: 0.6666, own: { okCount: 3, failedCount: 1 }, others: { reporters: 4, trusted: 1 } }),
      '0.67 (own 3 ok / 1 failed; 1 of 4 reporters trusted)')
    assert.equal(reputationText({ ...base, known: true, score: 0.4, own: { okCount: 1, failedCount: 0 } }), '0.40 (own 1 ok / 0 failed; no reports from others)')
  })
})
