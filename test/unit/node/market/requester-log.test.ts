import assert from 'node:assert/strict'
import { providerRestarted } from '../../../../node/market/requester-exec.js'
import { logTail } from '../../../../node/market/requester-outputs.js'

const bytes = (text: string): Uint8Array => new TextEncoder().encode(text)
const text = (b: Uint8Array | undefined): string | undefined => b === undefined ? undefined : new TextDecoder().decode(b)

describe('the requester\'s copy of a job log around a provider restart (§7.7 "Resuming")', () => {
  it('a status going back from the run to before it says the provider restarted; nothing else does', () => {
    for (const previous of ['running', 'preempted']) {
      for (const state of ['accepted', 'fetching-inputs']) assert.equal(providerRestarted(previous, state), true, `${previous} → ${state}`)
    }
    assert.equal(providerRestarted(undefined, 'accepted'), false)
    assert.equal(providerRestarted('accepted', 'fetching-inputs'), false)
    assert.equal(providerRestarted('fetching-inputs', 'running'), false)
    assert.equal(providerRestarted('running', 'running'), false)
    assert.equal(providerRestarted('running', 'completed'), false)
    assert.equal(providerRestarted('preempted', 'failed'), false)
  })

  it('takes from a log blob only what follows the bytes held, reading the blob from its base', () => {
    const blob = bytes('abcdef')
    assert.equal(text(logTail(blob, 0, 0)), 'abcdef')
    assert.equal(text(logTail(blob, 0, 4)), 'ef')
    assert.equal(logTail(blob, 0, 6), undefined) // exactly all of it held
    assert.equal(logTail(blob, 0, 9), undefined)
    // after a restart the blob begins at the offset the new run's log was streamed from
    assert.equal(text(logTail(blob, 10, 10)), 'abcdef')
    assert.equal(text(logTail(blob, 10, 13)), 'def')
    assert.equal(logTail(blob, 10, 16), undefined)
    assert.equal(text(logTail(blob, 10, 15)), 'f')
  })
})
