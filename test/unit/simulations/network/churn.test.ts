import assert from 'node:assert/strict'
import { Prng } from '../../../../simulations/harness/prng.js'
import { type ChurnParams, type ChurnSchedule, DEFAULT_CHURN, InvalidChurnParamsError, availability, churnEvents, churnSchedule, isOnline, offlineAtStart, withBurst } from '../../../../simulations/network/churn.js'
import { weibullMean } from '../../../../simulations/network/distributions.js'

const HOUR = 3_600_000
const DAY = 24 * HOUR
const nodes = (n: number): string[] => Array.from({ length: n }, (_, i) => `n${String(i).padStart(5, '0')}`)

/** Each node's events alternate, leave first unless it starts offline, all inside (0, horizon). */
function checkAlternation (s: ChurnSchedule): void {
  const away = new Set(offlineAtStart(s))
  const online = new Map(s.nodes.map((n) => [n.node, !away.has(n.node)]))
  let last = 0
  for (const e of churnEvents(s)) {
    assert.ok(e.at > 0 && e.at < s.horizonMs, `event at ${e.at}`)
    assert.ok(e.at >= last, 'events sorted by time')
    last = e.at
    const was = online.get(e.node)
    assert.equal(was, e.kind === 'leave', `${e.node} ${e.kind} at ${e.at} while ${was === true ? 'online' : 'offline'}`)
    online.set(e.node, e.kind === 'join')
  }
  for (const n of s.nodes) {
    for (let i = 0; i < n.offline.length; i++) {
      const iv = n.offline[i]!
      assert.ok(iv.from >= 0 && iv.until <= s.horizonMs && iv.from < iv.until, `${n.node} [${iv.from}, ${iv.until})`)
      if (i > 0) assert.ok(n.offline[i - 1]!.until < iv.from, `${n.node}: intervals disjoint and not touching`)
    }
  }
}

