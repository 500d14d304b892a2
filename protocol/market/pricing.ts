/**
 * Peak/off-peak pricing (DESIGN §5). A provider's schedule has a floor and optionally a peak price that
 * applies inside weekly peak windows (the owner's time zone, same wall-clock rules as the calendar). The
 * price asked for an interval is the time-weighted average, rounded up to a whole micro. Integer inputs and
 * results; the arithmetic is exact (BigInt), so no float ever reaches the wire.
 */
import type { PriceSchedule } from '../messages/capability-ad.js'
import { freeIntervals, isAvailable } from './calendar.js'
import { exactCharge } from './lifecycle-shared.js'

/** ⌈a / b⌉ for non-negative a and positive b. */
function ceilDiv (a: bigint, b: bigint): bigint {
  return (a + b - 1n) / b
}

/** A bigint result as a safe integer, or RangeError. */
function toSafe (value: bigint, what: string): number {
  if (value > BigInt(Number.MAX_SAFE_INTEGER)) throw new RangeError(`${what} exceeds 2^53 − 1 micros`)
  return Number(value)
}

function assertUint (value: number, name: string): void {
  if (!Number.isSafeInteger(value) || value < 0) throw new RangeError(`${name} must be a non-negative safe integer, got ${value}`)
}

/** The price inside peak windows: the peak price, but never below the floor. */
export function peakPrice (schedule: PriceSchedule): number {
  return Math.max(schedule.floor, schedule.peak?.price ?? schedule.floor)
}

/** How many ms of [start, start + durationMs) fall inside the schedule's peak windows. */
export function peakOverlapMs (schedule: PriceSchedule, timeZone: string, start: number, durationMs: number): number {
  if (schedule.peak === undefined) return 0
  const peak = { timeZone, windows: schedule.peak.windows }
  return freeIntervals(peak, start, start + durationMs).reduce((sum, i) => sum + (i.end - i.start), 0)
}

/**
 * The price per GPU-hour asked for [start, start + durationMs):
 * ⌈(floor × offPeakMs + peak × peakMs) / durationMs⌉ with peak = max(peak price, floor), so the result lies
 * between the floor and the peak price. A duration ≤ 0 asks the price in force at `start`.
 */
export function priceFor (schedule: PriceSchedule, timeZone: string, start: number, durationMs: number): number {
  const high = peakPrice(schedule)
  if (schedule.peak === undefined || high === schedule.floor) return schedule.floor
  if (durationMs <= 0) return isAvailable({ timeZone, windows: schedule.peak.windows }, start) ? high : schedule.floor
  const peakMs = peakOverlapMs(schedule, timeZone, start, durationMs)
  const total = BigInt(schedule.floor) * BigInt(durationMs - peakMs) + BigInt(high) * BigInt(peakMs)
  return toSafe(ceilDiv(total, BigInt(durationMs)), 'price')
}

/**
 * What `gpus` GPUs cost at `pricePerGpuHour` for `durationMs`, in micros, rounded up: the billing formula
 * (lifecycle-shared's `exactCharge`, which `chargeFor` also uses), for callers whose inputs are their
 * own: a bad argument or a result beyond 2⁵³ − 1 is a RangeError rather than a clamped amount.
 */
export function cost (pricePerGpuHour: number, gpus: number, durationMs: number): number {
  assertUint(pricePerGpuHour, 'pricePerGpuHour')
  assertUint(gpus, 'gpus')
  assertUint(durationMs, 'durationMs')
  return toSafe(exactCharge(BigInt(pricePerGpuHour), BigInt(gpus), BigInt(durationMs)), 'cost')
}

/**
 * Micros as credits for people: 1_500_000 → `1.50`, 1_234_567 → `1.234567`, -1 → `-0.000001`. Exact for
 * every safe integer (integer arithmetic only); anything else is not an amount and throws a RangeError.
 */
export function formatMicros (micros: number): string {
  if (!Number.isSafeInteger(micros)) throw new RangeError(`not a whole, safe number of micros: ${micros}`)
  const abs = Math.abs(micros)
  const rest = abs % 1_000_000
  const whole = (abs - rest) / 1_000_000
  const fraction = String(rest).padStart(6, '0').replace(/0+$/, '').padEnd(2, '0')
  return `${micros < 0 ? '-' : ''}${whole}.${fraction}`
}
