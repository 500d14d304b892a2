import assert from 'node:assert/strict'
import { mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { saveIdentity } from '../../../node/keystore.js'
import { generateIdentity } from '../../../node/random.js'
import { DataDirError, MARKER_FILE, dataDirIdentity, inspectDataDir, openDataDir, readMarker, writeMarker, type DataDirErrorCode } from '../../../node/data-dir.js'
import { StorageError } from '../../../node/storage.js'

async function rejectsWith (code: DataDirErrorCode | 'STORE_MISSING', pattern: RegExp, run: () => Promise<unknown>): Promise<void> {
  await assert.rejects(run, (err: unknown) => {
    assert.ok(err instanceof DataDirError || err instanceof StorageError, `unexpected ${String(err)}`)
    assert.equal(err.code, code, err.message)
    assert.match(err.message, pattern)
    return true
  })
}

describe('the data dir (node/data-dir.ts)', () => {
  let dir: string
  beforeEach(async () => { dir = await mkdtemp(join(tmpdir(), 'gpumesh-datadir-')) })
  afterEach(async () => { await rm(dir, { recursive: true, force: true }) })

  it('a new data dir gets an identity, once; it is not in use until the marker or a database is there', async () => {
    const first = await openDataDir(join(dir, 'new'))
    assert.equal(first.state.used, false)
    assert.equal(first.state.db, 'absent')
    const again = await dataDirIdentity(join(dir, 'new'))
    assert.equal(again.created, false)
    assert.equal(again.identity.peerId, first.identity.peerId)
    await writeMarker(join(dir, 'new'), first.identity.peerId, 1_000)
    assert.deepEqual(await readMarker(join(dir, 'new')), { format: 1, peerId: first.identity.peerId, createdAt: 1_000 })
    assert.equal((await inspectDataDir(join(dir, 'new'))).used, true)
  })

  it('never makes a new identity where the marker names one, and leaves no key behind', async () => {
    await writeMarker(dir, generateIdentity().peerId, 1_000)
    await rejectsWith('IDENTITY_MISSING', /identity key is missing, but this data dir holds the records of 12D3KooW.*Restore identity\.key from a backup/, async () => await openDataDir(dir))
    await rejectsWith('IDENTITY_MISSING', /refusing to make a new identity/, async () => await dataDirIdentity(dir))
    assert.deepEqual(await readdir(dir), [MARKER_FILE])
  })

  it('nor where a database written before the marker existed holds records', async () => {
    await mkdir(join(dir, 'db'))
    await writeFile(join(dir, 'db', 'CURRENT'), 'MANIFEST-000002\n')
    await rejectsWith('IDENTITY_MISSING', /records of an earlier identity/, async () => await openDataDir(dir))
  })

  it('nor where only the journal is left (marker and database gone)', async () => {
    await writeFile(join(dir, 'journal.log'), 'a line\n')
    await rejectsWith('IDENTITY_MISSING', /records of an earlier identity/, async () => await openDataDir(dir))
    await saveIdentity(dir, generateIdentity())
    await rejectsWith('STORE_MISSING', /the database is missing \(no db\/\) in a data dir in use \(the journal holds records\)/, async () => await openDataDir(dir))
  })

  it('refuses a key of another peer id than the marker\'s', async () => {
    const mine = generateIdentity()
    await writeMarker(dir, mine.peerId, 1_000)
    await saveIdentity(dir, generateIdentity())
    await rejectsWith('IDENTITY_MISMATCH', new RegExp(`holds the records of ${mine.peerId}`), async () => await openDataDir(dir))
  })

  it('refuses a used data dir whose database is gone, all of it or its CURRENT file', async () => {
    const identity = generateIdentity()
    await saveIdentity(dir, identity)
    await writeMarker(dir, identity.peerId, Date.UTC(2026, 0, 2))
    await rejectsWith('STORE_MISSING', /the database is missing \(no db\/\) in a data dir in use since 2026-01-02T00:00:00\.000Z .*gpumesh repair --data-dir/, async () => await openDataDir(dir))
    await mkdir(join(dir, 'db'))
    // what a failed open leaves (LOCK, LOG) is not a database
    await writeFile(join(dir, 'db', 'LOCK'), '')
    assert.equal((await inspectDataDir(dir)).db, 'empty')
    await writeFile(join(dir, 'db', '000005.ldb'), 'table')
    await rejectsWith('STORE_MISSING', /no db\/CURRENT/, async () => await openDataDir(dir))
  })

  it('a marker that does not read, or is from a newer format, is an error', async () => {
    await writeFile(join(dir, MARKER_FILE), '{"format":1,')
    await rejectsWith('MARKER_CORRUPT', /not valid JSON/, async () => await openDataDir(dir))
    await writeFile(join(dir, MARKER_FILE), '{"format":1}')
    await rejectsWith('MARKER_CORRUPT', /lacks format, peerId or createdAt/, async () => await openDataDir(dir))
    await writeFile(join(dir, MARKER_FILE), JSON.stringify({ format: 2, peerId: 'x', createdAt: 1 }))
    await rejectsWith('FORMAT_UNSUPPORTED', /format 2/, async () => await openDataDir(dir))
  })
})
