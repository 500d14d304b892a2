import assert from 'node:assert/strict'
import { readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import wabt from 'wabt'
import type { Daemon } from '../../node/daemon.js'
import type { LedgerEntry } from '../../node/market/views.js'
import { untilJob, type TestNetwork } from '../helpers/network.js'
import { FINAL_STATUSES, SHORT_LEASE_MARKET, TEST_GPU, useNetwork } from '../helpers/market-network.js'

/**
 * `replicate 2` end to end (protocol/README.md §5.9): a wasm job offered to three providers runs on
 * the two best, independent ones, each under its own award, stream and payments; their receipts name
 * the same outputs, so both are paid and the job settles. The memory transport has no IP addresses:
 * the requester is told each provider sits in its own /16.
 */
const MARKET = SHORT_LEASE_MARKET
const FIXTURES = fileURLToPath(new URL('../../../test/fixtures/wasm/', import.meta.url))

/** Each peer asked about gets its own /16, in the order asked. */
function ownNetworks (): (peer: string) => string[] {
  const nets = new Map<string, string>()
  return (peer) => {
    if (!nets.has(peer)) nets.set(peer, `/ip4/10.${nets.size + 1}.0.1/tcp/4001`)
    return [nets.get(peer) as string]
  }
}

describe('replicate 2: a wasm job on two of three providers (in-process)', function () {
  this.timeout(180_000)
  let net: TestNetwork
  let requester: Daemon

  const network = useNetwork([
    { region: 'eu-west', gpus: [TEST_GPU], priceFloor: 1, market: MARKET },
    { region: 'eu-west', gpus: [TEST_GPU], priceFloor: 1.1, market: MARKET },
    { region: 'eu-west', gpus: [TEST_GPU], priceFloor: 1.2, market: MARKET },
    { sell: false, market: MARKET, replicaAddresses: ownNetworks() }
  ])
  before(() => {
    net = network.net
    requester = net.nodes[3] as Daemon
  })

  it('both replicas run, agree, and are paid; the third provider gets no award', async () => {
    const toolkit = await wabt()
    const module = toolkit.parseWat('box.wat', await readFile(join(FIXTURES, 'box.wat'), 'utf8'))
    const wasm = join(net.root, 'box.wasm')
    try {
      await writeFile(wasm, module.toBinary({}).buffer)
    } finally {
      module.destroy()
    }
    const { job } = await requester.market!.submit({
      executor: 'wasm', command: ['box.wasm', 'write', 'out.txt', 'agreed'], inputs: [{ path: 'box.wasm', file: wasm }], outputs: ['out.txt'],
      maxRuntimeSec: 60, maxPrice: 3, bidWindowMs: 1500, verification: { mode: 'replicate', k: 2 }
    })
    const view = await untilJob(requester, job, (v) => FINAL_STATUSES.has(v.status), 120_000)
    assert.equal(view.status, 'settled', view.events.map((e) => `${e.type}: ${e.text}`).join('\n'))
    const replicas = view.replication?.replicas ?? []
    assert.deepEqual(replicas.map((r) => [r.role, r.verdict, r.attempt]), [['replica', 'matched', 1], ['replica', 'matched', 1]])
    const providers = replicas.map((r) => r.provider)
    assert.equal(new Set(providers).size, 2)
    assert.equal(replicas[0]?.outputs, replicas[1]?.outputs)
    const spent = (await requester.market!.ledger()).entries.filter((e: LedgerEntry) => e.job === job)
    assert.deepEqual(spent.map((e) => [e.counterparty, e.state]).sort(), providers.map((p) => [p, 'settled']).sort())
    for (const [i, node] of net.nodes.slice(0, 3).entries()) {
      const earned = (await node.market!.ledger()).entries.filter((e: LedgerEntry) => e.job === job)
      if (providers.includes(node.identity.peerId)) assert.deepEqual(earned.map((e) => e.state), ['settled'], `provider ${i}`)
      else assert.equal(earned.length, 0, `provider ${i} holds no award`)
    }
    assert.ok(view.paid > 0)
    // the result is a paid replica's outputs, fetched and checked
    const result = requester.market!.requester.result(job)
    assert.deepEqual(result?.outputs.map((o) => o.path), ['out.txt'])
    assert.equal(await readFile(result?.outputs[0]?.file as string, 'utf8'), 'agreed')
  })
})
