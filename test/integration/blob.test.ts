/**
 * /gpumesh/blob/1.0.0 between bare in-process libp2p nodes (memory transport, plaintext, yamux) that run
 * only the blob service, plus a "liar" node whose raw handler speaks the wire format badly on purpose.
 */
import assert from 'node:assert/strict'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { yamux } from '@chainsafe/libp2p-yamux'
import type { Stream } from '@libp2p/interface'
import { memory } from '@libp2p/memory'
import { peerIdFromPrivateKey } from '@libp2p/peer-id'
import { generateKeyPair } from '@libp2p/crypto/keys'
import { plaintext } from '@libp2p/plaintext'
import { lpStream } from '@libp2p/utils'
import { createLibp2p, type Libp2p } from 'libp2p'
import { cidOfRaw, encodeVarint, type CID } from '../../crypto/index.js'
import { randomNonce } from '../../node/random.js'
import { PROTOCOLS } from '../../protocol/index.js'
import { BlobStore } from '../../node/blobs/store.js'
import { createMetrics, type NodeMetrics } from '../../node/metrics.js'
import { BlobFetchError, blobService, type BlobFetchErrorCode, type BlobService } from '../../node/services/blob.js'

let counter = 0

async function bareNode<S extends Record<string, unknown>> (services: { [K in keyof S]: (components: any) => S[K] }): Promise<Libp2p<S>> {
  return await createLibp2p({
    addresses: { listen: [`/memory/gpumesh-blob-${process.pid}-${counter++}`] },
    transports: [memory()],
    connectionEncrypters: [plaintext()],
    streamMuxers: [yamux()],
    services
  })
}

/** What the liar does with one request: it gets the stream after reading the request frame. */
type Behaviour = (lp: ReturnType<typeof lpStream<Stream>>, stream: Stream) => Promise<void>

const MiB = 1024 * 1024
const SERVER_TIMEOUT_MS = 3_000

