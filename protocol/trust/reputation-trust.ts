/**
 * This node's trust in reporters (DESIGN §7): personalised PageRank seeded at the node itself, the
 * EigenTrust way. A peer's local trust in a subject is its decayed successes minus failures (never
 * below 0), normalised over what that peer vouched for; trust starts all at this node and each step
 * passes a `damping` share of every peer's trust along its vouches and sends the rest (and the trust of
 * peers that vouch for nobody) back to this node.
 *
 * So trust reaches a peer only along a chain of vouches that starts with this node's own experience: a
 * clique of identities this node never dealt with, vouching for each other however densely, holds
 * exactly 0 (nothing ever flows into it), and its reports count for nothing.
 *
 * Deterministic: the result depends only on the pairs' order (the store's insertion order, which a
 * snapshot keeps), so a restored store computes bit-identical trust.
 */
import type { ReputationParams } from './reputation-params.js'
import { pairWeightsAt, type EvidencePair } from './reputation-pair.js'

/** Trust mass per identity (self's included; it sums to at most 1), for identities that can hold any. */
export type TrustMass = ReadonlyMap<string, number>

export function computeTrust (pairs: Iterable<EvidencePair>, self: string, now: number, params: Pick<ReputationParams, 'damping' | 'iterations' | 'halfLifeMs'>): TrustMass {
  const index = new Map<string, number>([[self, 0]])
  const idOf = (peer: string): number => {
    let i = index.get(peer)
    if (i === undefined) { i = index.size; index.set(peer, i) }
    return i
  }
  const from: number[] = []
  const to: number[] = []
  const weight: number[] = []
  for (const pair of pairs) {
    const w = pairWeightsAt(pair, now, params.halfLifeMs)
    const local = w.ok - w.failed
    if (!(local > 0)) continue
    from.push(idOf(pair.signer))
    to.push(idOf(pair.subject))
    weight.push(local)
  }
  const n = index.size
  const out = new Float64Array(n)
  for (let e = 0; e < from.length; e++) out[from[e] as number] = (out[from[e] as number] as number) + (weight[e] as number)
  let trust = new Float64Array(n)
  trust[0] = 1
  let next = new Float64Array(n)
  const { damping } = params
  for (let k = 0; k < params.iterations; k++) {
    next.fill(0)
    // what is not passed on (the restart share, and the trust of peers that vouch for nobody) goes home
    let home = 1 - damping
    for (let i = 0; i < n; i++) if (out[i] === 0) home += damping * (trust[i] as number)
    for (let e = 0; e < from.length; e++) {
      const f = from[e] as number
      const t = trust[f] as number
      if (t === 0) continue
      const j = to[e] as number
      next[j] = (next[j] as number) + damping * t * (weight[e] as number) / (out[f] as number)
    }
    next[0] = (next[0] as number) + home
    const swap = trust
    trust = next
    next = swap
  }
  const mass = new Map<string, number>()
  for (const [peer, i] of index) if ((trust[i] as number) > 0) mass.set(peer, trust[i] as number)
  return mass
}
