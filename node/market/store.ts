/**
 * What the market keeps in the node's level database (`<dataDir>/db`), so that jobs, receipts and money
 * survive a restart (DESIGN §6: both sides keep signed records):
 *
 *   market-requester/<job id>            the requester's record of a job it submitted (JSON)
 *   market-provider/<job id>/<bid cid>   the provider's record of a job it bid on (JSON)
 *   market-ledger/<award cid>            one ledger entry per award, from this node's side (JSON)
 *   market-envelopes/<payload cid>       signed envelopes: job requests, awards, statuses, receipts,
 *                                        payments, failure reports (raw bytes)
 *   market-evidence-quota/<signer>       bytes of other peers' gossiped evidence kept, per signer (JSON
 *                                        number; protocol/trust/evidence-budget.ts bounds it)
 *   market-reputation/self               the requester's reputation view (protocol/trust/reputation.ts
 *                                        snapshot, JSON), so scores are the same after a restart; derived
 *                                        data, not journaled: a rebuilt database starts it empty
 *   market-reputation/requesters         the provider's view of requesters (protocol/market/requester-view.ts),
 *                                        kept the same way
 *   market-convictions/<peer id>         a provider this node convicted on a verified fraud proof: the
 *                                        proof's id (its envelope is in market-envelopes, journaled), read
 *                                        at start; not journaled itself: a rebuilt database loses it
 *   market-history/<peer id>!<key>       an index of the evidence kept about a peer, for serving it on
 *                                        /gpumesh/history/1.0.0 (protocol/trust/history.ts HistoryEntry,
 *                                        JSON; the envelope is in market-envelopes); derived, not journaled
 *
 * Records are plain JSON; anything signed is kept as its envelope bytes and re-opened (historically)
 * when read, so a record is never trusted beyond what its signatures show.
 *
 * Every write also goes to the store journal (node/store-journal.ts), after the database: the journal
 * is how a damaged database is noticed at start and rebuilt. Writes to one key are applied one at a
 * time, so the journal's last line for a key is the value the database holds.
 */
import type { Level } from 'level'
import { openMessage, type Kind, type OpenedMessage } from '../../protocol/index.js'
import type { EvidenceQuota } from '../../protocol/trust/evidence-budget.js'
import type { HistoryEntry } from '../../protocol/trust/history.js'
import { encodeJsonLine, type StoreJournal } from '../store-journal.js'
import type { LedgerEntry } from './views.js'

type Section = 'requester' | 'provider' | 'ledger'
type JsonSublevel = ReturnType<typeof jsonSublevel>

/** The database sublevel of a market section: `market-<section>`. */
export const marketSublevel = (section: Section | 'envelopes' | 'evidence-quota' | 'reputation' | 'convictions' | 'history'): string => `market-${section}`

function jsonSublevel (db: Level<string, unknown>, name: Section) {
  return db.sublevel<string, unknown>(marketSublevel(name), { valueEncoding: 'json' })
}

/** The same sublevel, written with JSON text encoded beforehand (the bytes the json encoding writes). */
function textSublevel (db: Level<string, unknown>, name: Section) {
  return db.sublevel<string, string>(marketSublevel(name), { valueEncoding: 'utf8' })
}

export class MarketStore {
  private readonly json: Record<Section, JsonSublevel>
  private readonly text: Record<Section, ReturnType<typeof textSublevel>>
  private readonly envelopes
  private readonly quota
  private readonly reputation
  private readonly convicted
  private readonly history
  /** The write in flight per key (`<section>/<key>`): the next write to that key waits for it. */
  private readonly writing = new Map<string, Promise<void>>()
  /** Envelopes already journaled (content-addressed: written once, however often they arrive). */
  private readonly journaled = new Set<string>()

  /** Without a journal (tests that need only the records), writes go to the database alone. */
  constructor (db: Level<string, unknown>, private readonly journal?: StoreJournal) {
    this.json = { requester: jsonSublevel(db, 'requester'), provider: jsonSublevel(db, 'provider'), ledger: jsonSublevel(db, 'ledger') }
    this.text = { requester: textSublevel(db, 'requester'), provider: textSublevel(db, 'provider'), ledger: textSublevel(db, 'ledger') }
    this.envelopes = db.sublevel<string, Uint8Array>(marketSublevel('envelopes'), { valueEncoding: 'view' })
    this.quota = db.sublevel<string, number>(marketSublevel('evidence-quota'), { valueEncoding: 'json' })
    this.reputation = db.sublevel<string, unknown>(marketSublevel('reputation'), { valueEncoding: 'json' })
    this.convicted = db.sublevel<string, { proof: string, at: number }>(marketSublevel('convictions'), { valueEncoding: 'json' })
    this.history = db.sublevel<string, HistoryEntry>(marketSublevel('history'), { valueEncoding: 'json' })
  }

