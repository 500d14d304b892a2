import assert from 'node:assert/strict'
import { LogBuffer } from '../../../node/market/provider-io.js'

const bytes = (text: string): Uint8Array => new TextEncoder().encode(text)
const text = (b: Uint8Array): string => new TextDecoder().decode(b)

describe('the provider\'s job log (LogBuffer, node/market/provider-io.ts)', () => {
  it('keeps appends up to the cap, with their offsets, and says when it cut', () => {
    const log = new LogBuffer(10)
    assert.deepEqual(log.append(bytes('abcd')), { offset: 0, data: bytes('abcd') })
    assert.equal(log.append(new Uint8Array(0)), undefined)
    assert.deepEqual(log.append(bytes('efghij')), { offset: 4, data: bytes('efghij') }) // exactly at the cap
    assert.equal(log.truncated, false)
    assert.equal(log.append(bytes('k')), undefined) // one past
    assert.equal(log.truncated, true)
    assert.equal(text(log.bytes()), 'abcdefghij')
  })

  it('slices any range across its chunks (what the stream sends as credit allows)', () => {
    const log = new LogBuffer(100)
    for (const part of ['abc', 'de', 'fghij']) log.append(bytes(part))
    assert.equal(text(log.slice(0, 10)), 'abcdefghij')
    assert.equal(text(log.slice(2, 6)), 'cdef')
    assert.equal(text(log.slice(3, 5)), 'de')
    assert.equal(text(log.slice(4, 4)), '')
    assert.equal(text(log.slice(8, 50)), 'ij') // clamped to what is kept
    assert.equal(text(log.slice(12, 20)), '')
  })
})

describe('a restarted provider\'s job log goes on after the requester\'s copy (LogBuffer.rebase, §7.7 "Resuming")', () => {
  it('moves the kept bytes to start at the base, behind the lead line, with offsets from the base', () => {
    const log = new LogBuffer(100)
    log.append(bytes('ab'))
    log.rebase(40, bytes('--\n'))
    assert.equal(log.base, 40)
    assert.equal(log.size, 45)
    assert.deepEqual(log.append(bytes('cd')), { offset: 45, data: bytes('cd') })
    assert.equal(text(log.bytes()), '--\nabcd') // the receipt's blob: from the base
    assert.equal(text(log.slice(40, 47)), '--\nabcd')
    assert.equal(text(log.slice(43, 45)), 'ab')
    assert.equal(text(log.slice(0, 42)), '--') // nothing is kept below the base
  })

  it('a base of 0 is a plain log with the lead first', () => {
    const log = new LogBuffer(10)
    log.rebase(0, bytes('L'))
    assert.deepEqual(log.append(bytes('x')), { offset: 1, data: bytes('x') })
    assert.equal(text(log.bytes()), 'Lx')
  })

  it('keeps the cap on the end offset: a base at or past the cap keeps nothing more, and says it cut', () => {
    const near = new LogBuffer(10)
    near.rebase(8, bytes('LEAD'))
    assert.equal(text(near.bytes()), 'LE')
    assert.equal(near.size, 10)
    assert.equal(near.truncated, true)
    const at = new LogBuffer(10)
    at.rebase(10, new Uint8Array(0))
    assert.equal(at.truncated, false)
    assert.equal(at.append(bytes('x')), undefined)
    assert.equal(at.truncated, true)
    const past = new LogBuffer(10)
    past.rebase(11, bytes('L'))
    assert.equal(past.size, 10)
    assert.equal(past.truncated, true)
    assert.throws(() => { new LogBuffer(10).rebase(-1, bytes('L')) }, RangeError)
  })

  it('the restart line stands on its own line after an old log, and first in an empty one', async () => {
    const { restartLine, RESTART_LOG_LINE } = await import('../../../node/market/provider-io.js')
    assert.equal(text(restartLine(0)), RESTART_LOG_LINE)
    assert.equal(text(restartLine(1)), `\n${RESTART_LOG_LINE}`)
    assert.ok(RESTART_LOG_LINE.endsWith('\n'))
  })
})
