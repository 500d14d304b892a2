/**
 * A propagation delay for the in-process transport: every chunk a connection writes arrives `ms`
 * after it was written, in the order written, and chunks written back to back travel together (a
 * pipe with a length, not a queue with a server), so N chunks take ≈ms, not N × ms, and the delay
 * caps no throughput. This is what the model means by a one-way delay per hop.
 *
 * @libp2p/memory's own `latency` is not that: its reader awaits the delay once per buffer, one buffer
 * after another, so buffers queue and a connection carries at most 1,000 / latency buffers a second
 * (node_modules/@libp2p/memory/dist/src/pushable-to-conn.js). This wraps the memory transport (its
 * own latency left at 0) and puts a delay line on the sending side of every connection it makes:
 * the connection's writes (data, close, reset) go through the line to the pushable the other end
 * reads, so a close or reset arrives after the data written before it, as on a wire.
 *
 * The delay is a shared `PropagationDelay`: `set` changes it for every connection of every node
 * that uses it, from the next chunk on (chunks already in flight keep their time; a shorter delay
 * never lets a later chunk overtake an earlier one).
 */
import { memory, type MemoryTransportComponents, type MemoryTransportInit } from '@libp2p/memory'
import { isTransport, type CreateListenerOptions, type DialTransportOptions, type Listener, type MultiaddrConnection, type Transport, type Upgrader } from '@libp2p/interface'
import type { Multiaddr } from '@multiformats/multiaddr'

/**
 * The one-way delay, ms, shared by every connection built with it. `readBoundary`: at 0 ms, deliver
 * each chunk in a later macrotask (setImmediate) instead of in the writer's call, as a socket read
 * would arrive. The bare memory transport delivers in microtasks only, so in one process a gossip
 * flood that every hop re-forwards never yields: bench:market saw one 13.6 s run of microtasks with no
 * timer firing (the bid window's close 2.4 s late), a loop stall no real network has.
 */
export class PropagationDelay {
  private value: number
  readonly readBoundary: boolean

  constructor (ms = 0, options: { readBoundary?: boolean } = {}) {
    this.value = checked(ms)
    this.readBoundary = options.readBoundary === true
  }

  get ms (): number {
    return this.value
  }

  set (ms: number): void {
    this.value = checked(ms)
  }
}

function checked (ms: number): number {
  if (!Number.isFinite(ms) || ms < 0) throw new RangeError(`propagation delay must be a finite number of ms ≥ 0, got ${ms}`)
  return ms
}

/** Thrown when a memory-transport connection does not have the sending side this wrapper delays (another version of @libp2p/memory). */
export class DelayUnavailableError extends Error {
  readonly code = 'DELAY_UNAVAILABLE'
  constructor (message: string) {
    super(message)
    this.name = 'DelayUnavailableError'
  }
}

/** What a memory connection writes into: the pushable the other end reads. */
interface Sink {
  push: (data: unknown) => unknown
  end: (err?: Error) => unknown
}

/**
 * A FIFO of deliveries, each due `delay.ms` after it was sent, with one timer for the head; only the
 * head is ever delivered, so a delivery never overtakes the one ahead of it (when the delay shrinks).
 */
export class DelayLine {
  private readonly queue: Array<{ due: number, deliver: () => void }> = []
  private timer: NodeJS.Timeout | undefined
  private immediate: NodeJS.Immediate | undefined

  constructor (private readonly delay: PropagationDelay, private readonly now: () => number = () => performance.now()) {}

  send (deliver: () => void): void {
    const ms = this.delay.ms
    if (ms === 0 && this.queue.length === 0) {
      if (!this.delay.readBoundary) return deliver()
      this.queue.push({ due: 0, deliver })
      // what is written before the next loop turn arrives in it, in order: one read per turn
      this.immediate ??= setImmediate(() => { this.immediate = undefined; this.deliverDue() })
      return
    }
    if (this.immediate !== undefined) {
      // the chunks waiting for the next turn go first
      this.queue.push({ due: this.now() + ms, deliver })
      return
    }
    this.queue.push({ due: this.now() + ms, deliver })
    this.arm()
  }

