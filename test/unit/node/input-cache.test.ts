/**
 * The provider's input cache in the blob store (node/blobs/input-cache.ts, issue 12): fetched inputs are
 * kept by CID, least recently used evicted first beyond the cap (exactly at it nothing goes), a cap of 0
 * keeps nothing once the job is done, pinned and granted blobs stay, the node's own blobs are never the
 * cache's, and recency survives a restart.
 */
import assert from 'node:assert/strict'
import { mkdtemp, readFile, rm, unlink } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { cidOfRaw, cidOfValue, type CID } from '../../../crypto/index.js'
import { BlobStore } from '../../../node/blobs/store.js'
import { INPUT_CACHE_INDEX } from '../../../node/blobs/input-cache.js'
import { fetchInputs } from '../../../node/market/provider-io.js'

const bytesOf = (tag: string, size = 100): Uint8Array => new TextEncoder().encode(tag.repeat(size).slice(0, size))

/** A blob fetched for a job: stored as fetched bytes are, then kept as a cached input. */
async function fetched (store: BlobStore, tag: string, size = 100): Promise<CID> {
  const bytes = bytesOf(tag, size)
  const cid = cidOfRaw(bytes)
  await store.putWithCid(cid, bytes)
  await store.keepInput(cid, size)
  return cid
}

