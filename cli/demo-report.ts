/**
 * What the demo prints about the market: each job's auction (bids, who did not bid and why, the
 * winner and why), its run (the requester's events), its receipt and output, and the ledgers of the
 * buyer and of every provider, with names instead of peer ids.
 */
import { readFile } from 'node:fs/promises'
import type { ApiClient } from '../node/api/client.js'
import type { FoundProvider } from '../node/discovery.js'
import type { JobEvent, JobView, LedgerView, ResultView } from '../node/market/views.js'
import { cr, whyNoBid, type DemoJob } from './demo-jobs.js'
import type { DemoProvider, Names } from './demo-network.js'
import { table } from './format.js'

const say = (text: string): void => { process.stdout.write(`${text}\n`) }
const indent = (text: string, by = '    '): string => text.split('\n').map((l) => `${by}${l}`).join('\n')

/** A bare status change (`running`/`running`) reads as `status → running` (some repeat other events); the provider concerned is named. */
function eventLine (e: JobEvent, names: Names): string | undefined {
  if (e.text === e.type) return ['awarded', 'bidding', 'verifying', 'completed', 'verified'].includes(e.type) ? undefined : `${'status'.padEnd(11)} → ${e.type}`
  const text = names.text(e.text)
  const who = e.peer !== undefined && !text.includes(names.of(e.peer)) ? ` — ${names.of(e.peer)}` : ''
  return `${e.type.padEnd(11)} ${text}${who}`
}

export interface Market {
  names: Names
  providers: DemoProvider[]
  /** Signed ads by provider name, from a DHT lookup on the buyer. */
  ads: Map<string, FoundProvider>
}

export async function printJob (api: ApiClient, job: DemoJob, view: JobView, market: Market): Promise<void> {
  const { names } = market
  say(`\n━━ ${job.label} (${view.tier}) ${job.shows}`)
  say(`   job ${view.id}`)
  const rounds = view.round > 1 ? `, round ${view.round} of ${view.round}` : ''
  say(`   bids${rounds}:`)
  if (view.bids.length === 0) say('    (none)')
  else {
    say(indent(table(['PROVIDER', 'PRICE', 'EFFECTIVE', 'GPU', 'REGION'], [...view.bids].sort((a, b) => (a.effectivePrice ?? Infinity) - (b.effectivePrice ?? Infinity)).map((b) => [
      names.of(b.provider), cr(b.price), b.effectivePrice !== undefined ? cr(b.effectivePrice) : b.rejected ?? '-', b.model, b.region
    ]))))
  }
  const bidders = new Set(view.bids.map((b) => b.provider))
  const silent = market.providers.filter((p) => !bidders.has(market.ads.get(p.name)?.peerId ?? ''))
  if (silent.length > 0) {
    say('   no bid from:')
    for (const p of silent) {
      const ad = market.ads.get(p.name)
      say(`    ${p.name.padEnd(20)}${ad === undefined ? 'its ad was not found on the DHT' : whyNoBid(job, view, ad, p, names)}`)
    }
  }
  if (view.award !== undefined) {
    say(`   winner: ${names.of(view.award.provider)} at ${cr(view.award.price)} cr/GPU-h (${view.award.paymentRule}): ${view.award.why}`)
  }
  say('   run:')
  for (const e of view.events.filter((e) => e.type !== 'bid' || view.round > 1)) {
    const line = eventLine(e, names)
    if (line !== undefined) say(`    +${((e.at - view.submittedAt) / 1000).toFixed(1).padStart(5)} s  ${line}`)
  }
  const r = view.receipt
  if (r !== undefined) {
    say(`   receipt: exit ${r.exitCode}, ${r.gpuSeconds} GPU-s on ${names.of(r.provider)}, outputs ${r.outputsValid ? 'verified (CIDs recomputed)' : 'NOT verified'}`)
    const result = await api.get<ResultView>('/v1/job/result', { id: view.id })
    for (const o of result.outputs) {
      const first = (await readFile(o.file, 'utf8').catch(() => '')).split('\n')[0] ?? ''
      say(`   output:  ${o.path} (${o.size} bytes): ${first}`)
    }
  }
  say(`   status:  ${view.status}${view.reason !== undefined ? ` (${view.reason})` : ''}, paid ${cr(view.paid)} cr`)
}

/** One line per job: where it ran, what it cost. */
export function printSummary (jobs: Array<{ job: DemoJob, view: JobView }>, names: Names): void {
  say(`\n${table(['JOB', 'TIER', 'STATUS', 'RAN ON', 'PRICE', 'GPU-S', 'PAID', 'ROUNDS'], jobs.map(({ job, view }) => [
    job.label, view.tier, view.status, names.of(view.receipt?.provider ?? view.award?.provider), view.award !== undefined ? cr(view.award.price) : '-',
    String(view.receipt?.gpuSeconds ?? '-'), cr(view.paid), String(view.round)
  ]))}`)
}

/**
 * The ledgers: the buyer's commitments and each provider's records for this run's jobs (a data dir
 * reused from an earlier run keeps that run's entries too), and whether both sides hold the same
 * amount for every award.
 */
export function printLedgers (ledgers: Array<{ name: string, ledger: LedgerView }>, labels: Map<string, string>, names: Names): void {
  say('\nledgers: the signed payment commitments each side keeps for these jobs (credits)')
  const rows: string[][] = []
  const spent = new Map<string, number>()
  const earned = new Map<string, number>()
  for (const { name, ledger } of ledgers) {
    const entries = ledger.entries.filter((e) => labels.has(e.job)).sort((a, b) => a.updatedAt - b.updatedAt)
    const sum = entries.reduce((n, e) => n + e.cumulative, 0)
    say(`  ${name.padEnd(20)} ${`${name === 'buyer' ? 'spent' : 'earned'} ${cr(sum)}`.padEnd(16)} ${entries.length} entr${entries.length === 1 ? 'y' : 'ies'}`)
    for (const e of entries) {
      rows.push([name, labels.get(e.job) ?? '', e.role === 'requester' ? `paid ${names.of(e.counterparty)}` : `paid by ${names.of(e.counterparty)}`,
        cr(e.price), String(e.gpuSeconds), cr(e.cumulative), e.state])
      ;(e.role === 'requester' ? spent : earned).set(e.award, e.cumulative)
    }
  }
  say(`\n${indent(table(['LEDGER OF', 'JOB', 'WHO', 'PRICE', 'GPU-S', 'AMOUNT', 'STATE'], rows), '  ')}`)
  const agree = [...spent].filter(([award, amount]) => earned.get(award) === amount).length
  say(`\n  buyer and providers agree on ${agree} of ${spent.size} awards`)
}
