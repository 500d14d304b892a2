/**
 * The provider's side of the probe task: derive A and B from the challenger's nonce and compute A·B
 * mod p. Only the CPU kernel exists (label `cpu`); it runs in slices of rows and yields between them,
 * so a large challenge never blocks the daemon's event loop and stops as soon as the challenger gives up.
 *
 * GPU seam: a `ProbeDevice` with `device: 'gpu'` (a CUDA kernel over the same derivation, exact mod p)
 * plugs in here; the service labels its answers with the device that computed them, and the
 * challenger's timing and Freivalds check are the same for both.
 */
import { setImmediate as yieldToLoop } from 'node:timers/promises'
import { deriveMatrixRows, multiplyRows } from '../../protocol/trust/probe.js'

export interface ProbeDevice {
  readonly device: 'cpu' | 'gpu'
  /** A·B mod p for the challenge (nonce, n); rejects with `signal.reason` once the signal aborts. */
  multiply (nonce: Uint8Array, n: number, signal?: AbortSignal): Promise<Uint16Array>
}

/** MACs (multiply-adds) per slice between yields: a few ms of CPU. */
export const PROBE_SLICE_MACS = 1 << 21
/** Matrix entries derived per slice between yields (of each of A and B). */
export const PROBE_SLICE_ENTRIES = 1 << 17

/** The JavaScript kernel on this thread. */
export const cpuProbeDevice: ProbeDevice = {
  device: 'cpu',
  async multiply (nonce, n, signal) {
    signal?.throwIfAborted()
    const a = new Uint16Array(n * n)
    const b = new Uint16Array(n * n)
    // deriving costs about as much per entry as a few MACs: slices of PROBE_SLICE_ENTRIES entries
    const deriveRows = Math.max(1, Math.floor(PROBE_SLICE_ENTRIES / n))
    for (let from = 0; from < n; from += deriveRows) {
      if (from > 0) {
        await yieldToLoop()
        signal?.throwIfAborted()
      }
      const to = Math.min(n, from + deriveRows)
      deriveMatrixRows(nonce, 'A', n, from, to, a)
      deriveMatrixRows(nonce, 'B', n, from, to, b)
    }
    const out = new Uint16Array(n * n)
    const rows = Math.max(1, Math.floor(PROBE_SLICE_MACS / (n * n)))
    for (let from = 0; from < n; from += rows) {
      // yield between slices only: a product of one slice returns without giving the loop away
      if (from > 0) {
        await yieldToLoop()
        signal?.throwIfAborted()
      }
      multiplyRows(a, b, n, from, Math.min(n, from + rows), out)
    }
    return out
  }
}
