/**
 * Provider discovery past the DHT's k (protocol/README.md §7.4c), on a small network whose DHT runs with
 * k = 3: kad-dht's own lookup stops at 3 providers (and reads at most 3 from its local store), so a key
 * with 8 providers is only found whole when the search continues to the peers closest to the key.
 */
import assert from 'node:assert/strict'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Multiaddr } from '@multiformats/multiaddr'
import { CID } from 'multiformats/cid'
import type { Daemon } from '../../node/daemon.js'
import { capabilityKeyCid } from '../../protocol/index.js'
import { startDaemon, waitForAnnouncements, type NodeSpec } from '../helpers/network.js'

const K = 3
// below the smallest VRAM bucket: each provider announces only gpu/…, region/<r> and region/<top>
const SMALL_GPU = 'NVIDIA GeForce GT 1030:2001'
const SPECS: NodeSpec[] = [
  ...Array.from({ length: 6 }, () => ({ region: 'eu-west', gpus: [SMALL_GPU] })),
  ...Array.from({ length: 2 }, () => ({ region: 'eu-north', gpus: [SMALL_GPU] })),
  ...Array.from({ length: 2 }, () => ({ region: 'us-east', gpus: [SMALL_GPU] })),
  { region: 'eu-west', sell: false, gpus: [SMALL_GPU] }
].map((spec) => ({ ...spec, dht: { k: K } }))

describe(`provider discovery past k (k = ${K}, 11 in-process nodes)`, function () {
  this.timeout(180_000)
  let root: string
  let all: Daemon[] = []
  let nodes: Daemon[] = []
  let euProviders: string[] = []

  before(async () => {
    root = await mkdtemp(join(tmpdir(), 'gpumesh-past-k-'))
    const bootstrap = await startDaemon(root, { dht: { k: K } }, { role: 'bootstrap' })
    all = [bootstrap]
    const dial = [bootstrap.addresses()[0] as string]
    for (const spec of SPECS) {
      const d = await startDaemon(root, spec, { dial })
      all.push(d)
      nodes.push(d)
    }
    await waitForAnnouncements(nodes, 120_000)
    // Kademlia places a record on the k peers nearest the key that the announcer knows; with k = 3 and
    // routing tables still filling, those can differ from the k a later lookup converges on. Connect
    // every pair, wait until every routing table holds every other peer, and announce once more, so
    // the test checks the continuation, not an unsettled network.
    for (const [i, a] of all.entries()) for (const b of all.slice(i + 1)) await a.node.dial(b.node.getMultiaddrs()[0] as Multiaddr)
    const deadline = Date.now() + 60_000
    const tableSize = (d: Daemon): number => (d.node.services.dht as unknown as { routingTable: { size: number } }).routingTable.size
    while (all.some((d) => tableSize(d) < all.length - 1)) {
      assert.ok(Date.now() < deadline, `routing tables: ${all.map(tableSize).join(', ')}`)
      await new Promise((resolve) => setTimeout(resolve, 100))
    }
    for (const d of nodes) {
      for (const key of d.announcer.state()) await d.node.contentRouting.provide(CID.parse(key.cid), { signal: AbortSignal.timeout(30_000) })
    }
    euProviders = nodes.filter((_, i) => SPECS[i]?.sell !== false && (SPECS[i]?.region ?? '').startsWith('eu')).map((d) => d.identity.peerId).sort()
    assert.equal(euProviders.length, 8)
  })
  after(async () => {
    await Promise.all(all.map(async (d) => { await d.stop() }))
    await rm(root, { recursive: true, force: true })
    nodes = []
  })

  /** How many provider records for `key` a node holds in its own DHT store. */
  async function localRecords (d: Daemon, key: string): Promise<number> {
    const store = (d.node.services.dht as unknown as { providers: { getProviders: (cid: unknown) => Promise<unknown[]> } }).providers
    return (await store.getProviders(capabilityKeyCid(key))).length
  }

  it('lists all 8 providers of region/eu, not k, and calls the answer complete', async () => {
    // one asker that holds at least k records itself (kad-dht would answer from its store alone), one
    // that sells nothing, and the bootstrap peer
    const holders: Daemon[] = []
    for (const d of all) if (await localRecords(d, 'region/eu') >= K) holders.push(d)
    assert.ok(holders.length > 0, 'some peer holds k records of region/eu')
    for (const asker of [holders[0] as Daemon, nodes.at(-1) as Daemon, all[0] as Daemon]) {
      // an answer that says complete must be exact; one that does not (a nearest peer that did not answer
      // in time on a loaded machine) must name no stranger, and a client asks again
      let complete = false
      for (let attempt = 0; attempt < 3 && !complete; attempt++) {
        const result = await asker.findProviders({ region: 'eu' })
        assert.equal(result.key, 'region/eu')
        const found = result.providers.map((p) => p.peerId).sort()
        if (result.complete) {
          assert.deepEqual(found, euProviders, `asked by ${asker.identity.peerId}`)
          assert.deepEqual(result.failures, [])
          assert.equal(result.cut, undefined)
          complete = true
        } else {
          assert.ok(found.every((p) => euProviders.includes(p)), `asked by ${asker.identity.peerId}: ${found.join(', ')}`)
          assert.ok(result.cut !== undefined)
        }
      }
      assert.ok(complete, `asked by ${asker.identity.peerId}: no complete answer in 3 tries`)
    }
  })

  it('a key under k needs no continuation: region/us-east', async () => {
    const result = await (all[0] as Daemon).findProviders({ region: 'us-east' })
    assert.equal(result.providers.length, 2)
    assert.equal(result.complete, true)
  })

  it('stops at --limit and says the answer is only "at least"', async () => {
    const asker = nodes.at(-1) as Daemon
    const cut = await asker.findProviders({ region: 'eu' }, { limit: 3 })
    assert.equal(cut.providers.length, 3)
    assert.equal(cut.limit, 3)
    assert.equal(cut.complete, false)
    assert.equal(cut.cut, 'limit')
    for (const p of cut.providers) assert.ok(euProviders.includes(p.peerId))
    const roomy = await asker.findProviders({ region: 'eu' }, { limit: 9 })
    assert.equal(roomy.providers.length, 8)
    assert.equal(roomy.complete, true)
  })
})
