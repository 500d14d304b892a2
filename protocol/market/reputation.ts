import { defaultScoringParams, type ScoringParams } from './scoring.js'
import { estimateReliability, type Outcomes } from './reliability.js'

/**
 * A requester's own view of providers' reliability (DESIGN §7: every node computes its own), used to
 * weight bids. It counts the outcomes this node saw itself (a verified receipt is a success; a failed
 * attempt it blamed on the provider is a failure); the estimate is reliability.ts's
 * `estimateReliability`, whose prior has the scoring's unknown reliability as its mean, so one failure
 * ranks a provider below a newcomer and one success above. A provider never seen is `undefined`, which
 * scoring treats as that same unknown reliability. Gossiped evidence from others is not counted here: it
 * can be forged by Sybils, and weighing it is the trust layer's job. Pure: a map of counts.
 */
export class Reputation {
  private readonly outcomes = new Map<string, Outcomes>()

  constructor (private readonly params: Pick<ScoringParams, 'unknownReliability'> = defaultScoringParams) {}

  record (peer: string, ok: boolean): void {
    const o = this.outcomes.get(peer) ?? { ok: 0, failed: 0 }
    if (ok) o.ok++
    else o.failed++
    this.outcomes.set(peer, o)
  }

  /** 0..1, or undefined for a provider this node has no outcome for. */
  reliability (peer: string): number | undefined {
    const o = this.outcomes.get(peer)
    return o === undefined ? undefined : estimateReliability(o, this.params)
  }

  /** The outcomes seen of `peer` (a copy), or undefined when it has no history here. */
  history (peer: string): Outcomes | undefined {
    const o = this.outcomes.get(peer)
    return o === undefined ? undefined : { ...o }
  }
}