describe('input cache (blob store)', () => {
  let root: string
  const dir = (): string => join(root, 'blobs')
  beforeEach(async () => { root = await mkdtemp(join(tmpdir(), 'gpumesh-cache-')) })
  afterEach(async () => { await rm(root, { recursive: true, force: true }) })

  const held = (store: BlobStore, cids: CID[]): string[] => store.heldInputs(cids)

  it('evicts the least recently used first; a use makes an input the most recent', async () => {
    const store = await BlobStore.open(dir(), { inputCacheBytes: 300 })
    const [a, b, c] = [await fetched(store, 'a'), await fetched(store, 'b'), await fetched(store, 'c')]
    await store.useInput(a)
    const d = await fetched(store, 'd')
    assert.deepEqual(held(store, [a, b, c, d]), [a, c, d].map(String))
    assert.equal(await store.has(b), false, 'the evicted file is gone')
    const e = await fetched(store, 'e')
    assert.deepEqual(held(store, [a, b, c, d, e]), [a, d, e].map(String))
  })

  it('the cap at its edge: exactly the cap is kept, one byte over evicts', async () => {
    const store = await BlobStore.open(dir(), { inputCacheBytes: 300 })
    const [a, b, c] = [await fetched(store, 'a'), await fetched(store, 'b'), await fetched(store, 'c')]
    assert.deepEqual(held(store, [a, b, c]), [a, b, c].map(String))
    assert.equal(store.inputs.bytes, 300)
    const d = await fetched(store, 'd', 1)
    assert.deepEqual(held(store, [a, b, c, d]), [b, c, d].map(String))
    assert.equal(store.inputs.bytes, 201)
  })

  it('a blob larger than the cap is not kept once unpinned', async () => {
    const store = await BlobStore.open(dir(), { inputCacheBytes: 99 })
    const a = await fetched(store, 'a')
    assert.deepEqual(held(store, [a]), [])
    assert.equal(await store.has(a), false)
  })

  it('cap 0 keeps nothing once the job is done; while it runs, its pinned input stays', async () => {
    const store = await BlobStore.open(dir(), { inputCacheBytes: 0 })
    const bytes = bytesOf('p')
    const cid = cidOfRaw(bytes)
    store.pinInput(cid)
    await store.putWithCid(cid, bytes)
    await store.keepInput(cid, 100)
    assert.deepEqual(held(store, [cid]), [cid.toString()])
    assert.ok(await store.has(cid))
    await store.unpinInput(cid)
    assert.deepEqual(held(store, [cid]), [])
    assert.equal(await store.has(cid), false)
  })

  it('a pinned or granted blob is never evicted; it goes once released and over the cap', async () => {
    const store = await BlobStore.open(dir(), { inputCacheBytes: 150 })
    const a = await fetched(store, 'a')
    store.pinInput(a)
    store.pinInput(a)
    const g = cidOfRaw(bytesOf('g'))
    store.grant(g, 'some-peer')
    await fetched(store, 'g')
    // over the cap with a (pinned) and g (granted) alone: nothing else fits, so b goes at once
    const b = await fetched(store, 'b')
    assert.deepEqual(held(store, [a, g, b]), [a, g].map(String))
    assert.equal(store.inputs.bytes, 200)
    await store.unpinInput(a)
    assert.deepEqual(held(store, [a]), [a.toString()], 'still pinned once')
    await store.unpinInput(a)
    assert.deepEqual(held(store, [a, g]), [g.toString()], 'unpinned: evicted down to the cap')
    assert.equal(await store.has(a), false)
    store.revoke(g, 'some-peer')
    const h = await fetched(store, 'h')
    assert.deepEqual(held(store, [g, h]), [h.toString()], 'no longer granted: the least recently used goes')
  })

  it('the node\'s own blobs are never the cache\'s: not evicted, and a cached blob put as its own leaves the cache', async () => {
    const store = await BlobStore.open(dir(), { inputCacheBytes: 0 })
    const own = await store.put(bytesOf('o'))
    await fetched(store, 'x')
    assert.ok(await store.has(own.cid))
    const big = await BlobStore.open(join(root, 'other'), { inputCacheBytes: 1000 })
    const shared = await fetched(big, 's')
    await big.put(bytesOf('s'))
    assert.deepEqual(held(big, [shared]), [])
    assert.ok(await big.has(shared), 'kept as the node\'s own')
  })

  it('recency survives a restart; an index entry whose file is gone is dropped', async () => {
    const first = await BlobStore.open(dir(), { inputCacheBytes: 300 })
    const [a, b, c] = [await fetched(first, 'a'), await fetched(first, 'b'), await fetched(first, 'c')]
    await first.useInput(a)
    const index = JSON.parse(await readFile(join(dir(), INPUT_CACHE_INDEX), 'utf8')) as { entries: Array<[string]> }
    assert.deepEqual(index.entries.map((e) => e[0]), [b, c, a].map(String))
    const again = await BlobStore.open(dir(), { inputCacheBytes: 300 })
    assert.deepEqual(held(again, [a, b, c]), [a, b, c].map(String))
    const d = await fetched(again, 'd')
    assert.deepEqual(held(again, [a, b, c, d]), [a, c, d].map(String), 'b, the least recently used before the restart, went')
    await unlink(join(dir(), c.toString()))
    const third = await BlobStore.open(dir(), { inputCacheBytes: 300 })
    assert.deepEqual(held(third, [a, c, d]), [a, d].map(String))
    assert.equal(third.inputs.bytes, 200)
    // a smaller cap at the next start evicts at once
    const small = await BlobStore.open(dir(), { inputCacheBytes: 100 })
    assert.deepEqual(held(small, [a, d]), [d.toString()])
  })

  it('a manifest input is held only while the manifest and every blob it names are', async () => {
    const store = await BlobStore.open(dir(), { inputCacheBytes: 10_000 })
    const [f1, f2] = [await fetched(store, '1'), await fetched(store, '2')]
    const manifest = cidOfValue({ files: [{ path: 'x', size: 100, cid: f1 }, { path: 'y', size: 100, cid: f2 }] })
    await store.putWithCid(manifest.cid, manifest.bytes)
    await store.keepInput(manifest.cid, manifest.bytes.byteLength, [f1, f2])
    assert.deepEqual(held(store, [manifest.cid]), [manifest.cid.toString()])
    await store.remove(f2)
    assert.deepEqual(held(store, [manifest.cid]), [])
  })

  it('fetchInputs fetches an input once: the second job reads the cached copy, pinned while it runs', async () => {
    const store = await BlobStore.open(dir(), { inputCacheBytes: 10_000 })
    const bytes = bytesOf('i', 500)
    const cid = cidOfRaw(bytes)
    const fetches: string[] = []
    const run = async (): Promise<CID[]> => {
      const pinned: CID[] = []
      const files = await fetchInputs([{ path: 'in.bin', cid, size: 500 }], {
        blobs: store,
        maxBytes: 1000,
        signal: new AbortController().signal,
        pinned,
        fetch: async (c) => { fetches.push(c.toString()); return bytes }
      })
      assert.deepEqual(files.map((f) => f.bytes), [bytes])
      return pinned
    }
    const first = await run()
    assert.deepEqual(fetches, [cid.toString()])
    assert.deepEqual(held(store, [cid]), [cid.toString()])
    const second = await run()
    assert.deepEqual(fetches, [cid.toString()], 'not fetched again')
    assert.deepEqual([...first, ...second].map(String), [cid, cid].map(String))
    assert.ok(store.inputs.pinned(cid.toString()))
    for (const c of [...first, ...second]) await store.unpinInput(c)
    assert.equal(store.inputs.pinned(cid.toString()), false)
  })
})
