/**
 * Bid damping (DESIGN §5): bids per job stay bounded as the network grows. A provider that could bid waits
 * in proportion to how badly it fits, delay = ⌊(1 − fit) × BID_DELAY_FRACTION × bidWindowMs⌋, so better fits
 * bid first and every bid still lands inside the window (the rest of the window absorbs gossip latency).
 * When its turn comes it stays silent if it has already seen ENOUGH_BETTER_BIDS bids at least as good as its
 * own. Bids are bounded because the fit follows the price order (see bidFit in bid-policy.ts): the first
 * providers to bid are the cheapest, and once `enough` of them have, everyone after them is worse.
 */

/** Share of the bid window over which delays spread; the remaining 40 % is left for gossip latency. */
export const BID_DELAY_FRACTION = 0.6

/** A provider stays silent after seeing this many bids at least as good as its own. */
export const ENOUGH_BETTER_BIDS = 5

/**
 * How long to wait before bidding, in whole ms: ⌊(1 − fit) × fraction × bidWindowMs⌋. A fit outside [0, 1]
 * (or NaN) is clamped (NaN counts as 0), so the delay always lies in [0, fraction × bidWindowMs].
 */
export function bidDelayMs (fit: number, bidWindowMs: number, fraction: number = BID_DELAY_FRACTION): number {
  const f = Number.isNaN(fit) ? 0 : Math.min(1, Math.max(0, fit))
  const share = Math.min(1, Math.max(0, fraction))
  return Math.floor((1 - f) * (share * Math.max(0, bidWindowMs)))
}

/**
 * True once at least `enough` of the seen bids' scores are at least as good as `myScore` (lower wins, e.g.
 * effective price). Equal scores count: an equally good bid serves the requester as well as this one (the
 * final tie-break by bid CID is arbitrary), so the best score is always sent by the first to reach it.
 */
export function stayingSilent (myScore: number, seenScores: Iterable<number>, enough: number = ENOUGH_BETTER_BIDS): boolean {
  let better = 0
  for (const score of seenScores) {
    if (score <= myScore && ++better >= enough) return true
  }
  return better >= enough
}
