/**
 * How a harness node feeds its agent (provider-node.ts, requester-node.ts): one event at a time, the
 * effects of one carried out before the next is handled; events those effects cause wait behind, as in
 * node/market's per-job queues. An event fed while the queue runs is only queued.
 */
export class EventQueue<E> {
  private readonly pending: E[] = []
  private running = false

  constructor (private readonly handle: (event: E) => void) {}

  push (event: E): void {
    this.pending.push(event)
    if (this.running) return
    this.running = true
    try {
      // by index: shift() would move the rest of the array on every event
      for (let i = 0; i < this.pending.length; i++) this.handle(this.pending[i] as E)
    } finally {
      this.pending.length = 0
      this.running = false
    }
  }
}
