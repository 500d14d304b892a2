import type { LedgerEntry, LedgerView } from './views.js'

/** The `/v1/ledger` view of a node's ledger entries: newest first, with the totals. */
export function ledgerView (peerId: string, stored: readonly LedgerEntry[]): LedgerView {
  const entries = [...stored].sort((a, b) => b.updatedAt - a.updatedAt)
  const earned = entries.filter((e) => e.role === 'provider').reduce((n, e) => n + e.cumulative, 0)
  const spent = entries.filter((e) => e.role === 'requester').reduce((n, e) => n + e.cumulative, 0)
  return { peerId, earned, spent, balance: earned - spent, entries }
}
