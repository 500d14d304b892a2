/**
 * npm run bench:overlay — what the simulator's overlay models cost to run (simulations/overlay/): µs
 * per gossip publish (one flood of the global topic's mesh, every node a member), with IDONTWANT and
 * with IHAVE/IWANT lazy gossip, and µs per Kademlia lookup (FIND_NODE, GET_PROVIDERS), at 1,000 and
 * 10,000 nodes; plus the models' own numbers per call (transmissions, duplicates, hops, messages,
 * bytes, virtual time), the build times, and the heap in use.
 *
 * The delay is a fixed function of the pair (5 … 54 ms), so the bench measures the models, not a
 * latency table. Benchmarks print numbers; they never fail.
 *
 * Env: BENCH_NODES="1000,10000", BENCH_MS=1500 (measuring time per row), BENCH_SEED=1.
 */
import { GossipMesh, type PublishResult } from '../simulations/overlay/gossip.js'
import { KademliaModel, type DelayFn } from '../simulations/overlay/kademlia.js'
import { Prng } from '../simulations/harness/prng.js'
import { measure } from './measure.js'

const sizes = (process.env.BENCH_NODES ?? '1000,10000').split(',').map((s) => Number.parseInt(s, 10)).filter((n) => n > 0)
const ms = Number.parseInt(process.env.BENCH_MS ?? '1500', 10)
const seed = process.env.BENCH_SEED ?? '1'
const delay: DelayFn = (a, b) => 5 + ((Math.min(a, b) * 7919 + Math.max(a, b) * 104729) % 50)

function row (label: string, usPerCall: number, detail: string): void {
  console.log(`${label.padEnd(34)} ${usPerCall.toFixed(1).padStart(10)} µs/call   ${detail}`)
}

function timed<T> (fn: () => T): { value: T, ms: number } {
  const start = performance.now()
  const value = fn()
  return { value, ms: performance.now() - start }
}

const mb = (bytes: number): string => `${(bytes / 1024 / 1024).toFixed(1)} MB`

for (const n of sizes) {
  console.log(`\n${n.toLocaleString('en-US')} nodes`)
  const ids = Array.from({ length: n }, (_, i) => `n${String(i).padStart(6, '0')}`)

  const mesh = timed(() => GossipMesh.build(ids.map((_, i) => i), { seed }))
  console.log(`gossip mesh built in ${mesh.ms.toFixed(0)} ms: ${mesh.value.edges.toLocaleString('en-US')} edges, mean degree ${(2 * mesh.value.edges / n).toFixed(2)}`)
  for (const [label, bytes, lazy] of [['publish 300 B', 300, false], ['publish 2 kB (IDONTWANT)', 2000, false], ['publish 300 B + IHAVE/IWANT', 300, true]] as const) {
    let last: PublishResult | undefined
    const rate = measure(label, (i) => { last = mesh.value.publish(i % n, { delay, messageBytes: bytes, lazy, into: last }) }, ms)
    const r = last as PublishResult
    row(label, 1e6 / rate.perSecond, `${r.receivers} receivers, ${r.transmissions} transmissions, ${r.duplicates} duplicates, ` +
      `${r.idontwant} IDONTWANT, ${r.ihave} IHAVE, ${r.iwant} IWANT, max hop ${Math.max(...r.hops)}, last delivery ${r.lastDeliveryMs.toFixed(0)} ms, ${(r.bytes / 1024).toFixed(0)} KiB`)
  }

  const kad = timed(() => KademliaModel.build(ids, { seed }))
  console.log(`kademlia model built in ${kad.ms.toFixed(0)} ms (tables are implicit): ${kad.value.tableOf(0).length} peers in node 0's table; heap used ${mb(process.memoryUsage().heapUsed)}`)
  const prng = new Prng(seed).fork('bench-targets')
  const targets = Array.from({ length: 256 }, () => Uint8Array.from({ length: 32 }, () => prng.int(0, 255)))
  let hops = 0
  let messages = 0
  let bytes = 0
  let time = 0
  let calls = 0
  const find = measure('FIND_NODE', (i) => {
    const r = kad.value.findNode((i * 7919) % n, targets[i % targets.length] as Uint8Array, { delay })
    hops += r.hops
    messages += r.messages
    bytes += r.bytes
    time += r.timeMs
    calls++
  }, ms)
  row('FIND_NODE', 1e6 / find.perSecond, `mean ${(hops / calls).toFixed(2)} hops, ${(messages / calls).toFixed(1)} messages, ${(bytes / calls / 1024).toFixed(1)} KiB, ${(time / calls).toFixed(0)} ms virtual`)

  const keys = ['market/eu/40', 'market/na/24', 'gpu/nvidia-h100-80gb-hbm3', 'region/eu-west', 'vram/8']
  const providersPerKey = Math.min(50, Math.floor(n / 20))
  for (const [j, key] of keys.entries()) {
    for (let p = 0; p < providersPerKey; p++) kad.value.provide((p * 20 + j) % n, key, { delay })
  }
  let found = 0
  let first = 0
  hops = messages = bytes = time = calls = 0
  const get = measure('GET_PROVIDERS', (i) => {
    const r = kad.value.findProviders((i * 104729 + 7) % n, keys[i % keys.length] as string, { delay })
    found += r.providers.length
    first += r.firstProviderMs ?? 0
    hops += r.hops
    messages += r.messages
    bytes += r.bytes
    time += r.timeMs
    calls++
  }, ms)
  row(`GET_PROVIDERS (${providersPerKey} providers/key)`, 1e6 / get.perSecond, `mean ${(found / calls).toFixed(1)} found, first after ${(first / calls).toFixed(0)} ms, ` +
    `${(messages / calls).toFixed(1)} messages, ${(bytes / calls / 1024).toFixed(1)} KiB, ${(time / calls).toFixed(0)} ms virtual`)
}
