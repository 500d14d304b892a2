/**
 * What every harness node shares: the virtual clock, the bus, the recorder, the id counters, the
 * market parameters, and the simulator's model of execution (how long each job runs and how it ends,
 * as the scenario says). Nodes reach each other only through the bus; the world is their physics.
 */
import type { VirtualScheduler } from '../../protocol/market/scheduler.js'
import type { MarketParams } from '../../protocol/market/params.js'
import type { Bus } from './bus.js'
import type { IdFactory } from './ids.js'
import type { JobRequest } from '../../protocol/messages/job-request.js'
import type { Opened } from './messages.js'
import type { Recorder } from './recorder.js'

/** How a job runs on a provider: the scenario's model of the executor. */
export interface Execution {
  /** Run time from start to exit, ms. */
  durationMs: number
  /** Exit code: 0 success, 1 … 255 a failed run, −1 the executor could not start it. */
  exitCode: number
  /** Total size of the outputs, bytes (the requester fetches them after the receipt). */
  outputBytes: number
  /** Total size of the inputs, bytes (the provider fetches them before the start). */
  inputBytes: number
}

export const DEFAULT_EXECUTION: Readonly<Execution> = Object.freeze({ durationMs: 60_000, exitCode: 0, outputBytes: 1_024, inputBytes: 0 })

export interface World {
  readonly scheduler: VirtualScheduler
  readonly bus: Bus
  readonly recorder: Recorder
  readonly ids: IdFactory
  readonly params: MarketParams
  /** Blob transfer speed between two nodes, bytes per second, where the network model has no `blobMs`. */
  readonly bandwidthBytesPerSec: number
  /** The execution model of `job` (its id) on `provider` (a node name). */
  execution: (job: string, provider: string) => Execution
  /** Set how `job` runs (fields left out keep the default), on `provider` only when named. */
  setExecution: (job: string, execution: Partial<Execution>, provider?: string) => void
  /**
   * Every job request published, by id. A provider's shell looks up only jobs its agent names (so
   * jobs it has seen): one shared copy stands for the request each daemon keeps with its offers.
   */
  readonly jobs: Map<string, Opened<JobRequest>>
  /**
   * The multiaddrs each provider's ad lists, by peer id (ProviderNode fills it): what a daemon knows of a
   * bidder from its ad and connections, for replicate's independence rule.
   */
  readonly addresses: Map<string, readonly string[]>
  /** Whether `node` keeps an honest ledger (adversaries do not). */
  keepsLedger: (node: string) => boolean
}

/**
 * Time to move `bytes` from node `from` to node `to` (peer ids), ms (whole, rounded up): the network
 * model's `blobMs` for the pair when it has one (per-node links), else the world's one bandwidth.
 */
export function transferMs (world: World, bytes: number, from: string, to: string): number {
  if (bytes <= 0) return 0
  const blobMs = world.bus.model.blobMs
  return Math.ceil(blobMs !== undefined ? blobMs(from, to, bytes) : bytes * 1000 / world.bandwidthBytesPerSec)
}
