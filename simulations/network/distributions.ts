/**
 * The continuous distributions the network model draws from (delay jitter, bandwidth, churn), on the
 * seeded Prng so a run replays exactly. Each draw takes the stream it uses: a caller forks one per
 * purpose, so adding draws in one place does not shift another's.
 */
import type { Prng } from '../harness/prng.js'

/** A standard normal draw (Box–Muller; one draw per call, the second value is dropped to keep streams simple). */
export function standardNormal (prng: Prng): number {
  const u = 1 - prng.next() // (0, 1]: log(0) never happens
  const v = prng.next()
  return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * v)
}

/** Log-normal parameters (of the underlying normal) for a distribution with this mean and standard deviation (mean > 0). */
export function lognormalParams (mean: number, std: number): { mu: number, sigma: number } {
  const s2 = Math.log(1 + (std * std) / (mean * mean))
  return { mu: Math.log(mean) - s2 / 2, sigma: Math.sqrt(s2) }
}

/** A log-normal draw: exp(mu + sigma·Z). */
export function lognormal (prng: Prng, mu: number, sigma: number): number {
  return Math.exp(mu + sigma * standardNormal(prng))
}

/** A Weibull distribution: shape k (> 0; < 1 is heavy-tailed) and scale λ (> 0), in the caller's unit. */
export interface Weibull { shape: number, scale: number }

/** A Weibull draw by inversion: λ·(−ln U)^(1/k). */
export function weibull (prng: Prng, w: Weibull): number {
  return w.scale * Math.pow(-Math.log(1 - prng.next()), 1 / w.shape)
}

/** The mean of a Weibull distribution: λ·Γ(1 + 1/k). */
export function weibullMean (w: Weibull): number {
  return w.scale * gamma(1 + 1 / w.shape)
}

const LANCZOS = [
  0.99999999999980993, 676.5203681218851, -1259.1392167224028, 771.32342877765313,
  -176.61502916214059, 12.507343278686905, -0.13857109526572012, 9.9843695780195716e-6, 1.5056327351493116e-7
]

/** Γ(x) for x > 0 (Lanczos, g = 7, n = 9: about 15 significant digits). */
export function gamma (x: number): number {
  if (x < 0.5) return Math.PI / (Math.sin(Math.PI * x) * gamma(1 - x))
  const z = x - 1
  let a = LANCZOS[0] as number
  const t = z + 7.5
  for (let i = 1; i < 9; i++) a += (LANCZOS[i] as number) / (z + i)
  return Math.sqrt(2 * Math.PI) * Math.pow(t, z + 0.5) * Math.exp(-t) * a
}
