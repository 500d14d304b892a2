import assert from 'node:assert/strict'
import { INITIAL_RELAY_HOLD, InvalidReachabilityInputError, NAT_RELAY_RELEASE_AFTER_MS, NAT_VERIFY_GRACE_MS, decideReachability, stepRelayHold, type OwnAddress, type ReachabilityInput } from '../../../protocol/index.js'

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

describe('protocol/nat stepRelayHold (when to listen on /p2p-circuit and when to release it)', () => {
  const privateD = { reachability: 'private', relay: true } as const
  const publicD = { reachability: 'public', relay: false } as const
  const localD = { reachability: 'local', relay: false } as const

  it('a decision that asks for a relay listens at once, and only once', () => {
    const first = stepRelayHold(INITIAL_RELAY_HOLD, privateD, T0)
    assert.deepEqual(first, { hold: { listening: true, publicSince: undefined }, action: 'listen' })
    assert.equal(stepRelayHold(first.hold, privateD, T0 + 1).action, 'none')
  })

  it('releases after exactly NAT_RELAY_RELEASE_AFTER_MS of unbroken public decisions, not a millisecond before', () => {
    const listening = { listening: true, publicSince: undefined }
    const began = stepRelayHold(listening, publicD, T0)
    assert.deepEqual(began, { hold: { listening: true, publicSince: T0 }, action: 'none' })
    const before = stepRelayHold(began.hold, publicD, T0 + NAT_RELAY_RELEASE_AFTER_MS - 1)
    assert.deepEqual(before, { hold: { listening: true, publicSince: T0 }, action: 'none' })
    const at = stepRelayHold(before.hold, publicD, T0 + NAT_RELAY_RELEASE_AFTER_MS)
    assert.deepEqual(at, { hold: { listening: false, publicSince: T0 }, action: 'release' })
    // released: public goes on releasing nothing more; private listens again
    assert.equal(stepRelayHold(at.hold, publicD, T0 + 2 * NAT_RELAY_RELEASE_AFTER_MS).action, 'none')
    assert.deepEqual(stepRelayHold(at.hold, privateD, T0 + 2 * NAT_RELAY_RELEASE_AFTER_MS), { hold: { listening: true, publicSince: undefined }, action: 'listen' })
  })

  it('a break in the public run (a flapping AutoNAT) starts the count again', () => {
    let hold = stepRelayHold({ listening: true, publicSince: undefined }, publicD, T0).hold
    hold = stepRelayHold(hold, privateD, T0 + NAT_RELAY_RELEASE_AFTER_MS - 1).hold
    assert.deepEqual(hold, { listening: true, publicSince: undefined })
    hold = stepRelayHold(hold, publicD, T0 + NAT_RELAY_RELEASE_AFTER_MS).hold
    assert.equal(stepRelayHold(hold, publicD, T0 + 2 * NAT_RELAY_RELEASE_AFTER_MS - 1).action, 'none')
    assert.equal(stepRelayHold(hold, publicD, T0 + 2 * NAT_RELAY_RELEASE_AFTER_MS).action, 'release')
  })

  it('local (lost its public peers) never releases: it has not become reachable', () => {
    const hold = { listening: true, publicSince: undefined }
    assert.deepEqual(stepRelayHold(hold, localD, T0 + 10 * NAT_RELAY_RELEASE_AFTER_MS), { hold, action: 'none' })
  })

  it('a release time of 0 releases on the first public decision; a node not listening has nothing to release', () => {
    assert.equal(stepRelayHold({ listening: true, publicSince: undefined }, publicD, T0, 0).action, 'release')
    assert.deepEqual(stepRelayHold(INITIAL_RELAY_HOLD, publicD, T0, 0), { hold: { listening: false, publicSince: T0 }, action: 'none' })
  })

  it('refuses a negative or non-finite release time and a non-finite now', () => {
    assert.throws(() => stepRelayHold(INITIAL_RELAY_HOLD, publicD, T0, -1), InvalidReachabilityInputError)
    assert.throws(() => stepRelayHold(INITIAL_RELAY_HOLD, publicD, T0, Number.NaN), InvalidReachabilityInputError)
    assert.throws(() => stepRelayHold(INITIAL_RELAY_HOLD, publicD, Number.POSITIVE_INFINITY), InvalidReachabilityInputError)
  })
})
