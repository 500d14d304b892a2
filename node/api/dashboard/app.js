// The dashboard: takes the token from the login link's fragment, then polls the local API and redraws.
import { Api, AuthError, parseMetrics } from './api.js'
import { h } from './dom.js'
import { renderProvider } from './provider.js'
import { renderBuyer } from './buyer.js'
import { renderNetwork } from './network.js'

const TOKEN_KEY = 'gpumesh-token'
const POLL_MS = 2000
/** Most log text kept in the page per job. */
const MAX_LOG_CHARS = 200_000
const VIEWS = ['provider', 'buyer', 'network']

const $ = (id) => document.getElementById(id)

/** The token from `#token=…` (then dropped from the address bar and history), else from this tab's session. */
function takeToken () {
  const match = /(?:^#|&)token=([^&]+)/.exec(location.hash)
  if (match !== null) {
    sessionStorage.setItem(TOKEN_KEY, decodeURIComponent(match[1]))
    history.replaceState(null, '', location.pathname + location.search)
  }
  return sessionStorage.getItem(TOKEN_KEY)
}

function gate (title, text) {
  $('tabs').hidden = true
  $('view').replaceChildren()
  $('problem').hidden = true
  $('gate').replaceChildren(h('h2', {}, title), h('p', {}, text),
    h('p', {}, 'Run ', h('code', {}, 'gpumesh dashboard'), ' on the machine of the daemon and open the link it prints.'))
  $('gate').hidden = false
  document.body.dataset.state = 'refused'
}

const params = new URLSearchParams(location.search)
const state = {
  view: VIEWS.includes(params.get('view')) ? params.get('view') : undefined,
  selected: undefined,
  job: undefined,
  log: { id: undefined, text: '', next: 0, done: false },
  /** The provider view's picked job (one this node runs or ran) and its log from this node's copy. */
  runSelected: undefined,
  runLog: { id: undefined, text: '', next: 0, done: false },
  connections: []
}

/** Routes this daemon answered 404 (a bootstrap peer has no market; an older daemon no /v1/bids): not asked again. */
const absent = new Set()
const optional = async (api, path) => {
  if (absent.has(path)) return undefined
  const value = await api.get(path)
  if (value === undefined) absent.add(path)
  return value
}

async function loadAll (api) {
  // alone first: a refused token is one 401, not one per route
  const status = await api.get('/v1/status')
  const [peers, ledger, market, jobs, bids, reputation, metrics] = await Promise.all([
    api.get('/v1/peers'), optional(api, '/v1/ledger'), optional(api, '/v1/market'), optional(api, '/v1/jobs'),
    optional(api, '/v1/bids').then((b) => b?.bids), optional(api, '/v1/reputation'), api.get('/metrics')
  ])
  return { status, peers: peers ?? [], ledger, market, jobs, bids, reputation, metrics: parseMetrics(metrics) }
}

/** Read `path`'s log of job `id` on from what `log` holds (a new job starts over); returns the log. */
async function follow (api, path, id, log) {
  if (log.id !== id) log = { id, text: '', next: 0, done: false }
  while (!log.done) {
    const part = await api.get(path, { id, from: log.next })
    // gone (a provider keeps a run's log only a while after it ended): what the page has is all there is
    if (part === undefined) { log.done = true; break }
    log.text = (log.text + part.text).slice(-MAX_LOG_CHARS)
    log.done = part.done
    if (part.cut !== undefined) log.cut = part.cut
    const more = part.next > log.next && part.text !== ''
    log.next = part.next
    if (!more) break
  }
  return log
}

/** The selected job's view and the log text after what the page has (a new selection starts over). */
async function loadJob (api, jobs) {
  if (state.selected === undefined && jobs !== undefined && jobs.length > 0) state.selected = [...jobs].sort((a, b) => b.submittedAt - a.submittedAt)[0].id
  if (state.selected === undefined) return
  state.job = await api.get('/v1/job', { id: state.selected })
  state.log = await follow(api, '/v1/job/logs', state.selected, state.log)
}

/** The provider's picked run (by default the newest running, else the newest held) and its log. */
async function loadRun (api, market) {
  if (market === undefined) return
  const held = market.jobs.map((j) => j.job)
  if (state.runSelected === undefined || (!held.includes(state.runSelected) && state.runLog.done)) {
    const newest = [...market.jobs].sort((a, b) => (b.startedAt ?? 0) - (a.startedAt ?? 0))
    state.runSelected = (newest.find((j) => j.status === 'running') ?? newest[0])?.job ?? state.runSelected
  }
  if (state.runSelected === undefined) return
  state.runLog = await follow(api, '/v1/market/logs', state.runSelected, state.runLog)
}

function render (data) {
  const now = Date.now()
  state.view ??= data.status.selling ? 'provider' : 'buyer'
  for (const b of document.querySelectorAll('#tabs button')) b.setAttribute('aria-pressed', String(b.dataset.view === state.view))
  $('tabs').hidden = false
  $('node').textContent = `${data.status.role} ${data.status.peerId}`
  $('updated').textContent = `updated ${new Date(now).toISOString().slice(11, 19)} UTC`
  const sections = state.view === 'provider'
    ? renderProvider(data, now, { selected: state.runSelected, log: state.runLog, select: (id) => { state.runSelected = id; void tick() } })
    : state.view === 'buyer'
      ? renderBuyer(data, { selected: state.selected, job: state.job, log: state.log, select: (id) => { state.selected = id; void tick() } })
      : renderNetwork(data, now, state.connections)
  const logBox = document.getElementById('log')
  const atBottom = logBox === null || logBox.scrollTop + logBox.clientHeight >= logBox.scrollHeight - 4
  $('view').replaceChildren(...sections)
  const newLog = document.getElementById('log')
  if (newLog !== null && atBottom) newLog.scrollTop = newLog.scrollHeight
  document.body.dataset.view = state.view
  document.body.dataset.state = 'live'
}

let api
let timer
let last
let busy = false

/** One poll and redraw, then the next in POLL_MS; a call while one runs is left to that one's next poll. */
async function tick () {
  if (busy) return
  busy = true
  clearTimeout(timer)
  try {
    const data = await loadAll(api)
    await loadJob(api, data.jobs)
    await loadRun(api, data.market)
    state.connections = [...state.connections, { x: Date.now(), y: data.status.connections }].slice(-300)
    last = data
    $('problem').hidden = true
    render(data)
  } catch (err) {
    if (err instanceof AuthError) {
      sessionStorage.removeItem(TOKEN_KEY)
      gate('Not signed in', 'The daemon refused this page\'s token (HTTP 401): it is wrong, or belongs to another data dir.')
      return
    }
    $('problem').textContent = `The daemon does not answer: ${err.message}. Retrying…`
    $('problem').hidden = false
  } finally {
    busy = false
  }
  timer = setTimeout(tick, POLL_MS)
}

for (const b of document.querySelectorAll('#tabs button')) {
  b.addEventListener('click', () => {
    state.view = b.dataset.view
    if (last !== undefined) render(last)
  })
}

const token = takeToken()
if (token === null || token === '') {
  gate('Not signed in', 'This page has no token. The dashboard opens from a login link that carries the daemon\'s API token.')
} else {
  api = new Api(token)
  void tick()
}
