/**
 * The in-process networks of real daemons the integration tests and benchmarks use: the launcher is
 * the product's (calibration/local-network.ts, which `gpumesh sim --calibrate` runs), re-exported
 * here, plus `untilJob`, the tests' wait on a job's view.
 */
import assert from 'node:assert/strict'
import type { Daemon } from '../../node/daemon.js'
import type { JobView } from '../../node/market/views.js'
import type { LocalNetwork } from '../../calibration/local-network.js'

export { startDaemon, startNetwork, waitForAnnouncements, type LocalNetwork, type NetworkOptions, type NodeSpec } from '../../calibration/local-network.js'
export { treeAt } from '../../node/config/load.js'

/** A running in-process network (the tests' name for LocalNetwork). */
export type TestNetwork = LocalNetwork

/** Poll a job `daemon` submitted until `done` holds for its view; fails with its events after `timeoutMs`. */
export async function untilJob (daemon: Daemon, id: string, done: (v: JobView) => boolean, timeoutMs = 60_000): Promise<JobView> {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const view = daemon.market?.requester.view(id)
    assert.ok(view !== undefined, `no job ${id}`)
    if (done(view)) return view
    if (Date.now() > deadline) assert.fail(`job ${id} stuck in ${view.status}: ${view.events.map((e) => `${e.type}: ${e.text}`).join('\n')}`)
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
}
