/**
 * The bus's keyed gossip delivery (issue 10): each (message, receiver) pair's loss and delay are drawn from
 * a stream seeded by a hash of (seed, the publish's sequence number, the receiver's id) — prng.ts
 * `keyedSeed` — instead of one sequential stream, so a receiver's delay can be drawn only when it is needed,
 * and is the same whether the others' were drawn or not. Two modes, the same draws:
 *
 * - `keyed-all`: every receiver is visited at its arrival (the reference).
 * - `keyed-interested`: only the receivers that may act on the message at its arrival are visited; the
 *   others are counted in bulk. A job request or round (a trigger: it starts a node's interest in its job)
 *   and a message about no job go to every subscriber whose kinds take it. A message about a job (a bid, an
 *   award) goes to the nodes that watch the job when it is published (`Bus.watch`: a provider's agent's
 *   `watchedJobs()`, a requester's own jobs), to the nodes its job's triggers are still on their way to, and
 *   — added when a later trigger of the job is published — to those that trigger reaches before it.
 *   A node's interest in a job starts only when it takes a trigger of the job (the agents' rule, read from
 *   them: ProviderAgent.watchedJobs), so no receiver that would act is left out; one visited needlessly
 *   finds its shell's check (`watches(job)`) false, as in `keyed-all`. So both modes give the same run.
 *
 * Both count each publish's deliveries at once, when it is published (the sequential delivery counts them
 * at their arrival instants; the totals differ only for messages still in flight when a run stops or sent
 * to a node that leaves meanwhile). The deliveries of a publish run as one scheduler series, as the
 * sequential delivery's do; a late receiver wakes the series earlier if need be (VirtualScheduler.series).
 * Requires the network model's `keyed` draw (network.ts KeyedLatency) and no gossip model of its own
 * (`gossipDelayMs`: the mesh model), and subscriptions whose kinds do not change (the shells keep them so
 * in this mode).
 */
import type { Series, VirtualScheduler } from '../../protocol/market/scheduler.js'
import type { Member, Message, Subscription, Target, Traffic } from './bus.js'
import type { KeyedLatency, NetworkModel } from './network.js'
import { hashString, keyedSeed, Prng } from './prng.js'
import { jobOf } from './recorder.js'

export type Delivery = 'sequential' | 'keyed-all' | 'keyed-interested'
export const DELIVERIES: readonly Delivery[] = ['sequential', 'keyed-all', 'keyed-interested']

/** The kinds that start a node's interest in their job. */
export const TRIGGER_KINDS: ReadonlySet<string> = new Set(['job-request', 'auction-round'])

export type KeyedDeliveryErrorCode = 'UNKNOWN_DELIVERY' | 'NO_KEYED_LATENCY' | 'GOSSIP_MODEL'

export class KeyedDeliveryError extends Error {
  override readonly name = 'KeyedDeliveryError'
  constructor (readonly code: KeyedDeliveryErrorCode, message: string) {
    super(`keyed delivery: ${message}`)
  }
}

/** Throws KeyedDeliveryError unless `delivery` can run on `model`. */
export function validateDelivery (delivery: string, model: NetworkModel): asserts delivery is Delivery {
  if (!(DELIVERIES as readonly string[]).includes(delivery)) throw new KeyedDeliveryError('UNKNOWN_DELIVERY', `expected one of ${DELIVERIES.join(', ')}, got ${JSON.stringify(delivery)}`)
  if (delivery === 'sequential') return
  if (model.gossipDelayMs !== undefined) throw new KeyedDeliveryError('GOSSIP_MODEL', 'a gossip model of its own (the mesh model) is not keyed yet')
  if (model.keyed === undefined) throw new KeyedDeliveryError('NO_KEYED_LATENCY', 'the network model has no keyed draw (NetworkModel.keyed)')
}

/** What the keyed delivery reads of the bus. */
export interface BusView {
  readonly scheduler: VirtualScheduler
  readonly model: NetworkModel
  readonly traffic: Traffic | undefined
  member: (node: string) => Member | undefined
  targetsOf: (topics: readonly string[]) => Target[]
  version: () => number
}

/** One publish in flight. */
interface Flight {
  seq: number
  at: number
  from: string
  sender: Member
  message: Message
  key: string | undefined
  trigger: boolean
  targets: Target[]
  version: number
  lost: Set<number> | undefined
  /** Receivers visited (target indexes) and their arrival instants. */
  arrival: Map<number, number>
  /** Instant → the receivers due then, in subscriber order; `instants` the pending ones, ascending. */
  groups: Map<number, number[]>
  instants: number[]
  series: Series | undefined
  running: boolean
  /** After this instant no receiver can be due. */
  expires: number
}

const LOSS_SALT = 0x6c6f7373
/** sfc32 rounds after a keyed reseed: the seed is already a full hash (bench:sim: the 12 of a new stream cost ≈2 % of a run). */
const WARMUP = 2

