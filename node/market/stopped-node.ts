/**
 * The market's records read straight from the data dir of a node whose daemon is not running, so
 * `gpumesh ledger` and `gpumesh job list` work on a stopped node. The database is single-writer: it
 * is opened only when no process holds its lock (STORE_LOCKED otherwise: ask the daemon instead), it
 * is checked against the journal like at start, and nothing is written to it or to the journal.
 * Records show as last written: a job or ledger entry left in flight shows its last state (the
 * daemon marks it interrupted at its next start).
 */
import { join } from 'node:path'
import { loadIdentity } from '../keystore.js'
import { openMessage } from '../../protocol/index.js'
import { inspectDataDir, missingDatabase } from '../data-dir.js'
import { damagedCount } from '../store-check.js'
import { journalPath, readJournal } from '../store-journal.js'
import { DB_DIR, damageError, openLevel, verifyStore } from '../storage.js'
import { ledgerView } from './ledger-view.js'
import { jobView, type JobRecord } from './requester-views.js'
import { MarketStore } from './store.js'
import type { JobView, LedgerView } from './views.js'

export interface StoppedNodeRecords {
  ledger: LedgerView
  /** Jobs submitted from this node, newest first (as `/v1/jobs`). */
  jobs: JobView[]
  /** The database read, or undefined when the node never started (no records yet). */
  database?: string
}

export async function readStoppedNode (dataDir: string, now: number): Promise<StoppedNodeRecords> {
  const state = await inspectDataDir(dataDir)
  const peerId = state.marker?.peerId ?? (await loadIdentity(dataDir)).peerId
  if (state.db !== 'present') {
    if (state.used) throw missingDatabase(dataDir, state)
    return { ledger: ledgerView(peerId, []), jobs: [] }
  }
  const path = join(dataDir, DB_DIR)
  const db = await openLevel<unknown>(path, 'json', { createIfMissing: false, dataDir })
  try {
    const check = await verifyStore(db, await readJournal(journalPath(dataDir)), path, dataDir)
    if (damagedCount(check) > 0) throw damageError(check, path, dataDir)
    const store = new MarketStore(db)
    const jobs: JobView[] = []
    for (const record of await store.list<JobRecord>('requester')) {
      const bytes = await store.getEnvelope(record.request)
      if (bytes === undefined) continue
      try {
        jobs.push(jobView(record, openMessage(bytes, 'job-request', { now, historical: true }).payload, record.state))
      } catch {
        // the daemon skips a stored request that does not open, too (requester.ts load)
      }
    }
    jobs.sort((a, b) => b.submittedAt - a.submittedAt)
    return { ledger: ledgerView(peerId, await store.ledger()), jobs, database: path }
  } finally {
    await db.close()
  }
}
