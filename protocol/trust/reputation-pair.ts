/**
 * One reporter's evidence about one subject, folded into decayed sums (DESIGN §7: time decay). Every
 * record weighs 2^(−age / halfLife); the sums are kept as of the pair's latest record time `at`, so a
 * pair costs the same memory after one record or a million, and decay stays exact: the sums at any
 * later time are the stored ones times decayFactor(now − at).
 */

/** What a pair holds: decayed weights as of `at`, and the plain counts (for `history` and `explain`). */
export interface EvidencePair {
  readonly signer: string
  readonly subject: string
  /** Decayed weight of successes (receipts, settlements, passed probes) as of `at`. */
  ok: number
  /** Decayed weight of failures (failure reports, failed probes) as of `at`. */
  failed: number
  /** The latest record's time, ms. */
  at: number
  okCount: number
  failedCount: number
}

/** 2^(−age / halfLife); 1 for an age ≤ 0 (a record from the future counts fully, never more). */
export function decayFactor (ageMs: number, halfLifeMs: number): number {
  return ageMs <= 0 ? 1 : Math.pow(2, -ageMs / halfLifeMs)
}

/** Fold one record (a success when `ok`) made at `at` into the pair. */
export function addToPair (pair: EvidencePair, ok: boolean, at: number, halfLifeMs: number): void {
  if (at >= pair.at) {
    const f = decayFactor(at - pair.at, halfLifeMs)
    pair.ok *= f
    pair.failed *= f
    pair.at = at
    if (ok) pair.ok += 1
    else pair.failed += 1
  } else {
    const w = decayFactor(pair.at - at, halfLifeMs)
    if (ok) pair.ok += w
    else pair.failed += w
  }
  if (ok) pair.okCount++
  else pair.failedCount++
}

/** The pair's decayed weights at `now`. */
export function pairWeightsAt (pair: EvidencePair, now: number, halfLifeMs: number): { ok: number, failed: number } {
  const f = decayFactor(now - pair.at, halfLifeMs)
  return { ok: pair.ok * f, failed: pair.failed * f }
}
