/**
 * Per-node bandwidth for blob transfers (inputs, outputs, images), drawn once per node from a
 * documented mix of connection classes, and the time one transfer takes.
 *
 * DEFAULT_BANDWIDTH_CLASSES is AN ASSUMPTION about who owns the GPUs, with the public figures it leans on:
 * - `datacenter` (60 %): symmetric, log-normal around 1 Gbit/s (σ 0.5: most between 370 Mbit/s and
 *   2.7 Gbit/s), the port speed colocation and cloud GPU hosts commonly get.
 * - `residential` (40 %): log-normal around 100 Mbit/s down (σ 0.8) and 20 Mbit/s up (σ 1.0), the order
 *   of the fixed-broadband medians Ookla's Speedtest Global Index reports (about 90–100 Mbit/s down,
 *   lower and more spread up).
 * Draws are clamped to [1 Mbit/s, 100 Gbit/s].
 *
 * A transfer takes the path's one-way delay plus bytes / min(sender's up, receiver's down): no sharing
 * between concurrent transfers, no TCP slow start. It is the floor a real transfer cannot beat.
 */
import type { Prng } from '../harness/prng.js'
import { lognormal } from './distributions.js'

/** A log-normal rate: `median` Mbit/s, `sigma` of the underlying normal. */
export interface RateDistribution { median: number, sigma: number }

export interface BandwidthClass {
  name: string
  /** Relative share of nodes (> 0). */
  weight: number
  down: RateDistribution
  up: RateDistribution
}

/** One node's link, Mbit/s. */
export interface NodeBandwidth { upMbps: number, downMbps: number }

export const MIN_MBPS = 1
export const MAX_MBPS = 100_000

export const DEFAULT_BANDWIDTH_CLASSES: readonly BandwidthClass[] = Object.freeze([
  Object.freeze({ name: 'datacenter', weight: 0.6, down: Object.freeze({ median: 1000, sigma: 0.5 }), up: Object.freeze({ median: 1000, sigma: 0.5 }) }),
  Object.freeze({ name: 'residential', weight: 0.4, down: Object.freeze({ median: 100, sigma: 0.8 }), up: Object.freeze({ median: 20, sigma: 1.0 }) })
])

/** A bandwidth mix that cannot be drawn from; `field` names the class and rate. */
export class InvalidBandwidthError extends Error {
  override readonly name = 'InvalidBandwidthError'
  readonly code = 'INVALID_BANDWIDTH'
  constructor (readonly field: string, message: string) {
    super(`bandwidth.${field}: ${message}`)
  }
}

export function validateBandwidthClasses (classes: readonly BandwidthClass[]): void {
  if (classes.length === 0) throw new InvalidBandwidthError('classes', 'expected at least one class')
  for (const c of classes) {
    if (!(Number.isFinite(c.weight) && c.weight > 0)) throw new InvalidBandwidthError(`${c.name}.weight`, `expected a number > 0, got ${String(c.weight)}`)
    for (const [dir, r] of [['down', c.down], ['up', c.up]] as const) {
      if (!(Number.isFinite(r.median) && r.median > 0)) throw new InvalidBandwidthError(`${c.name}.${dir}.median`, `expected Mbit/s > 0, got ${String(r.median)}`)
      if (!(Number.isFinite(r.sigma) && r.sigma >= 0)) throw new InvalidBandwidthError(`${c.name}.${dir}.sigma`, `expected a number ≥ 0, got ${String(r.sigma)}`)
    }
  }
}

function rate (prng: Prng, r: RateDistribution): number {
  return Math.min(MAX_MBPS, Math.max(MIN_MBPS, lognormal(prng, Math.log(r.median), r.sigma)))
}

/** One node's link: a class by weight, then its down and up rates. Validate the classes first. */
export function drawBandwidth (prng: Prng, classes: readonly BandwidthClass[] = DEFAULT_BANDWIDTH_CLASSES): NodeBandwidth & { class: string } {
  let total = 0
  for (const c of classes) total += c.weight
  let x = prng.next() * total
  let chosen = classes[classes.length - 1] as BandwidthClass
  for (const c of classes) {
    if (x < c.weight) { chosen = c; break }
    x -= c.weight
  }
  return { class: chosen.name, downMbps: rate(prng, chosen.down), upMbps: rate(prng, chosen.up) }
}

/** How long `bytes` take from a sender to a receiver over a path of `latencyMs`: latency + bytes / min(up, down), ms. */
export function transferMs (bytes: number, latencyMs: number, sender: NodeBandwidth, receiver: NodeBandwidth): number {
  const mbps = Math.min(sender.upMbps, receiver.downMbps)
  return latencyMs + (bytes * 8) / (mbps * 1000)
}
