import assert from 'node:assert/strict'
import { encodeCanonical } from '../../../../crypto/index.js'
import { PROBE_MAX_FRAME_BYTES, decodeProbeFrame, encodeProbeFrame } from '../../../../protocol/trust/probe-frames.js'
import { PROBE_MAX_N, ProbeError } from '../../../../protocol/trust/probe.js'

function code (fn: () => unknown): string {
  try { fn() } catch (err) { assert.ok(err instanceof ProbeError, String(err)); return err.code }
  assert.fail('accepted')
}

describe('protocol/trust/probe-frames', () => {
  const nonce = new Uint8Array(32).fill(1)

  it('round-trips every frame, each within the frame limit', () => {
    const frames = [
      { kind: 'ping' as const, nonce },
      { kind: 'pong' as const, nonce },
      { kind: 'refused' as const, reason: 'RATE_LIMITED' as const },
      { kind: 'freivalds-matmul' as const, nonce, n: PROBE_MAX_N },
      { kind: 'digest' as const, device: 'cpu' as const, digest: new Uint8Array(32).fill(2) }
    ]
    for (const frame of frames) {
      const bytes = encodeProbeFrame(frame)
      assert.ok(bytes.byteLength <= PROBE_MAX_FRAME_BYTES, `${frame.kind}: ${bytes.byteLength} bytes`)
      assert.deepEqual(decodeProbeFrame(bytes, [frame.kind]), frame)
    }
  })

  it('refuses the wrong kind, unknown fields, bad sizes and non-CBOR as BAD_FRAME', () => {
    const ping = encodeProbeFrame({ kind: 'ping', nonce })
    assert.equal(code(() => decodeProbeFrame(ping, ['pong', 'refused'])), 'BAD_FRAME')
    assert.equal(code(() => decodeProbeFrame(encodeCanonical({ kind: 'ping', nonce, extra: 1 }), ['ping'])), 'BAD_FRAME')
    assert.equal(code(() => decodeProbeFrame(encodeCanonical({ kind: 'ping', nonce: new Uint8Array(7) }), ['ping'])), 'BAD_FRAME')
    assert.equal(code(() => decodeProbeFrame(encodeCanonical({ kind: 'freivalds-matmul', nonce, n: PROBE_MAX_N + 1 }), ['freivalds-matmul'])), 'BAD_FRAME')
    assert.equal(code(() => decodeProbeFrame(encodeCanonical({ kind: 'digest', device: 'cpu', digest: new Uint8Array(31) }), ['digest'])), 'BAD_FRAME')
    assert.equal(code(() => decodeProbeFrame(new Uint8Array([0xff, 0x00]), ['ping'])), 'BAD_FRAME')
  })
})
