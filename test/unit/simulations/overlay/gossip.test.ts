/**
 * simulations/overlay/gossip.ts: the gossipsub mesh model. Mesh shape (degrees, symmetry), exact
 * counts on meshes small enough to count by hand, the conservation rule (every delivered copy is a
 * first delivery or a duplicate), loss covered by redundancy and by IHAVE/IWANT, determinism.
 */
import assert from 'node:assert/strict'
import { InvalidOverlayParamsError, UnknownOverlayNodeError } from '../../../../simulations/overlay/errors.js'
import { DEFAULT_GOSSIP_PARAMS, createGossipParams, iwantRpcBytes, publishRpcBytes } from '../../../../simulations/overlay/gossip-params.js'
import { GossipMesh, type PublishResult } from '../../../../simulations/overlay/gossip.js'
import type { DelayFn } from '../../../../simulations/overlay/kademlia.js'

const range = (n: number, from = 0): number[] => Array.from({ length: n }, (_, i) => from + i)
const pairDelay: DelayFn = (a, b) => 5 + ((Math.min(a, b) * 7919 + Math.max(a, b) * 104729) % 50)

function conserved (r: PublishResult): void {
  assert.equal(r.duplicates, r.transmissions - r.dropped - r.receivers, 'every delivered copy is a first delivery or a duplicate')
}