export class KeyedDelivery {
  private seq = 0
  private readonly rng = new Prng(1)
  private readonly keyed: KeyedLatency
  private readonly hops: number
  private readonly names = new Map<string, number>()
  private readonly indexes = new WeakMap<Target[], Map<string, number>>()
  private readonly takers = new WeakMap<Target[], Map<string, number[]>>()
  /** Who watches each job (Bus.watch). */
  private readonly watchers = new Map<string, Set<string>>()
  /** In-flight publishes by job: triggers and the rest, each in publish order. */
  private readonly byKey = new Map<string, { triggers: Flight[], others: Flight[] }>()
  /** Every flight with a key, in publish order (pruned at each publish once expired). */
  private readonly fifo: Flight[] = []
  private fifoHead = 0

  constructor (private readonly bus: BusView, private readonly interested: boolean, private readonly seed: number) {
    this.keyed = bus.model.keyed as KeyedLatency
    this.hops = Math.max(1, bus.model.gossipHops)
  }

  /** `node` watches `key` (a job) or stops. */
  watch (node: string, key: string, on: boolean): void {
    let set = this.watchers.get(key)
    if (on) {
      if (set === undefined) this.watchers.set(key, set = new Set())
      set.add(node)
    } else if (set !== undefined) {
      set.delete(node)
      if (set.size === 0) this.watchers.delete(key)
    }
  }

  publish (from: string, sender: Member, topics: readonly string[], message: Message): number {
    const b = this.bus
    const now = b.scheduler.now()
    const targets = b.targetsOf(topics)
    const key = jobOf(message)
    const f: Flight = {
      seq: this.seq++, at: now, from, sender, message, key, trigger: TRIGGER_KINDS.has(message.kind), targets, version: b.version(),
      lost: undefined, arrival: new Map(), groups: new Map(), instants: [], series: undefined, running: false,
      expires: now + this.hops * this.keyed.maxMs
    }
    const count = this.count(f)
    this.prune(now)
    if (!this.interested) {
      for (let i = 0; i < targets.length; i++) this.visit(f, i)
    } else if (f.key === undefined || f.trigger) {
      for (const i of this.takersOf(targets, message.kind)) this.visit(f, i)
    } else {
      const index = this.indexOf(targets)
      const take = (node: string): void => {
        const i = index.get(node)
        if (i !== undefined && takes(targets[i] as Target, message.kind)) this.visit(f, i)
      }
      for (const node of this.watchers.get(f.key) ?? []) take(node)
      // the nodes a trigger of the job is still on its way to (their interest may start before this arrives)
      for (const t of this.byKey.get(f.key)?.triggers ?? []) {
        for (const instant of t.instants) for (const j of t.groups.get(instant) ?? []) take((t.targets[j] as Target).to)
      }
    }
    if (f.key !== undefined && this.interested) {
      let k = this.byKey.get(f.key)
      if (k === undefined) this.byKey.set(f.key, k = { triggers: [], others: [] })
      if (f.trigger) {
        this.lateReceivers(f, k.others)
        k.triggers.push(f)
      } else k.others.push(f)
      this.fifo.push(f)
    }
    this.start(f)
    return count
  }

  /** Count the publish's deliveries (and losses) now. Returns how many. */
  private count (f: Flight): number {
    const b = this.bus
    const loss = b.model.gossipLoss
    const mayDrop = this.keyed.mayDrop && b.model.drops !== undefined
    let count = 0
    if (loss > 0 || mayDrop) {
      f.lost = new Set()
      for (let i = 0; i < f.targets.length; i++) {
        const t = f.targets[i] as Target
        if (t.member === f.sender) continue
        const lost = (loss > 0 && this.rng.reseed(keyedSeed(this.seed ^ LOSS_SALT, f.seq, this.nameHash(t.to)), WARMUP).chance(loss)) ||
          (mayDrop && b.model.drops?.(f.sender.place, t.member.place, f.at, 'gossip') === true)
        if (lost) { f.lost.add(i); b.traffic?.lost(f.from, t.to, f.message) }
      }
    }
    const many = b.traffic?.deliveredMany
    for (let i = 0; i < f.targets.length; i++) {
      const t = f.targets[i] as Target
      if (t.member === f.sender || f.lost?.has(i) === true) continue
      count++
      if (many === undefined) b.traffic?.delivered('gossip', f.from, t.to, f.message)
    }
    if (many !== undefined && count > 0) many.call(b.traffic, f.from, f.message, count)
    return count
  }

  /** The one-way gossip delay of `f` to its target `i`, ms (hops × one keyed draw). */
  private delay (f: Flight, i: number): number {
    const t = f.targets[i] as Target
    return this.hops * this.keyed.latencyMs(f.sender.place, t.member.place, this.rng.reseed(keyedSeed(this.seed, f.seq, this.nameHash(t.to)), WARMUP))
  }

