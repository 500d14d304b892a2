/**
 * simulations/overlay/kademlia.ts: the Kademlia model. Ids and distances against independent
 * computations (node:crypto, BigInt XOR), lookups against a brute-force sort of the whole network,
 * and the timing rules on networks small enough to count by hand.
 */
import assert from 'node:assert/strict'
import { createHash } from 'node:crypto'
import { CAPABILITY_KEY_PREFIX } from '../../../../protocol/constants.js'
import { InvalidOverlayParamsError, DuplicateOverlayNodeError, UnknownOverlayNodeError } from '../../../../simulations/overlay/errors.js'
import { cellOf, commonPrefixLength, compareDistance, kadIdOfCapabilityKey, xorDistance } from '../../../../simulations/overlay/kad-id.js'
import { DEFAULT_KADEMLIA_PARAMS, createKademliaParams, dhtMessageBytes, peerEntryBytes, varintBytes } from '../../../../simulations/overlay/kad-params.js'
import { KademliaModel, type DelayFn } from '../../../../simulations/overlay/kademlia.js'
import { Prng } from '../../../../simulations/harness/prng.js'

const ids = (n: number): string[] => Array.from({ length: n }, (_, i) => `n${String(i).padStart(6, '0')}`)
/** A deterministic, asymmetric-free delay: 5 … 54 ms by the pair. */
const pairDelay: DelayFn = (a, b) => 5 + ((Math.min(a, b) * 7919 + Math.max(a, b) * 104729) % 50)

function big (id: Uint8Array): bigint {
  return BigInt(`0x${Buffer.from(id).toString('hex')}`)
}

/** The `count` nodes closest to `target` among `candidates`, by BigInt XOR. */
function bruteClosest (model: KademliaModel, target: Uint8Array, count: number, candidates: number[]): number[] {
  const t = big(target)
  return candidates
    .map((node) => ({ node, d: big(model.kadId(node)) ^ t }))
    .sort((a, b) => a.d < b.d ? -1 : a.d > b.d ? 1 : 0)
    .slice(0, count)
    .map((x) => x.node)
}

function id (bytes: number[]): Uint8Array {
  const out = new Uint8Array(32)
  out.set(bytes)
  return out
}

describe('simulations/overlay: Kademlia ids and distances', () => {
  it('common prefix length (the bucket index) at its edges: first bit, last bit, equal ids', () => {
    const a = id([])
    assert.equal(commonPrefixLength(a, id([0x80])), 0, 'differ in the first bit')
    assert.equal(commonPrefixLength(a, id([0x40])), 1)
    assert.equal(commonPrefixLength(a, id([0x01])), 7)
    assert.equal(commonPrefixLength(a, id([0, 0x80])), 8, 'first bit of the second byte')
    const last = id([])
    last[31] = 1
    assert.equal(commonPrefixLength(a, last), 255, 'differ only in the last bit')
    assert.equal(commonPrefixLength(last, last), 256, 'equal ids')
  })

  it('XOR distance and its comparison agree with BigInt arithmetic', () => {
    const prng = new Prng('xor')
    const rand = (): Uint8Array => Uint8Array.from({ length: 32 }, () => prng.int(0, 255))
    for (let i = 0; i < 200; i++) {
      const [a, b, t] = [rand(), rand(), rand()]
      assert.equal(big(xorDistance(a, b)), big(a) ^ big(b))
      const da = big(a) ^ big(t)
      const db = big(b) ^ big(t)
      assert.equal(compareDistance(a, b, t), da < db ? -1 : da > db ? 1 : 0)
    }
    const a = rand()
    assert.equal(compareDistance(a, a, rand()), 0)
    assert.equal(big(xorDistance(a, a)), 0n)
    assert.throws(() => xorDistance(a, new Uint8Array(31)), RangeError)
  })

  it('cells are the leading bits: 0 bits → one cell, 6 bits → 0 … 63', () => {
    assert.equal(cellOf(id([0xff]), 0), 0)
    assert.equal(cellOf(id([0xfc]), 6), 63)
    assert.equal(cellOf(id([0x03, 0xff]), 6), 0, 'bits past the prefix do not count')
    assert.equal(cellOf(id([0x04]), 6), 1, 'the sixth bit')
  })

  it('a capability key hashes as the daemon keys it: sha2-256 of the CID multihash of sha2-256(prefix + key)', () => {
    const key = 'market/eu/40'
    const digest = createHash('sha256').update(CAPABILITY_KEY_PREFIX + key).digest()
    const multihash = Buffer.concat([Buffer.from([0x12, 0x20]), digest])
    const expected = createHash('sha256').update(multihash).digest()
    assert.deepEqual(Buffer.from(kadIdOfCapabilityKey(key)), expected)
  })

  it('DHT message sizes: a request, a full response, and the varint edge at 127 / 128', () => {
    const p = DEFAULT_KADEMLIA_PARAMS
    assert.equal(varintBytes(0), 1)
    assert.equal(varintBytes(127), 1)
    assert.equal(varintBytes(128), 2)
    // peer entry: id field 1 + 1 + 38, addrs 21, connection 2 → 63, framed 1 + 1 + 63
    assert.equal(peerEntryBytes(p), 65)
    // request: type 2 + key 1 + 1 + 34 = 38, prefix 1
    assert.equal(dhtMessageBytes(p, 34, 0), 39)
    // 20 closer peers: 38 + 1,300 = 1,338, prefix 2
    assert.equal(dhtMessageBytes(p, 34, 20), 1340)
  })

  it('refuses bad parameters, duplicate ids and unknown nodes with typed errors', () => {
    assert.throws(() => createKademliaParams({ k: 0 }), (e: unknown) => e instanceof InvalidOverlayParamsError && e.field === 'k')
    assert.throws(() => createKademliaParams({ alpha: 1.5 }), (e: unknown) => e instanceof InvalidOverlayParamsError && e.field === 'alpha')
    assert.throws(() => createKademliaParams({ prefixLength: 11 }), (e: unknown) => e instanceof InvalidOverlayParamsError && e.field === 'prefixLength')
    assert.equal(createKademliaParams({ prefixLength: 10 }).prefixLength, 10, 'the limit itself is fine')
    assert.throws(() => KademliaModel.build(['a', 'b', 'a'], { seed: 1 }), (e: unknown) => e instanceof DuplicateOverlayNodeError && e.id === 'a')
    const model = KademliaModel.build(ids(10), { seed: 1 })
    assert.throws(() => model.findNode(10, model.kadId(0), { delay: pairDelay }), (e: unknown) => e instanceof UnknownOverlayNodeError && e.node === 10)
    assert.throws(() => model.findNode(-1, model.kadId(0), { delay: pairDelay }), UnknownOverlayNodeError)
  })
})

