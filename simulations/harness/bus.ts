/**
 * The in-memory message bus: gossip topics and direct streams between harness nodes, on virtual
 * time. No libp2p, no bytes: messages are plain values with a kind and a wire size, delivered by
 * the scheduler after the network model's delay.
 *
 * - Gossip (`publish`): every subscriber of any of the message's topics but the sender gets it once
 *   (a message on two topics is delivered once, as gossipsub's seen-cache does), after
 *   `gossipHops × latency` (or the model's own `gossipDelayMs`, e.g. the gossipsub mesh), unless the
 *   model loses that delivery.
 * - Streams (`open`): an ordered, reliable channel between two nodes, like an exec stream. The
 *   listener's end appears one latency after the open; each side's messages arrive in the order
 *   sent. `close()` ends it for both sides after what was already sent (the other side sees
 *   `onClose` with the reason); `reset()` ends it at once, dropping what is in flight.
 */
import type { VirtualScheduler } from '../../protocol/market/scheduler.js'
import { UNREACHABLE, type NetworkModel, type Place } from './network.js'
import type { Prng } from './prng.js'
import { KeyedDelivery, validateDelivery, type Delivery } from './keyed-delivery.js'

/** What travels: a kind (the message kind, e.g. `bid`), its size on the wire, and the value. */
export interface Message<T = unknown> {
  kind: string
  bytes: number
  body: T
}

/** Counts what the bus carries (the recorder implements it). */
export interface Traffic {
  sent: (channel: 'gossip' | 'stream', from: string, message: Message) => void
  delivered: (channel: 'gossip' | 'stream', from: string, to: string, message: Message) => void
  lost: (from: string, to: string, message: Message) => void
  /**
   * Count `count` gossip deliveries of `message` at once: when a counter has it, the bus calls it once per
   * instant of a publish instead of `delivered` once per receiver (a counter that must see each receiver,
   * such as a trace, leaves it out).
   */
  deliveredMany?: (from: string, message: Message, count: number) => void
}

export type GossipHandler = (from: string, message: Message) => void

/** A subscription's kinds when its handler takes none: deliveries are made and counted, the handler is never called. */
export const NO_KINDS: ReadonlySet<string> = new Set()

/** One end of a stream. */
export interface StreamEnd {
  readonly local: string
  readonly remote: string
  readonly closed: boolean
  send: (message: Message) => void
  /** End the stream after what was sent (the other side's onClose gets `reason`). */
  close: (reason?: string) => void
  /** End the stream now, dropping what is in flight. */
  reset: (reason?: string) => void
  onMessage: (fn: (message: Message) => void) => void
  onClose: (fn: (reason: string) => void) => void
}

export type StreamListener = (stream: StreamEnd) => void

/** A gossip handler and the message kinds it takes (all when undefined: the others it is not called for). */
export interface Subscription { fn: GossipHandler, kinds: ReadonlySet<string> | undefined }

export interface Member { place: Place, topics: Map<string, Subscription[]>, listener?: StreamListener }

/**
 * A subscriber a message on some topics goes to, the first of those topics it listens on, and its handlers
 * then; `only` is the one handler when there is exactly one (the common case: a delivery then reads the
 * target and the handler's kinds, not the list too — at 10,000 subscribers memory, not instructions,
 * bounds the delivery loop).
 */
export interface Target { member: Member, to: string, topic: string, handlers: Subscription[], only: Subscription | undefined }

export class Bus {
  private readonly members = new Map<string, Member>()
  private readonly loss: Prng
  /**
   * Who gets a message on a set of topics, in member order, by the topics (joined): rebuilt after any
   * join, leave or (un)subscribe. Saves scanning every member's topics on each of a job's gossip
   * messages (bench:pipeline: a thousand subscribers, a dozen messages per job).
   */
  private targets = new Map<string, Target[]>()
  /** Bumped by every join, leave and (un)subscribe: while it holds, a Target's member and handlers are current. */
  private version = 0

  /** The keyed delivery (keyed-delivery.ts), when the bus runs one. */
  private readonly keyed: KeyedDelivery | undefined

