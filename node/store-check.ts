/**
 * The start-up integrity check of the node's database against the store journal
 * (node/store-journal.ts): a full read of the market's sections, compared key by key with the
 * journal's last value for each. Read-only: the daemon, `gpumesh repair` and the CLI's offline
 * readers all use it, and each decides what to do with the result.
 *
 * What it tells apart, per key the journal holds:
 * - present with the journal's last value: fine;
 * - absent: a record the database lost (a garbled or truncated write-ahead log, a lost table, a
 *   database created afresh);
 * - holding an earlier value of that key: updates the database lost (its newest writes sat in a
 *   damaged log over an older table);
 * - envelope bytes that differ: a garbled table;
 * - a JSON value the journal never held: the database is one write ahead (a crash between the
 *   database write and the journal append), which is normal; the journal is healed with it.
 * Records in the database the journal lacks (written by a version before the journal, or just
 * before a crash) are returned too, to be journaled.
 */
import { createHash } from 'node:crypto'
import type { Level } from 'level'
import { marketSublevel } from './market/store.js'
import { JOURNAL_SECTIONS, type JournalContents, type JournalRecord, type JournalSection } from './store-journal.js'

export type SectionCounts = Record<JournalSection, number>

export interface StoreCheck {
  /** Distinct keys the journal holds. */
  journaled: number
  /** Market records in the database. */
  stored: number
  /** Keys the journal holds that the database lacks. */
  missing: SectionCounts
  /** Keys where the database holds an older value than the journal's last. */
  stale: SectionCounts
  /** Envelopes whose bytes differ from the journal's, or JSON records that no longer parse. */
  altered: number
  /** Records the journal does not know that no longer parse (garbled, with no copy to restore). */
  unreadable: number
  /** Ids (`<section>/<key>`) of the records to restore from the journal: missing, stale or garbled. */
  restore: string[]
  /** Ids of the garbled records the journal has no copy of. */
  unreadableIds: string[]
  /** Records (or newer values) the database holds and the journal lacks: to be appended. */
  unjournaled: JournalRecord[]
  /** The journal's last value for each key, for a rebuild. */
  latest: Map<string, JournalRecord>
}

const zero = (): SectionCounts => ({ requester: 0, provider: 0, ledger: 0, envelopes: 0 })
const fingerprint = (data: string | Uint8Array): string => createHash('sha256').update(data).digest('base64')
export const recordId = (section: JournalSection, key: string): string => `${section}/${key}`

/** What the JSON encoding stores for a record, or the envelope's bytes. */
export function recordBytes (record: JournalRecord): string | Uint8Array {
  return record.s === 'envelopes' ? Buffer.from(record.b ?? '', 'base64') : JSON.stringify(record.v)
}

export function damagedCount (check: StoreCheck): number {
  return sum(check.missing) + sum(check.stale) + check.altered + check.unreadable
}

export function sum (counts: SectionCounts): number {
  return JOURNAL_SECTIONS.reduce((n, s) => n + counts[s], 0)
}

interface KeyHistory { last: string, earlier?: Set<string> }

/** Compare the database with the journal. Throws the database's own error when a read fails. */
export async function checkStore (db: Level<string, unknown>, journal: JournalContents): Promise<StoreCheck> {
  const history = new Map<string, KeyHistory>()
  const latest = new Map<string, JournalRecord>()
  for (const record of journal.records) {
    const id = recordId(record.s, record.k)
    const fp = fingerprint(recordBytes(record))
    const known = history.get(id)
    if (known === undefined) history.set(id, { last: fp })
    else if (known.last !== fp) {
      (known.earlier ??= new Set()).add(known.last)
      known.last = fp
    }
    latest.set(id, record)
  }
  const check: StoreCheck = { journaled: history.size, stored: 0, missing: zero(), stale: zero(), altered: 0, unreadable: 0, restore: [], unreadableIds: [], unjournaled: [], latest }
  const seen = new Set<string>()
  for (const section of JOURNAL_SECTIONS) {
    const sub = section === 'envelopes'
      ? db.sublevel<string, Uint8Array>(marketSublevel(section), { valueEncoding: 'view' })
      : db.sublevel<string, string>(marketSublevel(section), { valueEncoding: 'utf8' })
    for await (const [key, value] of sub.iterator()) {
      check.stored++
      const id = recordId(section, key)
      seen.add(id)
      const known = history.get(id)
      const fp = fingerprint(value)
      if (known !== undefined && known.last === fp) continue
      if (known?.earlier?.has(fp) === true) {
        check.stale[section]++
        check.restore.push(id)
        continue
      }
      if (known !== undefined && section === 'envelopes') {
        check.altered++
        check.restore.push(id)
        continue
      }
      if (section === 'envelopes') {
        check.unjournaled.push({ s: section, k: key, b: Buffer.from(value as Uint8Array).toString('base64') })
        continue
      }
      let parsed: unknown
      try {
        parsed = JSON.parse(value as string)
      } catch {
        // not what the JSON encoding writes: garbled in place
        if (known !== undefined) {
          check.altered++
          check.restore.push(id)
        } else {
          check.unreadable++
          check.unreadableIds.push(id)
        }
        continue
      }
      check.unjournaled.push({ s: section, k: key, v: parsed })
    }
  }
  for (const [id, record] of latest) {
    if (seen.has(id)) continue
    check.missing[record.s]++
    check.restore.push(id)
  }
  return check
}
