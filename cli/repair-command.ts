/**
 * `gpumesh repair`: move a damaged database aside and rebuild it from the store journal
 * (node/repair.ts), printing what it restored. Refuses while a daemon runs on the data dir.
 */
import type { Command } from 'commander'
import { repairDataDir } from '../node/repair.js'
import { JOURNAL_SECTIONS } from '../node/store-journal.js'
import { dataDirOf } from './context.js'
import { toJson } from './format.js'
import { out } from './job-commands.js'

const NAMES = { requester: 'submitted jobs', provider: 'provider jobs', ledger: 'ledger entries', envelopes: 'signed envelopes' }

export async function repairCommand (command: Command): Promise<void> {
  const { json, force } = command.opts<{ json?: boolean, force?: boolean }>()
  const report = await repairDataDir(dataDirOf(command), { force: force === true })
  if (json === true) return out(toJson(report))
  if (report.intact) return out(`the database in ${report.dataDir} matches its journal (${report.records} records): nothing to repair`)
  const restored = JOURNAL_SECTIONS.filter((s) => report.restored[s] > 0).map((s) => `${report.restored[s]} ${NAMES[s]}`)
  out([
    ...(report.movedAside !== undefined ? [`moved the damaged database to ${report.movedAside} (kept; delete it once you are satisfied)`] : []),
    report.salvage === 'none'
      ? `nothing could be read from the old database${report.openError !== undefined ? ` (${report.openError})` : ''}`
      : `carried over ${report.salvaged} readable entries from the old database (${report.salvage === 'opened' ? 'opened as it was' : 'through LevelDB\'s repairer'})`,
    `restored from the journal: ${restored.length > 0 ? restored.join(', ') : 'nothing (the old database held every journaled record)'}`,
    ...(report.dropped > 0 ? [`left out ${report.dropped} garbled record(s) the journal has no copy of`] : []),
    ...(report.journalBadLines > 0 ? [`the journal had ${report.journalBadLines} damaged line(s); their records could not be restored from it`] : []),
    `the rebuilt database holds ${report.records} market records; the journal was rewritten to match`
  ].join('\n'))
}
