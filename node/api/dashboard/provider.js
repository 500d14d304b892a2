// The provider's view: earnings, fill rate of offered GPU-hours, bids won and lost, offers and jobs, track record.
import { stepChart, stackBar, meter } from './chart.js'
import { h, panel, cards, table, tag, credits, creditsAxis, gpuTime, perGpuHour, idCell, clock, duration, short } from './dom.js'

/** Cumulative earnings over time: each provider ledger entry's latest commitment at its time. */
export function earningsSeries (entries) {
  let sum = 0
  return entries.filter((e) => e.role === 'provider' && e.cumulative > 0)
    .sort((a, b) => a.updatedAt - b.updatedAt)
    .map((e) => ({ x: e.updatedAt, y: (sum += e.cumulative) }))
}

/**
 * GPU-seconds sold since this daemon started over the GPU-seconds its ad offered in that time (its GPUs ×
 * the time since start; the availability windows of the ad are not in the status API, so this is the
 * share of the whole time).
 */
export function fillRate (status, entries, now) {
  // the daemon's count (the ad's availability windows since the start), else every second since the start
  const offered = !status.selling ? 0 : status.offered !== undefined ? status.offered.gpuSeconds : status.gpus.length * Math.max(0, now - status.startedAt) / 1000
  const sold = entries.filter((e) => e.role === 'provider' && e.updatedAt >= status.startedAt).reduce((sum, e) => sum + (e.gpuSeconds ?? 0), 0)
  return { sold, offered, rate: offered > 0 ? sold / offered : 0 }
}

const OUTCOMES = ['won', 'lost', 'declined', 'withdrawn', 'pending']

function bidsPanel (bids, market) {
  if (bids !== undefined) {
    const counts = Object.fromEntries(OUTCOMES.map((o) => [o, bids.filter((b) => b.outcome === o).length]))
    const reasons = {}
    for (const b of bids) if (b.outcome === 'lost') reasons[b.reason ?? 'unexplained'] = (reasons[b.reason ?? 'unexplained'] ?? 0) + 1
    const recent = [...bids].sort((a, b) => Date.parse(b.at) - Date.parse(a.at)).slice(0, 30)
    return panel('Bids won and lost', { class: 'wide', id: 'bids' },
      stackBar(counts, { title: `the last ${bids.length} bid${bids.length === 1 ? '' : 's'} by outcome` }),
      h('p', { class: 'muted' }, Object.keys(reasons).length === 0 ? 'no bid lost' : `lost on: ${Object.entries(reasons).map(([r, n]) => `${r} ${n}`).join(', ')}`),
      table(['SENT', 'JOB', 'ASK', 'GPUS', 'OUTCOME', 'REASON', 'WINNER'], recent.map((b) => [
        clock(Date.parse(b.at)), idCell(b.job), perGpuHour(b.pricePerGpuHour), String(b.gpus), tag(b.outcome), h('td', { class: 'wrap' }, b.reason ?? ''), b.winner !== undefined ? idCell(b.winner) : ''
      ]), 'no bids sent since this daemon started'))
  }
  // without /v1/bids: the offers that ended, by final status (no per-bid reasons)
  const ended = market?.ended ?? {}
  return panel('Bids won and lost', { class: 'wide', id: 'bids' },
    stackBar({ won: ended.settled ?? 0, lost: ended.lost ?? 0, declined: ended.declined ?? 0, other: Object.entries(ended).filter(([k]) => !['settled', 'lost', 'declined'].includes(k)).reduce((n, [, v]) => n + v, 0) }, { title: 'offers that ended, by outcome' }),
    h('p', { class: 'muted' }, 'Per-bid reasons need the daemon\'s /v1/bids route, which this daemon does not serve.'))
}

/** Ended provider ledger entries by state: the signed evidence (receipts, payments, failures) peers score it by. */
/** `/v1/reputation` of this node: the evidence about it that reached it, scored by the formula every peer uses. */
function peersView (rep) {
  if (rep === undefined) return null
  const o = rep.others
  return panel('Reputation as the network\'s evidence shows it', { id: 'peers-view' },
    cards([
      ['score', rep.score.toFixed(3), rep.convicted !== undefined ? `convicted by proof ${short(rep.convicted)}` : rep.known ? `prior ${rep.prior.mean} × weight ${rep.prior.weight}` : 'no evidence yet: the prior'],
      ['peers reporting', String(o.reporters), `${o.trusted} of them trusted by this node`],
      ['good / bad evidence', `${o.ok.toFixed(2)} / ${o.failed.toFixed(2)}`, 'decayed, weighted by trust in each reporter']
    ]),
    o.top.length > 0 ? table(['REPORTER', 'TRUST', 'GOOD', 'BAD'], o.top.map((t) => [idCell(t.reporter), t.weight.toFixed(2), t.ok.toFixed(2), t.failed.toFixed(2)])) : null,
    h('p', { class: 'muted' }, 'Signed payments, failure reports and probe results about this node that reached it on the evidence topic, scored as peers score it; each peer weighs the reporters by its own trust, so its number can differ.'))
}

