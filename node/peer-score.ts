/**
 * Gossipsub peer scoring for gpumesh's topics (protocol/README §7.9): what a peer pays for the messages
 * its topic validators reject (node/market/gossip.ts: a forged, malformed, oversized or wrong-kind
 * message is REJECTed; a replay, an expired or a future-dated one only IGNOREd), and the thresholds
 * at which this node stops gossiping to, publishing to and finally reading from it.
 *
 * Names and defaults are @libp2p/gossipsub 17's (`src/score/peer-score-params.ts`,
 * `peer-score-thresholds.ts`, `compute-score.ts`): every value set here is chosen, not left to a
 * default, so a change of library defaults does not change gpumesh's behaviour. The score is
 *   Σ_topics topicWeight × (P1 + P2 + P3 + P3b + P4), capped above at topicScoreCap, + P5 + P6 + P7
 * with P4 = −(invalid messages)² × weight: one rejected message costs 10, two 40, three 90.
 */
import type { PeerScoreParams, TopicScoreParams } from '@libp2p/gossipsub/score'
import type { PeerScoreThresholds } from '@libp2p/gossipsub/score'

/** The score's counters decay once per interval (gossipsub's minimum and default, 1 s). */
export const SCORE_DECAY_INTERVAL_MS = 1_000

/** How long a counter takes to halve (or for a positive one to fade) at one decay per interval. */
export const INVALID_HALF_LIFE_MS = 60_000
export const BEHAVIOUR_HALF_LIFE_MS = 60_000
export const FIRST_DELIVERY_HALF_LIFE_MS = 10 * 60_000

/** The per-interval decay factor that halves a counter in `halfLifeMs`. */
export function decayFor (halfLifeMs: number, intervalMs = SCORE_DECAY_INTERVAL_MS): number {
  if (!(halfLifeMs > intervalMs)) throw new RangeError(`a half-life must be longer than the decay interval (${intervalMs} ms), got ${halfLifeMs}`)
  return Math.pow(0.5, intervalMs / halfLifeMs)
}

/**
 * Thresholds (all gossipsub's defaults, restated so they are part of gpumesh's contract). A score
 * below each one, strictly, loses:
 *  - gossipThreshold −10: IHAVE/IWANT gossip to and from the peer (one rejected message, −10, is
 *    not yet below it; two are);
 *  - publishThreshold −50: this node's own messages are no longer flooded to it;
 *  - graylistThreshold −80: every RPC it sends is dropped unread (three rejected messages, −90, are
 *    below it, so a spammer is cut off after its third forgery, minus what it earned first, ≤ +10).
 *  - acceptPXThreshold 10: peer exchange is taken only from peers at the topic cap (long-lived,
 *    useful ones; in practice the bootstrap peers, which alone send PX);
 *  - opportunisticGraftThreshold 5: below this median mesh score (half the cap) a node grafts
 *    better-scored peers every 60 heartbeats.
 */
export const GOSSIP_SCORE_THRESHOLDS: PeerScoreThresholds = Object.freeze({
  gossipThreshold: -10,
  publishThreshold: -50,
  graylistThreshold: -80,
  acceptPXThreshold: 10,
  opportunisticGraftThreshold: 5
})

/**
 * The parameters of each gpumesh topic (market topics and the evidence topic alike: every message on
 * either is a signed envelope checked in full, and a rejection proves the same misbehaviour).
 */
