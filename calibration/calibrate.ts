/**
 * Calibration (issue 10): the same small workload on real daemons in this process (real-run.ts) and
 * on the model (simulations/calibration/), side by side. The model's network is set from the real
 * one: its one-way delay per hop is the memory transport's latency, its gossip hops the mean the
 * real mesh gives (measured after the mesh formed). `model` overrides exist to show the check can
 * fail: a model mis-set (latency × 3, 4 hops) is out of tolerance.
 */
import {
  CALIBRATION_DEFAULTS, CALIBRATION_TOLERANCE, calibrationWorkload, compareMeasures, runCalibrationModel,
  type CalibrationComparison, type CalibrationMeasures, type CalibrationNetwork, type CalibrationWorkload
} from '../simulations/calibration/index.js'
import type { LoggerFactory } from '../node/logger.js'
import { runCalibrationReal, type RealRun } from './real-run.js'

/** The memory transport's default latency, ms: a nearby peer's one-way delay. */
export const DEFAULT_CALIBRATION_LATENCY_MS = 20
/**
 * The default bid window, ms: short enough that the network shows in the auction (a 2 s window would
 * swallow any latency, and time to award would be the window whatever the model says), long enough
 * that the real stack's bids arrive in it at this latency.
 */
export const DEFAULT_CALIBRATION_BID_WINDOW_MS = 200

export interface CalibrateOptions {
  seed?: number
  nodes?: number
  jobs?: number
  latencyMs?: number
  bidWindowMs?: number
  /** Set the model apart from what was measured (to show the check fails when the model is wrong). */
  model?: { latencyFactor?: number, gossipHops?: number }
  loggers?: LoggerFactory
  onProgress?: (phase: string, done: number, total: number) => void
}

export interface CalibrationResult {
  workload: CalibrationWorkload
  seed: number
  nodes: number
  jobs: number
  bidWindowMs: number
  /** The network measured on the real side, and what the model was given. */
  network: CalibrationNetwork
  modelNetwork: { latencyMs: number, gossipHops: number }
  real: CalibrationMeasures
  model: CalibrationMeasures
  comparison: CalibrationComparison
  stuck: RealRun['stuck']
  phases: RealRun['phases']
  announced: RealRun['announced']
  window: RealRun['window']
}

export async function calibrate (options: CalibrateOptions = {}): Promise<CalibrationResult> {
  const seed = options.seed ?? 1
  const nodes = options.nodes ?? CALIBRATION_DEFAULTS.nodes
  const jobs = options.jobs ?? CALIBRATION_DEFAULTS.jobs
  const latencyMs = options.latencyMs ?? DEFAULT_CALIBRATION_LATENCY_MS
  const bidWindowMs = options.bidWindowMs ?? DEFAULT_CALIBRATION_BID_WINDOW_MS
  const workload = calibrationWorkload({ seed, nodes, jobs })
  const real = await runCalibrationReal(workload, { latencyMs, bidWindowMs, ...(options.loggers !== undefined ? { loggers: options.loggers } : {}), ...(options.onProgress !== undefined ? { onProgress: options.onProgress } : {}) })
  const started = Date.now()
  const modelNetwork = {
    latencyMs: latencyMs * (options.model?.latencyFactor ?? 1),
    gossipHops: options.model?.gossipHops ?? real.network.gossipHops
  }
  const model = runCalibrationModel(workload, { seed, bidWindowMs, ...modelNetwork })
  return {
    workload,
    seed,
    nodes,
    jobs,
    bidWindowMs,
    network: real.network,
    modelNetwork,
    real: real.measures,
    model,
    comparison: compareMeasures(model, real.measures, CALIBRATION_TOLERANCE),
    stuck: real.stuck,
    announced: real.announced,
    window: real.window,
    phases: { ...real.phases, model: Date.now() - started }
  }
}
