/**
 * A bootstrap peer's gossip routing (issue 12; protocol/README.md §7.2 "Bootstrap peers"). A bootstrap peer
 * runs no market, but it is the one peer every newcomer is connected to, so it joins the gossip: the global
 * market topic and the evidence topic from the start, and every `gpumesh/<v>/market/<region>` topic one of
 * its peers joins (up to MAX_ROUTED_TOPICS), so that a node connected to it alone still hears every job
 * request, and gossipsub's peer exchange (`doPX` on this role) hands pruned peers each other.
 *
 * It relays only what passes the same §6 checks every node applies (MarketGossip's validators: a forgery
 * is rejected and costs its sender score), and within per-signer budgets: job requests and auction rounds
 * per requester and evidence per signer each take a token from a stranger's bucket (protocol/trust/
 * budget.ts; a bootstrap peer trusts nobody more than another). Bids and awards pass on the checks alone:
 * a provider bids once per job it hears, so its rate follows the job requests already budgeted. It keeps
 * nothing and acts on nothing.
 */
import type { SubscriptionChangeData } from '@libp2p/gossipsub'
import { EVIDENCE_TOPIC, TOPIC_PREFIX, marketTopic, type OpenedMessage } from '../protocol/index.js'
import { RequesterBudget } from '../protocol/trust/budget.js'
import type { GpumeshLibp2p } from './libp2p.js'
import type { Logger } from './logger.js'
import { MarketGossip, type GossipKind } from './market/gossip.js'
import type { NodeMetrics } from './metrics.js'

/** Region topics a bootstrap peer joins at most (the global and evidence topics not counted). */
export const MAX_ROUTED_TOPICS = 64

/** Whether `topic` is a market topic of this wire version for a top-level region (a slug without `-`, ≤ 32 bytes). */
export function isRoutableMarketTopic (topic: string): boolean {
  const prefix = `${TOPIC_PREFIX}/market/`
  return topic.startsWith(prefix) && /^[a-z0-9]{1,32}$/.test(topic.slice(prefix.length))
}

export interface GossipRouterOptions {
  node: GpumeshLibp2p
  now: () => number
  log: Logger
  metrics?: NodeMetrics
  maxTopics?: number
}

export class GossipRouter {
  private readonly gossip: MarketGossip
  private readonly requests = new RequesterBudget()
  private readonly evidence = new RequesterBudget()
  private readonly routed = new Set<string>()
  private readonly onSubscriptions = (evt: CustomEvent<SubscriptionChangeData>): void => {
    for (const s of evt.detail.subscriptions) if (s.subscribe) this.join(s.topic)
  }

  constructor (private readonly options: GossipRouterOptions) {
    this.gossip = new MarketGossip({
      node: options.node,
      now: options.now,
      log: options.log,
      ...(options.metrics !== undefined ? { metrics: options.metrics } : {}),
      admit: (message) => this.admit(message),
      onMessage: () => {}
    })
  }

  start (): void {
    this.gossip.subscribe([marketTopic(), EVIDENCE_TOPIC])
    const pubsub = this.options.node.services.pubsub
    pubsub.addEventListener('subscription-change', this.onSubscriptions)
  }

  stop (): void {
    this.options.node.services.pubsub.removeEventListener('subscription-change', this.onSubscriptions)
    this.gossip.stop()
  }

  /** The topics routed, global and evidence included, sorted. */
  topics (): string[] {
    return [marketTopic(), EVIDENCE_TOPIC, ...this.routed].sort()
  }

  private join (topic: string): void {
    if (topic === marketTopic() || topic === EVIDENCE_TOPIC || this.routed.has(topic)) return
    if (!isRoutableMarketTopic(topic)) return
    const limit = this.options.maxTopics ?? MAX_ROUTED_TOPICS
    if (this.routed.size >= limit) {
      this.options.log.debug('not routing another region topic: at the limit', { topic, limit })
      return
    }
    this.routed.add(topic)
    this.gossip.subscribe([topic])
    this.options.log.info('routing a region topic', { topic })
  }

  private admit (message: OpenedMessage<GossipKind>): string | undefined {
    const now = this.options.now()
    if (message.kind === 'job-request' || message.kind === 'auction-round') return this.requests.admit(message.signer, now)
    if (message.kind === 'bid' || message.kind === 'award') return undefined
    return this.evidence.admit(message.signer, now)
  }
}