export const GOSSIP_TOPIC_SCORE: TopicScoreParams = Object.freeze({
  // one weight for every topic: a forgery on the evidence topic costs what one on a market topic does
  topicWeight: 1,
  // P1, time in the mesh: +1 per hour, up to +1; a small reward for staying, never enough to
  // offset one rejected message
  timeInMeshWeight: 1 / 3600,
  timeInMeshQuantum: 1_000,
  timeInMeshCap: 3600,
  // P2, first deliveries: +1 for each message this peer was first to bring (jobs, bids, awards,
  // evidence), up to +5 per topic, fading with a 10-minute half-life. Together with P1 and the topic
  // cap (+10) it is what an honest relay earns, and all an attacker can bank before its forgeries
  firstMessageDeliveriesWeight: 1,
  firstMessageDeliveriesDecay: decayFor(FIRST_DELIVERY_HALF_LIFE_MS),
  firstMessageDeliveriesCap: 5,
  // P3/P3b, mesh delivery rate: off. Market traffic is bursty (a job, its bids, an award, then
  // silence for minutes), so any delivery quota would penalise honest mesh peers on a quiet topic
  meshMessageDeliveriesWeight: 0,
  meshMessageDeliveriesDecay: 0.5,
  meshMessageDeliveriesCap: 100,
  meshMessageDeliveriesThreshold: 1,
  meshMessageDeliveriesWindow: 10,
  meshMessageDeliveriesActivation: 5_000,
  meshFailurePenaltyWeight: 0,
  meshFailurePenaltyDecay: 0.5,
  // P4, rejected messages: −10 × count², the count halving every minute. Three rejections graylist
  // a peer at once (−90 < −80); one (a buggy but honest client) costs only gossip for a moment
  invalidMessageDeliveriesWeight: -10,
  invalidMessageDeliveriesDecay: decayFor(INVALID_HALF_LIFE_MS)
})

export interface PeerScoreOptions {
  /** Drop the IP-colocation penalty (config `gossip.allowColocation`: a local network, a farm behind one NAT). */
  allowColocation?: boolean
}

/**
 * The score parameters for a node that joins `topics` (its market topics, `providerTopics`, and the
 * evidence topic). Only these topics are scored: gossipsub validates and penalises messages only on
 * topics the node subscribes to, and publishes elsewhere through its fanout.
 */
export function gossipScoreParams (topics: Iterable<string>, options: PeerScoreOptions = {}): Partial<PeerScoreParams> {
  const scored: Record<string, TopicScoreParams> = {}
  for (const topic of topics) scored[topic] = { ...GOSSIP_TOPIC_SCORE }
  return {
    topics: scored,
    // every positive contribution together stays at +10: an attacker cannot bank enough good
    // behaviour to send more than three forgeries before it is graylisted
    topicScoreCap: 10,
    // P5 unused: no application score (trust lives in protocol/, not in gossip routing)
    appSpecificScore: () => 0,
    appSpecificWeight: 0,
    // P6, IP colocation: up to 10 peers may share an IP (a host running a few daemons, an office
    // behind one NAT); each one more costs −5 × surplus², so the 13th is below the gossip threshold
    // (−45 < −10 at 13: surplus 3) and the 15th graylisted (−125 < −80)
    IPColocationFactorWeight: options.allowColocation === true ? 0 : -5,
    IPColocationFactorThreshold: 10,
    IPColocationFactorWhitelist: new Set<string>(),
    // P7, broken gossip promises (IWANT not answered) and GRAFTs inside a prune backoff: six are
    // tolerated (a loaded honest peer drops a few), each one more costs −10 × excess²; the counter
    // halves every minute
    behaviourPenaltyWeight: -10,
    behaviourPenaltyThreshold: 6,
    behaviourPenaltyDecay: decayFor(BEHAVIOUR_HALF_LIFE_MS),
    decayInterval: SCORE_DECAY_INTERVAL_MS,
    decayToZero: 0.1,
    // a graylisted peer that reconnects keeps its score for an hour
    retainScore: 60 * 60_000
  }
}

/**
 * Score `topic` with GOSSIP_TOPIC_SCORE on a running gossipsub router, when it is not scored yet: a node
 * joins topics after start (a requester its job's region topics, a bootstrap peer whatever region topics
 * its peers join), and a topic without parameters costs a forger nothing (P4 counts per topic). Uses the
 * router's public `score.params`, which gossipsub reads on every score computation. Returns whether the
 * topic is scored now.
 */
export function scoreTopic (pubsub: unknown, topic: string): boolean {
  const topics = (pubsub as { score?: { params?: { topics?: Record<string, TopicScoreParams> } } }).score?.params?.topics
  if (topics === undefined) return false
  topics[topic] ??= { ...GOSSIP_TOPIC_SCORE }
  return true
}
