/**
 * Issue 12, NAT traversal, for real: separate `gpumesh` processes in Linux network namespaces
 * (test/nat/netns.sh). A bootstrap peer (the relay) and a buyer on a "public" switch, two providers each
 * behind its own NAT router doing nft masquerade, which drops every connection the public side starts.
 * Each provider finds out it is behind NAT, reserves a slot on the bootstrap peer's relay and announces the
 * relay address; the buyer finds both, reaches them over the relay, and DCUtR upgrades those connections to
 * direct ones (the NATed provider dials the public buyer); a job then runs on one of them. Two providers
 * both behind NAT stay relayed (the limit README "NAT traversal" explains), and the last case pins that down.
 * A second network: a provider on the public switch behind its own firewall relays for the same reason, and
 * releases the relay once the firewall opens and AutoNAT verifies its public address.
 *
 * Not part of `npm test`: `npm run test:nat` (root, iproute2, nftables). It skips, saying why, elsewhere.
 */
import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import type { JobView } from '../../node/market/views.js'
import type { ReachabilityStatus } from '../../node/services/reachability.js'
import { inNetns, netnsDown, netnsUnavailable, netnsUp, tcpProbe } from '../helpers/netns.js'
import { DaemonProcess, killAll } from '../helpers/processes.js'

interface StatusJson { peerId: string, addresses: string[], nat: ReachabilityStatus, capabilityKeys: Array<{ provided: boolean }> }
interface PeerJson { peerId: string, addresses: string[], direction: string }
interface ProvidersJson { providers: Array<{ peerId: string }>, failures: Array<{ peerId: string, message: string }> }

const PORT = 4001
const BOOT_IP = '11.0.0.10'
/** The routers' public addresses: what the buyer sees the providers' connections come from. */
const ROUTER_IP = { pA: '11.0.0.21', pB: '11.0.0.22' } as const
const COMMON = ['--listen', `/ip4/0.0.0.0/tcp/${PORT}`, '--no-community-bootstrap', '--allow-colocation', '--log-format', 'json', '--log-level', 'warn']

/** One suite's namespaces, temp dir and bootstrap peer (the relay), as its `before` hooks see them. */
interface NetnsSuite { root: string, boot: DaemonProcess, bootAddr: string, bootId: string }

/**
 * Build the namespaces for a suite (or skip it, saying why) with a bootstrap peer announcing its public
 * address, as a deployed one does; tear the daemons and namespaces down after. Call inside `describe`:
 * the fields are set once its first `before` hook has run.
 */
function useNetns (prefix: string, tmpName: string): NetnsSuite {
  const suite = {} as NetnsSuite
  let root: string | undefined
  const cleanUp = (): void => { void netnsDown(prefix) }
  before(async function () {
    const why = await netnsUnavailable()
    if (why !== undefined) {
      process.stdout.write(`    skipped: ${why}\n`)
      this.skip()
    }
    process.once('exit', cleanUp)
    await netnsUp(prefix)
    root = await mkdtemp(join(tmpdir(), tmpName))
    const boot = await DaemonProcess.start(['bootstrap', ...COMMON, '--announce', `/ip4/${BOOT_IP}/tcp/${PORT}`], join(root, 'boot'), { prefix: inNetns(prefix, 'boot') })
    const bootAddr = boot.addresses().find((a) => a.startsWith(`/ip4/${BOOT_IP}/`))
    assert.ok(bootAddr !== undefined, boot.addresses().join(' '))
    Object.assign(suite, { root, boot, bootAddr, bootId: bootAddr.split('/p2p/')[1] as string })
  })
  after(async () => {
    await killAll()
    await netnsDown(prefix)
    process.off('exit', cleanUp)
    if (root !== undefined) await rm(root, { recursive: true, force: true })
  })
  return suite
}

