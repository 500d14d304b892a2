/**
 * simulations/overlay/mesh-gossip.ts: the gossip mesh model as the harness bus's gossip delay. Each
 * subscriber's delay is its first copy over the topic's mesh (checked against GossipMesh.publish on the
 * same mesh); wire copies follow from the mesh's degrees exactly as the model says; a publisher's flood is
 * reused, a message on two topics costs both floods and arrives by the earlier; a subscriber outside the
 * mesh is counted; through the real Bus, deliveries land at those delays and an unreachable one is lost.
 */
import assert from 'node:assert/strict'
import { VirtualScheduler } from '../../../../protocol/market/scheduler.js'
import { Bus, type Message } from '../../../../simulations/harness/bus.js'
import { fixedNetwork, type NetworkModel, type Place } from '../../../../simulations/harness/network.js'
import { Prng } from '../../../../simulations/harness/prng.js'
import { DEFAULT_GOSSIP_PARAMS, publishRpcBytes } from '../../../../simulations/overlay/gossip-params.js'
import { MeshGossip } from '../../../../simulations/overlay/mesh-gossip.js'

const places = (n: number, prefix = 'n'): Place[] => Array.from({ length: n }, (_, i) => ({ node: `${prefix}${i}`, region: i % 2 === 0 ? 'eu-west' : 'us-east' }))
const msg = (kind: string, bytes: number): Message => ({ kind, bytes, body: {} })
/** A base model whose delay depends on the pair (so paths differ), with no jitter. */
const pairNetwork = (): NetworkModel => {
  const d = (a: Place, b: Place): number => 5 + ((Number(a.node.slice(1)) * 7919 + Number(b.node.slice(1)) * 104729) % 40)
  return { latencyMs: d, meanLatencyMs: d, gossipHops: 2, gossipLoss: 0 }
}

