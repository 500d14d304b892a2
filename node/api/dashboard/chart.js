// Small SVG charts drawn here (no library, so the page works offline under a strict CSP).
import { s, h } from './dom.js'

const W = 640
const WIDE = 1200
const H = 200
const PAD = { left: 64, right: 12, top: 10, bottom: 24 }

/** Round tick values from 0 up to the first at or above `max` (about `count` steps). */
export function ticks (max, count = 4) {
  if (!(max > 0)) return [0, 1]
  const raw = max / count
  const step = [1, 2, 2.5, 5, 10].map((m) => m * 10 ** Math.floor(Math.log10(raw))).find((x) => x >= raw) ?? raw
  const out = [0]
  while (out[out.length - 1] < max) out.push(out.length * step)
  return out
}

/**
 * A step line over time: `points` [{ x: ms, y }] sorted by x; `format(y, step)` labels the y axis (`step`: the
 * tick spacing, for the precision). With no point it says so instead. `wide`: drawn for a full-width panel.
 */
export function stepChart (points, { title, format = String, empty = 'no data yet', wide = false }) {
  const W = wide ? WIDE : 640
  const svg = s('svg', { class: 'chart', viewBox: `0 0 ${W} ${H}`, role: 'img', 'aria-label': title })
  if (points.length === 0) {
    svg.append(s('text', { class: 'empty', x: W / 2, y: H / 2, 'text-anchor': 'middle' }, empty))
    return h('figure', {}, svg, h('figcaption', {}, title))
  }
  const x0 = points[0].x
  const x1 = Math.max(points[points.length - 1].x, x0 + 1000)
  const yTicks = ticks(Math.max(...points.map((p) => p.y)))
  const yMax = yTicks[yTicks.length - 1] || 1
  const step = yTicks[1] ?? 1
  const px = (x) => PAD.left + (x - x0) / (x1 - x0) * (W - PAD.left - PAD.right)
  const py = (y) => H - PAD.bottom - y / yMax * (H - PAD.top - PAD.bottom)
  for (const t of yTicks) {
    svg.append(s('line', { class: 'grid', x1: PAD.left, x2: W - PAD.right, y1: py(t), y2: py(t) }))
    svg.append(s('text', { x: PAD.left - 6, y: py(t) + 4, 'text-anchor': 'end' }, format(t, step)))
  }
  svg.append(s('line', { class: 'axis', x1: PAD.left, x2: W - PAD.right, y1: py(0), y2: py(0) }))
  for (const [x, anchor] of [[x0, 'start'], [x1, 'end']]) {
    svg.append(s('text', { x: px(x), y: H - 6, 'text-anchor': anchor }, new Date(x).toISOString().slice(11, 19)))
  }
  let d = `M${px(x0)},${py(0)}`
  for (const p of points) d += `H${px(p.x)}V${py(p.y)}`
  d += `H${px(x1)}`
  svg.append(s('path', { class: 'area', d: `${d}V${py(0)}Z` }))
  svg.append(s('path', { class: 'line', d }))
  for (const p of points) {
    svg.append(s('circle', { class: 'dot', cx: px(p.x), cy: py(p.y), r: 3 }, s('title', {}, `${new Date(p.x).toISOString()}: ${format(p.y, step / 100)}`)))
  }
  return h('figure', {}, svg, h('figcaption', {}, title))
}

/** One horizontal bar split by `counts` ({ won: 3, lost: 1 }), each part classed by its key, with a legend. */
export function stackBar (counts, { title }) {
  const entries = Object.entries(counts).filter(([, n]) => n > 0)
  const total = entries.reduce((sum, [, n]) => sum + n, 0)
  const svg = s('svg', { class: 'chart', viewBox: `0 0 ${W} 28`, role: 'img', 'aria-label': title })
  if (total === 0) svg.append(s('text', { class: 'empty', x: W / 2, y: 18, 'text-anchor': 'middle' }, 'none yet'))
  let x = 0
  for (const [key, n] of entries) {
    const w = n / total * W
    svg.append(s('rect', { class: key, x, y: 2, width: w, height: 24 }, s('title', {}, `${key}: ${n}`)))
    x += w
  }
  const legend = h('div', { class: 'legend' }, entries.map(([key, n]) => h('span', {}, h('span', { class: `swatch ${key}` }), `${key} ${n}`)))
  return h('figure', {}, svg, legend, h('figcaption', {}, title))
}

/** A 0..1 meter. */
export function meter (fraction, { title }) {
  const f = Math.min(1, Math.max(0, Number.isFinite(fraction) ? fraction : 0))
  return h('figure', {},
    s('svg', { class: 'chart', viewBox: `0 0 ${W} 20`, role: 'img', 'aria-label': title },
      s('rect', { class: 'meter-bg', x: 0, y: 0, width: W, height: 20 }),
      s('rect', { class: 'meter', x: 0, y: 0, width: f * W, height: 20 })),
    h('figcaption', {}, title))
}
