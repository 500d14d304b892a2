/**
 * Shared types of the market's decision logic (DESIGN §5–§6). Everything in protocol/market/ is pure:
 * time comes in as `now` (ms since the epoch), randomness as a seeded value, and the functions return
 * decisions and effects for node/ (and the simulator) to carry out.
 */
import type { CapabilityAd } from '../messages/capability-ad.js'
import type { JobRequest } from '../messages/job-request.js'

export type Tier = JobRequest['sla']['tier']

/** Work a provider has committed GPUs to. */
export interface Allocation {
  /** Job id (CID string). */
  job: string
  /** GPU UUIDs held. */
  gpus: string[]
  tier: Tier
  /** Price being paid, micros per GPU-hour. */
  price: number
  startedAt: number
  /** When the allocation ends at the latest (start + the job's max runtime). */
  endsAt: number
}

/** What a provider's bid policy reads about itself. */
export interface ProviderState {
  /** This provider's current capability ad (GPUs, price schedule, calendar, workloads, limits, region). */
  ad: CapabilityAd
  allocations: Allocation[]
  /** Preemption sets are chosen exactly among up to this many jobs in the way (MarketParams.preemptExactLimit; default PREEMPT_EXACT_LIMIT). */
  preemptExactLimit?: number
  /** Latest readings, when known: used against ad.limits (thermal/power caps). */
  telemetry?: { maxGpuTempC?: number, powerW?: number }
}

/** Why a provider does not bid; also the unit of the no-bids explanation. */
export const DeclineReason = {
  NO_GPUS: 'NO_GPUS',
  GPU_COUNT: 'GPU_COUNT',
  VRAM: 'VRAM',
  MODEL: 'MODEL',
  WORKLOAD: 'WORKLOAD',
  REGION: 'REGION',
  PRICE: 'PRICE',
  CALENDAR: 'CALENDAR',
  BUSY: 'BUSY',
  THERMAL: 'THERMAL',
  POWER: 'POWER',
  EXPIRED: 'EXPIRED'
} as const
export type DeclineReason = typeof DeclineReason[keyof typeof DeclineReason]

export type BidDecision =
  | {
    kind: 'bid'
    /** Asked price, micros per GPU-hour. */
    price: number
    /** GPU UUIDs to allocate. */
    gpus: string[]
    /** Latest start the provider commits to. */
    startBy: number
    /** Bronze jobs (ids) this bid would preempt if it wins. */
    preempts: string[]
    /** 0..1, how well the provider fits (used for bid damping). */
    fit: number
  }
  | { kind: 'decline', reason: DeclineReason, detail: string }
