import { defaultScoringParams, type ScoringParams } from './scoring.js'
import type { Outcomes } from './reliability.js'
import { ReputationStore } from '../trust/reputation.js'
import type { ReputationParams } from '../trust/reputation-params.js'

/** The id a Reputation made without one uses for the node itself. */
export const LOCAL_PEER = 'self'

/**
 * A requester's view of providers' reliability (DESIGN §7: every node computes its own), used to weight
 * bids: the trust layer's evidence store (protocol/trust/reputation.ts) with the market's calls on top.
 * `record` is this node's own outcome (a verified receipt is a success; a failed attempt it blamed on the
 * provider is a failure), counted fully; others' signed evidence goes in through `add` and counts only
 * as far as this node trusts its reporter. The prior's mean is the scoring's unknown reliability, worth
 * reliability.ts's prior weight, so one failure ranks a provider below a newcomer and one success above;
 * with every record at one time and no one else's evidence the value is reliability.ts's exactly. A
 * provider no one reported on is `undefined`, which scoring treats as that same unknown reliability.
 * Time: a query at `now` (default: the latest record's time) decays every record by the half-life.
 */
export class Reputation extends ReputationStore {
  constructor (params: Pick<ScoringParams, 'unknownReliability'> = defaultScoringParams, self = LOCAL_PEER, reputation: Partial<ReputationParams> = {}) {
    super(self, { priorMean: params.unknownReliability, ...reputation })
  }

  /** This node's own outcome with `peer` at `at` (default: the latest record's time). */
  record (peer: string, ok: boolean, at = this.clock): void {
    this.add(ok ? { signer: this.self, subject: peer, kind: 'receipt', at } : { signer: this.self, subject: peer, kind: 'failure', at })
  }

  /** The outcomes this node saw of `peer` itself (a copy), or undefined when it has no history here. */
  history (peer: string): Outcomes | undefined {
    return this.own(peer)
  }
}