describe('simulations/overlay: Kademlia routing tables and lookups', () => {
  const model = KademliaModel.build(ids(3000), { seed: 'kad-3000' })

  it('each table holds min(k, peers in the cell) peers of every cell, never itself, no repeats', () => {
    const p = model.params
    const cellOfNode = (n: number): number => cellOf(model.kadId(n), p.prefixLength)
    const inCell = new Map<number, number>()
    for (let n = 0; n < model.size; n++) inCell.set(cellOfNode(n), (inCell.get(cellOfNode(n)) ?? 0) + 1)
    assert.ok([...inCell.values()].some((c) => c > p.k), 'some cells have more than k nodes, so tables sample')
    for (const node of [0, 1, 1234, 2999]) {
      const table = [...model.tableOf(node)]
      assert.equal(new Set(table).size, table.length)
      assert.ok(!table.includes(node))
      const perCell = new Map<number, number>()
      for (const peer of table) perCell.set(cellOfNode(peer), (perCell.get(cellOfNode(peer)) ?? 0) + 1)
      for (const [cell, total] of inCell) {
        const others = total - (cellOfNode(node) === cell ? 1 : 0)
        assert.equal(perCell.get(cell) ?? 0, Math.min(p.k, others), `cell ${cell}`)
      }
    }
  })

  it('a lookup finds the true k closest (brute-force sort) on a full network', () => {
    const everyone = Array.from({ length: model.size }, (_, i) => i)
    const prng = new Prng('targets')
    let exact = 0
    const lookups = 30
    for (let i = 0; i < lookups; i++) {
      const origin = prng.int(0, model.size - 1)
      const target = Uint8Array.from({ length: 32 }, () => prng.int(0, 255))
      const result = model.findNode(origin, target, { delay: pairDelay })
      const truth = bruteClosest(model, target, model.params.k, everyone.filter((n) => n !== origin))
      assert.equal(result.closest.length, model.params.k)
      const found = new Set(result.closest)
      const hits = truth.filter((n) => found.has(n)).length
      if (hits === model.params.k) exact++
      assert.ok(result.messages === result.queried * 2, 'every query answered: one request, one response')
      assert.equal(result.failed, 0)
      assert.ok(result.hops >= 2, 'at 3,000 nodes the tables do not hold everyone: the lookup walks')
    }
    assert.equal(exact, lookups, `exact in ${exact} of ${lookups}`)
  })

  it('hops grow with log N once tables no longer hold everyone (100 vs 1,000 nodes, seeded)', () => {
    // the daemon's table (64 cells × 20) holds nearly every peer of a network under ~1,280: one hop
    const small = KademliaModel.build(ids(100), { seed: 'hops' })
    const thousand = KademliaModel.build(ids(1000), { seed: 'hops' })
    // a table of 4 cells × 4 peers makes the growth visible at these sizes
    const narrow = { k: 4, prefixLength: 2 }
    const narrow100 = KademliaModel.build(ids(100), { seed: 'hops', params: narrow })
    const narrow1000 = KademliaModel.build(ids(1000), { seed: 'hops', params: narrow })
    const meanHops = (m: KademliaModel): number => {
      const prng = new Prng('hop-targets')
      let sum = 0
      for (let i = 0; i < 60; i++) {
        const target = Uint8Array.from({ length: 32 }, () => prng.int(0, 255))
        sum += m.findNode(prng.int(0, m.size - 1), target, { delay: pairDelay }).hops
      }
      return sum / 60
    }
    assert.equal(meanHops(small), 1)
    assert.ok(meanHops(thousand) < 1.5, 'only cells over 20 peers need a second hop')
    const h100 = meanHops(narrow100)
    const h1000 = meanHops(narrow1000)
    assert.ok(h1000 > h100 + 0.5, `narrow tables: ${h100} hops at 100 nodes, ${h1000} at 1,000`)
    // log N growth, not linear: ten times the nodes, well under ten times the hops
    assert.ok(h1000 < h100 * 4, `narrow tables: ${h100} → ${h1000}`)
  })

  it('counts time by the rules: α per path in waves of one round trip, no dial for table peers', () => {
    // 21 nodes: every table holds the other 20; a lookup queries them on 2 paths of 10, 3 at a time:
    // 4 waves of one 20 ms round trip
    const tiny = KademliaModel.build(ids(21), { seed: 't' })
    const r = tiny.findNode(0, tiny.kadId(5), { delay: () => 10 })
    assert.equal(r.queried, 20)
    assert.equal(r.messages, 40)
    assert.equal(r.timeMs, 80)
    assert.equal(r.hops, 1)
    assert.equal(r.rounds, 1)
    assert.equal(r.bytes, 20 * dhtMessageBytes(tiny.params, 38, 0) + 20 * dhtMessageBytes(tiny.params, 38, 19))
    // one peer offline: its query fails after the RPC timeout, the lookup waits for it
    const down = tiny.findNode(0, tiny.kadId(5), { delay: () => 10, isUp: (n) => n !== 7 })
    assert.equal(down.failed, 1)
    assert.ok(!down.closest.includes(7))
    assert.ok(down.timeMs >= DEFAULT_KADEMLIA_PARAMS.rpcTimeoutMs, `${down.timeMs} ms`)
    // at the start offset
    assert.equal(tiny.findNode(0, tiny.kadId(5), { delay: () => 10, at: 1000 }).timeMs, 80)
    // a round trip of exactly the RPC timeout still answers; a hair more fails at the timeout
    const half = DEFAULT_KADEMLIA_PARAMS.rpcTimeoutMs / 2
    const atLimit = tiny.findNode(0, tiny.kadId(5), { delay: () => half })
    assert.equal(atLimit.failed, 0)
    assert.equal(atLimit.closest.length, 20)
    const past = tiny.findNode(0, tiny.kadId(5), { delay: () => half + 0.5 })
    assert.equal(past.failed, 20)
    assert.deepEqual(past.closest, [])
    assert.equal(past.timeMs, 4 * DEFAULT_KADEMLIA_PARAMS.rpcTimeoutMs)
  })

  it('a query to a peer outside the caller\'s table pays the dial round trips first', () => {
    // tables of 4 cells × 4 peers: most peers a lookup asks were named to it, not in its table
    const narrow = { k: 4, prefixLength: 2 }
    const dialing = KademliaModel.build(ids(500), { seed: 'dial', params: narrow })
    const connected = KademliaModel.build(ids(500), { seed: 'dial', params: { ...narrow, dialRoundTrips: 0 } })
    const target = kadIdOfCapabilityKey('vram/24')
    const slow = dialing.findNode(0, target, { delay: () => 10 })
    const fast = connected.findNode(0, target, { delay: () => 10 })
    assert.deepEqual(slow.closest, fast.closest, 'the same walk')
    assert.equal(slow.queried, fast.queried)
    assert.ok(slow.rounds >= 2)
    // the first wave is table peers (one 20 ms round trip), every later one is dialled (3 round trips)
    assert.equal(fast.timeMs % 20, 0)
    assert.ok(slow.timeMs >= fast.timeMs + 40 * (slow.rounds - 1), `${slow.timeMs} ms dialling, ${fast.timeMs} ms connected`)
  })

  it('with 20 % of nodes down, lookups still find the closest live peers, and take longer', () => {
    const prng = new Prng('churn')
    const down = new Set<number>()
    while (down.size < model.size * 0.2) down.add(prng.int(0, model.size - 1))
    const up = Array.from({ length: model.size }, (_, i) => i).filter((n) => !down.has(n))
    const isUp = (n: number): boolean => !down.has(n)
    let timeUp = 0
    let timeChurn = 0
    let failed = 0
    for (let i = 0; i < 20; i++) {
      const origin = up[prng.int(0, up.length - 1)] as number
      const target = Uint8Array.from({ length: 32 }, () => prng.int(0, 255))
      const all = model.findNode(origin, target, { delay: pairDelay })
      const churn = model.findNode(origin, target, { delay: pairDelay, isUp })
      timeUp += all.timeMs
      timeChurn += churn.timeMs
      failed += churn.failed
      assert.ok(churn.closest.every(isUp), 'only peers that answered')
      const truth = bruteClosest(model, target, model.params.k, up.filter((n) => n !== origin))
      const hits = truth.filter((n) => churn.closest.includes(n)).length
      assert.ok(hits >= model.params.k - 3, `lookup ${i}: ${hits} of the ${model.params.k} closest live peers`)
    }
    assert.ok(failed > 0)
    assert.ok(timeChurn > timeUp * 2, `mean ${timeUp / 20} ms all up, ${timeChurn / 20} ms with 20 % down`)
  })

  it('finds provider records after ADD_PROVIDER, and none for a key nobody provides', () => {
    const key = 'market/eu/40'
    const providers = [10, 200, 1500, 2999]
    for (const provider of providers) {
      const r = model.provide(provider, key, { delay: pairDelay })
      assert.equal(r.holders.length, model.params.k + 1, 'the k closest and the provider itself')
      assert.equal(r.messages, r.queried * 2 + model.params.k, 'the lookup, then one ADD_PROVIDER each')
      for (const holder of r.holders) assert.ok(model.providersAt(holder, key).includes(provider))
    }
    const found = model.findProviders(42, key, { delay: pairDelay })
    assert.deepEqual([...found.providers].sort((a, b) => a - b), providers)
    assert.ok(found.firstProviderMs !== undefined && found.firstProviderMs <= found.timeMs)
    const none = model.findProviders(42, 'market/eu/80', { delay: pairDelay })
    assert.deepEqual(none.providers, [])
    assert.equal(none.firstProviderMs, undefined)
    // a provider asking finds itself at once, and the others through the DHT
    const self = model.findProviders(10, key, { delay: pairDelay })
    assert.equal(self.firstProviderMs, 0)
    assert.equal(self.providers.length, providers.length)
  })

  it('stops a GET_PROVIDERS once k providers are known', () => {
    // small tables (4 cells × 5), so a lookup has to walk
    const small = KademliaModel.build(ids(300), { seed: 'many', params: { k: 5, prefixLength: 2 } })
    const key = 'gpu/nvidia-h100'
    for (let p = 0; p < 8; p++) small.provide(p, key, { delay: pairDelay })
    const r = small.findProviders(299, key, { delay: pairDelay })
    assert.equal(r.providers.length, 5)
    // the same walk without the stop: FIND_NODE for the key's id asks more peers
    const walk = small.findNode(299, kadIdOfCapabilityKey(key), { delay: pairDelay })
    assert.ok(r.queried < walk.queried, `${r.queried} queries until 5 providers, ${walk.queried} for the whole walk`)
  })

  it('is deterministic per seed', () => {
    const a = KademliaModel.build(ids(500), { seed: 7 })
    const b = KademliaModel.build(ids(500), { seed: 7 })
    const c = KademliaModel.build(ids(500), { seed: 8 })
    const target = kadIdOfCapabilityKey('region/eu')
    assert.deepEqual(a.findNode(3, target, { delay: pairDelay }), b.findNode(3, target, { delay: pairDelay }))
    assert.deepEqual([...a.tableOf(9)], [...b.tableOf(9)])
    assert.notDeepEqual(a.kadId(0), c.kadId(0))
  })
})
