import assert from 'node:assert/strict'
import { createLibp2p, type Libp2p } from 'libp2p'
import { plaintext } from '@libp2p/plaintext'
import { yamux } from '@chainsafe/libp2p-yamux'
import { memory } from '@libp2p/memory'
import type { Stream } from '@libp2p/interface'
import { DelayLine, delayedMemory, PropagationDelay } from '../../calibration/delay-transport.js'

/**
 * calibration/delay-transport.ts: a chunk arrives `ms` after it was written, chunks written back to
 * back arrive together (≈ms, not N × ms), in order, and a close arrives after the data before it.
 * Two real libp2p nodes (memory transport, plaintext, yamux); each chunk carries its write time.
 */
const PROTOCOL = '/gpumesh-test/delay/1.0.0'
const CHUNK = 64
let names = 0

interface Arrival { seq: number, writtenAt: number, arrivedAt: number }

async function pair (transport: () => ReturnType<typeof memory>): Promise<{ a: Libp2p, b: Libp2p, arrivals: Arrival[], ended: Promise<void> }> {
  const arrivals: Arrival[] = []
  const node = async (): Promise<Libp2p> => await createLibp2p({
    addresses: { listen: [`/memory/delay-test-${process.pid}-${names++}`] },
    transports: [transport()],
    connectionEncrypters: [plaintext()],
    streamMuxers: [yamux()],
    connectionMonitor: { enabled: false }
  })
  const [a, b] = [await node(), await node()]
  const ended = new Promise<void>((resolve, reject) => {
    void b.handle(PROTOCOL, async (stream: Stream) => {
      try {
        let buffered = new Uint8Array(0)
        for await (const data of stream) {
          const now = performance.now()
          const bytes = data instanceof Uint8Array ? data : data.subarray()
          const joined = new Uint8Array(buffered.length + bytes.length)
          joined.set(buffered)
          joined.set(bytes, buffered.length)
          let at = 0
          for (; at + CHUNK <= joined.length; at += CHUNK) {
            const view = new DataView(joined.buffer, joined.byteOffset + at, CHUNK)
            arrivals.push({ seq: view.getUint32(0), writtenAt: view.getFloat64(4), arrivedAt: now })
          }
          buffered = joined.slice(at)
        }
        resolve()
      } catch (err) {
        reject(err as Error)
      }
    })
  })
  return { a, b, arrivals, ended }
}

/** Write `n` chunks back to back on a new stream from a to b, then close it; each chunk holds its sequence number and write time. */
async function writeChunks (a: Libp2p, b: Libp2p, n: number, between?: (i: number) => void, then?: () => Promise<void>): Promise<number> {
  const stream = await a.dialProtocol(b.getMultiaddrs()[0] as never, PROTOCOL)
  const started = performance.now()
  for (let i = 0; i < n; i++) {
    between?.(i)
    const chunk = new Uint8Array(CHUNK)
    const view = new DataView(chunk.buffer)
    view.setUint32(0, i)
    view.setFloat64(4, performance.now())
    stream.send(chunk)
  }
  await stream.close()
  await then?.()
  return started
}

