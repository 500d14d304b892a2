import assert from 'node:assert/strict'
import { appendFile, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Level } from 'level'
import type { LogFields, Logger } from '../../../node/logger.js'
import { MarketStore } from '../../../node/market/store.js'
import type { LedgerEntry } from '../../../node/market/views.js'
import { NodeStore, StorageError, openLevel, type StorageErrorCode } from '../../../node/storage.js'
import { encodeLine, journalPath, readJournal } from '../../../node/store-journal.js'

const entry = (award: string, cumulative: number, state = 'open'): LedgerEntry => ({
  job: `job-${award}`, award, role: 'provider', counterparty: '12D3KooWpeer', price: 1_000_000, cumulative, seq: cumulative, gpuSeconds: 1, state, updatedAt: 1_000 + cumulative
})

async function rejectsWith (code: StorageErrorCode, pattern: RegExp, run: () => Promise<unknown>): Promise<void> {
  await assert.rejects(run, (err: unknown) => {
    assert.ok(err instanceof StorageError, `expected StorageError, got ${String(err)}`)
    assert.equal(err.code, code, err.message)
    assert.match(err.message, pattern)
    return true
  })
}

function recordingLogger (): Logger & { lines: Array<{ level: string, msg: string, fields?: LogFields }> } {
  const lines: Array<{ level: string, msg: string, fields?: LogFields }> = []
  const at = (level: string) => (msg: string, fields?: LogFields): void => { lines.push({ level, msg, ...(fields !== undefined ? { fields } : {}) }) }
  return { lines, trace: at('trace'), debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error'), enabled: () => true }
}

describe('the store journal and the start-up check (node/store-journal.ts, node/store-check.ts)', () => {
  let dir: string
  beforeEach(async () => { dir = await mkdtemp(join(tmpdir(), 'gpumesh-journal-')) })
  afterEach(async () => { await rm(dir, { recursive: true, force: true }) })

  /** Open the node's store, write through the market store, close. */
  const write = async (fill: (market: MarketStore) => Promise<void>): Promise<void> => {
    const store = await NodeStore.open(dir)
    await fill(new MarketStore(store.database, store.journal))
    await store.close()
  }
  /** The database on its own, as another program (or damage) would change it. */
  const raw = async (change: (db: Level<string, unknown>) => Promise<void>): Promise<void> => {
    const db = await openLevel<unknown>(join(dir, 'db'), 'json')
    await change(db)
    await db.close()
  }
  const ledger = (db: Level<string, unknown>) => db.sublevel<string, unknown>('market-ledger', { valueEncoding: 'json' })
  const envelopes = (db: Level<string, unknown>) => db.sublevel<string, Uint8Array>('market-envelopes', { valueEncoding: 'view' })

  describe('readJournal', () => {
    it('reads good lines; a missing file is an empty journal', async () => {
      assert.deepEqual((await readJournal(join(dir, 'none'))).exists, false)
      const path = join(dir, 'j')
      await writeFile(path, encodeLine({ s: 'ledger', k: 'a', v: 1 }) + encodeLine({ s: 'envelopes', k: 'b', b: 'AAE=' }))
      const read = await readJournal(path)
      assert.deepEqual(read.records, [{ s: 'ledger', k: 'a', v: 1 }, { s: 'envelopes', k: 'b', b: 'AAE=' }])
      assert.deepEqual(read.badLines, [])
      assert.equal(read.tornTail, false)
      assert.equal(read.goodBytes, read.totalBytes)
    })

    it('a last line without its newline, or with a bad checksum, is a torn tail; a bad line before it is damage', async () => {
      const path = join(dir, 'j')
      const good = encodeLine({ s: 'ledger', k: 'a', v: 1 })
      await writeFile(path, good + good.slice(0, 20))
      let read = await readJournal(path)
      assert.equal(read.tornTail, true)
      assert.equal(read.goodBytes, good.length)
      assert.equal(read.records.length, 1)

      const flipped = `${good.slice(0, 12)}X${good.slice(13)}`
      await writeFile(path, good + flipped)
      read = await readJournal(path)
      assert.equal(read.tornTail, true)
      assert.deepEqual(read.badLines, [])

      await writeFile(path, good + flipped + good)
      read = await readJournal(path)
      assert.equal(read.tornTail, false)
      assert.deepEqual(read.badLines, [2])
      assert.equal(read.records.length, 2)
      // a line that checks but is not a record is damage too
      await writeFile(path, encodeLine({ s: 'nonsense', k: 'a', v: 1 } as never) + good)
      assert.deepEqual((await readJournal(path)).badLines, [1])
    })
  })

  it('every market write is journaled, and a store that matches opens again', async () => {
    await write(async (m) => {
      await m.putLedger(entry('a', 0))
      await m.putLedger(entry('a', 5, 'settled'))
      await m.put('requester', 'job-1', { id: 'job-1', status: 'bidding' })
      await m.putEnvelope('cid-1', new Uint8Array([1, 2, 3]))
      await m.putEnvelope('cid-1', new Uint8Array([1, 2, 3]))
    })
    const read = await readJournal(journalPath(dir))
    assert.deepEqual(read.records.map((r) => `${r.s}/${r.k}`), ['ledger/a', 'ledger/a', 'requester/job-1', 'envelopes/cid-1'])
    const store = await NodeStore.open(dir)
    assert.deepEqual(await new MarketStore(store.database).ledger(), [entry('a', 5, 'settled')])
    await store.close()
  })

  it('a record the database lost is named, counted, and refused', async () => {
    await write(async (m) => {
      await m.putLedger(entry('a', 1))
      await m.putLedger(entry('b', 1))
      await m.put('requester', 'job-1', { id: 'job-1' })
    })
    await raw(async (db) => { await ledger(db).del('a') })
    await rejectsWith('STORE_DAMAGED', /lost 1 of the 3 records the journal holds \(missing 1 of 2 ledger entries\); refusing to start.*gpumesh repair --data-dir/,
      async () => await NodeStore.open(dir))
  })

  it('an older value where the journal holds a newer one is lost updates, refused', async () => {
    await write(async (m) => {
      await m.putLedger(entry('a', 1))
      await m.putLedger(entry('a', 2))
    })
    await raw(async (db) => { await ledger(db).put('a', entry('a', 1)) })
    await rejectsWith('STORE_DAMAGED', /older values of 1 of 1 ledger entries/, async () => await NodeStore.open(dir))
  })

  it('envelope bytes that differ from the journal\'s are garbled, refused', async () => {
    await write(async (m) => { await m.putEnvelope('cid-1', new Uint8Array([1, 2, 3])) })
    await raw(async (db) => { await envelopes(db).put('cid-1', new Uint8Array([1, 2, 4])) })
    await rejectsWith('STORE_DAMAGED', /1 record\(s\) garbled/, async () => await NodeStore.open(dir))
  })

  it('a database one write ahead of the journal (a crash between the two) opens, and the journal catches up', async () => {
    await write(async (m) => {
      await m.putLedger(entry('a', 1))
      await m.putLedger(entry('a', 2))
    })
    // the crash: the last write reached the database but not the journal
    const path = journalPath(dir)
    const lines = (await readFile(path, 'utf8')).split('\n')
    await writeFile(path, `${lines[0] as string}\n`)
    const store = await NodeStore.open(dir)
    await store.close()
    const read = await readJournal(path)
    assert.deepEqual(read.records.at(-1), { s: 'ledger', k: 'a', v: entry('a', 2) })
  })

  it('a database written before the journal existed gets one, with every record', async () => {
    await raw(async (db) => {
      const m = new MarketStore(db)
      await m.putLedger(entry('a', 1))
      await m.putEnvelope('cid-1', new Uint8Array([9]))
    })
    const log = recordingLogger()
    const store = await NodeStore.open(dir, { log })
    await store.close()
    assert.deepEqual((await readJournal(journalPath(dir))).records.map((r) => `${r.s}/${r.k}`).sort(), ['envelopes/cid-1', 'ledger/a'])
    assert.ok(log.lines.some((l) => /no store journal yet/.test(l.msg)))
  })

  it('a damaged journal line is reported and the journal rewritten from the checked database', async () => {
    await write(async (m) => {
      for (const award of ['a', 'b', 'c']) await m.putLedger(entry(award, 1))
    })
    const path = journalPath(dir)
    const lines = (await readFile(path, 'utf8')).split('\n')
    lines[1] = `00000000${(lines[1] as string).slice(8)}`
    await writeFile(path, lines.join('\n'))
    const log = recordingLogger()
    const store = await NodeStore.open(dir, { log })
    await store.close()
    assert.ok(log.lines.some((l) => l.level === 'warn' && /damaged lines/.test(l.msg)), JSON.stringify(log.lines))
    const read = await readJournal(path)
    assert.deepEqual(read.badLines, [])
    assert.deepEqual(read.records.map((r) => r.k).sort(), ['a', 'b', 'c'])
  })

  it('a torn last line is cut before the next append, so no good line is glued to it', async () => {
    await write(async (m) => { await m.putLedger(entry('a', 1)) })
    const path = journalPath(dir)
    await appendFile(path, '0badc0de {"s":"ledger","k":"b"')
    await write(async (m) => { await m.putLedger(entry('c', 1)) })
    const read = await readJournal(path)
    assert.deepEqual(read.badLines, [])
    assert.equal(read.tornTail, false)
    assert.deepEqual(read.records.map((r) => r.k), ['a', 'c'])
  })

  it('the journal holds the value the database holds, even when the caller changes the record while writes queue', async () => {
    const record = { id: 'job-1', status: 'bidding', events: [] as string[] }
    await write(async (m) => {
      const writes: Array<Promise<void>> = []
      for (const status of ['awarded', 'running', 'completed']) {
        record.status = status
        record.events.push(status)
        writes.push(m.put('requester', 'job-1', record))
      }
      record.status = 'changed after the last write'
      await Promise.all(writes)
    })
    const read = await readJournal(journalPath(dir))
    assert.deepEqual(read.records.map((r) => (r.v as { status: string }).status), ['awarded', 'running', 'completed'])
    const store = await NodeStore.open(dir)
    assert.equal((await new MarketStore(store.database).get<{ status: string }>('requester', 'job-1'))?.status, 'completed')
    await store.close()
  })

  it('compacts a journal of many rewrites of few keys to their last values', async () => {
    await write(async (m) => {
      for (let i = 0; i <= 1100; i++) await m.putLedger(entry('a', i))
    })
    assert.equal((await readJournal(journalPath(dir))).records.length, 1101)
    await write(async () => {})
    const read = await readJournal(journalPath(dir))
    assert.deepEqual(read.records, [{ s: 'ledger', k: 'a', v: entry('a', 1100) }])
  })

  it('names the lock held by another open, and a database that must exist but does not', async () => {
    const store = await NodeStore.open(dir)
    try {
      await rejectsWith('STORE_LOCKED', /in use by another gpumesh process/, async () => await NodeStore.open(dir))
    } finally {
      await store.close()
    }
    const other = await mkdtemp(join(tmpdir(), 'gpumesh-journal-'))
    try {
      await rejectsWith('STORE_MISSING', /the database is gone .*gpumesh repair/, async () => await NodeStore.open(other, { mustExist: true }))
    } finally {
      await rm(other, { recursive: true, force: true })
    }
  })
})
