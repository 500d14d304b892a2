/**
 * The node's own database: a `level` store in `<dataDir>/db` for what must survive a restart (today
 * the capability-ad sequence number; jobs, receipts and the ledger join it with the market). libp2p's
 * peer store and DHT records live beside it in `<dataDir>/libp2p`. The identity key is a separate
 * file. A locked or corrupt store is an error, never wiped.
 */
import { Level } from 'level'
import { join } from 'node:path'

export type StorageErrorCode = 'STORE_LOCKED' | 'STORE_CORRUPT' | 'STORE_UNAVAILABLE'

export class StorageError extends Error {
  override readonly name = 'StorageError'
  constructor (readonly code: StorageErrorCode, readonly path: string, message: string) {
    super(`${message} (${path})`)
  }
}

function causeCode (err: unknown): string | undefined {
  let e = err as { code?: string, cause?: unknown } | undefined
  for (let depth = 0; e != null && depth < 5; depth++) {
    if (e.code === 'LEVEL_LOCKED' || e.code === 'LEVEL_CORRUPTION') return e.code
    e = e.cause as typeof e
  }
  return (err as { code?: string } | undefined)?.code
}

/** Open a level database, turning its failures into StorageError with a clear message. */
export async function openLevel<V> (path: string, valueEncoding: 'json' | 'view'): Promise<Level<string, V>> {
  const db = new Level<string, V>(path, { valueEncoding })
  try {
    await db.open()
  } catch (err) {
    const code = causeCode(err)
    if (code === 'LEVEL_LOCKED') throw new StorageError('STORE_LOCKED', path, 'the data dir is in use by another gpumesh process')
    if (code === 'LEVEL_CORRUPTION') throw new StorageError('STORE_CORRUPT', path, 'the database is corrupt; move it aside to start afresh (the identity key is kept separately)')
    throw new StorageError('STORE_UNAVAILABLE', path, `cannot open the database: ${(err as Error).message}`)
  }
  return db
}

export class NodeStore {
  private constructor (private readonly db: Level<string, unknown>) {}

  static async open (dataDir: string): Promise<NodeStore> {
    return new NodeStore(await openLevel<unknown>(join(dataDir, 'db'), 'json'))
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
    await this.db.close()
  }
}