describe('simulations/overlay: gossip mesh', () => {
  const mesh = GossipMesh.build(range(1000), { seed: 'mesh-1000' })

  it('keeps every mesh degree within [Dlo, Dhi], symmetric, without self-links or repeats', () => {
    const p = DEFAULT_GOSSIP_PARAMS
    let sum = 0
    for (let node = 0; node < 1000; node++) {
      const peers = mesh.meshPeers(node)
      assert.ok(peers.length >= p.Dlo && peers.length <= p.Dhi, `node ${node}: degree ${peers.length}`)
      assert.ok(!peers.includes(node))
      assert.equal(new Set(peers).size, peers.length)
      for (const peer of peers) assert.ok(mesh.meshPeers(peer).includes(node), `${node} ↔ ${peer}`)
      const lazy = mesh.lazyPeers(node)
      assert.equal(lazy.length, p.Dlazy)
      assert.ok(lazy.every((w) => w !== node && !peers.includes(w)), 'lazy peers are outside the mesh')
      sum += peers.length
    }
    assert.equal(mesh.edges, sum / 2)
  })

  it('small topics: fewer members than Dlo + 1 make a full mesh; one member has none', () => {
    const three = GossipMesh.build([4, 9, 2], { seed: 1 })
    assert.deepEqual(three.meshPeers(9), [2, 4])
    assert.deepEqual(three.lazyPeers(9), [])
    const one = GossipMesh.build([7], { seed: 1 })
    assert.deepEqual(one.meshPeers(7), [])
    const r = one.publish(7, { delay: pairDelay, messageBytes: 100 })
    assert.equal(r.receivers, 0)
    assert.equal(r.transmissions, 0)
    const empty = GossipMesh.build([], { seed: 1 })
    assert.equal(empty.publish(3, { delay: pairDelay, messageBytes: 100 }).transmissions, 0)
  })

  it('bounds with no slack (Dlo = D = Dhi) still give every member its degree (the repair pass)', () => {
    const full = GossipMesh.build(range(13), { seed: 'full', params: { D: 12, Dlo: 12, Dhi: 12 } })
    for (let node = 0; node < 13; node++) assert.equal(full.meshPeers(node).length, 12, `node ${node}`)
    // random grafting leaves some members short when most others are full already
    const regular = GossipMesh.build(range(1000), { seed: 'tight', params: { D: 6, Dlo: 6, Dhi: 6 } })
    for (let node = 0; node < 1000; node++) assert.equal(regular.meshPeers(node).length, 6, `node ${node}`)
  })

  it('the publisher floods its mesh and its other topic peers; without floodPublish only its mesh', () => {
    const origin = 77
    const firstHop = (m: GossipMesh): number[] => {
      const to: number[] = []
      m.publish(origin, { delay: pairDelay, messageBytes: 300, drop: (from, node) => { if (from === origin) to.push(node); return from === origin } })
      return to.sort((a, b) => a - b)
    }
    assert.deepEqual(firstHop(mesh), [...mesh.meshPeers(origin), ...mesh.lazyPeers(origin)].sort((a, b) => a - b))
    const meshOnly = GossipMesh.build(range(1000), { seed: 'mesh-1000', params: { floodPublish: false } })
    assert.deepEqual(firstHop(meshOnly), meshOnly.meshPeers(origin))
  })

  it('a full mesh of 4 counts by hand: 3 first-hop sends, 2 forwards each, 6 duplicates', () => {
    const k4 = GossipMesh.build([0, 1, 2, 3], { seed: 1, params: { D: 3, Dlo: 3, Dhi: 3 } })
    const r = k4.publish(0, { delay: () => 10, messageBytes: 100 })
    assert.equal(r.transmissions, 9)
    assert.equal(r.receivers, 3)
    assert.equal(r.duplicates, 6)
    assert.deepEqual([...r.firstDeliveryMs], [0, 10, 10, 10])
    assert.deepEqual([...r.hops], [0, 1, 1, 1])
    assert.equal(r.lastDeliveryMs, 10)
    assert.equal(r.bytes, 9 * publishRpcBytes(100, new TextEncoder().encode('gpumesh/2/market/global').byteLength))
    // a message over idontwantMinBytes: every receiver tells its other 2 mesh peers; with equal delays
    // an IDONTWANT arrives at 20 ms, after the forwards left at 10 ms, so nothing is saved
    const big = k4.publish(0, { delay: () => 10, messageBytes: 600 })
    assert.equal(big.idontwant, 6)
    assert.equal(k4.publish(0, { delay: () => 10, messageBytes: 512 }).idontwant, 6, 'exactly idontwantMinBytes')
    assert.equal(k4.publish(0, { delay: () => 10, messageBytes: 511 }).idontwant, 0, 'one byte under')
    assert.equal(big.transmissions, 9)
    // IDONTWANTs leave on receipt, forwards after validation: with 9 ms of it the IDONTWANTs (at
    // 20 ms) still come after the forwards (19 ms); from exactly 10 ms they come first and the
    // forwards to peers that have the message are skipped
    assert.equal(k4.publish(0, { delay: () => 10, messageBytes: 600, processingMs: 9 }).transmissions, 9)
    const slow = k4.publish(0, { delay: () => 10, messageBytes: 600, processingMs: 10 })
    assert.equal(slow.transmissions, 3)
    assert.equal(slow.duplicates, 0)
    assert.equal(slow.bytes, 3 * publishRpcBytes(600, 23) + 6 * iwantRpcBytes())
  })

  it('every subscriber receives a publish on a loss-free mesh; duplicates = transmissions − receivers', () => {
    for (const origin of [0, 517, 999]) {
      const r = mesh.publish(origin, { delay: pairDelay, messageBytes: 300 })
      assert.equal(r.receivers, 999)
      assert.equal(r.dropped, 0)
      assert.equal(r.duplicates, r.transmissions - r.receivers)
      const at = mesh.indexOf(origin)
      for (let i = 0; i < 1000; i++) {
        if (i === at) continue
        assert.ok(Number.isFinite(r.firstDeliveryMs[i]) && (r.hops[i] as number) >= 1, `member ${i}`)
      }
      assert.equal(r.firstDeliveryMs[at], 0)
      assert.equal(r.lastDeliveryMs, Math.max(...r.firstDeliveryMs))
      // each mesh edge carries the message at most once each way; the first hop adds the lazy peers
      assert.ok(r.transmissions <= 2 * mesh.edges + DEFAULT_GOSSIP_PARAMS.Dlazy)
    }
  })

  it('a node outside the topic publishes through a fanout and reaches every member', () => {
    const members = range(300, 1000)
    const topic = GossipMesh.build(members, { seed: 'fanout' })
    const r = topic.publish(5, { delay: pairDelay, messageBytes: 300 })
    assert.equal(r.receivers, 300)
    conserved(r)
    assert.equal(Math.min(...r.hops), 1)
    assert.throws(() => topic.meshPeers(5), (e: unknown) => e instanceof UnknownOverlayNodeError && e.node === 5)
  })

  it('loss of one edge copy still delivers through the mesh redundancy', () => {
    const origin = 10
    const victim = mesh.meshPeers(origin)[0] as number
    const drop = (from: number, to: number): boolean => from === origin && to === victim
    const r = mesh.publish(origin, { delay: pairDelay, messageBytes: 300, drop })
    assert.equal(r.dropped, 1)
    assert.equal(r.receivers, 999)
    assert.ok((r.hops[mesh.indexOf(victim)] as number) >= 2, 'the victim got it from another mesh peer')
    conserved(r)
  })

  it('IHAVE/IWANT reaches a node whose every mesh copy is lost; without lazy gossip it is missed', () => {
    const victim = 321
    const meshOfVictim = new Set(mesh.meshPeers(victim))
    const origin = [...Array(1000).keys()].find((n) => n !== victim && !meshOfVictim.has(n) && !mesh.lazyPeers(n).includes(victim)) as number
    const drop = (from: number, to: number): boolean => to === victim && meshOfVictim.has(from)
    const eager = mesh.publish(origin, { delay: pairDelay, messageBytes: 300, drop })
    assert.equal(eager.receivers, 998)
    assert.equal(eager.firstDeliveryMs[mesh.indexOf(victim)], Infinity)
    assert.equal(eager.hops[mesh.indexOf(victim)], -1)
    conserved(eager)
    const lazy = mesh.publish(origin, { delay: pairDelay, messageBytes: 300, drop, lazy: true })
    assert.equal(lazy.receivers, 999)
    assert.ok(lazy.iwant >= 1)
    assert.equal(lazy.ihave, 1000 * DEFAULT_GOSSIP_PARAMS.historyGossip * DEFAULT_GOSSIP_PARAMS.Dlazy, 'every member advertises at its next 3 heartbeats')
    assert.ok((lazy.firstDeliveryMs[mesh.indexOf(victim)] as number) > eager.lastDeliveryMs, 'later than the flood')
    conserved(lazy)
  })

  it('is deterministic per seed, and reusing a result gives the same numbers without new arrays', () => {
    const a = GossipMesh.build(range(500), { seed: 3 })
    const b = GossipMesh.build(range(500), { seed: 3 })
    const c = GossipMesh.build(range(500), { seed: 4 })
    assert.deepEqual(a.meshPeers(17), b.meshPeers(17))
    const ra = a.publish(17, { delay: pairDelay, messageBytes: 700, lazy: true })
    const rb = b.publish(17, { delay: pairDelay, messageBytes: 700, lazy: true })
    assert.deepEqual(ra, rb)
    assert.ok(range(500).some((n) => a.meshPeers(n).join() !== c.meshPeers(n).join()))
    const first = a.publish(3, { delay: pairDelay, messageBytes: 300 })
    const arrays = first.firstDeliveryMs
    const again = a.publish(3, { delay: pairDelay, messageBytes: 300, into: first })
    assert.equal(again.firstDeliveryMs, arrays)
    const fresh = b.publish(3, { delay: pairDelay, messageBytes: 300 })
    assert.deepEqual({ ...again }, { ...fresh })
  })

  it('refuses bad parameters and duplicate subscribers with typed errors', () => {
    assert.throws(() => createGossipParams({ Dlo: 7 }), (e: unknown) => e instanceof InvalidOverlayParamsError && e.field === 'D')
    assert.throws(() => createGossipParams({ Dhi: 5 }), (e: unknown) => e instanceof InvalidOverlayParamsError && e.field === 'D')
    assert.throws(() => createGossipParams({ heartbeatMs: 0 }), (e: unknown) => e instanceof InvalidOverlayParamsError && e.field === 'heartbeatMs')
    assert.equal(createGossipParams({ Dlo: 6, D: 6, Dhi: 6 }).D, 6, 'equal bounds are fine')
    assert.throws(() => GossipMesh.build([1, 2, 1], { seed: 1 }), (e: unknown) => e instanceof UnknownOverlayNodeError && e.node === 1)
  })
})
