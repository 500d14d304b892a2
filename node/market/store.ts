/**
 * What the market keeps in the node's level database (`<dataDir>/db`), so that jobs, receipts and money
 * survive a restart (DESIGN §6: both sides keep signed records):
 *
 *   market-requester/<job id>            the requester's record of a job it submitted (JSON)
 *   market-provider/<job id>/<bid cid>   the provider's record of a job it bid on (JSON)
 *   market-ledger/<award cid>            one ledger entry per award, from this node's side (JSON)
 *   market-envelopes/<payload cid>       signed envelopes: job requests, awards, statuses, receipts,
 *                                        payments, failure reports (raw bytes)
 *
 * Records are plain JSON; anything signed is kept as its envelope bytes and re-opened (historically)
 * when read, so a record is never trusted beyond what its signatures show.
 */
import type { Level } from 'level'
import type { LedgerEntry } from './views.js'

type Section = 'requester' | 'provider' | 'ledger'
type JsonSublevel = ReturnType<typeof jsonSublevel>

function jsonSublevel (db: Level<string, unknown>, name: Section) {
  return db.sublevel<string, unknown>(`market-${name}`, { valueEncoding: 'json' })
}

export class MarketStore {
  private readonly json: Record<Section, JsonSublevel>
  private readonly envelopes

  constructor (db: Level<string, unknown>) {
    this.json = { requester: jsonSublevel(db, 'requester'), provider: jsonSublevel(db, 'provider'), ledger: jsonSublevel(db, 'ledger') }
    this.envelopes = db.sublevel<string, Uint8Array>('market-envelopes', { valueEncoding: 'view' })
  }

  async put<T> (section: Section, key: string, value: T): Promise<void> {
    await this.json[section].put(key, value)
  }

  async get<T> (section: Section, key: string): Promise<T | undefined> {
    return await this.json[section].get(key) as T | undefined
  }

  /** Every record of a section, in key order. */
  async list<T> (section: Section): Promise<T[]> {
    const out: T[] = []
    for await (const value of this.json[section].values()) out.push(value as T)
    return out
  }

  async putEnvelope (cid: string, bytes: Uint8Array): Promise<void> {
    await this.envelopes.put(cid, bytes)
  }

  async getEnvelope (cid: string): Promise<Uint8Array | undefined> {
    return await this.envelopes.get(cid)
  }

  async putLedger (entry: LedgerEntry): Promise<void> {
    await this.put('ledger', entry.award, entry)
  }

  async ledger (): Promise<LedgerEntry[]> {
    return await this.list<LedgerEntry>('ledger')
  }
}