  constructor (
    private readonly scheduler: VirtualScheduler,
    /** The network model (world.ts reads its `blobMs`). */
    readonly model: NetworkModel,
    prng: Prng,
    private readonly traffic?: Traffic,
    /** How gossip is delivered (keyed-delivery.ts); default `sequential`: one delay stream, every subscriber visited. */
    readonly delivery: Delivery = 'sequential'
  ) {
    this.loss = prng.fork('gossip-loss')
    validateDelivery(delivery, model)
    this.keyed = delivery === 'sequential'
      ? undefined
      : new KeyedDelivery({
        scheduler,
        model,
        traffic,
        member: (node) => this.members.get(node),
        targetsOf: (topics) => this.targetsOf(topics),
        version: () => this.version
      }, delivery === 'keyed-interested', prng.fork('keyed-delay').seed)
  }

  /** Whether gossip runs the keyed delivery (its shells then keep their kinds fixed and tell the bus what they watch). */
  get isKeyed (): boolean {
    return this.keyed !== undefined
  }

  /**
   * `node` watches `job` (it may act on a message about it without seeing a trigger of it again), or stops:
   * what the keyed-interested delivery visits by. Nothing under the other deliveries.
   */
  watch (node: string, job: string, on: boolean): void {
    this.keyed?.watch(node, job, on)
  }

  /**
   * Add a node at a region (and country, where known: a network model may place it by that). A node
   * that runs both roles joins once per role: the second join must name the same region (and country).
   */
  join (node: string, region: string, country?: string): void {
    const m = this.members.get(node)
    if (m !== undefined && m.place.region !== region) throw new Error(`bus: ${node} joined in ${m.place.region} and in ${region}`)
    if (m !== undefined && country !== undefined && m.place.country !== undefined && m.place.country !== country) throw new Error(`bus: ${node} joined in ${m.place.country} and in ${country}`)
    if (m === undefined) this.members.set(node, { place: country === undefined ? { node, region } : { node, region, country }, topics: new Map() })
    else if (country !== undefined) m.place.country = country
    this.changed()
  }

  /** Leave: no more gossip reaches the node (it closes its own streams). */
  leave (node: string): void {
    this.members.delete(node)
    this.changed()
  }

  has (node: string): boolean {
    return this.members.has(node)
  }

  /** The model's one-way delay from `from` to `to` now (0 when either is unknown). */
  latencyMs (from: string, to: string): number {
    const a = this.members.get(from)
    const b = this.members.get(to)
    return a === undefined || b === undefined ? 0 : this.model.latencyMs(a.place, b.place)
  }

  /**
   * The model's round trip between `from` and `to` without jitter (its mean one way, each way), ms:
   * what libp2p's connection monitor reads on a connection between them (undefined when either is
   * unknown). Drawn from no random stream, so asking changes no later delay.
   */
  meanRttMs (from: string, to: string): number | undefined {
    const a = this.members.get(from)
    const b = this.members.get(to)
    if (a === undefined || b === undefined) return undefined
    const mean = this.model.meanLatencyMs ?? this.model.latencyMs
    return mean(a.place, b.place) + mean(b.place, a.place)
  }

  /**
   * Deliver `topic`'s gossip to `handler` too (one node may have several, e.g. its two roles); with
   * `kinds`, only messages of those kinds (the delivery is made and counted all the same: a node's
   * shell that drops a kind on arrival need not be called for it). A Set is read live at each
   * delivery, so its owner may change what it takes (a provider takes bids only while it waits to bid).
   */
  subscribe (node: string, topic: string, handler: GossipHandler, kinds?: readonly string[] | ReadonlySet<string>): void {
    const topics = this.member(node).topics
    const takes = kinds === undefined ? undefined : kinds instanceof Set ? kinds : new Set(kinds as readonly string[])
    topics.set(topic, [...(topics.get(topic) ?? []), { fn: handler, kinds: takes }])
    this.changed()
  }

  unsubscribe (node: string, topic: string): void {
    this.members.get(node)?.topics.delete(topic)
    this.changed()
  }

  private changed (): void {
    this.version++
    this.targets.clear()
  }

  /** Where inbound streams to `node` go. */
  listen (node: string, listener: StreamListener): void {
    this.member(node).listener = listener
  }

