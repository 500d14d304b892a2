import assert from 'node:assert/strict'
import { mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Level } from 'level'
import { writeEndpoint } from '../../../node/api/credentials.js'
import { MarketStore } from '../../../node/market/store.js'
import type { LedgerEntry } from '../../../node/market/views.js'
import { repairDataDir } from '../../../node/repair.js'
import { NodeStore, StorageError, openLevel } from '../../../node/storage.js'
import { journalPath, readJournal } from '../../../node/store-journal.js'

const entry = (award: string, cumulative: number): LedgerEntry => ({
  job: `job-${award}`, award, role: 'requester', counterparty: '12D3KooWpeer', price: 1, cumulative, seq: cumulative, gpuSeconds: 1, state: 'open', updatedAt: cumulative
})

describe('gpumesh repair (node/repair.ts)', () => {
  let dir: string
  beforeEach(async () => { dir = await mkdtemp(join(tmpdir(), 'gpumesh-repair-')) })
  afterEach(async () => { await rm(dir, { recursive: true, force: true }) })

  const write = async (fill: (market: MarketStore, db: Level<string, unknown>) => Promise<void>): Promise<void> => {
    const store = await NodeStore.open(dir)
    await fill(new MarketStore(store.database, store.journal), store.database)
    await store.close()
  }
  const raw = async (change: (db: Level<string, unknown>) => Promise<void>): Promise<void> => {
    const db = await openLevel<unknown>(join(dir, 'db'), 'json')
    await change(db)
    await db.close()
  }
  const ledger = (db: Level<string, unknown>) => db.sublevel<string, unknown>('market-ledger', { valueEncoding: 'json' })

  it('leaves a database that matches its journal alone', async () => {
    await write(async (m) => { await m.putLedger(entry('a', 1)) })
    const report = await repairDataDir(dir)
    assert.equal(report.intact, true)
    assert.equal(report.records, 1)
    assert.deepEqual(await readdir(dir), ['db', 'journal.log'])
  })

  it('restores what was lost, keeps what is still readable (node metadata, a value newer than the journal\'s), and keeps the old database aside', async () => {
    await write(async (m, db) => {
      await m.putLedger(entry('lost', 1))
      await m.putLedger(entry('stale', 1))
      await m.putLedger(entry('stale', 2))
      await m.putLedger(entry('ahead', 1))
      await db.sublevel<string, number>('meta', { valueEncoding: 'json' }).put('adSeq', 42)
    })
    await raw(async (db) => {
      await ledger(db).del('lost')
      await ledger(db).put('stale', entry('stale', 1))
      // the write just before a crash: in the database, not yet in the journal
      await ledger(db).put('ahead', entry('ahead', 2))
    })
    await assert.rejects(NodeStore.open(dir, { mustExist: true }), (err: unknown) => err instanceof StorageError && err.code === 'STORE_DAMAGED')

    const report = await repairDataDir(dir, { now: Date.UTC(2026, 11, 1, 10, 0, 0) })
    assert.equal(report.intact, false)
    assert.equal(report.salvage, 'opened')
    assert.equal(report.movedAside, join(dir, 'db.damaged-2026-12-01T10-00-00-000Z'))
    assert.deepEqual(report.restored, { requester: 0, provider: 0, ledger: 2, envelopes: 0 })
    assert.equal(report.records, 3)

    const store = await NodeStore.open(dir, { mustExist: true })
    try {
      const byAward = Object.fromEntries((await new MarketStore(store.database).ledger()).map((e) => [e.award, e.cumulative]))
      assert.deepEqual(byAward, { lost: 1, stale: 2, ahead: 2 })
      assert.equal(await store.nextAdSeq(0), 43)
    } finally {
      await store.close()
    }
    // the journal now holds what the database holds, once per key
    assert.deepEqual((await readJournal(journalPath(dir))).records.map((r) => r.k).sort(), ['ahead', 'lost', 'stale'])
    // the damaged database is kept, still as it was
    const old = await openLevel<unknown>(report.movedAside, 'json', { createIfMissing: false })
    assert.equal(await ledger(old).get('lost'), undefined)
    await old.close()
  })

  it('reads what it can through LevelDB\'s repairer when the old database does not open', async () => {
    await write(async (m, db) => {
      await m.putLedger(entry('a', 1))
      await db.sublevel<string, number>('meta', { valueEncoding: 'json' }).put('adSeq', 7)
    })
    await rm(join(dir, 'db', 'CURRENT'))
    const report = await repairDataDir(dir)
    assert.equal(report.salvage, 'leveldb-repair')
    const store = await NodeStore.open(dir, { mustExist: true })
    assert.equal(await store.nextAdSeq(0), 8)
    await store.close()
  })

  it('refuses while a daemon runs on the data dir, and changes nothing', async () => {
    await write(async (m) => { await m.putLedger(entry('a', 1)) })
    await raw(async (db) => { await ledger(db).del('a') })
    await writeEndpoint(dir, { url: 'http://127.0.0.1:1', pid: process.pid, peerId: 'x', role: 'node' })
    const journal = await readFile(journalPath(dir))
    await assert.rejects(repairDataDir(dir), (err: unknown) => err instanceof StorageError && err.code === 'STORE_LOCKED' && /stop it before repairing/.test(err.message))
    assert.deepEqual(await readFile(journalPath(dir)), journal)
    assert.ok(!(await readdir(dir)).some((f) => f.startsWith('db.damaged-')))
    await writeFile(join(dir, 'api.json'), '')
  })
})
