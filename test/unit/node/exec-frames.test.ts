import assert from 'node:assert/strict'
import { ExecFrameError, LOG_WINDOW, MAX_LOG_CHUNK, decodeExecFrame, encodeExecFrame } from '../../../node/services/exec.js'

describe('exec stream frames (node/services/exec.ts)', () => {
  it('round-trips message and log frames', () => {
    const message = { type: 'message' as const, bytes: new Uint8Array([9, 8, 7]) }
    assert.deepEqual(decodeExecFrame(encodeExecFrame(message)), message)
    const log = { type: 'log' as const, offset: 300_000, data: new TextEncoder().encode('hello\n') }
    assert.deepEqual(decodeExecFrame(encodeExecFrame(log)), log)
  })

  it('round-trips log credit frames (tag 03 ‖ uvarint upTo), at 0 and at large offsets', () => {
    for (const upTo of [0, 1, LOG_WINDOW, 2 ** 40]) {
      const credit = { type: 'credit' as const, upTo }
      assert.deepEqual(decodeExecFrame(encodeExecFrame(credit)), credit)
    }
    // protocol/README §7.7 vector: a credit up to 262144 bytes
    assert.deepEqual([...encodeExecFrame({ type: 'credit', upTo: 262_144 })], [0x03, 0x80, 0x80, 0x10])
  })

  it('refuses credit frames with no, a non-minimal or a trailing-bytes varint', () => {
    assert.throws(() => decodeExecFrame(new Uint8Array([3])), ExecFrameError)
    assert.throws(() => decodeExecFrame(new Uint8Array([3, 0x80, 0x00])), ExecFrameError)
    assert.throws(() => decodeExecFrame(new Uint8Array([3, 1, 2])), ExecFrameError)
  })

  it('refuses empty frames, unknown tags, bad offsets and oversized log chunks', () => {
    assert.throws(() => decodeExecFrame(new Uint8Array([])), ExecFrameError)
    assert.throws(() => decodeExecFrame(new Uint8Array([1])), ExecFrameError)
    assert.throws(() => decodeExecFrame(new Uint8Array([4, 1, 2])), ExecFrameError)
    // a non-minimal varint offset
    assert.throws(() => decodeExecFrame(new Uint8Array([2, 0x80, 0x00, 65])), ExecFrameError)
    const big = new Uint8Array(2 + MAX_LOG_CHUNK + 1)
    big[0] = 2
    assert.throws(() => decodeExecFrame(big), ExecFrameError)
    assert.throws(() => encodeExecFrame({ type: 'log', offset: 0, data: new Uint8Array(MAX_LOG_CHUNK + 1) }), ExecFrameError)
  })
})