  /**
   * Gossip `message` on `topics` from `from`; returns how many deliveries were scheduled. Each receiver's
   * loss and delay are drawn here, in subscriber order. The deliveries run as one scheduler series
   * (VirtualScheduler.series): the instants in time order, at each the receivers due then in subscriber
   * order, each instant in the queue's order where its own entry made now would be. That is the order one
   * entry per delivery gives (those due at one instant would be consecutive), at a fraction of the queue's
   * work when a thousand nodes subscribe.
   */
  publish (from: string, topics: readonly string[], message: Message): number {
    const sender = this.member(from)
    this.traffic?.sent('gossip', from, message)
    if (this.keyed !== undefined) return this.keyed.publish(from, sender, topics, message)
    const due = new Map<number, Target[]>()
    const lossy = this.model.gossipLoss > 0
    const hops = Math.max(1, this.model.gossipHops)
    const now = this.scheduler.now()
    let scheduled = 0
    for (const target of this.targetsOf(topics)) {
      if (target.member === sender) continue
      if ((lossy && this.loss.chance(this.model.gossipLoss)) || this.model.drops?.(sender.place, target.member.place, now, 'gossip') === true) {
        this.traffic?.lost(from, target.to, message)
        continue
      }
      // grouped by the delay (a small integer key; the instant is now + delay either way); a gossip
      // model (NetworkModel.gossipDelayMs) gives each subscriber its own mesh path's delay
      const delay = this.model.gossipDelayMs?.(sender.place, target.member.place, topics, message) ?? hops * this.model.latencyMs(sender.place, target.member.place)
      if (delay === Infinity) {
        this.traffic?.lost(from, target.to, message)
        continue
      }
      const group = due.get(delay)
      if (group === undefined) due.set(delay, [target])
      else group.push(target)
      scheduled++
    }
    if (scheduled === 0) return 0
    const delays = [...due.keys()].sort((a, b) => a - b)
    const version = this.version
    let i = 0
    this.scheduler.series(now + (delays[0] as number), () => {
      this.deliver(from, message, due.get(delays[i] as number) as Target[], version)
      i++
      return i < delays.length ? now + (delays[i] as number) : undefined
    })
    return scheduled
  }

  /** Hand `message` to each of `group` (due now, in subscriber order) whose handlers take its kind. */
  private deliver (from: string, message: Message, group: readonly Target[], version: number): void {
    const many = this.traffic?.deliveredMany
    const kind = message.kind
    let count = 0
    for (let i = 0; i < group.length; i++) {
      const target = group[i] as Target
      // no join, leave or (un)subscribe since the publish: the target is as it was, no lookups
      const current = this.version === version
      const only = current ? target.only : undefined
      const handlers = current ? target.handlers : this.members.get(target.to)?.topics.get(target.topic)
      if (handlers === undefined) continue
      // one delivery, to one receiver
      if (many === undefined) this.traffic?.delivered('gossip', from, target.to, message)
      else count++
      if (only !== undefined) {
        if (only.kinds === undefined || only.kinds.has(kind)) only.fn(from, message)
        continue
      }
      for (let j = 0; j < handlers.length; j++) {
        const h = handlers[j] as Subscription
        if (h.kinds === undefined || h.kinds.has(kind)) h.fn(from, message)
      }
    }
    if (many !== undefined && count > 0) many.call(this.traffic, from, message, count)
  }

  /** The members subscribed to any of `topics`, in member order, each with the first of them it has. */
  private targetsOf (topics: readonly string[]): Target[] {
    const k = topics.length === 1 ? topics[0] as string : topics.join('\n')
    let list = this.targets.get(k)
    if (list !== undefined) return list
    list = []
    for (const member of this.members.values()) {
      const topic = topics.find((t) => member.topics.has(t))
      if (topic === undefined) continue
      const handlers = member.topics.get(topic) as Subscription[]
      list.push({ member, to: member.place.node, topic, handlers, only: handlers.length === 1 ? handlers[0] : undefined })
    }
    this.targets.set(k, list)
    return list
  }

  /**
   * Open a stream from `from` to `to`. Returns the opener's end at once (messages sent on it queue
   * in order); the listener's end reaches `to` one latency later. A node with no listener, or gone,
   * resets the stream (the opener's onClose says so).
   */
  open (from: string, to: string): StreamEnd {
    const a = this.member(from)
    const link = new Link(this.scheduler, this.model, a.place, this.members.get(to)?.place ?? { node: to, region: '' }, this.traffic)
    // the network drops the open (a partition): the opener's end is reset; the listener never hears of it
    if (this.model.drops?.(link.a, link.b, this.scheduler.now(), 'stream') === true) {
      const end = link.end('a')
      end.reset(UNREACHABLE)
      return end
    }
    this.scheduler.at(this.scheduler.now() + link.delay, () => {
      const listener = this.members.get(to)?.listener
      if (listener === undefined) return link.end('b').reset('no listener')
      if (!link.isReset) listener(link.end('b'))
    })
    return link.end('a')
  }

