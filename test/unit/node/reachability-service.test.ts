import assert from 'node:assert/strict'
import type { ComponentLogger, Connection } from '@libp2p/interface'
import type { ConnectionManager } from '@libp2p/interface-internal'
import { multiaddr, type Multiaddr } from '@multiformats/multiaddr'
import { forcingDials } from '../../../node/autonat.js'
import { ReachabilityService, type ReachabilityComponents } from '../../../node/services/reachability.js'
import { NAT_RELAY_RELEASE_AFTER_MS, NAT_VERIFY_GRACE_MS } from '../../../protocol/index.js'

const RELAY = '/ip4/11.0.0.10/tcp/4001/p2p/12D3KooWHJcsg3QcsuQ2mQXVwiNQUzSxZzt8YwikLKYUT35pwVJH'
const PEER = '12D3KooWPKTLxNjTioenQopjqHU8xc5EZY6w9uGsLz8kx8pq1RQg'

const silent = { forComponent: () => Object.assign(() => {}, { error: () => {}, trace: () => {}, enabled: false }) } as unknown as ComponentLogger

interface FakeListener { addrs: Multiaddr[], closed: boolean, getAddrs: () => Multiaddr[], close: () => Promise<void> }
interface Fake {
  components: ReachabilityComponents
  listened: string[][]
  addresses: Array<{ multiaddr: Multiaddr, verified: boolean }>
  connections: Connection[]
  listeners: FakeListener[]
  removed: string[]
  untagged: Array<{ peer: string, tags: unknown }>
  fire: (c: Connection) => void
}

/** A relay listener as circuit-relay-v2's: its address appears once the reservation is made, and close() empties it. */
function fake (): Fake {
  const listened: string[][] = []
  const addresses: Array<{ multiaddr: Multiaddr, verified: boolean }> = [{ multiaddr: multiaddr('/ip4/10.1.0.2/tcp/4001'), verified: true }]
  const connections: Connection[] = []
  const listeners: FakeListener[] = []
  const removed: string[] = []
  const untagged: Array<{ peer: string, tags: unknown }> = []
  let listener: ((e: CustomEvent<Connection>) => void) | undefined
  const relayAddrs = (): Multiaddr[] => listeners.filter((l) => !l.closed).flatMap((l) => l.addrs)
  const components = {
    addressManager: {
      getAddressesWithMetadata: () => [...addresses, ...relayAddrs().map((ma) => ({ multiaddr: ma, verified: true }))].map((a) => ({ ...a, type: 'transport', expires: 0 })),
      getAddresses: () => [...addresses.filter((a) => a.verified).map((a) => a.multiaddr), ...relayAddrs()],
      removeObservedAddr: (ma: Multiaddr) => { removed.push(ma.toString()) }
    },
    transportManager: {
      listen: async (addrs: Multiaddr[]) => {
        listened.push(addrs.map(String))
        const l: FakeListener = { addrs: [multiaddr(`${RELAY}/p2p-circuit`)], closed: false, getAddrs: () => l.closed ? [] : l.addrs, close: async () => { l.closed = true } }
        listeners.push(l)
      },
      getListeners: () => listeners.filter((l) => !l.closed)
    },
    connectionManager: { getConnections: (peer?: unknown) => connections.filter((c) => peer === undefined || c.remotePeer.toString() === String(peer)) },
    peerStore: { merge: async (peer: unknown, data: { tags: unknown }) => { untagged.push({ peer: String(peer), tags: data.tags }) } },
    events: {
      addEventListener: (_: string, l: (e: CustomEvent<Connection>) => void) => { listener = l },
      removeEventListener: () => { listener = undefined }
    },
    logger: silent
  } as unknown as ReachabilityComponents
  return { components, listened, addresses, connections, listeners, removed, untagged, fire: (c) => { connections.push(c); listener?.(new CustomEvent('connection:open', { detail: c })) } }
}

let nextId = 0
const connection = (remote: string, peer = PEER): Connection => ({ id: `c${nextId++}`, status: 'open', remoteAddr: multiaddr(remote), remotePeer: { toString: () => peer } }) as unknown as Connection