  /** Index an envelope kept (in market-envelopes) under each peer it concerns. */
  async putHistory (peers: readonly string[], entry: HistoryEntry): Promise<void> {
    await this.history.batch([...new Set(peers)].map((peer) => ({ type: 'put' as const, key: `${peer}!${entry.key}`, value: entry })))
  }

  /** The index entries about `peer`, in key order. */
  async historyOf (peer: string): Promise<HistoryEntry[]> {
    const out: HistoryEntry[] = []
    for await (const value of this.history.values({ gt: `${peer}!`, lt: `${peer}"` })) out.push(value)
    return out
  }

  /** Keep a conviction: the proof's envelope, then the subject's entry naming it. */
  async putConviction (subject: string, proof: string, bytes: Uint8Array, at: number): Promise<void> {
    await this.putEnvelope(proof, bytes)
    await this.serially(`convictions/${subject}`, async () => { await this.convicted.put(subject, { proof, at }) })
  }

  /** Every conviction kept: subject, proof id, when. */
  async convictions (): Promise<Array<{ subject: string, proof: string, at: number }>> {
    const out: Array<{ subject: string, proof: string, at: number }> = []
    for await (const [subject, value] of this.convicted.iterator()) out.push({ subject, ...value })
    return out
  }

  /** Keep a reputation snapshot (`self`: the requester's view, `requesters`: the provider's; the last write wins). */
  async putReputation (snapshot: unknown, view: 'self' | 'requesters' = 'self'): Promise<void> {
    await this.serially(`reputation/${view}`, async () => { await this.reputation.put(view, snapshot) })
  }

  /** A reputation snapshot kept, or undefined (none yet, or a value level cannot decode). */
  async getReputation (view: 'self' | 'requesters' = 'self'): Promise<unknown> {
    try {
      return await this.reputation.get(view)
    } catch {
      return undefined
    }
  }

  /** Run `write` after the write in flight to the same key, database first, then the journal. */
  private async serially (id: string, write: () => Promise<void>): Promise<void> {
    const previous = this.writing.get(id)
    // with nothing in flight the database write is issued at once, as a plain put would be
    const next = previous === undefined ? write() : previous.catch(() => {}).then(write)
    this.writing.set(id, next)
    try {
      await next
    } finally {
      if (this.writing.get(id) === next) this.writing.delete(id)
    }
  }

  async put<T> (section: Section, key: string, value: T): Promise<void> {
    // encoded now: callers keep changing their records while a write waits its turn, and the database
    // and the journal must hold the same value
    const json = JSON.stringify(value)
    await this.serially(`${section}/${key}`, async () => {
      await this.text[section].put(key, json)
      await this.journal?.appendLines(encodeJsonLine(section, key, json))
    })
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

  async putEnvelope (cid: string, data: Uint8Array): Promise<void> {
    const bytes = data.slice()
    await this.serially(`envelopes/${cid}`, async () => {
      await this.envelopes.put(cid, bytes)
      if (this.journal === undefined || this.journaled.has(cid)) return
      await this.journal.append([{ s: 'envelopes', k: cid, b: Buffer.from(bytes).toString('base64') }])
      this.journaled.add(cid)
    })
  }

  /**
   * Keep a peer's gossiped evidence, charged to its signer. The caller has admitted it against an
   * EvidenceQuota (loaded with `loadEvidenceQuota`); the bytes used are written after the envelope,
   * so a crash between the two under-counts one message, never blocks a signer for nothing. Not
   * journaled: a database rebuilt from the journal starts its quota again.
   */
  async putEvidence (cid: string, signer: string, data: Uint8Array): Promise<void> {
    await this.putEnvelope(cid, data)
    await this.serially(`evidence-quota/${signer}`, async () => {
      const used = (await this.quota.get(signer)) ?? 0
      await this.quota.put(signer, used + data.byteLength)
    })
  }

  /** Charge `quota` with the evidence already kept, signer by signer. */
  async loadEvidenceQuota (quota: EvidenceQuota): Promise<void> {
    for await (const [signer, bytes] of this.quota.iterator()) quota.load(signer, bytes)
  }

  async getEnvelope (cid: string): Promise<Uint8Array | undefined> {
    return await this.envelopes.get(cid)
  }

  /**
   * A kept envelope of `kind`, opened as stored evidence is (signature and schema checked, not its
   * freshness); undefined when it is not kept or does not open (`onBad` is told why).
   */
  async openEnvelope<K extends Kind> (cid: string | undefined, kind: K, now: number, onBad?: (err: unknown) => void): Promise<OpenedMessage<K> | undefined> {
    const bytes = cid === undefined ? undefined : await this.getEnvelope(cid)
    if (bytes === undefined) return undefined
    try {
      return openMessage(bytes, kind, { now, historical: true })
    } catch (err) {
      onBad?.(err)
      return undefined
    }
  }

  async putLedger (entry: LedgerEntry): Promise<void> {
    await this.put('ledger', entry.award, entry)
  }

  async ledger (): Promise<LedgerEntry[]> {
    return await this.list<LedgerEntry>('ledger')
  }
}
