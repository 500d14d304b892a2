/**
 * What the award test files (test/unit/protocol/market/award*.test.ts) share: the instant the auction
 * closes, views that rank by ask alone, `decideAward` with the usual lease and billing, the award out of
 * a decision, and the header the requester signs it with.
 */
import assert from 'node:assert/strict'
import type { Award } from '../../protocol/index.js'
import { decideAward, type AuctionBid, type AuctionJob, type AwardDecision, type AwardFields, type AwardInput } from '../../protocol/market/award.js'
import { NOW } from './arbitraries.js'

/** The auction closes a second after NOW. */
export const DECIDED = NOW + 1_000

/** Reliability 1 and RTT 0 for everyone: ranking by ask. */
export const uniform: Pick<AwardInput, 'reliability' | 'rtt'> = { reliability: () => 1, rtt: () => 0 }

export function decide (job: AuctionJob, bids: AuctionBid[], extra: Partial<AwardInput> = {}): AwardDecision {
  return decideAward({ job, bids, attempt: 1, now: DECIDED, leaseMs: 30_000, billingIntervalSec: 60, ...uniform, ...extra })
}

export function awarded (decision: AwardDecision): AwardFields {
  assert.equal(decision.kind, 'award', decision.kind === 'none' ? decision.detail : '')
  return (decision as Extract<AwardDecision, { kind: 'award' }>).award
}

/** The award as the requester would sign it. */
export function withHeader (fields: AwardFields, now = DECIDED): Award {
  return { v: 1, issuedAt: now, expiresAt: now + 600_000, ...fields }
}
