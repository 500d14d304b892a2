/**
 * Is this node reachable from the public internet, and should it hold circuit-relay reservations?
 * Pure: the node shell (node/services/reachability.ts) feeds in what libp2p's address manager and
 * AutoNAT know about the node's own addresses, and how many peers it reaches at public addresses;
 * time comes in as an argument.
 *
 * What js-libp2p 3 gives to decide with: a public listen address starts unverified and AutoNAT
 * confirms it after one successful dial-back; TCP observed addresses are ignored by identify (the
 * dial port is never the listen port), so a node behind NAT has only private addresses of its own.
 * AutoNAT v1 needs 8 failed dial-backs from distinct /8 segments before it rejects an address, which
 * a small network never reaches: a public address still unverified after NAT_VERIFY_GRACE_MS counts
 * as unreachable instead.
 *
 * stepRelayHold then says when to start and when to stop listening on /p2p-circuit: at once when the
 * decision asks for a relay, and only after the node has been public for NAT_RELAY_RELEASE_AFTER_MS
 * without a break when it no longer does, so an AutoNAT result that flaps does not churn reservations.
 */

/** How the owner set reachability: auto (decide from AutoNAT and the addresses), or forced. */
export const NAT_MODES = ['auto', 'public', 'private'] as const
export type NatMode = typeof NAT_MODES[number]

/**
 * public: dialable directly (an AutoNAT-verified or announced public address).
 * private: behind NAT or a firewall (peers on the public internet are reached, none can dial in): relay.
 * local: a private network (no public address and no public peer either): nothing to relay through.
 * unknown: a public address AutoNAT has not verified yet.
 */
export type Reachability = 'public' | 'private' | 'local' | 'unknown'

/** How long a public address may stay unverified by AutoNAT before the node counts as unreachable. */
export const NAT_VERIFY_GRACE_MS = 60_000

/**
 * How long a node holding relay reservations must have been decided public, without a break, before it
 * releases them (closes its /p2p-circuit listener and stops announcing the relay addresses). An AutoNAT
 * result that flips back within this time costs no reservation churn on the relay; a node that really
 * became reachable (a port forward opened, a firewall changed) frees its slot this long after.
 */
export const NAT_RELAY_RELEASE_AFTER_MS = 5 * 60_000

/** One of the node's own addresses, as its address manager holds it. */
export interface OwnAddress {
  /** Not in a private, loopback, link-local or documentation range (libp2p's isPrivate). */
  public: boolean
  /** AutoNAT confirmed it, or the owner announced it. */
  verified: boolean
  /** A /p2p-circuit address (a relay reservation), not a direct one. */
  relayed: boolean
}

export interface ReachabilityInput {
  mode: NatMode
  addresses: readonly OwnAddress[]
  /** Connected peers at a public, direct remote address. */
  publicPeers: number
  startedAt: number
  now: number
  /** Default NAT_VERIFY_GRACE_MS. */
  verifyGraceMs?: number
}

export interface ReachabilityDecision {
  reachability: Reachability
  /** Hold circuit-relay reservations (and announce the relay addresses). */
  relay: boolean
  /** Why, for `gpumesh status`. */
  reason: string
}

export class InvalidReachabilityInputError extends Error {
  constructor (message: string) {
    super(message)
    this.name = 'InvalidReachabilityInputError'
  }
}

export function decideReachability (input: ReachabilityInput): ReachabilityDecision {
  const grace = input.verifyGraceMs ?? NAT_VERIFY_GRACE_MS
  if (!Number.isSafeInteger(input.publicPeers) || input.publicPeers < 0) throw new InvalidReachabilityInputError(`publicPeers must be a non-negative integer, got ${input.publicPeers}`)
  if (!Number.isFinite(grace) || grace < 0) throw new InvalidReachabilityInputError(`verifyGraceMs must be a non-negative number, got ${grace}`)
  if (!Number.isFinite(input.now) || !Number.isFinite(input.startedAt)) throw new InvalidReachabilityInputError('now and startedAt must be finite')
  if (input.mode === 'public') return { reachability: 'public', relay: false, reason: 'set by nat.reachability = "public"' }
  if (input.mode === 'private') return { reachability: 'private', relay: true, reason: 'set by nat.reachability = "private"' }
  if (input.mode !== 'auto') throw new InvalidReachabilityInputError(`unknown nat mode ${String(input.mode)}`)

  const direct = input.addresses.filter((a) => !a.relayed && a.public)
  if (direct.some((a) => a.verified)) return { reachability: 'public', relay: false, reason: 'a public address is verified (AutoNAT or announced)' }
  if (direct.length > 0) {
    const waited = input.now - input.startedAt
    if (waited < grace) return { reachability: 'unknown', relay: false, reason: `AutoNAT has not verified a public address yet (${Math.round(waited / 1000)} s of ${Math.round(grace / 1000)} s)` }
    return { reachability: 'private', relay: true, reason: `no public address verified by AutoNAT within ${Math.round(grace / 1000)} s` }
  }
  if (input.publicPeers > 0) return { reachability: 'private', relay: true, reason: `only private addresses, and ${input.publicPeers} peer(s) reached at public addresses: behind NAT` }
  return { reachability: 'local', relay: false, reason: 'only private addresses and no public peer: a private network' }
}

/** Whether the node listens on /p2p-circuit, and since when its decisions have said public without a break. */
export interface RelayHold {
  listening: boolean
  /** When the unbroken run of `public` decisions began; undefined when the latest decision was not public. */
  publicSince: number | undefined
}

/** listen: start listening on /p2p-circuit; release: close it and withdraw the relay addresses; none: leave it. */
export type RelayHoldAction = 'listen' | 'release' | 'none'

export interface RelayHoldStep {
  hold: RelayHold
  action: RelayHoldAction
}

export const INITIAL_RELAY_HOLD: RelayHold = { listening: false, publicSince: undefined }

/**
 * The next relay hold after a decision at `now`. A decision that asks for a relay starts listening at
 * once (an unreachable node needs it now). A listening node releases only when its decisions have said
 * `public` for at least `releaseAfterMs` without a break (exactly at it: release); `local` and `unknown`
 * release nothing: a node that lost its public peers has not become reachable.
 */
export function stepRelayHold (hold: RelayHold, decision: Pick<ReachabilityDecision, 'reachability' | 'relay'>, now: number, releaseAfterMs: number = NAT_RELAY_RELEASE_AFTER_MS): RelayHoldStep {
  if (!Number.isFinite(now)) throw new InvalidReachabilityInputError('now must be finite')
  if (!Number.isFinite(releaseAfterMs) || releaseAfterMs < 0) throw new InvalidReachabilityInputError(`releaseAfterMs must be a non-negative number, got ${releaseAfterMs}`)
  const publicSince = decision.reachability === 'public' ? (hold.publicSince ?? now) : undefined
  if (decision.relay && !hold.listening) return { hold: { listening: true, publicSince }, action: 'listen' }
  if (hold.listening && !decision.relay && publicSince !== undefined && now - publicSince >= releaseAfterMs) {
    return { hold: { listening: false, publicSince }, action: 'release' }
  }
  return { hold: { listening: hold.listening, publicSince }, action: 'none' }
}
