/**
 * The node's own database: a `level` store in `<dataDir>/db` for what must survive a restart (the
 * capability-ad sequence number and announced keys; the market's jobs, receipts, envelopes and
 * ledger, node/market/store.ts). libp2p's peer store and DHT records live beside it in
 * `<dataDir>/libp2p`; the identity key is a separate file. Every market write is also journaled
 * (node/store-journal.ts), and the database is checked against the journal at every open
 * (node/store-check.ts): a locked, unwritable, missing, corrupt or damaged store is an error that
 * names its cause and the way out, never wiped and never started on.
 */
import { Level } from 'level'
import { join } from 'node:path'
import type { Logger } from './logger.js'
import { checkStore, damagedCount, recordId, sum, type SectionCounts, type StoreCheck } from './store-check.js'
import { JOURNAL_SECTIONS, StoreJournal, journalPath, readJournal, rewriteJournal, type JournalContents, type JournalRecord } from './store-journal.js'

export type StorageErrorCode =
  | 'STORE_LOCKED' | 'STORE_CORRUPT' | 'STORE_UNAVAILABLE' | 'STORE_MISSING' | 'STORE_DAMAGED' | 'STORE_NOT_WRITABLE'

export class StorageError extends Error {
  override readonly name = 'StorageError'
  constructor (readonly code: StorageErrorCode, readonly path: string, message: string) {
    super(`${message} (${path})`)
  }
}

export const DB_DIR = 'db'

/** The way out of a damaged database, in the words of every error that reports one. */
export function repairHint (dataDir: string): string {
  return `run \`gpumesh repair --data-dir ${dataDir}\` to move the damaged database aside (it is kept) and rebuild it from the journal, or restore the data dir from a backup`
}

function causeOf (err: unknown): { code?: string, message: string } {
  let e = err as { code?: string, cause?: unknown, message?: string } | undefined
  for (let depth = 0; e != null && depth < 5; depth++) {
    if (e.code === 'LEVEL_LOCKED' || e.code === 'LEVEL_CORRUPTION' || e.code === 'LEVEL_IO_ERROR' || e.code === 'LEVEL_INVALID_ARGUMENT') {
      return { code: e.code, message: e.message ?? '' }
    }
    if (e.cause == null) break
    e = e.cause as typeof e
  }
  return { ...((err as { code?: string } | undefined)?.code !== undefined ? { code: (err as { code: string }).code } : {}), message: e?.message ?? String(err) }
}

/**
 * A level failure (at open, or a read that meets a damaged table) as a StorageError that names the
 * cause: the lock held by another process, a file the user cannot write, corruption, a missing
 * database.
 */
export function storageErrorOf (err: unknown, path: string, dataDir: string): StorageError {
  if (err instanceof StorageError) return err
  const cause = causeOf(err)
  if (cause.code === 'LEVEL_LOCKED') return new StorageError('STORE_LOCKED', path, 'the data dir is in use by another gpumesh process')
  if (cause.code === 'LEVEL_CORRUPTION') return new StorageError('STORE_CORRUPT', path, `the database is corrupt (${cause.message}); ${repairHint(dataDir)}`)
  if (/permission denied|read-only file system|operation not permitted/i.test(cause.message) || ['EACCES', 'EROFS', 'EPERM'].includes(cause.code ?? '')) {
    return new StorageError('STORE_NOT_WRITABLE', path, `the database cannot be written: ${cause.message}; the data dir must be writable by the user running gpumesh`)
  }
  if (/does not exist \(create_if_missing is false\)/.test(cause.message)) {
    return new StorageError('STORE_MISSING', path, `the database is gone (${cause.message}); ${repairHint(dataDir)}`)
  }
  return new StorageError('STORE_UNAVAILABLE', path, `cannot open the database: ${cause.message}`)
}

/**
 * Open a level database, turning its failures into StorageError with a clear message. With
 * `createIfMissing: false` (a data dir that has been used), a missing database is an error instead
 * of a new, empty one.
 */
export async function openLevel<V> (path: string, valueEncoding: 'json' | 'view', options: { createIfMissing?: boolean, dataDir?: string } = {}): Promise<Level<string, V>> {
  const db = new Level<string, V>(path, { valueEncoding, createIfMissing: options.createIfMissing ?? true })
  try {
    await db.open()
  } catch (err) {
    throw storageErrorOf(err, path, options.dataDir ?? join(path, '..'))
  }
  return db
}

const SECTION_NAMES: Record<keyof SectionCounts, string> = {
  requester: 'submitted jobs', provider: 'provider jobs', ledger: 'ledger entries', envelopes: 'signed envelopes'
}

/** Per-section counts as words: `34 of 35 submitted jobs, 32 of 33 ledger entries`. */
function describe (counts: SectionCounts, of: SectionCounts): string {
  return JOURNAL_SECTIONS.filter((s) => counts[s] > 0).map((s) => `${counts[s]} of ${of[s]} ${SECTION_NAMES[s]}`).join(', ')
}

