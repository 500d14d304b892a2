/**
 * `gpumesh repair`: rebuild a damaged database from the store journal (node/store-journal.ts).
 *
 * The damaged `db/` is moved aside to `db.damaged-<time>/`, never deleted. The new database gets
 * first every record still readable from the old one (read from a copy, through LevelDB's own
 * repairer when the old one does not open: a lost CURRENT, a missing table), then the journal's last
 * value of every record the old one lost, held in an older version, or garbled. A value the old
 * database holds that is newer than the journal's (the write just before a crash) is kept. Finally
 * the journal is rewritten to match. Refuses while a daemon holds the database.
 */
import { cp, mkdtemp, rename, rm } from 'node:fs/promises'
import { join } from 'node:path'
import { Level } from 'level'
import { readEndpoint } from './api/credentials.js'
import { inspectDataDir } from './data-dir.js'
import { marketSublevel } from './market/store.js'
import { checkStore, damagedCount, type SectionCounts } from './store-check.js'
import { journalPath, readJournal, rewriteJournal } from './store-journal.js'
import { DB_DIR, StorageError, compacted, openLevel, storageErrorOf } from './storage.js'

export interface RepairReport {
  dataDir: string
  /** True when the database matched the journal and nothing was changed. */
  intact: boolean
  /** Where the damaged database was moved. */
  movedAside?: string
  /** How the old records were read: straight from the old database, through LevelDB's repairer, or not at all. */
  salvage: 'opened' | 'leveldb-repair' | 'none'
  /** Why the old database could not be opened as it was, when it could not. */
  openError?: string
  /** Entries (all sections, node metadata included) carried over from the old database. */
  salvaged: number
  /** Records written from the journal, by section. */
  restored: SectionCounts
  /** Garbled records with no copy in the journal: left out. */
  dropped: number
  /** Records in the new database's market sections, and in the rewritten journal. */
  records: number
  /** Damaged journal lines skipped (their records could not be restored from it). */
  journalBadLines: number
}

/** Every entry of a database (throws at the first unreadable block). */
async function readAll (path: string): Promise<Array<[Uint8Array, Uint8Array]>> {
  const db = new Level<Uint8Array, Uint8Array>(path, { keyEncoding: 'view', valueEncoding: 'view', createIfMissing: false })
  await db.open()
  try {
    const entries: Array<[Uint8Array, Uint8Array]> = []
    for await (const entry of db.iterator()) entries.push(entry)
    return entries
  } finally {
    await db.close()
  }
}

/** LevelDB's repairer (classic-level's static `repair`, which `level` re-exports but does not type). */
async function leveldbRepair (path: string): Promise<void> {
  const repair = (Level as unknown as { repair?: (location: string) => Promise<void> }).repair
  if (repair === undefined) throw new Error('this level build has no repair()')
  await repair.call(Level, path)
}

async function daemonRunning (dataDir: string): Promise<number | undefined> {
  const endpoint = await readEndpoint(dataDir)
  if (endpoint === undefined) return undefined
  try {
    process.kill(endpoint.pid, 0)
    return endpoint.pid
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM' ? endpoint.pid : undefined
  }
}

function stamp (now: number): string {
  return new Date(now).toISOString().replace(/[:.]/g, '-')
}

