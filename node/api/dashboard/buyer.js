// The buyer's view: its jobs with their state, the selected job's bids and winner, spend, and a live log.
import { stepChart } from './chart.js'
import { h, panel, cards, table, tag, credits, creditsAxis, perGpuHour, idCell, clock, short } from './dom.js'

/** Cumulative spend over time: each requester ledger entry's latest commitment at its time. */
export function spendSeries (entries) {
  let sum = 0
  return entries.filter((e) => e.role === 'requester' && e.cumulative > 0)
    .sort((a, b) => a.updatedAt - b.updatedAt)
    .map((e) => ({ x: e.updatedAt, y: (sum += e.cumulative) }))
}

const FINAL = new Set(['settled', 'failed', 'cancelled', 'expired'])

function jobPanel (job, log) {
  if (job === undefined) return panel('Job', { class: 'wide', id: 'job' }, h('p', { class: 'muted' }, 'Pick a job above.'))
  const winner = job.award?.bid
  return panel(`Job ${job.label ?? short(job.id)}`, { class: 'wide', id: 'job' },
    cards([
      ['status', tag(job.status), job.reason],
      ['winner', job.award !== undefined ? short(job.award.provider) : '–', job.award?.why],
      ['price', job.award !== undefined ? perGpuHour(job.award.price) : '–', `cap ${perGpuHour(job.maxPrice)}`],
      ['paid', credits(job.paid)],
      ['exit code', job.receipt !== undefined ? String(job.receipt.exitCode) : '–', job.receipt !== undefined ? `${job.receipt.gpuSeconds.toFixed(1)} GPU-s, outputs ${job.receipt.outputsValid ? 'checked' : 'not checked'}` : undefined]
    ]),
    h('h3', {}, `Bids (round ${job.round})`),
    table(['PROVIDER', 'PRICE', 'EFFECTIVE', 'GPU', 'REGION', 'RTT', ''], job.bids.map((b) => [
      idCell(b.provider), perGpuHour(b.price), b.effectivePrice !== undefined ? perGpuHour(b.effectivePrice) : '–', b.model, b.region,
      b.rttMs !== undefined ? `${b.rttMs} ms` : '–', b.cid === winner ? tag('won') : b.rejected !== undefined ? h('span', { class: 'muted' }, `dropped: ${b.rejected}`) : ''
    ]), job.status === 'bidding' ? 'waiting for bids' : 'no bids'),
    h('h3', {}, 'Log', log.done ? h('span', { class: 'muted' }, ' (complete)') : h('span', { class: 'muted' }, ' (live)')),
    h('pre', { class: 'log', id: 'log' }, log.text === '' ? (log.done ? '(no output)' : '(no output yet)') : log.text),
    log.cut !== undefined ? h('p', { class: 'muted' }, `cut: ${log.cut}`) : null,
    h('h3', {}, 'Events'),
    table(['TIME', 'EVENT', ''], [...job.events].reverse().slice(0, 30).map((e) => [clock(e.at), e.type, h('td', { class: 'wrap' }, e.text)])))
}

/** `select(id)` is called when a job row is clicked. */
export function renderBuyer (data, { selected, job, log, select }) {
  const { jobs, ledger } = data
  if (jobs === undefined) return [panel('Buyer', { class: 'wide' }, h('p', {}, 'This daemon runs no market (a bootstrap peer): it buys nothing.'))]
  const sorted = [...jobs].sort((a, b) => b.submittedAt - a.submittedAt)
  const live = jobs.filter((j) => !FINAL.has(j.status)).length
  const rows = sorted.map((j) => h('tr', { class: `pick${j.id === selected ? ' selected' : ''}`, 'data-job': j.id, onclick: () => select(j.id) },
    idCell(j.id), h('td', {}, j.label ?? ''), h('td', {}, tag(j.status)), h('td', {}, String(j.bids.length)),
    j.award !== undefined ? idCell(j.award.provider) : h('td', {}, '–'), h('td', {}, credits(j.paid)), h('td', {}, clock(j.submittedAt))))
  return [
    panel('Buying', { class: 'wide', id: 'buying' }, cards([
      ['spent', credits(ledger?.spent ?? 0)],
      ['jobs', String(jobs.length)],
      ['in flight', String(live)],
      ['settled', String(jobs.filter((j) => j.status === 'settled').length)],
      ['failed', String(jobs.filter((j) => j.status === 'failed' || j.status === 'expired').length)]
    ])),
    panel('Jobs', { class: 'wide', id: 'jobs' }, table(['JOB', 'LABEL', 'STATUS', 'BIDS', 'WINNER', 'PAID', 'SUBMITTED'], rows, 'no jobs submitted from this node yet (gpumesh job submit)')),
    jobPanel(job, log),
    panel('Spend over time', { class: 'wide', id: 'spend' }, stepChart(spendSeries(ledger?.entries ?? []), { title: 'cumulative credits spent (signed payments sent)', format: creditsAxis, wide: true }))
  ]
}