describe('calibration: a propagation delay for the memory transport', function () {
  this.timeout(30_000)
  const nodes: Libp2p[] = []
  afterEach(async () => { await Promise.all(nodes.splice(0).map(async (n) => { await n.stop() })) })

  it('50 chunks written back to back each arrive ≈50 ms after their write, all within ≈1 × 50 ms, in order', async () => {
    const delay = new PropagationDelay(50)
    const { a, b, arrivals, ended } = await pair(() => delayedMemory(delay))
    nodes.push(a, b)
    await a.dial(b.getMultiaddrs()[0] as never)
    const started = await writeChunks(a, b, 50)
    await ended
    assert.equal(arrivals.length, 50)
    assert.deepEqual(arrivals.map((x) => x.seq), Array.from({ length: 50 }, (_, i) => i))
    for (const x of arrivals) {
      const took = x.arrivedAt - x.writtenAt
      // never early; late only by the loop's work (a loaded machine: generous upper bound)
      assert.ok(took >= 48, `chunk ${x.seq} arrived after ${took.toFixed(1)} ms`)
      assert.ok(took < 50 + 150, `chunk ${x.seq} arrived after ${took.toFixed(1)} ms`)
    }
    const last = (arrivals[arrivals.length - 1] as Arrival).arrivedAt - started
    // a per-buffer queue (@libp2p/memory's latency) would take ≥ 50 × 50 ms here
    assert.ok(last < 2 * 50 + 150, `the last of 50 chunks arrived ${last.toFixed(0)} ms after the first write`)
  })

  it('0 ms passes chunks straight through; a delay set on a running connection applies to the next chunk', async () => {
    const delay = new PropagationDelay(0)
    const { a, b, arrivals, ended } = await pair(() => delayedMemory(delay))
    nodes.push(a, b)
    await a.dial(b.getMultiaddrs()[0] as never)
    await writeChunks(a, b, 10, (i) => { if (i === 5) delay.set(80) })
    await ended
    assert.equal(arrivals.length, 10)
    for (const x of arrivals.slice(0, 5)) assert.ok(x.arrivedAt - x.writtenAt < 60, `chunk ${x.seq} (0 ms) took ${(x.arrivedAt - x.writtenAt).toFixed(1)} ms`)
    for (const x of arrivals.slice(5)) assert.ok(x.arrivedAt - x.writtenAt >= 78, `chunk ${x.seq} (80 ms) took ${(x.arrivedAt - x.writtenAt).toFixed(1)} ms`)
  })

  it('a connection closed right after the writes still delivers them: its close travels behind the data', async () => {
    const delay = new PropagationDelay(40)
    const { a, b, arrivals, ended } = await pair(() => delayedMemory(delay))
    nodes.push(a, b)
    const connection = await a.dial(b.getMultiaddrs()[0] as never)
    await writeChunks(a, b, 20, undefined, async () => { await connection.close() })
    await ended
    assert.deepEqual(arrivals.map((x) => x.seq), Array.from({ length: 20 }, (_, i) => i))
  })

  it('the measure tells the two apart: @libp2p/memory\'s own latency queues the same chunks one delay after another', async () => {
    const { a, b, arrivals, ended } = await pair(() => memory({ latency: 30 }))
    nodes.push(a, b)
    await a.dial(b.getMultiaddrs()[0] as never)
    const started = await writeChunks(a, b, 10)
    await ended
    assert.equal(arrivals.length, 10)
    const last = (arrivals[arrivals.length - 1] as Arrival).arrivedAt - started
    assert.ok(last >= 10 * 30, `the last of 10 chunks arrived ${last.toFixed(0)} ms after the first write`)
  })
})

/** Deliveries through `line` that each send the next from a microtask, `hops` in all: how many had run when a 0 ms timer fired. */
async function flood (line: DelayLine, hops: number): Promise<number> {
  let done = 0
  const forward = (): void => { done++; if (done < hops) void Promise.resolve().then(() => { line.send(forward) }) }
  const timer = new Promise<number>((resolve) => setTimeout(() => { resolve(done) }, 0))
  line.send(forward)
  return await timer
}

describe('calibration: DelayLine', () => {
  it('keeps order when the delay shrinks: a later delivery never overtakes an earlier one', async () => {
    const delay = new PropagationDelay(60)
    const line = new DelayLine(delay)
    const order: number[] = []
    line.send(() => order.push(1))
    delay.set(0)
    line.send(() => order.push(2))
    assert.equal(order.length, 0, 'the 0 ms delivery waits behind the 60 ms one')
    assert.equal(line.pending, 2)
    await new Promise((resolve) => setTimeout(resolve, 90))
    assert.deepEqual(order, [1, 2])
    assert.equal(line.pending, 0)
    line.send(() => order.push(3))
    assert.deepEqual(order, [1, 2, 3], 'with nothing in flight, 0 ms delivers at once')
  })

  it('with a read boundary, 0 ms delivers in a later macrotask, in order; a flood that re-sends lets timers run between its turns', async () => {
    const line = new DelayLine(new PropagationDelay(0, { readBoundary: true }))
    const order: number[] = []
    for (let i = 1; i <= 3; i++) line.send(() => order.push(i))
    await Promise.resolve()
    assert.deepEqual(order, [], 'not in the writer\'s call, nor in a microtask after it')
    await new Promise((resolve) => setImmediate(resolve))
    assert.deepEqual(order, [1, 2, 3])
    // each delivery writes again from a microtask (as a gossip hop forwards): a timer gets its turn;
    // without the boundary the same flood runs to its end in microtasks before any timer
    const fired = await flood(line, 5000)
    assert.ok(fired >= 0 && fired < 5000, `the timer fired after ${fired} of 5000 hops`)
    assert.equal(await flood(new DelayLine(new PropagationDelay(0)), 200), 200)
  })

  it('refuses a negative or non-finite delay', () => {
    assert.throws(() => new PropagationDelay(-1), RangeError)
    assert.throws(() => new PropagationDelay(0).set(Number.NaN), RangeError)
    assert.equal(new PropagationDelay(0).ms, 0)
  })
})