describe('node/services/reachability', () => {
  let service: ReachabilityService | undefined
  afterEach(() => { service?.stop() })

  it('behind NAT: listens on /p2p-circuit once, however often it decides', async () => {
    const f = fake()
    service = new ReachabilityService(f.components, { mode: 'auto', checkMs: 60_000 })
    service.start()
    assert.equal((await service.check()).reachability, 'local')
    assert.deepEqual(f.listened, [])
    f.connections.push(connection(RELAY))
    assert.equal((await service.check()).reachability, 'private')
    await service.check()
    assert.deepEqual(f.listened, [['/p2p-circuit']])
    assert.equal(service.status().relayListening, true)
  })

  it('tells onChange each change of reachability, once per change', async () => {
    const f = fake()
    service = new ReachabilityService(f.components, { mode: 'auto', checkMs: 60_000 })
    const seen: string[] = []
    service.onChange = (d) => { seen.push(d.reachability) }
    service.start()
    await service.check()
    await service.check()
    f.connections.push(connection(RELAY))
    await service.check()
    await service.check()
    assert.deepEqual(seen, ['local', 'private'])
  })

  it('a relayed connection to the relay is no public peer', async () => {
    const f = fake()
    service = new ReachabilityService(f.components, { mode: 'auto', checkMs: 60_000 })
    service.start()
    f.connections.push(connection(`${RELAY}/p2p-circuit/p2p/${PEER}`))
    assert.equal((await service.check()).reachability, 'local')
    assert.deepEqual(f.listened, [])
  })

  it('seekRelay false (a bootstrap peer) decides but never listens', async () => {
    const f = fake()
    service = new ReachabilityService(f.components, { mode: 'auto', seekRelay: false, checkMs: 60_000 })
    service.start()
    f.connections.push(connection(RELAY))
    assert.equal((await service.check()).relay, true)
    assert.deepEqual(f.listened, [])
  })

  it('the grace for an unverified public address runs on the injected clock', async () => {
    const f = fake()
    f.addresses.push({ multiaddr: multiaddr('/ip4/11.0.0.30/tcp/4001'), verified: false })
    let now = 1_000
    service = new ReachabilityService(f.components, { mode: 'auto', now: () => now, checkMs: 60_000 })
    service.start()
    assert.equal((await service.check()).reachability, 'unknown')
    now += NAT_VERIFY_GRACE_MS
    assert.equal((await service.check()).reachability, 'private')
    assert.deepEqual(f.listened, [['/p2p-circuit']])
  })

  /**
   * A service on a node whose one public address AutoNAT has not verified, the verify grace already
   * over (so the next check decides private); `clock.now` is its time.
   */
  function unverifiedPublic (): { f: ReturnType<typeof fake>, publicAddr: { multiaddr: ReturnType<typeof multiaddr>, verified: boolean }, clock: { now: number }, svc: ReachabilityService } {
    const f = fake()
    const publicAddr = { multiaddr: multiaddr('/ip4/11.0.0.40/tcp/4001'), verified: false }
    f.addresses.push(publicAddr)
    const clock = { now: 1_000 }
    const svc = new ReachabilityService(f.components, { mode: 'auto', now: () => clock.now, checkMs: 60_000 })
    service = svc
    svc.start()
    clock.now += NAT_VERIFY_GRACE_MS
    return { f, publicAddr, clock, svc }
  }

  it('releases the relay once public for NAT_RELAY_RELEASE_AFTER_MS without a break, and listens again when private', async () => {
    const { f, publicAddr, clock, svc } = unverifiedPublic()
    assert.equal((await svc.check()).reachability, 'private')
    assert.equal(svc.status().relayAddresses.length, 1)
    // AutoNAT verifies the address: public, but the relay is kept through the hysteresis
    publicAddr.verified = true
    assert.equal((await svc.check()).reachability, 'public')
    clock.now += NAT_RELAY_RELEASE_AFTER_MS - 1
    await svc.check()
    assert.equal(svc.status().relayListening, true)
    assert.equal(f.listeners[0]?.closed, false)
    clock.now += 1
    await svc.check()
    assert.equal(f.listeners[0]?.closed, true)
    assert.deepEqual(f.removed, [`${RELAY}/p2p-circuit`])
    assert.deepEqual(f.untagged, [{ peer: RELAY.split('/p2p/')[1], tags: { 'keep-alive-circuit-relay': undefined } }])
    assert.deepEqual([svc.status().relayListening, svc.status().relayAddresses, svc.status().relayReleases], [false, [], 1])
    await svc.check()
    assert.equal(svc.status().relayReleases, 1, 'released once')
    // the address is unverified again (AutoNAT revoked it): private, and it listens again at once
    publicAddr.verified = false
    assert.equal((await svc.check()).reachability, 'private')
    assert.deepEqual(f.listened, [['/p2p-circuit'], ['/p2p-circuit']])
    assert.deepEqual([svc.status().relayListening, svc.status().relayAddresses.length], [true, 1])
  })

  it('a public spell shorter than NAT_RELAY_RELEASE_AFTER_MS releases nothing, and a new spell starts the count again', async () => {
    const { f, publicAddr, clock, svc } = unverifiedPublic()
    await svc.check()
    publicAddr.verified = true
    await svc.check()
    clock.now += NAT_RELAY_RELEASE_AFTER_MS - 1
    publicAddr.verified = false
    assert.equal((await svc.check()).reachability, 'private')
    publicAddr.verified = true
    clock.now += 1
    await svc.check()
    clock.now += NAT_RELAY_RELEASE_AFTER_MS - 1
    await svc.check()
    assert.deepEqual([svc.status().relayListening, svc.status().relayReleases, f.listened.length], [true, 0, 1])
  })

  it('counts relayed connections, and a direct one opened beside an open relayed one as an upgrade', () => {
    const f = fake()
    service = new ReachabilityService(f.components, { mode: 'auto', checkMs: 60_000 })
    service.start()
    f.fire(connection('/ip4/11.0.0.30/tcp/4001', 'other'))
    assert.deepEqual([service.status().relayedConnections, service.status().directUpgrades], [0, 0])
    f.fire(connection(`${RELAY}/p2p-circuit/p2p/${PEER}`))
    assert.deepEqual([service.status().relayedConnections, service.status().directUpgrades], [1, 0])
    f.fire(connection('/ip4/11.0.0.21/tcp/40000'))
    assert.deepEqual([service.status().relayedConnections, service.status().directUpgrades], [1, 1])
    // a direct connection after the relayed one closed is no upgrade
    ;(f.connections[1] as unknown as { status: string }).status = 'closed'
    f.fire(connection('/ip4/11.0.0.21/tcp/40001'))
    assert.equal(service.status().directUpgrades, 1)
    assert.deepEqual(service.status().relayAddresses, [])
  })

  it('a second relayed connection beside an open relayed one is no upgrade', () => {
    const f = fake()
    service = new ReachabilityService(f.components, { mode: 'auto', checkMs: 60_000 })
    service.start()
    f.fire(connection(`${RELAY}/p2p-circuit/p2p/${PEER}`))
    f.fire(connection(`${RELAY}/p2p-circuit/p2p/${PEER}`))
    assert.deepEqual([service.status().relayedConnections, service.status().directUpgrades], [2, 0])
  })

  it('status lists the relay addresses the address manager announces', () => {
    const f = fake()
    f.addresses.push({ multiaddr: multiaddr(`${RELAY}/p2p-circuit/p2p/${PEER}`), verified: true })
    service = new ReachabilityService(f.components, { mode: 'private', checkMs: 60_000 })
    assert.deepEqual(service.status().relayAddresses, [`${RELAY}/p2p-circuit/p2p/${PEER}`])
    assert.equal(service.status().mode, 'private')
  })
})