function journaledBySection (check: StoreCheck): SectionCounts {
  const out: SectionCounts = { requester: 0, provider: 0, ledger: 0, envelopes: 0 }
  for (const record of check.latest.values()) out[record.s]++
  return out
}

/** The refusal for a database that lost records the journal holds. */
export function damageError (check: StoreCheck, path: string, dataDir: string): StorageError {
  const of = journaledBySection(check)
  const parts = [
    sum(check.missing) > 0 ? `missing ${describe(check.missing, of)}` : '',
    sum(check.stale) > 0 ? `older values of ${describe(check.stale, of)}` : '',
    check.altered > 0 ? `${check.altered} record(s) garbled` : '',
    check.unreadable > 0 ? `${check.unreadable} unreadable record(s) the journal has no copy of` : ''
  ].filter((p) => p !== '')
  return new StorageError('STORE_DAMAGED', path,
    `the database lost ${damagedCount(check)} of the ${check.journaled} records the journal holds (${parts.join('; ')}); refusing to start on damaged records; ${repairHint(dataDir)}`)
}

/** Compare the database with the journal, as a StorageError when the database cannot be read through. */
export async function verifyStore (db: Level<string, unknown>, journal: JournalContents, path: string, dataDir: string): Promise<StoreCheck> {
  try {
    return await checkStore(db, journal)
  } catch (err) {
    throw storageErrorOf(err, path, dataDir)
  }
}

/** The journal to keep after a passing check: the last value of every key, newer database values winning. */
export function compacted (check: StoreCheck): JournalRecord[] {
  const records = new Map(check.latest)
  for (const record of check.unjournaled) records.set(recordId(record.s, record.k), record)
  return [...records.values()]
}

/** Rewrite the journal when it holds this many more lines than keys (old values of updated records). */
const COMPACT_SLACK = 1024

export interface NodeStoreOptions {
  /** The data dir has been used (node/data-dir.ts): its database must exist. Default false. */
  mustExist?: boolean
  log?: Logger
}

export class NodeStore {
  private constructor (private readonly db: Level<string, unknown>, readonly journal: StoreJournal) {}

  /**
   * Open the database, check it against the journal and refuse (StorageError) when it lost records;
   * then heal the journal (append what it lacks, cut a torn last line, compact it) and open it for
   * appending.
   */
  static async open (dataDir: string, options: NodeStoreOptions = {}): Promise<NodeStore> {
    const path = join(dataDir, DB_DIR)
    const db = await openLevel<unknown>(path, 'json', { createIfMissing: options.mustExist !== true, dataDir })
    try {
      const file = journalPath(dataDir)
      const contents = await readJournal(file)
      const check = await verifyStore(db, contents, path, dataDir)
      if (damagedCount(check) > 0) throw damageError(check, path, dataDir)
      if (contents.badLines.length > 0) {
        options.log?.warn('the store journal has damaged lines; rewriting it from the database, which holds every record it could check', { file, lines: contents.badLines.slice(0, 10), count: contents.badLines.length })
      }
      if (!contents.exists && check.stored > 0) options.log?.info('no store journal yet: writing one from the database', { file, records: check.stored })
      if (contents.badLines.length > 0 || contents.records.length > 2 * check.journaled + COMPACT_SLACK || (!contents.exists && check.stored > 0)) {
        await rewriteJournal(file, compacted(check))
        return new NodeStore(db, await StoreJournal.open(file))
      }
      const journal = await StoreJournal.open(file, contents)
      await journal.append(check.unjournaled)
      return new NodeStore(db, journal)
    } catch (err) {
      await db.close().catch(() => {})
      throw err
    }
  }

  private get meta () { return this.db.sublevel<string, number>('meta', { valueEncoding: 'json' }) }

  /** The capability keys this node last announced: withdrawn at the next start if no longer wanted. */
  async announcedKeys (): Promise<string[]> {
    const keys = await this.db.sublevel<string, string[]>('meta', { valueEncoding: 'json' }).get('announcedKeys')
    return keys ?? []
  }

  async setAnnouncedKeys (keys: readonly string[]): Promise<void> {
    await this.db.sublevel<string, string[]>('meta', { valueEncoding: 'json' }).put('announcedKeys', [...keys])
  }

  /** The next capability-ad sequence number: strictly above every earlier one, across restarts. */
  async nextAdSeq (now: number): Promise<number> {
    const last = await this.meta.get('adSeq') ?? 0
    const next = Math.max(last + 1, now)
    await this.meta.put('adSeq', next)
    return next
  }

  /** The database for other components' sublevels (the market's records, node/market/store.ts). */
  get database (): Level<string, unknown> {
    return this.db
  }

  async close (): Promise<void> {
    try {
      await this.db.close()
    } finally {
      await this.journal.close()
    }
  }
}