export async function repairDataDir (dataDir: string, options: { now?: number, force?: boolean } = {}): Promise<RepairReport> {
  const now = options.now ?? Date.now()
  const dbPath = join(dataDir, DB_DIR)
  const pid = await daemonRunning(dataDir)
  if (pid !== undefined) throw new StorageError('STORE_LOCKED', dbPath, `a gpumesh daemon (pid ${pid}) runs on this data dir; stop it before repairing`)
  const state = await inspectDataDir(dataDir)
  const journal = await readJournal(journalPath(dataDir))
  const report: RepairReport = {
    dataDir, intact: false, salvage: 'none', salvaged: 0, restored: { requester: 0, provider: 0, ledger: 0, envelopes: 0 }, dropped: 0, records: 0, journalBadLines: journal.badLines.length
  }

  // 1. what the old database still holds: opened as it is, or through LevelDB's repairer on a copy
  let salvaged: Array<[Uint8Array, Uint8Array]> = []
  if (state.db === 'present') {
    try {
      const old = await openLevel<unknown>(dbPath, 'json', { createIfMissing: false, dataDir })
      try {
        const check = await checkStore(old, journal)
        if (damagedCount(check) === 0 && journal.badLines.length === 0 && options.force !== true) {
          report.intact = true
          report.records = check.stored
          return report
        }
      } catch {} finally {
        await old.close()
      }
      salvaged = await readAll(dbPath)
      report.salvage = 'opened'
    } catch (err) {
      const mapped = storageErrorOf(err, dbPath, dataDir)
      if (mapped.code === 'STORE_LOCKED' || mapped.code === 'STORE_NOT_WRITABLE') throw mapped
      report.openError = mapped.message
    }
  }
  if (report.salvage === 'none' && state.db !== 'absent' && state.db !== 'empty') {
    const tmp = await mkdtemp(join(dataDir, '.repair-'))
    const copy = join(tmp, DB_DIR)
    try {
      await cp(dbPath, copy, { recursive: true, filter: (src) => !src.endsWith('/LOCK') })
      await leveldbRepair(copy)
      salvaged = await readAll(copy)
      report.salvage = 'leveldb-repair'
    } catch (err) {
      report.openError = `${report.openError ?? ''}${report.openError !== undefined ? '; ' : ''}LevelDB's repairer: ${(err as Error).message}`
    } finally {
      await rm(tmp, { recursive: true, force: true })
    }
  }

  // 2. the damaged database goes aside, kept
  if (state.db !== 'absent') {
    report.movedAside = join(dataDir, `${DB_DIR}.damaged-${stamp(now)}`)
    await rename(dbPath, report.movedAside)
  }

  // 3. the new database: the salvage, then the journal's values where the salvage lost or garbled them
  const raw = new Level<Uint8Array, Uint8Array>(dbPath, { keyEncoding: 'view', valueEncoding: 'view', errorIfExists: true })
  try {
    await raw.open()
    for (let i = 0; i < salvaged.length; i += 1000) {
      await raw.batch(salvaged.slice(i, i + 1000).map(([key, value]) => ({ type: 'put' as const, key, value })))
    }
  } catch (err) {
    throw storageErrorOf(err, dbPath, dataDir)
  } finally {
    await raw.close()
  }
  report.salvaged = salvaged.length
  const db = await openLevel<unknown>(dbPath, 'json', { createIfMissing: false, dataDir })
  try {
    const check = await checkStore(db, journal)
    for (const id of check.restore) {
      const record = check.latest.get(id)
      if (record === undefined) continue
      if (record.s === 'envelopes') {
        await db.sublevel<string, Uint8Array>(marketSublevel('envelopes'), { valueEncoding: 'view' }).put(record.k, Buffer.from(record.b ?? '', 'base64'))
      } else {
        await db.sublevel<string, unknown>(marketSublevel(record.s), { valueEncoding: 'json' }).put(record.k, record.v)
      }
      report.restored[record.s]++
    }
    for (const id of check.unreadableIds) {
      const slash = id.indexOf('/')
      await db.sublevel<string, unknown>(marketSublevel(id.slice(0, slash) as 'requester'), { valueEncoding: 'json' }).del(id.slice(slash + 1))
      report.dropped++
    }
    // 4. the journal, rewritten to hold exactly what the new database holds
    const final = await checkStore(db, journal)
    if (damagedCount(final) !== 0) throw new StorageError('STORE_DAMAGED', dbPath, 'the rebuilt database still does not match the journal')
    report.records = await rewriteJournal(journalPath(dataDir), compacted(final))
  } finally {
    await db.close()
  }
  return report
}
