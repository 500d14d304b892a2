import assert from 'node:assert/strict'
import { InvalidReachabilityInputError, NAT_VERIFY_GRACE_MS, decideReachability, type OwnAddress, type ReachabilityInput } from '../../../protocol/index.js'

const T0 = 1_800_000_000_000
const lan: OwnAddress = { public: false, verified: true, relayed: false }
const loopback: OwnAddress = { public: false, verified: true, relayed: false }
const publicUnverified: OwnAddress = { public: true, verified: false, relayed: false }
const publicVerified: OwnAddress = { public: true, verified: true, relayed: false }
/** A relay reservation's address: it starts with the relay's (public, confirmed) address. */
const relayAddr: OwnAddress = { public: true, verified: true, relayed: true }

const input = (over: Partial<ReachabilityInput>): ReachabilityInput => ({ mode: 'auto', addresses: [lan, loopback], publicPeers: 0, startedAt: T0, now: T0, ...over })

describe('protocol/nat decideReachability', () => {
  it('behind NAT: only private addresses while public peers are reached → private, relay', () => {
    const d = decideReachability(input({ publicPeers: 1 }))
    assert.equal(d.reachability, 'private')
    assert.equal(d.relay, true)
    assert.match(d.reason, /1 peer\(s\) reached at public addresses: behind NAT/)
  })

  it('a private network (no public address, no public peer) → local, no relay', () => {
    assert.deepEqual(decideReachability(input({ publicPeers: 0 })), { reachability: 'local', relay: false, reason: 'only private addresses and no public peer: a private network' })
    assert.equal(decideReachability(input({ addresses: [], publicPeers: 0 })).reachability, 'local')
  })

  it('a verified public address → public, even with private ones beside it', () => {
    const d = decideReachability(input({ addresses: [lan, publicVerified], publicPeers: 3 }))
    assert.equal(d.reachability, 'public')
    assert.equal(d.relay, false)
  })

  it('a relay address never makes the node public, nor hides that it is behind NAT', () => {
    const d = decideReachability(input({ addresses: [lan, relayAddr], publicPeers: 1 }))
    assert.equal(d.reachability, 'private')
    assert.equal(d.relay, true)
    assert.equal(decideReachability(input({ addresses: [relayAddr], publicPeers: 0 })).reachability, 'local')
  })

  it('an unverified public address: unknown until the grace runs out (exactly at it: private), then relay', () => {
    const grace = 10_000
    const at = (elapsed: number): ReturnType<typeof decideReachability> => decideReachability(input({ addresses: [publicUnverified], publicPeers: 2, now: T0 + elapsed, verifyGraceMs: grace }))
    assert.deepEqual([at(0).reachability, at(0).relay], ['unknown', false])
    assert.deepEqual([at(grace - 1).reachability, at(grace - 1).relay], ['unknown', false])
    assert.deepEqual([at(grace).reachability, at(grace).relay], ['private', true])
    assert.match(at(grace).reason, /no public address verified by AutoNAT within 10 s/)
    assert.match(at(4_000).reason, /4 s of 10 s/)
    // the default grace
    const late = decideReachability(input({ addresses: [publicUnverified], now: T0 + NAT_VERIFY_GRACE_MS }))
    assert.equal(late.reachability, 'private')
    assert.equal(decideReachability(input({ addresses: [publicUnverified], now: T0 + NAT_VERIFY_GRACE_MS - 1 })).reachability, 'unknown')
  })

  it('one verified public address is enough among unverified ones', () => {
    assert.equal(decideReachability(input({ addresses: [publicUnverified, publicVerified], now: T0 + NAT_VERIFY_GRACE_MS * 2 })).reachability, 'public')
  })

  it('the owner can force either answer', () => {
    assert.deepEqual(decideReachability(input({ mode: 'public', publicPeers: 5 })), { reachability: 'public', relay: false, reason: 'set by nat.reachability = "public"' })
    assert.deepEqual(decideReachability(input({ mode: 'private', addresses: [publicVerified] })), { reachability: 'private', relay: true, reason: 'set by nat.reachability = "private"' })
  })

  it('bad input is a typed error', () => {
    assert.throws(() => decideReachability(input({ publicPeers: -1 })), InvalidReachabilityInputError)
    assert.throws(() => decideReachability(input({ publicPeers: 1.5 })), InvalidReachabilityInputError)
    assert.throws(() => decideReachability(input({ verifyGraceMs: -1 })), InvalidReachabilityInputError)
    assert.throws(() => decideReachability(input({ now: Number.NaN })), InvalidReachabilityInputError)
    assert.throws(() => decideReachability(input({ mode: 'sometimes' as never })), InvalidReachabilityInputError)
    // zero is allowed: no grace at all
    assert.equal(decideReachability(input({ addresses: [publicUnverified], verifyGraceMs: 0 })).reachability, 'private')
  })
})
