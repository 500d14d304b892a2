import assert from 'node:assert/strict'
import { elapsed, oneLine, statusText } from '../../../cli/format.js'

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
