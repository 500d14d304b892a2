import assert from 'node:assert/strict'
import { PROBE_MAX_N, PROBE_MIN_N } from '../../../../protocol/trust/probe.js'
import {
  PROBE_CPU_MAC_PER_SEC, PROBE_OVERHEAD_MS, PROBE_TARGET_MS, expectedProbeMs, isFlagged, probeClaim, probeSizeFor
} from '../../../../protocol/trust/probe-throughput.js'
import { probeVerdict } from '../../../../protocol/trust/probe-result.js'

describe('protocol/trust/probe-throughput: sizing and the flag rule', () => {
  it('flags a claim only when the measured time is more than twice the expected time', () => {
    assert.equal(isFlagged(100, 200), false, 'exactly 2× is not flagged')
    assert.equal(isFlagged(100, 201), true)
    assert.equal(isFlagged(100, 199), false)
    assert.equal(isFlagged(100, 50), false)
  })

  it('reads a probe-result: flagged past 2×, else pass or failed by ok', () => {
    assert.equal(probeVerdict({ ok: true, durationMs: 200, expectedMs: 100 }), 'pass')
    assert.equal(probeVerdict({ ok: true, durationMs: 201, expectedMs: 100 }), 'flagged')
    assert.equal(probeVerdict({ ok: false, durationMs: 201, expectedMs: 100 }), 'flagged', 'a timeout past the deadline is flagged')
    assert.equal(probeVerdict({ ok: false, durationMs: 10, expectedMs: 100 }), 'failed')
    assert.equal(probeVerdict({ ok: true, durationMs: 10_000 }), 'pass', 'no claim, no flag')
  })

  it('finds the claimed model in the table by family, most specific first', () => {
    const h100 = probeClaim('nvidia-h100-80gb-hbm3')
    const pcie = probeClaim('nvidia-h100-pcie')
    assert.equal(h100.device, 'gpu')
    assert.equal(h100.model, 'nvidia-h100-80gb-hbm3')
    assert.ok(pcie.macPerSec < h100.macPerSec, 'the PCIe part is slower than the SXM one')
    assert.notEqual(probeClaim('nvidia-l4').macPerSec, probeClaim('nvidia-l40s').macPerSec, 'l4 is not l40s')
    assert.deepEqual(probeClaim('acme-widget-9000'), { model: 'cpu', device: 'cpu', macPerSec: PROBE_CPU_MAC_PER_SEC })
    assert.deepEqual(probeClaim(undefined), probeClaim('acme-widget-9000'))
  })

  it('sizes n so the claim takes at most the target time, within the limits', () => {
    const cpu = probeClaim(undefined)
    const n = probeSizeFor(cpu)
    assert.ok(n ** 3 * 1000 / cpu.macPerSec <= PROBE_TARGET_MS)
    assert.ok((n + 32) ** 3 * 1000 / cpu.macPerSec > PROBE_TARGET_MS, 'the next step would exceed the target')
    assert.equal(probeSizeFor(probeClaim('nvidia-h100-80gb-hbm3')), PROBE_MAX_N)
    assert.equal(probeSizeFor({ macPerSec: 1 }), PROBE_MIN_N)
  })

  it('expects ⌈n³ / rate⌉ ms plus the fixed overhead', () => {
    assert.equal(expectedProbeMs({ macPerSec: 1e6 }, 100), 1000 + PROBE_OVERHEAD_MS)
    assert.equal(expectedProbeMs({ macPerSec: 3e6 }, 100), 334 + PROBE_OVERHEAD_MS)
  })
})
