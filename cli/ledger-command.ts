/**
 * `gpumesh ledger`: what this node earned as a provider and spent as a requester, from the signed
 * payment commitments the running daemon keeps (node/market/views.ts LedgerView).
 */
import type { Command } from 'commander'
import type { LedgerView } from '../node/market/views.js'
import { table, toJson } from './format.js'
import { abbrev, clientOf, credits, out } from './job-commands.js'

export async function ledgerCommand (command: Command): Promise<void> {
  const ledger = await (await clientOf(command)).get<LedgerView>('/v1/ledger')
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
