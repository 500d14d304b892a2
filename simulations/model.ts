/**
 * The simulator's shared vocabulary (DESIGN §8, issue 10): what a workload is (the fleet, the owners'
 * own work, the renters' jobs), and what a strategy's run produces (one outcome per job, one line per
 * node). Workload loaders produce these, the market engine and the baselines consume them, and the
 * report reads only outcomes — so every strategy is measured by the same code.
 *
 * Time in the simulator is virtual: milliseconds since the run's start (t = 0). The engine maps it to
 * an absolute epoch time (`SimClock.start + t`) where the protocol's decision code needs one (ads,
 * calendars, message expiry). Money is integer micro-credits, prices micros per GPU-hour (DESIGN §3).
 */
import type { Tier } from '../protocol/market/types.js'

export type { Tier }

/**
 * How long each tier may wait for a start, ms, where the workload gives no per-job value — the renter's `maxStartDelaySec` in the gpumesh market (market/job-spec.ts) and each baseline's wait limit: gold 5 min
 * (the CLI's default `--max-start-delay`), silver 30 min, bronze 6 h (preemptible work is patient).
 */
export const DEFAULT_MAX_START_DELAY_MS: Readonly<Record<Tier, number>> = {
  gold: 5 * 60_000,
  silver: 30 * 60_000,
  bronze: 6 * 3_600_000
}

/** A GPU box in the fleet: an owner who sells the windows its own work leaves free. */
export interface FleetNode {
  /** Stable id (the trace's node name, or `n000042`). */
  id: string
  /** GPU model slug as the daemon computes it (`modelSlug` of the driver's name), e.g. `nvidia-tesla-t4`. */
  model: string
  /** The driver's name of the GPU (what nvidia-smi prints), e.g. `Tesla T4`. */
  gpuName: string
  /** GPUs in the box (≥ 1). */
  gpus: number
  /** Memory per GPU, MiB as nvidia-smi reports it. */
  vramMiB: number
  /** ISO 3166 alpha-2 country, for the latency model. */
  country: string
  /** gpumesh region slug (`eu-west`, `us-east`, …: network/geo.ts), for placement and gossip topics. */
  region: string
  cpuMilli: number
  memoryMiB: number
}

/** The owner's own work on a node: `gpus` of its GPUs are busy over [start, end). */
export interface OwnerWork {
  node: string
  start: number
  end: number
  gpus: number
  /** Where it came from (`alibaba:openb-pod-0001`). */
  source?: string
}

/** A renter's job, as a trace or generator describes it. */
export interface SimJob {
  /** Stable id, unique in the workload (`j000123`, or the trace's pod name). */
  id: string
  /** When the renter submits it, ms since the run's start. */
  submitAt: number
  /** How long it runs once started, ms (> 0). */
  durationMs: number
  /** Whole GPUs it needs (≥ 1; a fractional share is rounded up to one GPU, see `gpuMilli`). */
  gpus: number
  /** The share of each GPU it actually uses, 1/1000 (1000 = the whole GPU), from the trace. */
  gpuMilli: number
  /** Accepted GPU models as slugs or families (protocol/README §7.4a); [] = any. */
  models: string[]
  /** Minimum memory per GPU, GB (0 = any). */
  minVramGB: number
  tier: Tier
  /** Wanted region (a gpumesh region slug); undefined = anywhere. */
  region?: string
  residency: 'strict' | 'prefer'
  /** Price cap, micros per GPU-hour; undefined = the scenario sets it from the list price. */
  maxPrice?: number
  /** Where it came from (`alibaba:openb-pod-0001`, `csv:12`, `poisson`). */
  source?: string
}

/** What a simulation runs on: the same object for every strategy in one run. */
export interface Workload {
  /** A short description for the report (`alibaba-2023 openb default, 1,213 nodes, 10,000 jobs`). */
  name: string
  fleet: FleetNode[]
  /** Sorted by start. */
  ownerWork: OwnerWork[]
  /** Sorted by submitAt, then id. */
  jobs: SimJob[]
  /** Jobs arrive in [0, horizonMs): a job not placed by then ends `unserved`. */
  horizonMs: number
  /**
   * The drain, ms (absent: 0): after the horizon no job arrives or is placed, but work placed before it
   * runs on until horizonMs + drainMs (`runEndMs`), in every strategy alike, so a job still running at the
   * horizon can complete. A strategy's node lines (NodeOutcome: offered, owner and sold GPU-hours) cover
   * [0, runEndMs); the report's headline utilization is inside the horizon, the whole run's beside it
   * (report/utilization.ts). Work still running at runEndMs is cut there (`failed`).
   */
  drainMs?: number
}

/** When the run's accounts end, ms: the horizon plus the drain. */
export function runEndMs (workload: Pick<Workload, 'horizonMs' | 'drainMs'>): number {
  return workload.horizonMs + (workload.drainMs ?? 0)
}

/** How a job ended under one strategy. */
export type JobStatus =
  /** Ran to the end and was paid for. */
  | 'completed'
  /** Was placed but did not complete (every attempt failed, or the run's horizon cut it). */
  | 'failed'
  /** Never placed: no provider fitted, no bid under the cap, or its start delay ran out. */
  | 'unserved'

/** One job's outcome under one strategy: everything the report's metrics are computed from. */
export interface JobOutcome {
  job: string
  tier: Tier
  gpus: number
  status: JobStatus
  /** The node that ran it last (undefined when unserved). */
  node?: string
  submittedAt: number
  /** When the (last) award was made. */
  awardedAt?: number
  /** When it started running (the last attempt's start). */
  startedAt?: number
  /** When it ended, in any status. */
  endedAt: number
  /** GPU-hours actually run, over every attempt (what the fleet delivered). */
  gpuHours: number
  /** Micros the renter paid, over every attempt. */
  paid: number
  /** Micros the same GPU-hours cost at the list price (the old way's price for this job). */
  listCost: number
  preemptions: number
  /** Attempts (awards) made; 0 when never placed. */
  attempts: number
  /**
   * GPU-hours run by attempts that ended without completing the job (a crashed node's, a failed
   * attempt's: GPUs × the time from its start to its end, paid or not), where the strategy knows them
   * per attempt; absent: the report counts every GPU-hour of a job that failed before the horizon and,
   * of one that completed, what ran beyond its GPUs × duration (report/faults.ts).
   */
  lostGpuHours?: number
  /** True when the tier's promise was broken: gold/silver not started within its max start delay, or not completed. */
  slaMiss: boolean
  /** Bids received for this job over every attempt; absent where a strategy has no bids (the baselines). */
  bids?: number
  /** Protocol messages sent for this job (0 where a strategy has no protocol) and their bytes. */
  messages: number
  bytes: number
}

/** One node's account under one strategy. */
export interface NodeOutcome {
  node: string
  /** GPU-hours the node offered for sale (its GPUs' hours not taken by the owner's own work, over the whole run, [0, runEndMs)). */
  offeredGpuHours: number
  /** GPU-hours it sold to renters. */
  soldGpuHours: number
  /** GPU-hours of the owner's own work. */
  ownerGpuHours: number
  /** Micros it earned. */
  revenue: number
}

/** What one strategy produced on a workload. */
export interface StrategyRun {
  /** `gpumesh`, `old-way`, `central`, `lowest-price`, `random`. */
  strategy: string
  jobs: JobOutcome[]
  nodes: NodeOutcome[]
}
