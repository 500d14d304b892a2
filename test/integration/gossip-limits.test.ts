import assert from 'node:assert/strict'
import { encodeVarint } from '../../crypto/index.js'
import type { Daemon } from '../../node/daemon.js'
import { GOSSIP_MAX_RPC_BYTES } from '../../node/gossip-limits.js'
import { MAX_ENVELOPE_BYTES } from '../../protocol/index.js'
import { startNetwork, type TestNetwork } from '../helpers/network.js'

/**
 * Gossipsub reads each inbound RPC whole before gpumesh's validator sees it: one over the limit is
 * refused on its length prefix, and counted with a reason instead of vanishing below the validator.
 */
describe('gossipsub inbound RPC limit (in-process)', function () {
  this.timeout(60_000)
  let net: TestNetwork
  let sender: Daemon
  let receiver: Daemon

  before(async () => {
    net = await startNetwork([{ sell: false }, { sell: false }])
    ;[sender, receiver] = net.nodes as [Daemon, Daemon]
    await sender.node.dial(receiver.node.getMultiaddrs()[0]!)
  })
  after(async () => { await net?.stop() })

  async function dropped (): Promise<number> {
    const metric = await receiver.metrics.registry.getSingleMetric('gpumesh_gossip_rpc_dropped_total')?.get()
    return metric?.values.find((v) => v.labels.reason === 'rpc-too-large')?.value ?? 0
  }

  /** Send one length-prefixed RPC of `size` bytes (not valid protobuf) on a fresh gossipsub stream. */
  async function sendRpc (size: number): Promise<void> {
    const stream = await sender.node.dialProtocol(receiver.node.peerId, '/meshsub/1.1.0')
    const frame = new Uint8Array(size).fill(0xff)
    if (!stream.send(encodeVarint(size))) await new Promise((resolve) => stream.addEventListener('drain', resolve, { once: true }))
    if (!stream.send(frame)) await new Promise((resolve) => stream.addEventListener('drain', resolve, { once: true }))
  }

  it('the limit sits just above what gpumesh can send: four envelopes at the cap, a quarter of gossipsub\'s 4 MiB', () => {
    assert.equal(GOSSIP_MAX_RPC_BYTES, 4 * MAX_ENVELOPE_BYTES)
    assert.ok(GOSSIP_MAX_RPC_BYTES < 4 * 1024 * 1024)
  })

  it('an RPC exactly at the limit is read (and then refused as garbage), one byte over is dropped on its length and counted', async () => {
    const before = await dropped()
    await sendRpc(GOSSIP_MAX_RPC_BYTES)
    await new Promise((resolve) => setTimeout(resolve, 300))
    assert.equal(await dropped(), before, 'an RPC at the limit counted as too large')
    await sendRpc(GOSSIP_MAX_RPC_BYTES + 1)
    const deadline = Date.now() + 5_000
    while (await dropped() === before) {
      if (Date.now() > deadline) assert.fail('the oversized RPC was not counted')
      await new Promise((resolve) => setTimeout(resolve, 50))
    }
    assert.equal(await dropped(), before + 1)
  })
})