describe('/gpumesh/blob/1.0.0 (in-process)', function () {
  this.timeout(30_000)
  let root: string
  let store: BlobStore
  let serverMetrics: NodeMetrics
  let clientMetrics: NodeMetrics
  let server: Libp2p<{ blob: BlobService }>
  let client: Libp2p<{ blob: BlobService }>
  let liar: Libp2p
  let behaviour: Behaviour = async () => {}
  let big: Uint8Array
  let bigCid: CID

  before(async () => {
    root = await mkdtemp(join(tmpdir(), 'gpumesh-blob-'))
    store = await BlobStore.open(join(root, 'server-blobs'))
    serverMetrics = createMetrics({ processMetrics: false })
    clientMetrics = createMetrics({ processMetrics: false })
    server = await bareNode({ blob: blobService({ store, metrics: serverMetrics, timeoutMs: SERVER_TIMEOUT_MS }) })
    client = await bareNode({ blob: blobService({ metrics: clientMetrics }) })
    liar = await bareNode({})
    await liar.handle(PROTOCOLS.blob, (stream) => {
      void (async () => {
        const lp = lpStream(stream)
        await lp.read()
        await behaviour(lp, stream)
      })().catch((err: Error) => { stream.abort(err) })
    })
    await client.dial(server.getMultiaddrs()[0]!)
    await client.dial(liar.getMultiaddrs()[0]!)
    big = randomNonce(MiB)
    bigCid = (await store.put(big)).cid
    store.grant(bigCid, client.peerId)
  })
  after(async () => {
    await Promise.all([server, client, liar].map(async (n) => { await n?.stop() }))
    await rm(root, { recursive: true, force: true })
  })

  async function fetchError (from: Libp2p, cid: CID, options: { maxBytes?: number, timeoutMs?: number, signal?: AbortSignal } = {}): Promise<BlobFetchError> {
    try {
      await client.services.blob.fetch(from.peerId, cid, { maxBytes: options.maxBytes ?? 2 * MiB, timeoutMs: options.timeoutMs ?? 10_000, signal: options.signal })
    } catch (err) {
      assert.ok(err instanceof BlobFetchError, String(err))
      return err
    }
    return assert.fail('the fetch succeeded')
  }

  async function expectCode (code: BlobFetchErrorCode, from: Libp2p, cid: CID, options: { maxBytes?: number, timeoutMs?: number } = {}): Promise<BlobFetchError> {
    const err = await fetchError(from, cid, options)
    assert.equal(err.code, code, err.message)
    return err
  }

  async function metric (metrics: NodeMetrics, name: string): Promise<string> {
    return await metrics.registry.getSingleMetricAsString(name)
  }

  describe('against an honest server', () => {
    it('fetches a 1 MiB blob in many frames and checks it against the CID', async () => {
      const bytes = await client.services.blob.fetch(server.peerId, bigCid, { maxBytes: MiB })
      assert.deepEqual(bytes, big)
      assert.match(await metric(serverMetrics, 'gpumesh_blob_bytes_total'), new RegExp(`direction="out"\\} ${MiB}`))
      assert.match(await metric(clientMetrics, 'gpumesh_blob_fetched_total'), /result="ok"\} 1/)
    })

    it('fetches into a local store, DAG-CBOR documents included', async () => {
      const manifest = await store.putCbor({ files: [{ path: 'out.bin', size: big.byteLength, cid: bigCid }] })
      store.grant(manifest.cid, client.peerId)
      const local = await BlobStore.open(join(root, 'client-blobs'))
      for (const cid of [bigCid, manifest.cid]) {
        const stored = await client.services.blob.fetchTo(server.peerId, cid, local, { maxBytes: MiB })
        assert.ok(stored.cid.equals(cid))
      }
      const back = await local.getCbor(manifest.cid) as { files: Array<{ cid: CID }> }
      assert.ok(back.files[0]?.cid.equals(bigCid))
    })

    it('fetches an empty blob', async () => {
      const { cid } = await store.put(new Uint8Array(0))
      store.grant(cid, client.peerId)
      assert.deepEqual(await client.services.blob.fetch(server.peerId, cid, { maxBytes: 0 }), new Uint8Array(0))
    })

    it('answers UNAVAILABLE alike for a blob not granted and one not held', async () => {
      const { cid } = await store.put(Uint8Array.of(1, 2, 3))
      const notGranted = await expectCode('UNAVAILABLE', server, cid)
      store.grant(cid, client.peerId)
      await store.remove(cid)
      store.grant(cid, client.peerId)
      const notHeld = await expectCode('UNAVAILABLE', server, cid)
      assert.equal(notGranted.message, notHeld.message)
      const served = await metric(serverMetrics, 'gpumesh_blob_served_total')
      assert.match(served, /result="not-granted"\} 1/)
      assert.match(served, /result="not-found"\} 1/)
    })

    it('serves a publicly granted blob (a fraud proof\'s inputs) to a peer it never granted, until the blob is removed', async () => {
      const bytes = Uint8Array.of(9, 8, 7)
      const { cid } = await store.put(bytes)
      await expectCode('UNAVAILABLE', server, cid)
      store.grantPublic(cid)
      assert.deepEqual(await client.services.blob.fetch(server.peerId, cid, { maxBytes: 3 }), bytes)
      assert.equal(store.allowed(cid, 'any-peer'), true)
      await store.remove(cid)
      await store.put(bytes)
      assert.equal(store.allowed(cid, client.peerId), false, 'removing the blob ends the public grant')
    })

    it('refuses an announced size over maxBytes before reading the content (TOO_LARGE)', async () => {
      const err = await expectCode('TOO_LARGE', server, bigCid, { maxBytes: MiB - 1 })
      assert.match(err.message, new RegExp(`announced ${MiB} bytes`))
    })

    it('never serves a blob that changed on its disk', async () => {
      const { cid } = await store.put(Uint8Array.of(4, 5, 6))
      store.grant(cid, client.peerId)
      await writeFile(join(store.dir, cid.toString()), Uint8Array.of(4, 5, 7))
      await expectCode('UNAVAILABLE', server, cid)
      assert.match(await metric(serverMetrics, 'gpumesh_blob_served_total'), /result="corrupt"\} 1/)
    })

    it('answers UNAVAILABLE when it has no store', async () => {
      server.services.blob.store = undefined
      try {
        await expectCode('UNAVAILABLE', server, bigCid)
      } finally {
        server.services.blob.store = store
      }
    })

    it('aborts an oversized or garbage request frame and keeps serving others', async () => {
      const requests = [
        Uint8Array.of(65, ...new Uint8Array(65)), // a 65-byte frame
        Uint8Array.of(0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01), // an absurd length
        Uint8Array.of(4, 1, 2, 3, 4) // a frame that is not a CID
      ]
      for (const request of requests) {
        const stream = await client.dialProtocol(server.peerId, PROTOCOLS.blob)
        stream.send(request)
        await assert.rejects(lpStream(stream).read({ signal: AbortSignal.timeout(5_000) }))
      }
      assert.match(await metric(serverMetrics, 'gpumesh_blob_served_total'), /result="bad-request"\} 3/)
      assert.deepEqual(await client.services.blob.fetch(server.peerId, bigCid, { maxBytes: MiB }), big)
    })

    it('drops a requester that never sends its request', async () => {
      const stream = await client.dialProtocol(server.peerId, PROTOCOLS.blob)
      // the server's deadline (3 s) ends the stream long before this read's own limit
      await assert.rejects(lpStream(stream).read({ signal: AbortSignal.timeout(20_000) }), (err: Error) => err.name !== 'TimeoutError')
    })

    it('reports a peer it cannot reach as UNREACHABLE', async () => {
      const stranger = peerIdFromPrivateKey(await generateKeyPair('Ed25519'))
      const err = await fetchError({ peerId: stranger } as unknown as Libp2p, bigCid)
      assert.equal(err.code, 'UNREACHABLE', err.message)
    })

    it('stops when the caller aborts (ABORTED)', async () => {
      const controller = new AbortController()
      controller.abort(new Error('changed my mind'))
      const err = await fetchError(server, bigCid, { signal: controller.signal })
      assert.equal(err.code, 'ABORTED', err.message)
    })
  })

  describe('against a misbehaving responder', () => {
    const content = Uint8Array.of(1, 2, 3, 4, 5, 6, 7, 8, 9, 10)
    const cid = cidOfRaw(content)
    const header = (size: number): Uint8Array => Uint8Array.of(0, ...encodeVarint(size))

    it('refuses content that does not hash to the CID (HASH_MISMATCH)', async () => {
      behaviour = async (lp, stream) => {
        await lp.write(header(10))
        await lp.write(Uint8Array.of(1, 2, 3, 4, 5, 6, 7, 8, 9, 11))
        await stream.close()
      }
      await expectCode('HASH_MISMATCH', liar, cid)
    })

    it('refuses a frame that goes past the announced size (BAD_RESPONSE)', async () => {
      behaviour = async (lp, stream) => {
        await lp.write(header(10))
        await lp.write(new Uint8Array(20))
        await stream.close()
      }
      const err = await expectCode('BAD_RESPONSE', liar, cid)
      assert.match(err.message, /more than the 10 bytes announced/)
    })

    it('refuses frames after the announced content (BAD_RESPONSE)', async () => {
      behaviour = async (lp, stream) => {
        await lp.write(header(10))
        await lp.write(content)
        await lp.write(Uint8Array.of(0))
        await stream.close()
      }
      await expectCode('BAD_RESPONSE', liar, cid)
    })

    it('refuses a frame over 64 KiB (BAD_RESPONSE)', async () => {
      behaviour = async (lp, stream) => {
        await lp.write(header(MiB))
        await lp.write(new Uint8Array(64 * 1024 + 1))
        await stream.close()
      }
      const err = await expectCode('BAD_RESPONSE', liar, cid)
      assert.match(err.message, /frame over 65536 bytes/)
    })

    it('refuses an endless length prefix at once (BAD_RESPONSE)', async () => {
      behaviour = async (lp, stream) => {
        await lp.write(header(10))
        stream.send(new Uint8Array(16).fill(0xff))
      }
      const err = await expectCode('BAD_RESPONSE', liar, cid)
      assert.match(err.message, /frame over 65536 bytes/)
    })

    it('refuses a malformed status frame (BAD_RESPONSE)', async () => {
      for (const frame of [Uint8Array.of(2), Uint8Array.of(0), Uint8Array.of(0, 10, 0), new Uint8Array(0)]) {
        behaviour = async (lp, stream) => {
          await lp.write(frame)
          await stream.close()
        }
        await expectCode('BAD_RESPONSE', liar, cid)
      }
    })

    it('gives up on a responder that stalls (TIMEOUT)', async () => {
      behaviour = async (lp) => { await lp.write(header(10)) }
      const err = await expectCode('TIMEOUT', liar, cid, { timeoutMs: 300 })
      assert.match(err.message, /timed out after 300 ms/)
    })

    it('reports a responder that closes mid-transfer (CLOSED_EARLY)', async () => {
      behaviour = async (lp, stream) => {
        await lp.write(header(1000))
        await lp.write(new Uint8Array(100))
        await stream.close()
      }
      const err = await expectCode('CLOSED_EARLY', liar, cidOfRaw(new Uint8Array(1000)))
      assert.match(err.message, /closed the stream after 100 of 1000 bytes/)
    })

    it('reports a responder that resets mid-transfer (UNREACHABLE)', async () => {
      behaviour = async (lp, stream) => {
        await lp.write(header(1000))
        await lp.write(new Uint8Array(100))
        stream.abort(new Error('gone'))
      }
      const err = await expectCode('UNREACHABLE', liar, cidOfRaw(new Uint8Array(1000)))
      assert.match(err.message, /reset the stream/)
    })

    it('counts each failure by its code', async () => {
      const fetched = await metric(clientMetrics, 'gpumesh_blob_fetched_total')
      for (const code of ['HASH_MISMATCH', 'BAD_RESPONSE', 'CLOSED_EARLY', 'TIMEOUT', 'UNREACHABLE', 'UNAVAILABLE', 'TOO_LARGE']) {
        assert.match(fetched, new RegExp(`result="${code}"`))
      }
    })
  })
})
