/**
 * The data dir: where a node keeps its identity, database, journal and config (README "What is kept
 * in the data dir"), and the checks that keep a damaged one from being mistaken for a new one.
 *
 * `<dataDir>/datadir.json` is written at the first start: `{format, peerId, createdAt}`. Once it is
 * there (or once `db/` or the journal holds anything), the data dir has been used: a missing identity key is never
 * replaced by a new one (that would orphan the node's reputation, jobs and ledger), a key of another
 * peer id is refused, and a missing database is never created afresh.
 */
import { constants } from 'node:fs'
import { access, mkdir, open, readFile, readdir, rename, stat } from 'node:fs/promises'
import { homedir } from 'node:os'
import { join, resolve } from 'node:path'
import { Identity } from '../crypto/index.js'
import { KeyFileError, identityPath, loadIdentity, saveIdentity } from './keystore.js'
import { generateIdentity } from './random.js'
import { DB_DIR, StorageError, repairHint } from './storage.js'
import { journalPath } from './store-journal.js'

/** Where a node keeps its identity, database and config, unless told otherwise. */
export function defaultDataDir (env: NodeJS.ProcessEnv = process.env): string {
  const fromEnv = env.GPUMESH_DATA_DIR
  if (fromEnv !== undefined && fromEnv !== '') return resolve(fromEnv)
  return join(homedir(), '.gpumesh')
}

export const MARKER_FILE = 'datadir.json'
export const DATA_DIR_FORMAT = 1

export interface DataDirMarker {
  format: number
  /** The identity whose records the data dir holds. */
  peerId: string
  createdAt: number
}

export type DataDirErrorCode = 'IDENTITY_MISSING' | 'IDENTITY_MISMATCH' | 'MARKER_CORRUPT' | 'FORMAT_UNSUPPORTED' | 'NOT_WRITABLE'

/** The data dir cannot be used as it is; nothing in it was changed. */
export class DataDirError extends Error {
  override readonly name = 'DataDirError'
  constructor (readonly code: DataDirErrorCode, readonly path: string, message: string) {
    super(`${message} (${path})`)
  }
}

/** `db/`: absent, an empty folder, a database (CURRENT present), or files without CURRENT (damaged). */
export type DbState = 'absent' | 'empty' | 'present' | 'headless'

export interface DataDirState {
  marker?: DataDirMarker
  db: DbState
  /** A marker, a database that holds anything, or a journal: its records belong to an identity already. */
  used: boolean
}

export async function readMarker (dataDir: string): Promise<DataDirMarker | undefined> {
  const path = join(dataDir, MARKER_FILE)
  let text: string
  try {
    text = await readFile(path, 'utf8')
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined
    throw err
  }
  let marker: DataDirMarker
  try {
    marker = JSON.parse(text) as DataDirMarker
  } catch {
    throw new DataDirError('MARKER_CORRUPT', path, `${MARKER_FILE} is not valid JSON; restore it from a backup (it names the peer id this data dir belongs to)`)
  }
  if (typeof marker !== 'object' || marker === null || typeof marker.peerId !== 'string' || typeof marker.format !== 'number' || typeof marker.createdAt !== 'number') {
    throw new DataDirError('MARKER_CORRUPT', path, `${MARKER_FILE} lacks format, peerId or createdAt; restore it from a backup`)
  }
  if (marker.format > DATA_DIR_FORMAT) {
    throw new DataDirError('FORMAT_UNSUPPORTED', path, `this data dir has format ${marker.format}, written by a newer gpumesh; this one reads format ${DATA_DIR_FORMAT}`)
  }
  return marker
}

async function dbState (dataDir: string): Promise<DbState> {
  let files: string[]
  try {
    files = await readdir(join(dataDir, DB_DIR))
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return 'absent'
    throw err
  }
  if (files.includes('CURRENT')) return 'present'
  // LOCK and LOG are what a failed open leaves behind; anything else is a database's content
  return files.some((f) => f !== 'LOCK' && f !== 'LOG' && f !== 'LOG.old') ? 'headless' : 'empty'
}

async function hasJournal (dataDir: string): Promise<boolean> {
  try {
    return (await stat(journalPath(dataDir))).size > 0
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return false
    throw err
  }
}

