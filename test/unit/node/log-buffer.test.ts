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
