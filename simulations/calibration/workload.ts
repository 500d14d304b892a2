/**
 * The calibration workload (issue 10, "Calibration"): a small market that runs in real time on real
 * daemons (calibration/, over the memory transport) and on the harness (model-run.ts), from this one
 * description. A few GPU models, floors and regions; jobs of a few seconds whose arrivals are spaced
 * so that auctions overlap a little; two buyers (one per region the jobs ask for, as the market
 * strategy makes one renter per region). Seeded: the same seed and size give the same workload.
 */
import { modelSlug } from '../../protocol/constants.js'
import { lookupKeyFor } from '../../protocol/discovery.js'
import { credits, GPU_MODELS, type GpuModel } from '../harness/payloads.js'
import { Prng } from '../harness/prng.js'
import type { FleetNode, SimJob, Workload } from '../model.js'

/** The default size: 20 gpumesh nodes (18 providers, 2 buyers) and 24 jobs. */
export const CALIBRATION_DEFAULTS = Object.freeze({ nodes: 20, jobs: 24 })

/** Fewest nodes: two buyers and two providers. */
export const MIN_CALIBRATION_NODES = 4

/** The regions jobs ask for (one buyer each); providers sit in their sub-regions. */
export const BUYER_REGIONS = Object.freeze(['eu', 'us'] as const)

/** The market parameters both sides run with: a 3 s lease and 2 s billing intervals, so a job of seconds is heartbeated and paid. */
export const CALIBRATION_MARKET = Object.freeze({ leaseMs: 3_000, billingIntervalSec: 2 })

/** How long each job may wait for its start, s (its request's maxStartDelaySec, both sides). */
export const CALIBRATION_START_DELAY_SEC = 60

export interface CalibrationWorkloadOptions {
  seed?: number
  /** gpumesh nodes: buyers (BUYER_REGIONS) plus providers (default 20). */
  nodes?: number
  /** Jobs (default 24). */
  jobs?: number
  /** Mean time between two submissions, ms (default 600: with a 1 s bid window, auctions overlap a little). */
  meanGapMs?: number
}

/** A provider of the calibration fleet: its hardware and owner's floor, as both sides set them up. */
export interface CalibrationProvider extends FleetNode {
  /** Price floor, micros per GPU-hour. */
  floor: number
}

export interface CalibrationWorkload extends Workload {
  fleet: CalibrationProvider[]
  /** The buyers, one per region the jobs ask for. */
  buyers: string[]
}

const SUB_REGIONS: Record<typeof BUYER_REGIONS[number], readonly string[]> = { eu: ['eu-west', 'eu-north'], us: ['us-east', 'us-west'] }
const COUNTRY: Record<string, string> = { 'eu-west': 'FR', 'eu-north': 'SE', 'us-east': 'US', 'us-west': 'US' }
const MODELS: readonly GpuModel[] = ['h100', 'a100', 'l40s', 'rtx4090']
/** Each model's floor, credits per GPU-hour, before a provider's own spread. */
const BASE_FLOOR: Record<GpuModel, number> = { h100: 3, a100: 2, l40s: 1, rtx4090: 0.5, t4: 0.2 }

export class InvalidCalibrationSizeError extends Error {
  readonly code = 'INVALID_CALIBRATION_SIZE'
  constructor (message: string) {
    super(message)
    this.name = 'InvalidCalibrationSizeError'
  }
}

/** The calibration workload for `options` (defaults: CALIBRATION_DEFAULTS, seed 1). */
export function calibrationWorkload (options: CalibrationWorkloadOptions = {}): CalibrationWorkload {
  const seed = options.seed ?? 1
  const nodes = options.nodes ?? CALIBRATION_DEFAULTS.nodes
  const jobs = options.jobs ?? CALIBRATION_DEFAULTS.jobs
  if (!Number.isInteger(nodes) || nodes < MIN_CALIBRATION_NODES) throw new InvalidCalibrationSizeError(`nodes must be a whole number ≥ ${MIN_CALIBRATION_NODES}, got ${nodes}`)
  if (!Number.isInteger(jobs) || jobs < 1) throw new InvalidCalibrationSizeError(`jobs must be a whole number ≥ 1, got ${jobs}`)
  const prng = new Prng(seed).fork('calibration')
  const fleetPrng = prng.fork('fleet')
  const fleet: CalibrationProvider[] = []
  const providers = nodes - BUYER_REGIONS.length
  for (let i = 0; i < providers; i++) {
    const area = BUYER_REGIONS[i % BUYER_REGIONS.length] as typeof BUYER_REGIONS[number]
    const region = (SUB_REGIONS[area])[Math.floor(i / BUYER_REGIONS.length) % 2] as string
    const model = MODELS[Math.floor(i / 4) % MODELS.length] as GpuModel
    const m = GPU_MODELS[model]
    fleet.push({
      id: `p${String(i).padStart(2, '0')}-${model}-${region}`,
      model: modelSlug(m.name),
      gpuName: m.name,
      gpus: 1 + fleetPrng.int(0, 1),
      vramMiB: m.vramMiB,
      country: COUNTRY[region] as string,
      region,
      cpuMilli: 32_000,
      memoryMiB: 262_144,
      // a spread of ±20 % around the model's floor, in whole hundredths of a credit
      floor: credits(Math.round(BASE_FLOOR[model] * (80 + fleetPrng.int(0, 40))) / 100)
    })
  }
  const jobPrng = prng.fork('jobs')
  const gap = options.meanGapMs ?? 600
  const list: SimJob[] = []
  let t = 1_000
  for (let i = 0; i < jobs; i++) {
    const area = jobPrng.pick(BUYER_REGIONS)
    // a third ask for one model, the rest for any GPU with enough memory
    const models = jobPrng.chance(1 / 3) ? [jobPrng.pick(['h100', 'a100', 'l40s'])] : []
    list.push({
      id: `c${String(i).padStart(3, '0')}`,
      submitAt: t,
      durationMs: 2_000 + jobPrng.int(0, 2_000),
      gpus: 1,
      gpuMilli: 1000,
      models,
      minVramGB: jobPrng.pick([0, 24, 40]),
      tier: 'silver',
      region: area,
      residency: 'strict',
      maxPrice: credits(jobPrng.pick([2.5, 4, 6])),
      source: 'calibration'
    })
    // arrivals: uniform in [0.5, 1.5) × the mean gap, so neighbours' auctions overlap now and then
    t += Math.round(gap * (0.5 + jobPrng.next()))
  }
  return {
    name: `calibration, ${nodes} nodes (${providers} providers, ${BUYER_REGIONS.length} buyers), ${jobs} jobs`,
    fleet,
    buyers: BUYER_REGIONS.map((r) => `renter-${r}`),
    ownerWork: [],
    jobs: list,
    horizonMs: t + 60_000
  }
}

/** A `providers` lookup a buyer makes: the capability key its jobs' region and memory give (protocol lookupKeyFor). */
export interface DiscoveryLookup { buyer: string, key: string }

/** The distinct lookups the workload's jobs ask for, by buyer, in order of first use: both sides time the same ones. */
export function discoveryLookups (workload: CalibrationWorkload): DiscoveryLookup[] {
  const out: DiscoveryLookup[] = []
  const seen = new Set<string>()
  for (const job of workload.jobs) {
    const region = job.region ?? 'global'
    const key = lookupKeyFor({ region, ...(job.minVramGB > 0 ? { minVramGB: job.minVramGB } : {}) })
    const buyer = `renter-${region}`
    if (seen.has(`${buyer} ${key}`)) continue
    seen.add(`${buyer} ${key}`)
    out.push({ buyer, key })
  }
  return out
}
