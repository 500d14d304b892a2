import assert from 'node:assert/strict'
import { deadline, withDeadline } from '../../../node/abort.js'

describe('deadlines', () => {
  it('aborts after its time, even if garbage collection runs meanwhile', async () => {
    const d = deadline(30)
    ;(globalThis as { gc?: () => void }).gc?.()
    await new Promise((resolve) => setTimeout(resolve, 60))
    assert.equal(d.signal.aborted, true)
    assert.equal((d.signal.reason as Error).name, 'TimeoutError')
  })

  it('aborts with its parent', () => {
    const parent = new AbortController()
    const d = deadline(10_000, parent.signal)
    parent.abort(new Error('stop'))
    assert.equal(d.signal.aborted, true)
    assert.equal((d.signal.reason as Error).message, 'stop')
    d.clear()
  })

  it('withDeadline releases its timer once the work is done', async () => {
    const parent = new AbortController()
    let seen: AbortSignal | undefined
    assert.equal(await withDeadline(20, parent.signal, async (signal) => { seen = signal; return 7 }), 7)
    await new Promise((resolve) => setTimeout(resolve, 40))
    assert.equal(seen?.aborted, false)
  })
})
