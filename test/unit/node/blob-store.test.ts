import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { mkdir, mkdtemp, readdir, rm, stat, symlink, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { CID, DAG_CBOR_CODEC, RAW_CODEC, cidOfRaw } from '../../../crypto/index.js'
import { randomNonce } from '../../../node/random.js'
import { BlobError, BlobStore } from '../../../node/blobs/store.js'

async function code (work: Promise<unknown>): Promise<string> {
  try {
    await work
  } catch (err) {
    assert.ok(err instanceof BlobError, String(err))
    return err.code
  }
  return assert.fail('no BlobError')
}

describe('blob store', () => {
  let root: string
  let store: BlobStore

  beforeEach(async () => {
    root = await mkdtemp(join(tmpdir(), 'gpumesh-blobs-'))
    store = await BlobStore.open(join(root, 'blobs'))
  })
  afterEach(async () => { await rm(root, { recursive: true, force: true }) })

  it('stores raw bytes under their raw CID, privately, and reads them back', async () => {
    const bytes = randomNonce(1000)
    const { cid, size } = await store.put(bytes)
    assert.equal(size, 1000)
    assert.equal(cid.code, RAW_CODEC)
    assert.ok(cid.equals(cidOfRaw(bytes)))
    assert.deepEqual(await store.get(cid), bytes)
    assert.equal(await store.has(cid), true)
    assert.equal(await store.size(cid), 1000)
    assert.equal((await stat(join(store.dir, cid.toString()))).mode & 0o777, 0o600)
    assert.equal((await stat(store.dir)).mode & 0o777, 0o700)
    // idempotent, and no temporary files left behind
    assert.ok((await store.put(bytes)).cid.equals(cid))
    assert.deepEqual(await readdir(store.dir), [cid.toString()])
  })

  it('stores empty blobs', async () => {
    const { cid } = await store.put(new Uint8Array(0))
    assert.deepEqual(await store.get(cid), new Uint8Array(0))
  })

  it('stores DAG-CBOR documents under their dag-cbor CID', async () => {
    const file = await store.put(Uint8Array.of(1, 2, 3))
    const manifest = { files: [{ path: 'out/result.bin', size: file.size, cid: file.cid }] }
    const { cid } = await store.putCbor(manifest)
    assert.equal(cid.code, DAG_CBOR_CODEC)
    const back = await store.getCbor(cid) as typeof manifest
    assert.equal(back.files[0]?.path, 'out/result.bin')
    assert.ok(back.files[0]?.cid.equals(file.cid))
  })

  it('answers undefined for what it does not hold', async () => {
    const cid = cidOfRaw(Uint8Array.of(9))
    assert.equal(await store.get(cid), undefined)
    assert.equal(await store.has(cid), false)
    assert.equal(await store.size(cid), undefined)
    await store.remove(cid)
    // a CIDv0 can never be stored
    const v0 = CID.createV0(cid.multihash as Parameters<typeof CID.createV0>[0])
    assert.equal(await store.get(v0), undefined)
  })

  it('detects a blob changed on disk and never returns its bytes', async () => {
    const { cid } = await store.put(Uint8Array.of(1, 2, 3, 4))
    await writeFile(join(store.dir, cid.toString()), Uint8Array.of(1, 2, 3, 5))
    assert.equal(await code(store.get(cid)), 'CORRUPT')
    // storing the right bytes again repairs it
    await store.put(Uint8Array.of(1, 2, 3, 4))
    assert.deepEqual(await store.get(cid), Uint8Array.of(1, 2, 3, 4))
  })

  it('refuses bytes that do not hash to the CID they are stored under', async () => {
    const cid = cidOfRaw(Uint8Array.of(1))
    assert.equal(await code(store.putWithCid(cid, Uint8Array.of(2))), 'CORRUPT')
    assert.equal(await store.has(cid), false)
  })

  it('removes blobs and their grants', async () => {
    const { cid } = await store.put(Uint8Array.of(7))
    store.grant(cid, 'peer-a')
    await store.remove(cid)
    assert.equal(await store.has(cid), false)
    assert.equal(store.allowed(cid, 'peer-a'), false)
  })

  it('grants and revokes serving per peer', () => {
    const cid = cidOfRaw(Uint8Array.of(7))
    assert.equal(store.allowed(cid, 'peer-a'), false)
    store.grant(cid, 'peer-a')
    assert.equal(store.allowed(cid, 'peer-a'), true)
    assert.equal(store.allowed(cid, 'peer-b'), false)
    assert.equal(store.allowed(cidOfRaw(Uint8Array.of(8)), 'peer-a'), false)
    store.revoke(cid, 'peer-a')
    assert.equal(store.allowed(cid, 'peer-a'), false)
  })

  it('clears temporary files a crash left behind when opened', async () => {
    await writeFile(join(store.dir, '.tmp-deadbeef'), 'half')
    const { cid } = await store.put(Uint8Array.of(1))
    const again = await BlobStore.open(store.dir)
    assert.deepEqual(await readdir(again.dir), [cid.toString()])
  })

  describe('importFile', () => {
    it('imports a regular file within the limit', async () => {
      const path = join(root, 'input.bin')
      const bytes = randomNonce(4096)
      await writeFile(path, bytes)
      const { cid, size } = await store.importFile(path, 4096)
      assert.equal(size, 4096)
      assert.deepEqual(await store.get(cid), bytes)
    })

    it('refuses a file over the limit', async () => {
      const path = join(root, 'big.bin')
      await writeFile(path, new Uint8Array(4097))
      assert.equal(await code(store.importFile(path, 4096)), 'TOO_LARGE')
      assert.deepEqual(await readdir(store.dir), [])
    })

    it('refuses what is not a regular file, and a missing one', async () => {
      await mkdir(join(root, 'dir'))
      assert.equal(await code(store.importFile(join(root, 'dir'), 100)), 'NOT_A_FILE')
      assert.equal(await code(store.importFile('/dev/null', 100)), 'NOT_A_FILE')
      assert.equal(await code(store.importFile(join(root, 'missing'), 100)), 'NOT_FOUND')
    })

    it('refuses a FIFO without blocking on it', async function () {
      const path = join(root, 'fifo')
      try {
        execFileSync('mkfifo', [path])
      } catch {
        this.skip()
      }
      assert.equal(await code(store.importFile(path, 100)), 'NOT_A_FILE')
    })

    it('refuses a symbolic link unless told to follow it', async () => {
      const target = join(root, 'secret')
      await writeFile(target, 'secret')
      await symlink(target, join(root, 'link'))
      assert.equal(await code(store.importFile(join(root, 'link'), 100)), 'NOT_A_FILE')
      const { size } = await store.importFile(join(root, 'link'), 100, { followSymlinks: true })
      assert.equal(size, 6)
    })
  })
})
