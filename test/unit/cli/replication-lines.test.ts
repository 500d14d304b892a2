import assert from 'node:assert/strict'
import { replicationLines } from '../../../cli/job-commands.js'

describe('job status: the replicas of a replicated job (cli/job-commands.ts replicationLines)', () => {
  it('lists each replica with its outputs and verdict, the output groups, the re-execution and the outcome', () => {
    const a = `12D3KooW${'A'.repeat(44)}`
    const b = `12D3KooW${'B'.repeat(44)}`
    const lines = replicationLines({
      mode: 'replicate',
      k: 3,
      shortfall: 'only 2 independent provider(s) of 3 bid',
      replicas: [
        { role: 'replica', status: 'settled', attempt: 1, provider: a, outputs: 'bafyreiright0000000000', verdict: 'matched' },
        { role: 'replica', status: 'failed', attempt: 1, provider: b, outputs: 'bafyreiwrong0000000000', verdict: 'outvoted' },
        { role: 'tie-break', status: 'bidding', attempt: 1 }
      ],
      groups: [{ outputs: 'bafyreiright0000000000', providers: [a] }, { outputs: 'bafyreiwrong0000000000', providers: [b] }],
      reexecution: 'bafyreiright0000000000',
      outcome: '1 of 2 replicas agree, confirmed by re-execution: outputs bafyreiright0000000000'
    })
    assert.equal(lines[0], '  verify:    replicate 3 (only 2 independent provider(s) of 3 bid)')
    assert.match(lines[1] as string, /replica 12D3Ko…AAAAAA attempt 1: settled, outputs bafyre…000000, matched$/)
    assert.match(lines[2] as string, /replica 12D3Ko…BBBBBB attempt 1: failed, outputs bafyre…000000, outvoted$/)
    assert.match(lines[3] as string, /tie-break \(bidding\) attempt 1: bidding$/)
    assert.deepEqual(lines.slice(4), [
      `  outputs:   bafyreiright0000000000 by 12D3Ko…AAAAAA`,
      `  outputs:   bafyreiwrong0000000000 by 12D3Ko…BBBBBB`,
      '  re-run:    bafyreiright0000000000',
      '  compared:  1 of 2 replicas agree, confirmed by re-execution: outputs bafyreiright0000000000'
    ])
  })
})