function trackRecord (entries) {
  const mine = entries.filter((e) => e.role === 'provider')
  const by = {}
  for (const e of mine) by[e.state] = (by[e.state] ?? 0) + 1
  const done = (by.settled ?? 0)
  const bad = (by.failed ?? 0) + (by['stopped-unpaid'] ?? 0) + (by.interrupted ?? 0)
  return panel('Reputation: the record peers score it by', { id: 'reputation' },
    cards([['awards settled', String(done)], ['failed or interrupted', String(bad)], ['requesters served', String(new Set(mine.map((e) => e.counterparty)).size)]]),
    h('p', { class: 'muted' }, 'Each peer scores this provider from the signed receipts, payments and failure evidence of these awards (its own first, others\' weighted by trust). The next panel scores the evidence about it that reached this node.'))
}

/** Jobs this provider saw and did not bid on, by reason (/metrics gpumesh_market_bids_declined_total), most first. */
export function skippedJobs (metrics) {
  const by = {}
  for (const m of metrics) if (m.name === 'gpumesh_market_bids_declined_total' && m.value > 0) by[m.labels.reason ?? '?'] = (by[m.labels.reason ?? '?'] ?? 0) + m.value
  return Object.entries(by).sort((a, b) => b[1] - a[1])
}

/** The picked run's log, as this node keeps it for the receipt (the buyer gets the same bytes). */
function runLogPanel (selected, log) {
  if (selected === undefined) return null
  return h('div', { id: 'run-log-box' },
    h('h3', {}, `Log of ${short(selected)}`, h('span', { class: 'muted' }, log.done ? ' (complete)' : ' (live)')),
    h('pre', { class: 'log', id: 'run-log' }, log.text === '' ? (log.done ? '(no output)' : '(no output yet)') : log.text),
    log.cut !== undefined ? h('p', { class: 'muted' }, `cut: ${log.cut}`) : null)
}

/** `select(job)` is called when a job row is clicked. */
export function renderProvider (data, now, { selected, log, select } = { log: { text: '', done: true } }) {
  const { status, ledger, market, bids, metrics, reputation } = data
  if (market === undefined) return [panel('Provider', { class: 'wide' }, h('p', {}, 'This daemon runs no market (a bootstrap peer): nothing to sell.'))]
  const entries = ledger?.entries ?? []
  const fill = fillRate(status, entries, now)
  const running = market.jobs.filter((j) => j.status === 'running').length
  return [
    panel('Selling', { class: 'wide', id: 'selling' },
      cards([
        ['earned', credits(ledger?.earned ?? 0)],
        ['fill rate of offered GPU-hours', `${(fill.rate * 100).toFixed(fill.rate < 0.1 ? 2 : 1)} %`, `${gpuTime(fill.sold)} sold of ${gpuTime(fill.offered)} since start`],
        ['bids out', String(market.offers), `${market.pending} waiting to be sent`],
        ['jobs running', String(running), `${market.jobs.length} awarded, not ended`],
        ['paid in full', String(market.completed)]
      ]),
      status.selling ? null : h('p', { class: 'muted' }, 'Not selling: this node has no capability ad (started with --no-sell, or no GPU).')),
    panel('Earnings over time', { id: 'earnings' }, stepChart(earningsSeries(entries), { title: 'cumulative credits earned (signed payments received)', format: creditsAxis })),
    panel('Fill rate', { id: 'fill' }, meter(fill.rate, { title: `${(fill.rate * 100).toFixed(2)} % of ${status.gpus.length} GPU${status.gpus.length === 1 ? '' : 's'} × ${duration(fill.offered / Math.max(1, status.gpus.length) * 1000)} offered (its availability windows since start) sold` })),
    bidsPanel(bids, market),
    panel('Current offers and jobs', { class: 'wide', id: 'provider-jobs' },
      table(['JOB', 'BID', 'STATUS', 'GPUS', 'PRICE', 'STARTED'], market.jobs.map((j) => h('tr', { class: `pick${j.job === selected ? ' selected' : ''}`, 'data-run': j.job, onclick: () => select?.(j.job) },
        idCell(j.job), idCell(j.bid), h('td', {}, tag(j.status)), h('td', {}, String(j.gpus.length)), h('td', {}, j.price !== undefined ? perGpuHour(j.price) : '–'), h('td', {}, clock(j.startedAt))
      )), `no awarded jobs now; ${market.offers} bid${market.offers === 1 ? '' : 's'} out`),
      runLogPanel(selected, log)),
    panel('Jobs not bid on', { id: 'skipped' },
      table(['WHY', 'JOBS'], skippedJobs(metrics).map(([reason, n]) => [h('td', { class: 'wrap' }, reason), String(n)]), 'every job seen got a bid (or none was seen)')),
    trackRecord(entries),
    peersView(reputation),
    panel('Requesters refused for their score', { id: 'refused' },
      table(['REQUESTER', 'SCORE', 'MIN', 'REASON', 'JOBS'], (market.refused ?? []).map((r) => [idCell(r.requester), r.score.toFixed(3), String(r.min), h('td', { class: 'wrap' }, r.reason), String(r.jobs)]), 'none refused'))
  ]
}
