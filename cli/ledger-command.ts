/**
 * `gpumesh ledger`: what this node earned as a provider and spent as a requester, from the signed
 * payment commitments the node keeps (node/market/views.ts LedgerView): from the running daemon, or
 * from the data dir when none runs (cli/records.ts).
 */
import type { Command } from 'commander'
import type { LedgerView } from '../node/market/views.js'
import { table, toJson } from './format.js'
import { abbrev, credits, out } from './job-commands.js'
import { recordsOf } from './records.js'

export async function ledgerCommand (command: Command): Promise<void> {
  const ledger = await recordsOf<LedgerView>(command, '/v1/ledger', (records) => records.ledger)
  if (command.opts().json === true) return out(toJson(ledger))
  out([
    `ledger of ${ledger.peerId}`,
    `  earned:  ${credits(ledger.earned)} cr`,
    `  spent:   ${credits(ledger.spent)} cr`,
    `  balance: ${credits(ledger.balance)} cr`
  ].join('\n'))
  if (ledger.entries.length === 0) return out('no entries')
  out('')
  out(table(['JOB', 'ROLE', 'COUNTERPARTY', 'PRICE', 'COMMITTED', 'OWED', 'GPU-S', 'STATE', 'UPDATED'], ledger.entries.map((e) => [
    abbrev(e.job), e.role, abbrev(e.counterparty), credits(e.price), `${credits(e.cumulative)} (#${e.seq})`,
    e.owed !== undefined ? credits(e.owed) : '-', String(e.gpuSeconds), e.state, new Date(e.updatedAt).toISOString()
  ])))
}
