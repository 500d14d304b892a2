import assert from 'node:assert/strict'
import { BadFrameLengthError, frameLimits, isFrameLengthError } from '../../../node/services/frame-limits.js'

/** lpStream hands the decoder the prefix bytes read so far; a RangeError asks it for one more. */
const decode = (max: number, ...bytes: number[]): number => frameLimits(max).lengthDecoder({ subarray: () => Uint8Array.from(bytes) })

describe('frame length limits (node/services/frame-limits.ts)', () => {
  it('decodes minimal prefixes up to and past the limit (lpStream refuses a length over it)', () => {
    assert.equal(decode(32_769, 0x00), 0)
    assert.equal(decode(32_769, 0x81, 0x80, 0x02), 32_769) // exactly at the limit
    assert.equal(decode(32_769, 0x82, 0x80, 0x02), 32_770) // one past: InvalidDataLengthError in lpStream
    assert.equal(frameLimits(32_769).maxDataLength, 32_769)
  })

  it('asks for more bytes while a prefix could still be one of an allowed frame', () => {
    assert.throws(() => decode(32_769, 0x80), RangeError)
    assert.throws(() => decode(32_769, 0x80, 0x80), RangeError)
  })

  it('refuses, from the prefix alone, one longer than the largest frame\'s or not minimal', () => {
    assert.throws(() => decode(32_769, 0x80, 0x80, 0x80), BadFrameLengthError)
    assert.throws(() => decode(32_769, 0x80, 0x00), BadFrameLengthError)
    // a limit of 0 (the capability request): any continuation byte is too long at once
    assert.throws(() => decode(0, 0x80), BadFrameLengthError)
    assert.equal(decode(0, 0x00), 0)
  })

  it('names lpStream\'s own length errors as frame-length errors', () => {
    for (const name of ['BadFrameLengthError', 'InvalidDataLengthError', 'InvalidDataLengthLengthError', 'InvalidMessageLengthError']) {
      const err = new Error('x')
      err.name = name
      assert.ok(isFrameLengthError(err), name)
    }
    assert.equal(isFrameLengthError(new Error('x')), false)
    assert.equal(isFrameLengthError('InvalidDataLengthError'), false)
  })
})
