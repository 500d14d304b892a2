// DOM and formatting helpers. Every string from the API goes in as text (never as HTML): job labels,
// reasons and logs come from peers.

const SVG_NS = 'http://www.w3.org/2000/svg'

function build (node, attrs, children) {
  for (const [key, value] of Object.entries(attrs ?? {})) {
    if (value === undefined || value === null || value === false) continue
    if (typeof value === 'function') node.addEventListener(key.replace(/^on/, ''), value)
    else node.setAttribute(key, String(value))
  }
  for (const child of children.flat(Infinity)) {
    if (child === undefined || child === null || child === false) continue
    node.append(child instanceof Node ? child : document.createTextNode(String(child)))
  }
  return node
}

/** An HTML element: h('td', { class: 'x' }, 'text', otherNode). */
export const h = (tag, attrs, ...children) => build(document.createElement(tag), attrs, children)

/** An SVG element. */
export const s = (tag, attrs, ...children) => build(document.createElementNS(SVG_NS, tag), attrs, children)

/** Micros (1e6 = 1 credit) as credits. */
export function credits (micros) {
  if (typeof micros !== 'number') return '–'
  const c = micros / 1e6
  return `${Math.abs(c) >= 0.01 || c === 0 ? c.toFixed(2) : c.toFixed(6)} cr`
}

/** Micros as credits for a chart axis whose ticks are `step` micros apart: as many decimals as the step needs. */
export function creditsAxis (micros, step) {
  const decimals = Math.min(6, Math.max(2, Math.ceil(-Math.log10(step / 1e6))))
  return (micros / 1e6).toFixed(decimals)
}

/** GPU-seconds, as GPU-s below six minutes, else GPU-h. */
export const gpuTime = (sec) => sec < 360 ? `${sec.toFixed(0)} GPU-s` : `${(sec / 3600).toFixed(2)} GPU-h`

/** A price in micros per GPU-hour. */
export const perGpuHour = (micros) => `${credits(micros)}/GPU-h`

/** A long id (peer id, CID) cut to its ends; the full id is in the title. */
export function short (id) {
  const text = String(id ?? '')
  return text.length <= 16 ? text : `${text.slice(0, 8)}…${text.slice(-6)}`
}

export const idCell = (id) => h('td', { title: id }, short(id))

/** UTC wall-clock time of a ms timestamp. */
export const clock = (ms) => typeof ms === 'number' ? new Date(ms).toISOString().slice(11, 19) : '–'

/** A duration in ms, short. */
export function duration (ms) {
  const sec = Math.max(0, Math.round(ms / 1000))
  if (sec < 90) return `${sec} s`
  if (sec < 5400) return `${Math.round(sec / 60)} min`
  return `${(sec / 3600).toFixed(1)} h`
}

const TONES = { settled: 'good', verified: 'good', completed: 'good', won: 'good', running: 'live', awarded: 'live', accepted: 'live', bidding: 'live', pending: 'live', failed: 'bad', lost: 'bad', 'stopped-unpaid': 'bad', expired: 'warn', cancelled: 'warn', declined: 'warn', preempted: 'warn' }

/** A status word as a coloured tag. */
export const tag = (status) => h('span', { class: `tag ${TONES[status] ?? ''}` }, status ?? '–')

/** A table with a header row; `rows` are arrays of cells (nodes or text) or <tr> nodes. */
export function table (headers, rows, empty = 'none yet') {
  if (rows.length === 0) return h('p', { class: 'muted' }, empty)
  return h('table', {},
    h('thead', {}, h('tr', {}, headers.map((x) => h('th', {}, x)))),
    h('tbody', {}, rows.map((row) => row instanceof Node ? row : h('tr', {}, row.map((cell) => cell instanceof Node && cell.nodeName === 'TD' ? cell : h('td', {}, cell))))))
}

/** A panel: <section><h2>title</h2>…</section>. */
export const panel = (title, attrs, ...children) => h('section', attrs, h('h2', {}, title), ...children)

/** A row of number cards: [[label, value, note?], …]. */
export const cards = (items) => h('div', { class: 'cards' }, items.map(([label, value, note]) =>
  h('div', { class: 'card' }, h('div', { class: 'value' }, value), h('div', { class: 'label' }, label), note !== undefined ? h('div', { class: 'muted' }, note) : null)))