/** Poll `what` through the CLI (the namespaced daemons' loopback APIs are out of this process's reach). */
async function until<T> (what: string, probe: () => Promise<T | undefined>, timeoutMs = 90_000): Promise<T> {
  const deadline = Date.now() + timeoutMs
  let last: unknown
  for (;;) {
    try {
      const value = await probe()
      if (value !== undefined) return value
    } catch (err) { last = err }
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${last !== undefined ? `: ${String(last)}` : ''}`)
    await new Promise((resolve) => setTimeout(resolve, 1_000))
  }
}

describe('NAT traversal in network namespaces: AutoNAT, relay reservations, DCUtR (npm run test:nat)', function () {
  this.timeout(300_000)
  const prefix = `gmn${process.pid % 100_000}`
  const net = useNetns(prefix, 'gpumesh-nat-')
  let root: string
  let boot: DaemonProcess
  let buyer: DaemonProcess
  const providers: Record<'pA' | 'pB', DaemonProcess | undefined> = { pA: undefined, pB: undefined }
  const ids: Record<string, string> = {}

  before(async function () {
    ;({ root, boot } = net)
    const bootAddr = net.bootAddr
    ids.boot = net.bootId
    // inbound is refused: the buyer cannot open a connection to a provider's router
    assert.equal(await tcpProbe(prefix, 'buyer', ROUTER_IP.pA, PORT), 'timeout')
    assert.equal(await tcpProbe(prefix, 'buyer', '10.1.0.2', PORT), 'unreachable')
    const env = await bwrapEnv()
    const provider = async (name: 'pA' | 'pB'): Promise<DaemonProcess> => await DaemonProcess.start(['node', 'start', ...COMMON, '--bootstrap', bootAddr,
      '--no-detect-gpus', '--declare-gpu', 'NVIDIA L4:23034', '--region', name === 'pA' ? 'eu-west' : 'us-east'], join(root, name), { prefix: inNetns(prefix, name), env })
    ;[providers.pA, providers.pB] = await Promise.all([provider('pA'), provider('pB')])
    for (const name of ['pA', 'pB'] as const) {
      const p = providers[name] as DaemonProcess
      const status = await until(`${name} to announce its keys and hold a relay address`, async () => {
        const s = await p.json<StatusJson>(['status'])
        return s.capabilityKeys.length > 0 && s.capabilityKeys.every((k) => k.provided) && s.nat.relayAddresses.length > 0 ? s : undefined
      })
      ids[name] = status.peerId
    }
    // the buyer comes last, as a DHT client: the providers have no reason to dial it before it dials them
    buyer = await DaemonProcess.start(['node', 'start', ...COMMON, '--bootstrap', bootAddr, '--no-sell', '--dht-mode', 'client'], join(root, 'buyer'), { prefix: inNetns(prefix, 'buyer') })
  })

  it('each provider knows it is behind NAT, holds a reservation on the bootstrap relay and announces only the relay and its LAN address', async () => {
    for (const name of ['pA', 'pB'] as const) {
      const status = await (providers[name] as DaemonProcess).json<StatusJson>(['status'])
      assert.equal(status.nat.reachability, 'private', status.nat.reason)
      assert.equal((status as unknown as { dht: { mode: string } }).dht.mode, 'client', 'behind NAT it serves no DHT: peers could not dial it')
      assert.equal(status.nat.relay, true)
      assert.equal(status.nat.relayListening, true)
      assert.deepEqual(status.nat.relayAddresses, [`/ip4/${BOOT_IP}/tcp/${PORT}/p2p/${ids.boot}/p2p-circuit/p2p/${ids[name]}`])
      // no unverified public address is announced: the direct ones are the LAN's and loopback
      const direct = status.addresses.filter((a) => !a.includes('/p2p-circuit'))
      assert.ok(direct.length > 0 && direct.every((a) => /^\/ip4\/(10\.|127\.)/.test(a)), direct.join(' '))
      const text = await (providers[name] as DaemonProcess).cli(['status'])
      assert.match(text.stdout, /reachability: private \(only private addresses, and \d+ peer\(s\) reached at public addresses: behind NAT\)/)
      assert.match(text.stdout, new RegExp(`via relay: +/ip4/${BOOT_IP.replace(/\./g, '\\.')}/tcp/${PORT}/p2p/${ids.boot}/p2p-circuit`))
    }
    const bootStatus = await boot.json<StatusJson>(['status'])
    assert.equal(bootStatus.nat.reachability, 'public')
    assert.equal((bootStatus as unknown as { dht: { mode: string } }).dht.mode, 'server')
    assert.equal(bootStatus.nat.relayListening, false)
  })

  it('the buyer is verified public by AutoNAT, finds both providers over the relay, and DCUtR makes the connections direct', async () => {
    const buyerStatus = await until('AutoNAT to verify the buyer\'s public address', async () => {
      const s = await buyer.json<StatusJson>(['status'])
      return s.nat.reachability === 'public' ? s : undefined
    })
    assert.ok(buyerStatus.addresses.some((a) => a.startsWith(`/ip4/11.0.0.30/tcp/${PORT}/`)), buyerStatus.addresses.join(' '))
    const found = await until('the buyer to list both providers', async () => {
      const result = await buyer.json<ProvidersJson>(['providers'])
      return result.providers.length === 2 && result.failures.length === 0 ? result : undefined
    })
    assert.deepEqual(found.providers.map((p) => p.peerId).sort(), [ids.pA, ids.pB].sort())

    // the first connections went over the relay, and each was replaced by a direct one
    const nat = (await buyer.json<StatusJson>(['status'])).nat
    assert.ok(nat.relayedConnections >= 2, JSON.stringify(nat))
    assert.ok(nat.directUpgrades >= 2, JSON.stringify(nat))
    const peers = await buyer.json<PeerJson[]>(['peers'])
    for (const name of ['pA', 'pB'] as const) {
      const toProvider = peers.filter((p) => p.peerId === ids[name])
      assert.ok(toProvider.length > 0, `no connection to ${name}`)
      // direct: from the provider's router (the NATed provider dialled out), none left over the relay
      for (const c of toProvider) {
        assert.ok(c.addresses.every((a) => a.startsWith(`/ip4/${ROUTER_IP[name]}/tcp/`) && !a.includes('p2p-circuit')), JSON.stringify(c))
        assert.equal(c.direction, 'inbound')
      }
      const own = (await (providers[name] as DaemonProcess).json<StatusJson>(['status'])).nat
      assert.ok(own.relayedConnections >= 1 && own.directUpgrades >= 1, `${name}: ${JSON.stringify(own)}`)
    }
    const text = await buyer.cli(['status'])
    assert.match(text.stdout, /reachability: public \(a public address is verified/)
    assert.match(text.stdout, /relay: +0 relay address\(es\), [2-9]\d* relayed connection\(s\), [2-9]\d* upgraded to direct/)
  })

  it('a job runs on a provider behind NAT, over the direct connection', async () => {
    const submitted = await buyer.cli(['job', 'submit', '--wait', '--json', '--label', 'nat-e2e', '--gpus', '1', '--max-price', '3',
      '--bid-window', '1500ms', '--max-runtime', '60s', '--', '/bin/sh', '-c', 'echo hello from behind NAT'], 90_000)
    assert.equal(submitted.code, 0, `${submitted.stdout}\n${submitted.stderr}`)
    const view = JSON.parse(submitted.stdout) as JobView
    assert.equal(view.status, 'settled', view.reason)
    const winner = view.award?.provider
    assert.ok(winner === ids.pA || winner === ids.pB, String(winner))
    assert.equal(view.receipt?.exitCode, 0)
    const logs = await buyer.cli(['job', 'logs', view.id])
    assert.match(logs.stdout, /hello from behind NAT/)
    const toWinner = (await buyer.json<PeerJson[]>(['peers'])).filter((p) => p.peerId === winner)
    assert.ok(toWinner.length > 0 && toWinner.every((c) => !c.addresses.some((a) => a.includes('p2p-circuit'))), JSON.stringify(toWinner))
  })

  it('two providers both behind NAT stay relayed, so neither can fetch the other\'s ad (the documented limit)', async () => {
    // DCUtR needs a public address of each side to exchange; a js-libp2p node behind NAT has none over TCP
    // (README "NAT traversal"), and gpumesh's protocols refuse the relayed (limited) connection
    const fromA = await (providers.pA as DaemonProcess).json<ProvidersJson>(['providers'])
    const failure = fromA.failures.find((f) => f.peerId === ids.pB)
    assert.ok(failure !== undefined, JSON.stringify(fromA))
    // refused on the relayed connection: here ("limited connection"), or closed while the stream opens
    // ("Remote closed connection during opening": seen in some runs under load, cause not traced)
    assert.match(failure.message, /limited connection|Remote closed connection during opening/)
    const aToB = (await (providers.pA as DaemonProcess).json<PeerJson[]>(['peers'])).filter((p) => p.peerId === ids.pB)
    assert.ok(aToB.length > 0 && aToB.every((c) => c.addresses.every((a) => a.includes('/p2p-circuit/'))), JSON.stringify(aToB))
  })
})

describe('NAT traversal in network namespaces: a node that becomes reachable releases its relay (npm run test:nat)', function () {
  this.timeout(300_000)
  const prefix = `gmr${process.pid % 100_000}`
  const PC_IP = '11.0.0.40'
  /** Short on purpose: the defaults (60 s grace, 5 min public before release) are for deployments. */
  const NAT_CONFIG = { nat: { verifyGraceMs: 6_000, relayReleaseAfterMs: 8_000 } }
  const net = useNetns(prefix, 'gpumesh-nat-release-')
  let root: string
  let boot: DaemonProcess
  let pC: DaemonProcess
  let bootAddr: string
  const ids: Record<string, string> = {}

  before(() => {
    ;({ root, boot, bootAddr } = net)
    ids.boot = net.bootId
  })

  it('a provider with a public address behind a firewall finds AutoNAT cannot verify it, and relays', async () => {
    const dataDir = join(root, 'pC')
    await mkdir(dataDir, { recursive: true, mode: 0o700 })
    await writeFile(join(dataDir, 'config.json'), JSON.stringify(NAT_CONFIG))
    pC = await DaemonProcess.start(['node', 'start', ...COMMON, '--bootstrap', bootAddr, '--no-detect-gpus', '--declare-gpu', 'NVIDIA L4:23034', '--region', 'eu-west'],
      dataDir, { prefix: inNetns(prefix, 'pC'), env: await bwrapEnv() })
    // the firewall drops what the public side starts, the node's own port included
    assert.equal(await tcpProbe(prefix, 'buyer', PC_IP, PORT), 'timeout')
    const status = await until('pC to decide it is unreachable and hold a relay address', async () => {
      const s = await pC.json<StatusJson>(['status'])
      return s.nat.reachability === 'private' && s.nat.relayAddresses.length > 0 ? s : undefined
    })
    ids.pC = status.peerId
    assert.match(status.nat.reason, /no public address verified by AutoNAT within 6 s/)
    assert.equal(status.nat.relayListening, true)
    assert.deepEqual(status.nat.relayAddresses, [`/ip4/${BOOT_IP}/tcp/${PORT}/p2p/${ids.boot}/p2p-circuit/p2p/${ids.pC}`])
    assert.ok(!status.addresses.some((a) => a.startsWith(`/ip4/${PC_IP}/`)), `an unverified public address is not announced: ${status.addresses.join(' ')}`)
    assert.equal((status as unknown as { dht: { mode: string } }).dht.mode, 'client')
    // the relay holds its slot
    const relay = await until('the bootstrap peer to hold pC\'s slot', async () => {
      const s = await boot.json<{ relaySlots?: { reservations: number, freed: number } }>(['status'])
      return (s.relaySlots?.reservations ?? 0) > 0 ? s.relaySlots : undefined
    })
    assert.deepEqual(relay, { reservations: 1, freed: 0 })
  })

  it('once the firewall opens, AutoNAT verifies the public address and the node releases the relay after the hysteresis', async () => {
    await promisify(execFile)('ip', ['netns', 'exec', `${prefix}-pC`, 'nft', 'delete', 'table', 'inet', 'firewall'])
    assert.equal(await tcpProbe(prefix, 'buyer', PC_IP, PORT), 'connected')
    // a peer from another /8 connects: AutoNAT v1 already holds the failed 11/8 answer (the bootstrap peer's) for this address
    const pcAddr = `/ip4/${PC_IP}/tcp/${PORT}/p2p/${ids.pC as string}`
    const late = await DaemonProcess.start(['node', 'start', ...COMMON, '--bootstrap', bootAddr, pcAddr, '--no-sell', '--dht-mode', 'client'],
      join(root, 'ver'), { prefix: inNetns(prefix, 'ver') })
    const verified = await until('AutoNAT to verify pC\'s public address', async () => {
      const s = await pC.json<StatusJson>(['status'])
      return s.nat.reachability === 'public' ? s : undefined
    })
    assert.match(verified.nat.reason, /a public address is verified/)
    // the hysteresis: public, and still relaying until it has been public for relayReleaseAfterMs
    assert.equal(verified.nat.relayListening, true, JSON.stringify(verified.nat))
    const released = await until('pC to release the relay', async () => {
      const s = await pC.json<StatusJson>(['status'])
      return !s.nat.relayListening ? s : undefined
    }, 60_000)
    assert.deepEqual(released.nat.relayAddresses, [])
    assert.equal((released.nat as unknown as { relayReleases: number }).relayReleases, 1)
    assert.ok(released.addresses.some((a) => a.startsWith(`/ip4/${PC_IP}/tcp/${PORT}/`)), released.addresses.join(' '))
    assert.ok(released.addresses.every((a) => !a.includes('/p2p-circuit')), released.addresses.join(' '))
    assert.equal((released as unknown as { dht: { mode: string } }).dht.mode, 'server')
    const text = await pC.cli(['status'])
    assert.match(text.stdout, /reachability: public \(a public address is verified/)
    assert.match(text.stdout, /relay: +0 relay address\(es\), \d+ relayed connection\(s\), \d+ upgraded to direct, released 1 time\(s\) once public, not listening/)
    assert.doesNotMatch(text.stdout, /via relay:/)
    // the relay frees the slot at once (circuit relay v2 has no cancel: the withdrawn relay address, told
    // by identify-push, is the signal), not at its 2 h TTL
    const slots = await until('the bootstrap peer to free pC\'s slot', async () => {
      const s = await boot.json<{ relaySlots?: { reservations: number, freed: number } }>(['status'])
      return s.relaySlots?.freed === 1 ? s.relaySlots : undefined
    }, 30_000)
    assert.deepEqual(slots, { reservations: 0, freed: 1 })
    assert.match((await boot.cli(['status'])).stdout, /relay slots: 0 held, 1 freed since start/)
    // a peer dials it directly now
    const peers = await late.json<PeerJson[]>(['peers'])
    assert.ok(peers.some((p) => p.peerId === ids.pC && p.addresses.every((a) => a.startsWith(`/ip4/${PC_IP}/tcp/${PORT}`))), JSON.stringify(peers))
  })
})

/** Process jobs run in bubblewrap; where it is missing the providers opt out explicitly rather than refuse them. */
async function bwrapEnv (): Promise<NodeJS.ProcessEnv> {
  const { execFile } = await import('node:child_process')
  const found = await new Promise<boolean>((resolve) => execFile('sh', ['-c', 'command -v bwrap'], (err) => { resolve(err === null) }))
  return found ? {} : { GPUMESH_PROCESS_SANDBOX: 'none' }
}