  private member (node: string): Member {
    const m = this.members.get(node)
    if (m === undefined) throw new Error(`bus: unknown node ${node}`)
    return m
  }
}

type Side = 'a' | 'b'

/** A stream's two directions: ordered delivery, one close for both. */
class Link {
  /** The delay of the open (and of the close or reset reaching the other side). */
  readonly delay: number
  isClosed = false
  /** Reset: nothing more is delivered. */
  isReset = false
  private readonly last: Record<Side, number> = { a: 0, b: 0 }
  private readonly handlers: Record<Side, { message?: (m: Message) => void, close?: (reason: string) => void, queued: Message[], closedWith?: string }> = {
    a: { queued: [] },
    b: { queued: [] }
  }

  private readonly ends: Partial<Record<Side, StreamEnd>> = {}

  constructor (
    private readonly scheduler: VirtualScheduler,
    private readonly model: NetworkModel,
    readonly a: Place,
    readonly b: Place,
    private readonly traffic: Traffic | undefined
  ) {
    this.delay = model.latencyMs(a, b)
  }

  end (side: Side): StreamEnd {
    const existing = this.ends[side]
    if (existing !== undefined) return existing
    const other: Side = side === 'a' ? 'b' : 'a'
    const self = this
    const local = side === 'a' ? this.a.node : this.b.node
    const remote = side === 'a' ? this.b.node : this.a.node
    const end: StreamEnd = {
      local,
      remote,
      get closed () { return self.isClosed },
      send: (message) => {
        if (this.isClosed) return
        this.traffic?.sent('stream', local, message)
        if (this.model.drops !== undefined && this.dropped(side, message)) return
        this.deliver(other, () => {
          this.traffic?.delivered('stream', local, remote, message)
          const h = this.handlers[other]
          if (h.message === undefined) h.queued.push(message)
          else h.message(message)
        })
      },
      close: (reason = 'closed') => {
        if (this.isClosed) return
        this.isClosed = true
        this.deliver(other, () => { this.closeSide(other, reason) })
        this.scheduler.at(this.scheduler.now(), () => { this.closeSide(side, reason) })
      },
      reset: (reason = 'reset') => {
        if (this.isReset) return
        this.isClosed = true
        this.isReset = true
        const at = this.scheduler.now()
        this.scheduler.at(at, () => { this.closeSide(side, reason) })
        this.scheduler.at(at + this.delay, () => { this.closeSide(other, reason) })
      },
      onMessage: (fn) => {
        const h = this.handlers[side]
        h.message = fn
        for (const m of h.queued.splice(0)) fn(m)
      },
      onClose: (fn) => {
        const h = this.handlers[side]
        h.close = fn
        if (h.closedWith !== undefined) fn(h.closedWith)
      }
    }
    this.ends[side] = end
    return end
  }

  /**
   * The network drops `message` sent now from `from`'s side (drops hook): it is counted lost and the
   * stream ends for both sides at once with UNREACHABLE, dropping what is in flight — a TCP connection
   * to a peer that cannot be reached ends; neither side hears the other's reset. True when dropped.
   */
  private dropped (from: Side, message: Message): boolean {
    const [src, dst] = from === 'a' ? [this.a, this.b] : [this.b, this.a]
    if (this.model.drops?.(src, dst, this.scheduler.now(), 'stream') !== true) return false
    this.traffic?.lost(src.node, dst.node, message)
    this.isClosed = true
    this.isReset = true
    const at = this.scheduler.now()
    this.scheduler.at(at, () => { this.closeSide('a', UNREACHABLE) })
    this.scheduler.at(at, () => { this.closeSide('b', UNREACHABLE) })
    return true
  }

  /** Run `fn` on `to`'s side one delay (drawn per message) from now, after everything sent to it before. */
  private deliver (to: Side, fn: () => void): void {
    const delay = to === 'b' ? this.model.latencyMs(this.a, this.b) : this.model.latencyMs(this.b, this.a)
    const at = Math.max(this.scheduler.now() + delay, this.last[to])
    this.last[to] = at
    this.scheduler.at(at, () => {
      if (this.isReset || this.handlers[to].closedWith !== undefined) return
      fn()
    })
  }

  private closeSide (side: Side, reason: string): void {
    const h = this.handlers[side]
    if (h.closedWith !== undefined) return
    h.closedWith = reason
    h.close?.(reason)
  }
}
