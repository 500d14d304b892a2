import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { chmod, mkdir, mkdtemp, readFile, readdir, rm, stat, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { NobleEd25519 } from '../../../crypto/index.js'
import {
  IDENTITY_FILE, KeyFileError, identityPath, loadIdentity, loadOrCreateIdentity, saveIdentity, type KeyFileErrorCode
} from '../../../node/keystore.js'
import { generateIdentity } from '../../../node/random.js'

async function rejectsWith (code: KeyFileErrorCode, path: string, run: () => Promise<unknown>): Promise<void> {
  await assert.rejects(run, (err: unknown) => {
    assert.ok(err instanceof KeyFileError, `expected KeyFileError, got ${String(err)}`)
    assert.equal(err.code, code)
    assert.equal(err.path, path)
    assert.ok(err.message.includes(path))
    return true
  })
}

async function mode (path: string): Promise<number> {
  return (await stat(path)).mode & 0o777
}

describe('node/keystore', () => {
  let root: string
  let dataDir: string
  let keyPath: string

  beforeEach(async () => {
    root = await mkdtemp(join(tmpdir(), 'gpumesh-keystore-'))
    dataDir = join(root, 'data')
    keyPath = join(dataDir, IDENTITY_FILE)
  })

  afterEach(async () => {
    await rm(root, { recursive: true, force: true })
  })

  /** Write raw bytes as the key file with mode 0600, as if a previous version had saved them. */
  async function plantKeyFile (bytes: Uint8Array): Promise<void> {
    await mkdir(dataDir, { recursive: true, mode: 0o700 })
    await writeFile(keyPath, bytes, { mode: 0o600 })
    await chmod(keyPath, 0o600)
  }

  it('keeps the key at <dataDir>/identity.key', () => {
    assert.equal(IDENTITY_FILE, 'identity.key')
    assert.equal(identityPath('/var/lib/gpumesh'), '/var/lib/gpumesh/identity.key')
  })

  it('saves and loads the same identity', async () => {
    const identity = generateIdentity()
    const path = await saveIdentity(dataDir, identity)
    assert.equal(path, keyPath)
    const loaded = await loadIdentity(dataDir)
    assert.equal(loaded.peerId, identity.peerId)
    assert.deepEqual(loaded.publicKey, identity.publicKey)
    const message = Uint8Array.from([1, 2, 3])
    assert.deepEqual(loaded.sign(message), identity.sign(message))
  })

  it('writes libp2p protobuf private-key bytes', async () => {
    const identity = generateIdentity()
    await saveIdentity(dataDir, identity)
    assert.deepEqual(new Uint8Array(await readFile(keyPath)), identity.toProtobuf())
  })

  it('loads with the implementation it is given', async () => {
    const identity = generateIdentity()
    await saveIdentity(dataDir, identity)
    const noble = new NobleEd25519()
    const loaded = await loadIdentity(dataDir, noble)
    assert.equal(loaded.ed25519, noble)
    assert.equal(loaded.peerId, identity.peerId)
  })

  it('writes the key file with mode 0600', async () => {
    await saveIdentity(dataDir, generateIdentity())
    assert.equal(await mode(keyPath), 0o600)
    assert.ok((await stat(keyPath)).isFile())
  })

  it('creates a missing data dir (and parents) private to the owner', async () => {
    const nested = join(root, 'a', 'b', 'c')
    await saveIdentity(nested, generateIdentity())
    assert.equal(await mode(join(root, 'a', 'b', 'c')), 0o700)
    assert.equal(await mode(join(nested, IDENTITY_FILE)), 0o600)
  })

  it('leaves no temporary files behind', async () => {
    await saveIdentity(dataDir, generateIdentity())
    assert.deepEqual(await readdir(dataDir), [IDENTITY_FILE])
  })

  it('refuses to overwrite an existing key (KEY_FILE_EXISTS) and leaves it unchanged', async () => {
    const first = generateIdentity()
    await saveIdentity(dataDir, first)
    const before = await readFile(keyPath)
    await rejectsWith('KEY_FILE_EXISTS', keyPath, async () => await saveIdentity(dataDir, generateIdentity()))
    assert.deepEqual(await readFile(keyPath), before)
    assert.equal(await mode(keyPath), 0o600)
    assert.deepEqual(await readdir(dataDir), [IDENTITY_FILE])
    assert.equal((await loadIdentity(dataDir)).peerId, first.peerId)
  })

  it('refuses to overwrite even a corrupt key file', async () => {
    const garbage = Uint8Array.from([1, 2, 3])
    await plantKeyFile(garbage)
    await rejectsWith('KEY_FILE_EXISTS', keyPath, async () => await saveIdentity(dataDir, generateIdentity()))
    assert.deepEqual(new Uint8Array(await readFile(keyPath)), garbage)
  })

  it('KEY_FILE_MISSING when the data dir does not exist', async () => {
    await rejectsWith('KEY_FILE_MISSING', keyPath, async () => await loadIdentity(dataDir))
  })

  it('KEY_FILE_MISSING when the data dir has no key', async () => {
    await mkdir(dataDir)
    await rejectsWith('KEY_FILE_MISSING', keyPath, async () => await loadIdentity(dataDir))
  })

  for (const tooOpen of [0o644, 0o640, 0o604, 0o660, 0o606, 0o777, 0o700, 0o610]) {
    const groupOrOther = (tooOpen & 0o077) !== 0
    const title = groupOrOther
      ? `KEY_FILE_PERMISSIONS for mode ${tooOpen.toString(8)}, file untouched`
      : `accepts owner-only mode ${tooOpen.toString(8)}`
    it(title, async () => {
      const identity = generateIdentity()
      await saveIdentity(dataDir, identity)
      await chmod(keyPath, tooOpen)
      const before = await readFile(keyPath)
      if (groupOrOther) {
        await rejectsWith('KEY_FILE_PERMISSIONS', keyPath, async () => await loadIdentity(dataDir))
        await rejectsWith('KEY_FILE_PERMISSIONS', keyPath, async () => await loadOrCreateIdentity(dataDir))
      } else {
        assert.equal((await loadIdentity(dataDir)).peerId, identity.peerId)
      }
      assert.deepEqual(await readFile(keyPath), before)
      assert.equal(await mode(keyPath), tooOpen)
    })
  }

  it('KEY_FILE_PERMISSIONS names the mode and the fix', async () => {
    await saveIdentity(dataDir, generateIdentity())
    await chmod(keyPath, 0o644)
    await assert.rejects(loadIdentity(dataDir), (err: unknown) => {
      assert.ok(err instanceof KeyFileError)
      assert.match(err.message, /644/)
      assert.match(err.message, /chmod 600/)
      return true
    })
  })

  describe('KEY_FILE_CORRUPT, and the file is left untouched', () => {
    const valid = (): Uint8Array => generateIdentity().toProtobuf()

    const cases: Array<[string, () => Uint8Array]> = [
      ['an empty file', () => new Uint8Array(0)],
      ['a truncated file (67 of 68 bytes)', () => valid().subarray(0, 67)],
      ['a truncated file (the header only)', () => valid().subarray(0, 4)],
      ['a file with a trailing byte', () => Uint8Array.from([...valid(), 0x0a])],
      ['random garbage of the right length', () => new Uint8Array(randomBytes(68))],
      ['random garbage of another length', () => new Uint8Array(randomBytes(1000))],
      ['a mismatched public half', () => {
        const bytes = valid()
        bytes[67] = (bytes[67] as number) ^ 0x01
        return bytes
      }],
      ['a public half from another key', () => {
        const bytes = valid()
        bytes.set(generateIdentity().publicKey, 36)
        return bytes
      }],
      ['another key type', () => {
        const bytes = valid()
        bytes[1] = 2
        return bytes
      }],
      ['a hex text dump of a valid key', () => new TextEncoder().encode(Buffer.from(valid()).toString('hex'))]
    ]

    for (const [name, make] of cases) {
      it(name, async () => {
        const bytes = make()
        await plantKeyFile(bytes)
        const before = await stat(keyPath)
        await rejectsWith('KEY_FILE_CORRUPT', keyPath, async () => await loadIdentity(dataDir))
        // loadOrCreateIdentity must not replace a corrupt key either
        await rejectsWith('KEY_FILE_CORRUPT', keyPath, async () => await loadOrCreateIdentity(dataDir))
        assert.deepEqual(new Uint8Array(await readFile(keyPath)), bytes)
        const after = await stat(keyPath)
        assert.equal(after.mode, before.mode)
        assert.equal(after.mtimeMs, before.mtimeMs)
        assert.equal(after.ino, before.ino)
        assert.deepEqual(await readdir(dataDir), [IDENTITY_FILE])
      })
    }

    it('a directory where the key file should be', async () => {
      await mkdir(keyPath, { recursive: true, mode: 0o700 })
      await rejectsWith('KEY_FILE_CORRUPT', keyPath, async () => await loadIdentity(dataDir))
      assert.ok((await stat(keyPath)).isDirectory())
    })
  })

  describe('loadOrCreateIdentity', () => {
    it('creates an identity once, then loads the same one', async () => {
      const first = await loadOrCreateIdentity(dataDir)
      assert.equal(first.created, true)
      assert.equal(await mode(keyPath), 0o600)
      const second = await loadOrCreateIdentity(dataDir)
      assert.equal(second.created, false)
      assert.equal(second.identity.peerId, first.identity.peerId)
      const third = await loadOrCreateIdentity(dataDir)
      assert.equal(third.created, false)
      assert.equal(third.identity.peerId, first.identity.peerId)
      assert.equal((await loadIdentity(dataDir)).peerId, first.identity.peerId)
    })

    it('loads an identity saved by saveIdentity', async () => {
      const identity = generateIdentity()
      await saveIdentity(dataDir, identity)
      const loaded = await loadOrCreateIdentity(dataDir)
      assert.equal(loaded.created, false)
      assert.equal(loaded.identity.peerId, identity.peerId)
    })

    it('uses the implementation it is given', async () => {
      const noble = new NobleEd25519()
      const { identity } = await loadOrCreateIdentity(dataDir, noble)
      assert.equal(identity.ed25519, noble)
      assert.equal((await loadOrCreateIdentity(dataDir, noble)).identity.ed25519, noble)
    })
  })
})
