/**
 * The store journal: `<dataDir>/journal.log`, an append-only copy of every market record written to
 * the level database, so a damaged database is noticed at start and can be rebuilt (`gpumesh repair`).
 * LevelDB skips garbled log records and drops tables it cannot find without a word, and its paranoid
 * checks are not exposed by classic-level: the integrity check has to be the application's own.
 *
 * One line per write: `<crc32 of the JSON, 8 hex digits> <JSON>\n`, the JSON being
 * `{"s":section,"k":key,"v":value}` (JSON records) or `{"s":"envelopes","k":cid,"b":base64}` (signed
 * envelope bytes). The last line for a key holds its current value. Writes go to the database first
 * and to the journal after, so a crash between the two leaves a record the journal lacks (healed at
 * the next start) and never a journal record the database does not hold. A crash in the middle of an
 * append leaves a torn last line: normal, cut off before the next append. A bad line anywhere else is
 * damage. Appends are not fsynced, like the database's own writes (both survive a process crash, not
 * a power cut).
 */
import { constants } from 'node:fs'
import { open, readFile, rename, truncate, type FileHandle } from 'node:fs/promises'
import { join } from 'node:path'
import { crc32 } from 'node:zlib'

export const JOURNAL_FILE = 'journal.log'

export function journalPath (dataDir: string): string {
  return join(dataDir, JOURNAL_FILE)
}

/** The market's sections kept in the journal (node/market/store.ts holds them in the database). */
export type JournalSection = 'requester' | 'provider' | 'ledger' | 'envelopes'
export const JOURNAL_SECTIONS: readonly JournalSection[] = ['requester', 'provider', 'ledger', 'envelopes']

/** One write: a JSON record (`v`) or envelope bytes (`b`, base64). */
export interface JournalRecord {
  s: JournalSection
  k: string
  v?: unknown
  b?: string
}

function checksum (json: string): string {
  return crc32(json).toString(16).padStart(8, '0')
}

export function encodeLine (record: JournalRecord): string {
  const json = JSON.stringify(record)
  return `${checksum(json)} ${json}\n`
}

/** The line of a JSON record whose value is already encoded (the same text as `encodeLine`). */
export function encodeJsonLine (section: JournalSection, key: string, valueJson: string): string {
  const json = `{"s":${JSON.stringify(section)},"k":${JSON.stringify(key)},"v":${valueJson}}`
  return `${checksum(json)} ${json}\n`
}

function decodeLine (line: string): JournalRecord | undefined {
  if (line.length < 10 || line[8] !== ' ') return undefined
  const json = line.slice(9)
  if (checksum(json) !== line.slice(0, 8)) return undefined
  let record: JournalRecord
  try {
    record = JSON.parse(json) as JournalRecord
  } catch {
    return undefined
  }
  if (!JOURNAL_SECTIONS.includes(record.s) || typeof record.k !== 'string') return undefined
  if (record.s === 'envelopes' ? typeof record.b !== 'string' : !('v' in record)) return undefined
  return record
}

export interface JournalContents {
  /** Whether the file exists. */
  exists: boolean
  /** The good records, in write order. */
  records: JournalRecord[]
  /** Line numbers (1-based) of bad lines before the last one: damage, not a crash. */
  badLines: number[]
  /** Bytes up to the end of the last good line; a torn last line lies beyond it. */
  goodBytes: number
  /** True when the last line is torn (no newline, or a bad checksum): what a crash mid-append leaves. */
  tornTail: boolean
  totalBytes: number
}

/** Read and check the journal (read-only). */
export async function readJournal (path: string): Promise<JournalContents> {
  let bytes: Buffer
  try {
    bytes = await readFile(path)
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return { exists: false, records: [], badLines: [], goodBytes: 0, tornTail: false, totalBytes: 0 }
    throw err
  }
  const records: JournalRecord[] = []
  const badLines: number[] = []
  let offset = 0
  let goodBytes = 0
  let tornTail = false
  let lineNo = 0
  while (offset < bytes.byteLength) {
    lineNo++
    const end = bytes.indexOf(0x0a, offset)
    const last = end === -1 || end === bytes.byteLength - 1
    const record = end === -1 ? undefined : decodeLine(bytes.toString('utf8', offset, end))
    if (record !== undefined) {
      records.push(record)
      goodBytes = end + 1
    } else if (last) {
      tornTail = true
    } else {
      badLines.push(lineNo)
      goodBytes = end + 1
    }
    if (end === -1) break
    offset = end + 1
  }
  return { exists: true, records, badLines, goodBytes, tornTail, totalBytes: bytes.byteLength }
}

/** The journal open for appending. One per data dir, held by the daemon beside the database. */
export class StoreJournal {
  private constructor (private readonly handle: FileHandle, readonly path: string) {}

  /** Open for appending, first cutting off a torn last line (so the next line starts clean). */
  static async open (path: string, contents?: JournalContents): Promise<StoreJournal> {
    const read = contents ?? await readJournal(path)
    if (read.tornTail) await truncate(path, read.goodBytes)
    const handle = await open(path, constants.O_WRONLY | constants.O_APPEND | constants.O_CREAT, 0o600)
    return new StoreJournal(handle, path)
  }

  async append (records: readonly JournalRecord[]): Promise<void> {
    if (records.length === 0) return
    await this.appendLines(records.map(encodeLine).join(''))
  }

  /** Append lines made by encodeLine or encodeJsonLine. */
  async appendLines (lines: string): Promise<void> {
    await this.handle.write(lines)
  }

  async close (): Promise<void> {
    await this.handle.close()
  }
}

/** Replace the journal with `records` atomically (temp file, fsync, rename): compaction and repair. */
export async function rewriteJournal (path: string, records: Iterable<JournalRecord>): Promise<number> {
  const tmp = `${path}.${process.pid}.tmp`
  const handle = await open(tmp, constants.O_WRONLY | constants.O_CREAT | constants.O_TRUNC, 0o600)
  let count = 0
  try {
    let chunk = ''
    for (const record of records) {
      chunk += encodeLine(record)
      count++
      if (chunk.length > 1 << 20) {
        await handle.write(chunk)
        chunk = ''
      }
    }
    await handle.write(chunk)
    await handle.sync()
  } finally {
    await handle.close()
  }
  await rename(tmp, path)
  return count
}
