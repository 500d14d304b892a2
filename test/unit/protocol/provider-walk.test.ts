import assert from 'node:assert/strict'
import { ProviderWalk, compareWalkPeers, walkStep, xorDistance, type WalkPeer } from '../../../protocol/index.js'

const peer = (id: string, ...bytes: number[]): WalkPeer => ({ id, distance: Uint8Array.from(bytes) })

describe('the provider walk past k (§7.4c)', () => {
  it('XOR distance is bytewise, and refuses ids of different lengths', () => {
    assert.deepEqual(xorDistance(Uint8Array.from([0xf0, 0x0f]), Uint8Array.from([0xff, 0x0f])), Uint8Array.from([0x0f, 0x00]))
    assert.deepEqual(xorDistance(Uint8Array.from([7]), Uint8Array.from([7])), Uint8Array.from([0]))
    assert.throws(() => xorDistance(Uint8Array.from([1]), Uint8Array.from([1, 2])), RangeError)
  })

  it('orders by distance as a big-endian number, the first byte first, ties by id', () => {
    assert.ok(compareWalkPeers(peer('a', 0, 255), peer('b', 1, 0)) < 0)
    assert.ok(compareWalkPeers(peer('a', 1, 0), peer('b', 0, 255)) > 0)
    assert.ok(compareWalkPeers(peer('a', 1, 2), peer('b', 1, 3)) < 0)
    assert.ok(compareWalkPeers(peer('a', 1, 2), peer('b', 1, 2)) < 0)
    assert.ok(compareWalkPeers(peer('b', 1, 2), peer('a', 1, 2)) > 0)
    assert.equal(compareWalkPeers(peer('a', 1, 2), peer('a', 1, 2)), 0)
  })

  it('asks the k nearest not yet asked; a failed peer is replaced by the next nearest; done when all k nearest were asked', () => {
    const known = [peer('far', 9), peer('p1', 1), peer('p3', 3), peer('p2', 2), peer('p4', 4)]
    assert.deepEqual(walkStep(known, new Set(), new Set(), 3), { closest: ['p1', 'p2', 'p3'], toAsk: ['p1', 'p2', 'p3'] })
    assert.deepEqual(walkStep(known, new Set(['p1', 'p3']), new Set(), 3), { closest: ['p1', 'p2', 'p3'], toAsk: ['p2'] })
    assert.deepEqual(walkStep(known, new Set(['p1', 'p2', 'p3']), new Set(['p2']), 3), { closest: ['p1', 'p3', 'p4'], toAsk: ['p4'] })
    assert.deepEqual(walkStep(known, new Set(['p1', 'p2', 'p3', 'p4']), new Set(['p2']), 3), { closest: ['p1', 'p3', 'p4'], toAsk: [] })
    // fewer known than k: all of them
    assert.deepEqual(walkStep(known.slice(0, 2), new Set(['far']), new Set(), 3), { closest: ['p1', 'far'], toAsk: ['p1'] })
    assert.deepEqual(walkStep([], new Set(), new Set(), 3), { closest: [], toAsk: [] })
  })

  it('ProviderWalk: the lookup answers first, then steps to the k nearest; complete only if each of them answered', () => {
    const walk = new ProviderWalk<string>(3)
    const d = (n: number): Uint8Array => Uint8Array.from([n])
    walk.learn('p2', d(2), 'addr-p2')
    walk.asking('p2') // the DHT's own lookup asked it, and it answered
    walk.failed('p9') // one the lookup asked that never answered, never heard of otherwise
    walk.learn('p1', d(1), 'addr-p1')
    walk.learn('p1', d(7), 'other') // the first learn counts
    walk.learn('p4', d(4), 'addr-p4')
    assert.equal(walk.size, 3)
    assert.equal(walk.info('p1'), 'addr-p1')
    assert.deepEqual(walk.outcome(), { found: 0, answered: 0 }, 'no step yet')
    assert.deepEqual(walk.next(), ['p1', 'p4'])
    walk.asking('p1')
    walk.asking('p4')
    walk.failed('p4')
    walk.learn('p3', d(3), 'addr-p3')
    assert.deepEqual(walk.next(), ['p3'])
    walk.asking('p3')
    assert.deepEqual(walk.next(), [])
    // the 3 nearest heard of are p1, p2, p3 (p4 failed and is farther): each answered
    assert.deepEqual(walk.outcome(), { found: 3, answered: 3 })
    // a failed peer among the nearest: not complete
    const cut = new ProviderWalk(2)
    cut.learn('a', d(1), undefined)
    cut.learn('b', d(2), undefined)
    cut.learn('c', d(3), undefined)
    for (const id of cut.next()) cut.asking(id)
    cut.failed('a')
    for (const id of cut.next()) cut.asking(id)
    assert.deepEqual(cut.next(), [])
    assert.deepEqual(cut.outcome(), { found: 2, answered: 1 })
  })
})
