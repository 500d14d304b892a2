// The local API, asked with the bearer token the login link carried.

export class AuthError extends Error {}

export class Api {
  constructor (token) { this.token = token }

  /** GET `path`: JSON (or text for /metrics); undefined on 404 (a route this node does not serve, or no such item). */
  async get (path, query = {}) {
    const url = new URL(path, location.origin)
    for (const [k, v] of Object.entries(query)) if (v !== undefined) url.searchParams.set(k, String(v))
    const res = await fetch(url, { headers: { authorization: `Bearer ${this.token}` }, cache: 'no-store' })
    if (res.status === 401) throw new AuthError('the daemon refused the token (HTTP 401)')
    if (res.status === 404) return undefined
    const text = await res.text()
    if (!res.ok) {
      let message = text
      try { message = JSON.parse(text).error?.message ?? text } catch {}
      throw new Error(`${path}: HTTP ${res.status}: ${message}`)
    }
    return (res.headers.get('content-type') ?? '').includes('json') ? JSON.parse(text) : text
  }
}

/** Prometheus text → [{ name, labels: {k: v}, value }] (enough for counters and gauges). */
export function parseMetrics (text) {
  const out = []
  for (const line of String(text ?? '').split('\n')) {
    const m = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})?\s+(\S+)/.exec(line)
    if (m === null || line.startsWith('#')) continue
    const labels = {}
    for (const l of (m[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)) labels[l[1]] = l[2]
    out.push({ name: m[1], labels, value: Number(m[3]) })
  }
  return out
}