describe('simulations/network churn', () => {
  it('alternates sessions and downtimes, with nothing outside the horizon', () => {
    const s = churnSchedule(nodes(500), 3 * DAY, new Prng('alt'))
    checkAlternation(s)
    assert.ok(churnEvents(s).length > 1000, 'the churny nodes do churn')
  })

  it('makes about churnyFraction of the nodes churny; the stable ones never leave', () => {
    const n = 4000
    const s = churnSchedule(nodes(n), DAY, new Prng('fraction'), { ...DEFAULT_CHURN, churnyFraction: 0.2 })
    const churny = s.nodes.filter((x) => x.churny).length
    // Binomial(4000, 0.2): sd ≈ 25; 4 sd either side.
    assert.ok(Math.abs(churny - 800) < 100, String(churny))
    assert.ok(s.nodes.filter((x) => !x.churny).every((x) => x.offline.length === 0))
    for (const f of [0, 1]) {
      const edge = churnSchedule(nodes(200), DAY, new Prng('edge'), { ...DEFAULT_CHURN, churnyFraction: f })
      assert.equal(edge.nodes.filter((x) => x.churny).length, f * 200)
    }
  })

  it('keeps a churny node online about session / (session + downtime) of the time (the alternation settled by the warm-up)', () => {
    const all: ChurnParams = { ...DEFAULT_CHURN, churnyFraction: 1 }
    const s = churnSchedule(nodes(2000), 2 * DAY, new Prng('avail'), all)
    const up = weibullMean(all.churny.session)
    const expected = up / (up + weibullMean(all.churny.downtime))
    assert.ok(Math.abs(availability(s) - expected) < 0.03, `${availability(s)} vs ${expected}`)
    // At t = 0 too, not everyone online.
    const atStart = 1 - offlineAtStart(s).length / 2000
    assert.ok(Math.abs(atStart - expected) < 0.05, `${atStart} vs ${expected}`)
  })

  it('is seeded, and a node\'s schedule depends on its id only (adding nodes shifts no one)', () => {
    const a = churnSchedule(nodes(300), DAY, new Prng(11))
    assert.deepEqual(churnSchedule(nodes(300), DAY, new Prng(11)), a)
    assert.notDeepEqual(churnSchedule(nodes(300), DAY, new Prng(12)), a)
    const more = churnSchedule(nodes(600), DAY, new Prng(11))
    assert.deepEqual(more.nodes.slice(0, 300), a.nodes)
  })

  it('gives stable nodes sessions of their own when asked', () => {
    const p: ChurnParams = { ...DEFAULT_CHURN, churnyFraction: 0, stable: { session: { shape: 1, scale: 10 * HOUR }, downtime: { shape: 1, scale: HOUR } } }
    const s = churnSchedule(nodes(200), 5 * DAY, new Prng('stable'), p)
    checkAlternation(s)
    assert.ok(s.nodes.some((x) => x.offline.length > 0))
    assert.ok(availability(s) > 0.85 && availability(s) < 0.97, String(availability(s)))
  })

  it('lists events by time, then node order, with no leave at 0 and no join at the horizon', () => {
    const s: ChurnSchedule = {
      horizonMs: 100,
      nodes: [
        { node: 'b', churny: true, offline: [{ from: 0, until: 10 }, { from: 40, until: 100 }] },
        { node: 'a', churny: true, offline: [{ from: 10, until: 40 }] },
        { node: 'c', churny: false, offline: [] }
      ]
    }
    assert.deepEqual(churnEvents(s), [
      { at: 10, node: 'b', kind: 'join' },
      { at: 10, node: 'a', kind: 'leave' },
      { at: 40, node: 'b', kind: 'leave' },
      { at: 40, node: 'a', kind: 'join' }
    ])
    assert.deepEqual(offlineAtStart(s), ['b'])
    assert.deepEqual(churnEvents({ horizonMs: 1, nodes: [] }), [])
  })

  it('answers isOnline at an interval\'s edges: offline from `from`, online again at `until`', () => {
    const n = { node: 'x', churny: true, offline: [{ from: 0, until: 10 }, { from: 50, until: 60 }] }
    const at = (t: number): boolean => isOnline(n, t)
    assert.deepEqual([0, 9.9, 10, 49.9, 50, 59.9, 60, 1e9].map(at), [false, false, true, true, false, false, true, true])
    assert.equal(isOnline({ node: 'y', churny: false, offline: [] }, 5), true)
  })

  it('a burst takes exactly round(fraction × online) of the online nodes away over [at, at + downtime)', () => {
    const base = churnSchedule(nodes(1000), DAY, new Prng('burst'))
    const at = 6 * HOUR
    const online = base.nodes.filter((n) => isOnline(n, at))
    const b = withBurst(base, { at, fraction: 0.3, downtimeMs: 2 * HOUR }, new Prng('pick'))
    const hit = b.nodes.filter((n, i) => isOnline(base.nodes[i]!, at) && !isOnline(n, at))
    assert.equal(hit.length, Math.round(0.3 * online.length))
    assert.equal(b.nodes.filter((n) => !isOnline(n, at)).length, base.nodes.length - online.length + hit.length)
    for (const n of hit) {
      assert.equal(isOnline(n, at - 1e-3), isOnline(base.nodes.find((x) => x.node === n.node)!, at - 1e-3))
      assert.equal(isOnline(n, at + 2 * HOUR - 1e-3), false)
    }
    checkAlternation(b)
    // The stable ones that were hit come back exactly at at + downtime.
    assert.ok(hit.filter((n) => !n.churny).every((n) => isOnline(n, at + 2 * HOUR)))
    assert.deepEqual(withBurst(base, { at, fraction: 0.3, downtimeMs: 2 * HOUR }, new Prng('pick')), b)
  })

  it('a burst for good lasts to the horizon; fraction 0 changes nothing', () => {
    const base = churnSchedule(nodes(100), DAY, new Prng('forever'), { ...DEFAULT_CHURN, churnyFraction: 0 })
    const b = withBurst(base, { at: HOUR, fraction: 0.5, downtimeMs: Infinity }, new Prng(1))
    const gone = b.nodes.filter((n) => n.offline.length > 0)
    assert.equal(gone.length, 50)
    assert.ok(gone.every((n) => n.offline.length === 1 && n.offline[0]!.from === HOUR && n.offline[0]!.until === DAY))
    assert.equal(churnEvents(b).filter((e) => e.kind === 'join').length, 0)
    assert.deepEqual(withBurst(base, { at: HOUR, fraction: 0, downtimeMs: HOUR }, new Prng(1)), base)
  })

  it('refuses parameters out of range, naming the field', () => {
    const bad: Array<[() => unknown, string]> = [
      [() => churnSchedule(['a'], DAY, new Prng(1), { ...DEFAULT_CHURN, churnyFraction: 1.01 }), 'churnyFraction'],
      [() => churnSchedule(['a'], DAY, new Prng(1), { ...DEFAULT_CHURN, churnyFraction: Number.NaN }), 'churnyFraction'],
      [() => churnSchedule(['a'], DAY, new Prng(1), { ...DEFAULT_CHURN, churny: { ...DEFAULT_CHURN.churny, session: { shape: 0, scale: 1 } } }), 'churny.session.shape'],
      [() => churnSchedule(['a'], DAY, new Prng(1), { ...DEFAULT_CHURN, churny: { ...DEFAULT_CHURN.churny, downtime: { shape: 1, scale: -1 } } }), 'churny.downtime.scale'],
      [() => churnSchedule(['a'], 0, new Prng(1)), 'horizonMs'],
      [() => withBurst(churnSchedule(['a'], DAY, new Prng(1)), { at: DAY, fraction: 0.5, downtimeMs: 1 }, new Prng(1)), 'burst.at'],
      [() => withBurst(churnSchedule(['a'], DAY, new Prng(1)), { at: 0, fraction: -0.1, downtimeMs: 1 }, new Prng(1)), 'burst.fraction'],
      [() => withBurst(churnSchedule(['a'], DAY, new Prng(1)), { at: 0, fraction: 0.5, downtimeMs: 0 }, new Prng(1)), 'burst.downtimeMs']
    ]
    for (const [fn, field] of bad) assert.throws(fn, (e: unknown) => e instanceof InvalidChurnParamsError && e.field === field, field)
    churnSchedule(['a'], 1, new Prng(1), { ...DEFAULT_CHURN, churnyFraction: 1 })
  })
})