  /** Deliveries not made yet. */
  get pending (): number {
    return this.queue.length
  }

  private arm (): void {
    const head = this.queue[0]
    if (this.timer !== undefined || head === undefined) return
    this.timer = setTimeout(() => { this.flush() }, Math.max(0, head.due - this.now()))
  }

  private flush (): void {
    this.timer = undefined
    this.deliverDue()
  }

  private deliverDue (): void {
    // timers run on the loop's millisecond clock, which may trail performance.now() by under 1 ms
    const now = this.now() + 1
    while (this.queue.length > 0 && (this.queue[0] as { due: number }).due <= now) {
      (this.queue.shift() as { deliver: () => void }).deliver()
    }
    this.arm()
  }
}

/** Put a delay line between `conn` and the pushable the other end reads. */
function delayed (conn: MultiaddrConnection, delay: PropagationDelay): MultiaddrConnection {
  const holder = conn as unknown as { localPushable?: Sink }
  const sink = holder.localPushable
  if (sink === undefined || typeof sink.push !== 'function' || typeof sink.end !== 'function') {
    throw new DelayUnavailableError('this @libp2p/memory connection has no localPushable to delay: the propagation delay cannot be applied')
  }
  const line = new DelayLine(delay)
  holder.localPushable = {
    push: (data) => { line.send(() => sink.push(data)) },
    end: (err) => { line.send(() => sink.end(err)) }
  }
  return conn
}

function delayingUpgrader (upgrader: Upgrader, delay: PropagationDelay): Upgrader {
  return new Proxy(upgrader, {
    get (target, prop) {
      if (prop === 'upgradeOutbound') return async (conn: MultiaddrConnection, opts: Parameters<Upgrader['upgradeOutbound']>[1]) => await target.upgradeOutbound(delayed(conn, delay), opts)
      if (prop === 'upgradeInbound') return async (conn: MultiaddrConnection, opts: Parameters<Upgrader['upgradeInbound']>[1]) => { await target.upgradeInbound(delayed(conn, delay), opts) }
      const value: unknown = Reflect.get(target, prop)
      return typeof value === 'function' ? value.bind(target) : value
    }
  })
}

/**
 * The memory transport with a propagation delay: `delayedMemory(delay)` goes where `memory()` would
 * in libp2p's `transports`. Both ends of a connection delay what they write, so a round trip is 2 × ms.
 */
export function delayedMemory (delay: PropagationDelay, init: Omit<MemoryTransportInit, 'latency'> = {}): (components: MemoryTransportComponents) => Transport {
  return (components) => {
    const inner = memory({ ...init, latency: 0 })(components)
    const transport = {
      // transportSymbol, serviceCapabilities: what libp2p looks for on a transport
      ...Object.fromEntries(Object.getOwnPropertySymbols(inner).map((s) => [s, (inner as unknown as Record<symbol, unknown>)[s]])),
      [Symbol.toStringTag]: '@gpumesh/delayed-memory',
      dial: async (ma: Multiaddr, options: DialTransportOptions) => await inner.dial(ma, { ...options, upgrader: delayingUpgrader(options.upgrader, delay) }),
      createListener: (options: CreateListenerOptions): Listener => inner.createListener({ ...options, upgrader: delayingUpgrader(options.upgrader, delay) }),
      listenFilter: (addrs: Multiaddr[]) => inner.listenFilter(addrs),
      dialFilter: (addrs: Multiaddr[]) => inner.dialFilter(addrs)
    }
    if (!isTransport(transport)) throw new DelayUnavailableError('the wrapped memory transport does not carry libp2p\'s transport symbol')
    return transport
  }
}
