/**
 * The market's gossip (DESIGN §5, protocol/README §7.2): market topics carry job requests, auction
 * rounds, bids and awards; the evidence topic carries receipts and failure reports. A topic validator
 * opens every message with the full §6 checks before gossipsub forwards it: a malformed, forged or
 * oversized message is REJECTed (gossipsub's peer scoring penalises whoever sent it); a replay or an
 * expired one is IGNOREd (an honest peer may relay a copy late). Accepted messages reach the market
 * through `onMessage`, once each.
 */
import { messageKindOf } from './message-kind.js'
import { TopicValidatorResult, type Message } from '@libp2p/gossipsub'
import type { PeerId } from '@libp2p/interface'
import {
  EVIDENCE_TOPIC, MessageRejectedError, RejectReason, ReplayCache, TOPIC_PREFIX, openMessage, replayKey,
  type Kind, type OpenedMessage, type SealedMessage
} from '../../protocol/index.js'
import { EVIDENCE_KINDS, type EvidenceKind } from '../../protocol/trust/evidence-budget.js'
import type { GpumeshLibp2p } from '../libp2p.js'
import type { Logger } from '../logger.js'
import type { NodeMetrics } from '../metrics.js'
import { scoreTopic } from '../peer-score.js'

export const MARKET_KINDS = ['job-request', 'auction-round', 'bid', 'award'] as const satisfies readonly Kind[]
export type MarketKind = typeof MARKET_KINDS[number]
export { EVIDENCE_KINDS, type EvidenceKind }
export type GossipKind = MarketKind | EvidenceKind

/** Reasons that do not prove the sender misbehaved: ignore, do not penalise. */
const IGNORED = new Set<string>([RejectReason.REPLAY, RejectReason.EXPIRED, RejectReason.FUTURE_DATED])

export interface GossipOptions {
  node: GpumeshLibp2p
  now: () => number
  log: Logger
  metrics?: NodeMetrics
  /**
   * A budget after the checks (protocol/trust/): a reason to refuse a valid message this node does
   * not want (evidence about nothing it knows, a signer over its quota). Refused messages are
   * IGNOREd: neither kept nor relayed, and their sender is not penalised (it may know what this
   * node does not).
   */
  admit?: (message: OpenedMessage<GossipKind>) => string | undefined
  /** Called once for each accepted message (not for this node's own). */
  onMessage: (message: OpenedMessage<GossipKind>, topic: string, from: string) => void
  /** Called for each message this node publishes (before it goes out), e.g. to index its own evidence. */
  onPublish?: (message: SealedMessage<GossipKind>, topics: readonly string[]) => void
}

export class MarketGossip {
  private readonly replay = new ReplayCache()
  private readonly topics = new Set<string>()

  constructor (private readonly options: GossipOptions) {}

  /** Listen on `topics` (market topics or the evidence topic); idempotent. */
  subscribe (topics: Iterable<string>): void {
    const pubsub = this.options.node.services.pubsub
    for (const topic of topics) {
      if (this.topics.has(topic)) continue
      if (!topic.startsWith(`${TOPIC_PREFIX}/`)) throw new RangeError(`not a gpumesh topic: ${topic}`)
      this.topics.add(topic)
      const kinds: readonly Kind[] = topic === EVIDENCE_TOPIC ? EVIDENCE_KINDS : MARKET_KINDS
      pubsub.topicValidators.set(topic, (peer: PeerId, message: Message) => this.validate(topic, kinds, peer, message))
      // rejected messages cost their sender score on every topic joined, not only those known at start
      scoreTopic(pubsub, topic)
      pubsub.subscribe(topic)
    }
  }

  /** Publish a sealed message on `topics`; remembers it so a copy coming back is not handled again. */
  async publish (message: SealedMessage<GossipKind>, topics: Iterable<string>): Promise<void> {
    const list = [...topics]
    // the key a receiver uses (nonce or CID by kind), so a copy coming back is a REPLAY here too
    const key = replayKey(message, this.options.node.peerId.toString())
    this.replay.add(key, (message.payload as { expiresAt: number }).expiresAt, this.options.now())
    try {
      this.options.onPublish?.(message, list)
    } catch (err) {
      this.options.log.error('publish hook failed', { kind: message.kind, error: err })
    }
    const pubsub = this.options.node.services.pubsub
    await Promise.all(list.map(async (topic) => {
      try {
        await pubsub.publish(topic, message.bytes)
      } catch (err) {
        // no peer on the topic yet: the message is lost for them, as any gossip may be
        this.options.log.debug('publish found no peers', { topic, kind: message.kind, error: (err as Error).message })
      }
    }))
  }

  /**
   * Record a message that reached this node another way (a history answer, §7.11) under its replay
   * key, as the topic validator would: false when it was seen before (on gossip or so), so a copy
   * is handled once whichever way it comes.
   */
  markSeen (message: OpenedMessage<GossipKind>): boolean {
    return this.replay.add(replayKey(message, message.signer), (message.payload as { expiresAt: number }).expiresAt, this.options.now())
  }

  stop (): void {
    const pubsub = this.options.node.services.pubsub
    for (const topic of this.topics) {
      pubsub.topicValidators.delete(topic)
      try { pubsub.unsubscribe(topic) } catch {}
    }
    this.topics.clear()
  }

  /** `kind`: the message's (messageKindOf); the topic is in the debug log, not the label. */
  private refused (topic: string, kind: string, peer: PeerId, reason: string, error: string): void {
    this.options.metrics?.messagesRejected.inc({ kind, reason, via: 'gossip' })
    this.options.log.debug('gossip message refused', { topic, from: peer.toString(), reason, error })
  }

  private validate (topic: string, kinds: readonly Kind[], peer: PeerId, message: Message): TopicValidatorResult {
    let opened: OpenedMessage<GossipKind>
    try {
      opened = openMessage(message.data, kinds as readonly GossipKind[], { now: this.options.now(), replay: this.replay })
    } catch (err) {
      if (!(err instanceof MessageRejectedError)) throw err
      this.refused(topic, messageKindOf(message.data), peer, err.reason, err.message)
      return IGNORED.has(err.reason) ? TopicValidatorResult.Ignore : TopicValidatorResult.Reject
    }
    const refusal = this.options.admit?.(opened)
    if (refusal !== undefined) {
      this.refused(topic, opened.kind, peer, refusal, `${opened.kind} ${opened.cid.toString()} by ${opened.signer}`)
      return TopicValidatorResult.Ignore
    }
    const from = peer.toString()
    // hand it over after gossipsub has taken its decision (never throw into gossipsub)
    queueMicrotask(() => {
      try {
        this.options.onMessage(opened, topic, from)
      } catch (err) {
        this.options.log.error('market message handler failed', { kind: opened.kind, error: err })
      }
    })
    return TopicValidatorResult.Accept
  }
}
