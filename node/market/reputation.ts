/**
 * This node's own view of providers' reliability (DESIGN §7: every node computes its own), used to
 * weight bids. A first, deliberately simple estimator: a Beta(1, 1) prior updated by outcomes this
 * node saw itself (a verified receipt is a success; a failed attempt it blamed on the provider is a
 * failure), reliability = (successes + 1) / (outcomes + 2). A provider never seen is `undefined`,
 * which scoring treats as UNKNOWN_RELIABILITY. Gossiped evidence from others is not counted here: it
 * can be forged by Sybils, and weighing it is the trust layer's job.
 */
export class Reputation {
  private readonly outcomes = new Map<string, { ok: number, failed: number }>()

  record (peer: string, ok: boolean): void {
    const o = this.outcomes.get(peer) ?? { ok: 0, failed: 0 }
    if (ok) o.ok++
    else o.failed++
    this.outcomes.set(peer, o)
  }

  /** 0..1, or undefined for a provider this node has no outcome for. */
  reliability (peer: string): number | undefined {
    const o = this.outcomes.get(peer)
    return o === undefined ? undefined : (o.ok + 1) / (o.ok + o.failed + 2)
  }
}