  /** Schedule `f`'s delivery to target `i` (once; not to the sender nor a lost one). Returns its arrival, or undefined. */
  private visit (f: Flight, i: number, after?: number): number | undefined {
    const t = f.targets[i] as Target
    if (t.member === f.sender || f.lost?.has(i) === true) return undefined
    const known = f.arrival.get(i)
    if (known !== undefined) return known
    const at = f.at + this.delay(f, i)
    if (after !== undefined && at <= after) return undefined
    f.arrival.set(i, at)
    const group = f.groups.get(at)
    if (group === undefined) {
      f.groups.set(at, [i])
      insertSorted(f.instants, at)
    } else insertSorted(group, i)
    return at
  }

  /**
   * A trigger `t` is published: each in-flight message of its job that reaches a receiver of `t` after `t`
   * does (the receiver may then watch the job) is delivered to it too.
   */
  private lateReceivers (t: Flight, others: readonly Flight[]): void {
    if (others.length === 0) return
    // the trigger has just visited every receiver that takes it: their arrivals are drawn
    const arrivals: Array<[string, number]> = []
    for (const [j, at] of t.arrival) arrivals.push([(t.targets[j] as Target).to, at])
    for (const m of others) {
      const index = this.indexOf(m.targets)
      const before = m.instants[0]
      for (const [node, reached] of arrivals) {
        const i = index.get(node)
        if (i === undefined || !takes(m.targets[i] as Target, m.message.kind)) continue
        this.visit(m, i, reached)
      }
      const first = m.instants[0]
      if (first !== undefined && first !== before && !m.running) {
        if (m.series === undefined) this.start(m)
        else m.series.wake(first)
      }
    }
  }

  /** Start `f`'s series at its first instant (if any). */
  private start (f: Flight): void {
    const first = f.instants[0]
    if (first === undefined || f.series !== undefined) return
    f.series = this.bus.scheduler.series(first, () => this.step(f))
  }

  private step (f: Flight): number | undefined {
    const now = this.bus.scheduler.now()
    while (f.instants.length > 0 && (f.instants[0] as number) <= now) {
      const at = f.instants.shift() as number
      const group = f.groups.get(at) as number[]
      f.groups.delete(at)
      f.running = true
      try {
        for (const i of group) this.deliver(f, i)
      } finally {
        f.running = false
      }
    }
    return f.instants[0]
  }

  /** Hand `f` to its target `i`'s handlers that take its kind (none when it has left). */
  private deliver (f: Flight, i: number): void {
    const target = f.targets[i] as Target
    const handlers: Subscription[] | undefined = this.bus.version() === f.version ? target.handlers : this.bus.member(target.to)?.topics.get(target.topic)
    if (handlers === undefined) return
    const kind = f.message.kind
    for (let j = 0; j < handlers.length; j++) {
      const h = handlers[j] as Subscription
      if (h.kinds === undefined || h.kinds.has(kind)) h.fn(f.from, f.message)
    }
  }

  /** Drop the flights no receiver can still be due for. */
  private prune (now: number): void {
    while (this.fifoHead < this.fifo.length) {
      const f = this.fifo[this.fifoHead] as Flight
      if (f.expires >= now) break
      this.fifoHead++
      const k = this.byKey.get(f.key as string)
      if (k !== undefined) {
        const list = f.trigger ? k.triggers : k.others
        const at = list.indexOf(f)
        if (at >= 0) list.splice(at, 1)
        if (k.triggers.length === 0 && k.others.length === 0) this.byKey.delete(f.key as string)
      }
    }
    if (this.fifoHead > 1024 && this.fifoHead * 2 > this.fifo.length) {
      this.fifo.splice(0, this.fifoHead)
      this.fifoHead = 0
    }
  }

  private nameHash (node: string): number {
    let h = this.names.get(node)
    if (h === undefined) this.names.set(node, h = hashString(node))
    return h
  }

  private indexOf (targets: Target[]): Map<string, number> {
    let m = this.indexes.get(targets)
    if (m === undefined) {
      m = new Map()
      for (let i = 0; i < targets.length; i++) m.set((targets[i] as Target).to, i)
      this.indexes.set(targets, m)
    }
    return m
  }

  /** The targets (indexes) whose handlers take `kind` (kinds do not change in this delivery). */
  private takersOf (targets: Target[], kind: string): number[] {
    let byKind = this.takers.get(targets)
    if (byKind === undefined) this.takers.set(targets, byKind = new Map())
    let list = byKind.get(kind)
    if (list === undefined) {
      list = []
      for (let i = 0; i < targets.length; i++) if (takes(targets[i] as Target, kind)) list.push(i)
      byKind.set(kind, list)
    }
    return list
  }
}

function takes (t: Target, kind: string): boolean {
  for (const h of t.handlers) if (h.kinds === undefined || h.kinds.has(kind)) return true
  return false
}

/** Insert `x` into ascending `list` (no duplicates expected). */
function insertSorted (list: number[], x: number): void {
  let lo = 0
  let hi = list.length
  while (lo < hi) {
    const mid = (lo + hi) >> 1
    if ((list[mid] as number) < x) lo = mid + 1
    else hi = mid
  }
  list.splice(lo, 0, x)
}
