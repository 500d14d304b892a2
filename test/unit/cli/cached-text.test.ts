import assert from 'node:assert/strict'
import { cachedText } from '../../../cli/job-commands.js'

describe('job status: the winner\'s cached inputs (cli/job-commands.ts cachedText)', () => {
  it('names the inputs and the transfer time the score counted as saved', () => {
    assert.equal(cachedText({ paths: ['model.bin'], savedSec: 700 }), 'model.bin (≈ 11m40s of transfer saved at 1 MiB/s)')
    assert.equal(cachedText({ paths: ['a', 'b'], savedSec: 2.5 }), 'a, b (≈ 2s of transfer saved at 1 MiB/s)')
  })

  it('says less than a second for tiny inputs, and cuts a long list', () => {
    assert.equal(cachedText({ paths: ['eval.py'], savedSec: 15 / 1048576 }), 'eval.py (< 1s of transfer saved at 1 MiB/s)')
    assert.equal(cachedText({ paths: ['1', '2', '3', '4', '5', '6'], savedSec: 7200 }), '1, 2, 3, 4, … 2 more (≈ 2h00m of transfer saved at 1 MiB/s)')
  })
})