export async function inspectDataDir (dataDir: string): Promise<DataDirState> {
  const marker = await readMarker(dataDir)
  const db = await dbState(dataDir)
  const used = marker !== undefined || db === 'present' || db === 'headless' || await hasJournal(dataDir)
  return { ...(marker !== undefined ? { marker } : {}), db, used }
}

/**
 * The data dir's identity: loaded; created only when the data dir has never been used. Throws
 * DataDirError when the key is missing from a used data dir or is not the marker's peer id, and
 * KeyFileError for a corrupt or too-open key.
 */
export async function dataDirIdentity (dataDir: string, state?: DataDirState): Promise<{ identity: Identity, created: boolean, state: DataDirState }> {
  const known = state ?? await inspectDataDir(dataDir)
  let identity: Identity
  let created = false
  try {
    identity = await loadIdentity(dataDir)
  } catch (err) {
    if (!(err instanceof KeyFileError) || err.code !== 'KEY_FILE_MISSING') throw err
    if (known.used) {
      throw new DataDirError('IDENTITY_MISSING', identityPath(dataDir),
        `the identity key is missing, but this data dir holds the records of ${known.marker?.peerId ?? 'an earlier identity'}; ` +
        'refusing to make a new identity, which would orphan its reputation, jobs and ledger. Restore identity.key from a backup, ' +
        `or, to start over as a new identity, move the whole data dir aside (e.g. \`mv ${dataDir} ${dataDir}.old\`)`)
    }
    identity = generateIdentity()
    await saveIdentity(dataDir, identity)
    created = true
  }
  if (known.marker !== undefined && known.marker.peerId !== identity.peerId) {
    throw new DataDirError('IDENTITY_MISMATCH', identityPath(dataDir),
      `the identity key is ${identity.peerId}, but this data dir holds the records of ${known.marker.peerId}; ` +
      'put back that identity\'s identity.key, or use another data dir for this key')
  }
  return { identity, created, state: known }
}

/**
 * What the daemon does before it opens its database: check that the data dir is writable, load (or,
 * in a new data dir, create) the identity, and refuse a used data dir whose database is gone.
 */
export async function openDataDir (dataDir: string): Promise<{ identity: Identity, state: DataDirState }> {
  await mkdir(dataDir, { recursive: true, mode: 0o700 })
  try {
    await access(dataDir, constants.W_OK)
  } catch (err) {
    throw new DataDirError('NOT_WRITABLE', dataDir,
      `the data dir is not writable (${(err as NodeJS.ErrnoException).code ?? 'error'}${process.getuid !== undefined ? ` for uid ${process.getuid()}` : ''}); gpumesh writes its database, journal and API token there`)
  }
  const { identity, state } = await dataDirIdentity(dataDir)
  if (state.used && state.db !== 'present') throw missingDatabase(dataDir, state)
  return { identity, state }
}

/** The refusal for a used data dir whose database is gone (all of `db/`, or its CURRENT file). */
export function missingDatabase (dataDir: string, state: DataDirState): StorageError {
  const since = state.marker !== undefined
    ? `since ${new Date(state.marker.createdAt).toISOString()} (${MARKER_FILE})`
    : state.db === 'headless' ? `(${DB_DIR}/ holds files)` : '(the journal holds records)'
  return new StorageError('STORE_MISSING', join(dataDir, DB_DIR),
    `the database is missing (${state.db === 'headless' ? `no ${DB_DIR}/CURRENT` : `no ${DB_DIR}/`}) in a data dir in use ${since}; ` +
    `refusing to start on an empty database; ${repairHint(dataDir)}`)
}

/** Write the marker (atomically; once). */
export async function writeMarker (dataDir: string, peerId: string, now: number): Promise<DataDirMarker> {
  const marker: DataDirMarker = { format: DATA_DIR_FORMAT, peerId, createdAt: now }
  const path = join(dataDir, MARKER_FILE)
  const tmp = `${path}.${process.pid}.tmp`
  const handle = await open(tmp, constants.O_WRONLY | constants.O_CREAT | constants.O_TRUNC, 0o644)
  try {
    await handle.writeFile(`${JSON.stringify(marker)}\n`)
    await handle.sync()
  } finally {
    await handle.close()
  }
  await rename(tmp, path)
  return marker
}