describe('simulations/overlay: the gossip mesh as the bus\'s gossip delay', () => {
  it('gives each subscriber its first copy\'s delay over the topic\'s mesh', () => {
    const members = places(200)
    const g = new MeshGossip(pairNetwork(), { seed: 3, subscribers: () => members, lazy: false })
    const m = msg('bid', 300)
    const from = members[0] as Place
    const delays = members.slice(1).map((to) => g.gossipDelayMs(from, to, ['t'], m))
    // the same mesh published directly, on the same delays
    const mesh = g.meshOf('t')
    const idx = (p: Place): number => g.nodeIndex(p)
    const r = mesh.publish(idx(from), { delay: (a, b) => pairNetwork().latencyMs(members[a] as Place, members[b] as Place), messageBytes: 300 })
    members.slice(1).forEach((to, i) => {
      assert.equal(delays[i], Math.max(1, Math.round(r.firstDeliveryMs[mesh.indexOf(idx(to))] as number)), to.node)
    })
    assert.equal(g.wire.copies, r.transmissions)
    assert.equal(g.wire.duplicates, r.duplicates)
    assert.equal(g.wire.messages, 1)
    assert.equal(g.wire.publishes, 1)
    assert.equal(g.wire.bytes, r.transmissions * publishRpcBytes(300, 1))
  })

  it('wire copies per message: between 2·edges − (N − 1) and 2·edges, plus the publisher\'s flood to its lazy peers (edges in [N·D/2, N·Dhi/2])', () => {
    const p = DEFAULT_GOSSIP_PARAMS
    for (const n of [20, 100, 500]) {
      const members = places(n)
      const g = new MeshGossip(fixedNetwork(10), { seed: `n${n}`, subscribers: () => members, lazy: false })
      const m = msg('bid', 300) // one message object: one publish (a new object is a new publish)
      for (const to of members.slice(1)) g.gossipDelayMs(members[0] as Place, to, ['t'], m)
      const mesh = g.meshOf('t')
      const edges = mesh.edges
      const lazy = mesh.lazyPeers(g.nodeIndex(members[0] as Place)).length
      assert.ok(edges >= n * p.D / 2 && edges <= n * p.Dhi / 2, `n=${n}: ${edges} edges`)
      const copies = g.wire.copies
      assert.ok(copies >= 2 * edges - (n - 1) + lazy && copies <= 2 * edges + lazy, `n=${n}: ${copies} copies, ${edges} edges`)
      // so every receiver got about D copies: far more than the one the application sends
      assert.ok(copies / (n - 1) >= p.D - 1, `n=${n}: ${copies / (n - 1)} copies per receiver`)
    }
  })

  it('reuses a publisher\'s flood: the second message costs the same copies and arrives the same way', () => {
    const members = places(60)
    const g = new MeshGossip(pairNetwork(), { seed: 1, subscribers: () => members })
    const once = (m: Message): number[] => members.slice(1).map((to) => g.gossipDelayMs(members[5] as Place, to, ['t'], m))
    const a = once(msg('bid', 300))
    const after = { ...g.wire }
    const b = once(msg('bid', 300))
    assert.deepEqual(b, a)
    assert.equal(g.wire.copies, 2 * after.copies)
    assert.equal(g.wire.ihave, 2 * after.ihave)
    assert.equal(g.wire.messages, 2)
    assert.equal(g.wire.byKind.bid?.messages, 2)
    assert.equal(g.wire.byKind.bid?.copies, g.wire.copies)
  })

  it('a message on two topics: both floods on the wire, each subscriber by its earlier copy', () => {
    const all = places(40)
    const eu = all.filter((p) => p.region === 'eu-west')
    const g = new MeshGossip(pairNetwork(), { seed: 2, subscribers: (t) => (t === 'global' ? all : eu), lazy: false })
    const from = eu[0] as Place
    const m = msg('job-request', 2_000)
    const both = all.filter((p) => p !== from).map((to) => g.gossipDelayMs(from, to, ['eu', 'global'], m))
    const copies = g.wire.copies
    const g1 = new MeshGossip(pairNetwork(), { seed: 2, subscribers: (t) => (t === 'global' ? all : eu), lazy: false })
    const global = all.filter((p) => p !== from).map((to) => g1.gossipDelayMs(from, to, ['global'], m))
    const g2 = new MeshGossip(pairNetwork(), { seed: 2, subscribers: (t) => (t === 'global' ? all : eu), lazy: false })
    const euOnly = eu.filter((p) => p !== from).map((to) => g2.gossipDelayMs(from, to, ['eu'], m))
    assert.equal(copies, g1.wire.copies + g2.wire.copies)
    assert.equal(g.wire.publishes, 2)
    assert.equal(g.wire.messages, 1)
    let e = 0
    all.filter((p) => p !== from).forEach((to, i) => {
      const expected = to.region === 'eu-west' ? Math.min(global[i] as number, euOnly[e++] as number) : global[i]
      assert.equal(both[i], expected, to.node)
    })
  })

  it('a subscriber outside the topic\'s mesh gets the base model\'s hops × latency and is counted', () => {
    const members = places(10)
    const g = new MeshGossip(fixedNetwork(7, { hops: 3 }), { seed: 1, subscribers: () => members })
    assert.equal(g.gossipDelayMs(members[0] as Place, { node: 'stranger', region: 'eu-west' }, ['t'], msg('bid', 100)), 21)
    assert.equal(g.wire.unmodelled, 1)
  })

  it('through the bus: deliveries at the mesh delays; a copy that cannot arrive is lost, not scheduled', () => {
    const members = places(30)
    const scheduler = new VirtualScheduler(0)
    const g = new MeshGossip(pairNetwork(), { seed: 4, subscribers: () => members, lazy: false })
    const lost: string[] = []
    const bus = new Bus(scheduler, g.network(), new Prng(1), { sent: () => {}, delivered: () => {}, lost: (_f, to) => { lost.push(to) } })
    const got = new Map<string, number>()
    for (const p of members) {
      bus.join(p.node, p.region)
      bus.subscribe(p.node, 't', () => { got.set(p.node, scheduler.now()) })
    }
    const m = msg('award', 700)
    const probe = new MeshGossip(pairNetwork(), { seed: 4, subscribers: () => members, lazy: false })
    const expected = members.slice(1).map((to) => probe.gossipDelayMs(members[0] as Place, to, ['t'], m))
    assert.equal(bus.publish('n0', ['t'], m), 29)
    scheduler.advance(10_000)
    members.slice(1).forEach((to, i) => { assert.equal(got.get(to.node), expected[i], to.node) })
    assert.equal(lost.length, 0)
    // a model that cannot reach a subscriber (Infinity) makes the bus count it lost
    const cut: NetworkModel = { ...fixedNetwork(5), gossipDelayMs: (_f, to) => (to.node === 'n2' ? Infinity : 5) }
    const bus2 = new Bus(scheduler, cut, new Prng(1), { sent: () => {}, delivered: () => {}, lost: (_f, to) => { lost.push(to) } })
    for (const p of members.slice(0, 3)) {
      bus2.join(p.node, p.region)
      bus2.subscribe(p.node, 't', () => {})
    }
    assert.equal(bus2.publish('n0', ['t'], m), 1)
    assert.deepEqual(lost, ['n2'])
  })

  it('keeps the base model\'s faults and blob times: a partition\'s drops and per-pair blob bandwidth hold under the mesh', () => {
    const members = places(6)
    const calls: string[] = []
    const base: NetworkModel = {
      ...pairNetwork(),
      drops: (from, to, _at, channel) => { calls.push(`${channel} ${from.node}>${to.node}`); return to.node === 'n3' },
      blobMs: (from, to, bytes) => bytes / 1000 + (from === 'n1' && to === 'n2' ? 7 : 0)
    }
    const model = new MeshGossip(base, { seed: 2, subscribers: () => members }).network()
    assert.ok(model.drops !== undefined && model.blobMs !== undefined)
    assert.equal(model.drops(members[0] as Place, members[3] as Place, 0, 'stream'), true)
    assert.equal(model.drops(members[0] as Place, members[1] as Place, 0, 'gossip'), false)
    assert.deepEqual(calls, ['stream n0>n3', 'gossip n0>n1'])
    assert.equal(model.blobMs('n1', 'n2', 5_000), 12)
    // through the bus: the dropped subscriber is counted lost, the others get the mesh's copies
    const scheduler = new VirtualScheduler(0)
    const lost: string[] = []
    const bus = new Bus(scheduler, model, new Prng(1), { sent: () => {}, delivered: () => {}, lost: (_f, to) => { lost.push(to) } })
    const got = new Set<string>()
    for (const p of members) {
      bus.join(p.node, p.region)
      bus.subscribe(p.node, 't', () => { got.add(p.node) })
    }
    bus.publish('n0', ['t'], msg('bid', 300))
    scheduler.advance(10_000)
    assert.deepEqual(lost, ['n3'])
    assert.deepEqual([...got].sort(), ['n1', 'n2', 'n4', 'n5'])
  })
})
