import assert from 'node:assert/strict'
import { ExecFrameError, MAX_LOG_CHUNK, decodeExecFrame, encodeExecFrame } from '../../../node/services/exec.js'

describe('exec stream frames (node/services/exec.ts)', () => {
  it('round-trips message and log frames', () => {
    const message = { type: 'message' as const, bytes: new Uint8Array([9, 8, 7]) }
    assert.deepEqual(decodeExecFrame(encodeExecFrame(message)), message)
    const log = { type: 'log' as const, offset: 300_000, data: new TextEncoder().encode('hello\n') }
    assert.deepEqual(decodeExecFrame(encodeExecFrame(log)), log)
  })

  it('refuses empty frames, unknown tags, bad offsets and oversized log chunks', () => {
    assert.throws(() => decodeExecFrame(new Uint8Array([])), ExecFrameError)
    assert.throws(() => decodeExecFrame(new Uint8Array([1])), ExecFrameError)
    assert.throws(() => decodeExecFrame(new Uint8Array([3, 1, 2])), ExecFrameError)
    // a non-minimal varint offset
    assert.throws(() => decodeExecFrame(new Uint8Array([2, 0x80, 0x00, 65])), ExecFrameError)
    const big = new Uint8Array(2 + MAX_LOG_CHUNK + 1)
    big[0] = 2
    assert.throws(() => decodeExecFrame(big), ExecFrameError)
    assert.throws(() => encodeExecFrame({ type: 'log', offset: 0, data: new Uint8Array(MAX_LOG_CHUNK + 1) }), ExecFrameError)
  })
})