describe('node/autonat forcingDials (the AutoNAT dial-back fix)', () => {
  const recorder = (): { manager: ConnectionManager, calls: Array<Record<string, unknown>> } => {
    const calls: Array<Record<string, unknown>> = []
    const manager = {
      openConnection: async (_: unknown, options: Record<string, unknown> = {}) => { calls.push(options); return {} },
      getMaxConnections: function (this: unknown) { return this === manager ? 300 : -1 }
    } as unknown as ConnectionManager
    return { manager, calls }
  }

  it('forces a new connection for a dial-back to one multiaddr', async () => {
    const { manager, calls } = recorder()
    await forcingDials(manager).openConnection(multiaddr(`/ip4/11.0.0.30/tcp/4001/p2p/${PEER}`), { priority: 5 } as never)
    assert.deepEqual(calls, [{ priority: 5, force: true }])
  })

  it('leaves other dials (an address list, as the random walk passes) alone, and other methods bound', async () => {
    const { manager, calls } = recorder()
    await forcingDials(manager).openConnection([multiaddr('/ip4/11.0.0.30/tcp/4001')] as never, { priority: 5 } as never)
    assert.deepEqual(calls, [{ priority: 5 }])
    assert.equal(forcingDials(manager).getMaxConnections(), 300)
  })
})
