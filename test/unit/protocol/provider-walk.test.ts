import assert from 'node:assert/strict'
import { compareWalkPeers, walkStep, xorDistance, type WalkPeer } from '../../../protocol/index.js'

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
})
