/**
 * Churn: when each node is offline over a run's horizon, as plain data (a schedule), so the engine
 * replays it and a test reads it.
 *
 * A stable majority and a churny minority: each node is churny with probability `churnyFraction`,
 * drawn from a stream forked by the node's id (a node's schedule depends on the seed and its id
 * only, not on the other nodes). A churny node alternates online sessions and offline downtimes,
 * both Weibull. Defaults (DEFAULT_CHURN):
 * - sessions Weibull(k = 0.59, λ = 41.9 min), the fit Stutzbach & Rejaie measured for one BitTorrent
 *   swarm ("Understanding Churn in Peer-to-Peer Networks", IMC 2006; their fits across Gnutella, Kad
 *   and BitTorrent have k ≈ 0.34–0.59: most sessions last minutes, a few days);
 * - downtimes Weibull(k = 0.59, λ = 60 min): the same paper finds downtimes heavy-tailed too; the
 *   scale is an assumption (GPU owners come back within about an hour and a half on average).
 * Stable nodes stay online unless `stable` gives them sessions of their own.
 *
 * The process starts online at −warm-up (20 mean cycles before t = 0) and is clipped to
 * [0, horizon), so t = 0 finds each node in the state the alternation has settled to, not all online.
 *
 * Bursts (`withBurst`): at `at`, a fraction of the nodes online then leave together and stay away for
 * `downtimeMs` (Infinity: for good). Partitions are in partition.ts.
 */
import type { Prng } from '../harness/prng.js'
import { type Weibull, weibull, weibullMean } from './distributions.js'

/** Sessions and downtimes, ms. */
export interface ChurnProcess { session: Weibull, downtime: Weibull }

export interface ChurnParams {
  /** Chance that a node is churny (0 … 1). */
  churnyFraction: number
  churny: ChurnProcess
  /** Sessions for the stable nodes; undefined = always online. */
  stable?: ChurnProcess
}

const MINUTE = 60_000

export const DEFAULT_CHURN: Readonly<ChurnParams> = Object.freeze({
  churnyFraction: 0.2,
  churny: Object.freeze({
    session: Object.freeze({ shape: 0.59, scale: 41.9 * MINUTE }),
    downtime: Object.freeze({ shape: 0.59, scale: 60 * MINUTE })
  })
})

/** Warm-up before t = 0, in mean cycles (session + downtime). */
export const WARMUP_CYCLES = 20

/** [from, until), ms. */
export interface Interval { from: number, until: number }

export interface NodeChurn {
  node: string
  churny: boolean
  /** When the node is offline: sorted, disjoint, not touching, inside [0, horizon]. */
  offline: Interval[]
}

export interface ChurnSchedule {
  horizonMs: number
  /** In the order the nodes were given. */
  nodes: NodeChurn[]
}

export interface ChurnEvent { at: number, node: string, kind: 'leave' | 'join' }

/** A churn parameter out of range; `field` is its dotted path. */
export class InvalidChurnParamsError extends Error {
  override readonly name = 'InvalidChurnParamsError'
  readonly code = 'INVALID_CHURN_PARAMS'
  constructor (readonly field: string, message: string) {
    super(`churn.${field}: ${message}`)
  }
}

function checkWeibull (field: string, w: Weibull): void {
  for (const [name, v] of [['shape', w.shape], ['scale', w.scale]] as const) {
    if (!(Number.isFinite(v) && v > 0)) throw new InvalidChurnParamsError(`${field}.${name}`, `expected a number > 0, got ${String(v)}`)
  }
}

export function validateChurnParams (p: ChurnParams): void {
  if (!(p.churnyFraction >= 0 && p.churnyFraction <= 1)) throw new InvalidChurnParamsError('churnyFraction', `expected a number in 0 … 1, got ${String(p.churnyFraction)}`)
  checkWeibull('churny.session', p.churny.session)
  checkWeibull('churny.downtime', p.churny.downtime)
  if (p.stable !== undefined) {
    checkWeibull('stable.session', p.stable.session)
    checkWeibull('stable.downtime', p.stable.downtime)
  }
}

function checkHorizon (horizonMs: number): void {
  if (!(Number.isFinite(horizonMs) && horizonMs > 0)) throw new InvalidChurnParamsError('horizonMs', `expected a number > 0, got ${String(horizonMs)}`)
}

/** The offline intervals of one alternating process, clipped to [0, horizon). */
function alternate (p: ChurnProcess, horizonMs: number, prng: Prng): Interval[] {
  const out: Interval[] = []
  let t = -WARMUP_CYCLES * (weibullMean(p.session) + weibullMean(p.downtime))
  while (t < horizonMs) {
    t += weibull(prng, p.session)
    if (t >= horizonMs) break
    const from = t
    t += weibull(prng, p.downtime)
    if (t <= 0) continue
    const last = out.at(-1)
    // A zero-length session (a draw of exactly 0) joins the two downtimes around it.
    if (last !== undefined && from <= last.until) last.until = Math.min(horizonMs, t)
    else out.push({ from: Math.max(0, from), until: Math.min(horizonMs, t) })
  }
  return out
}

/** A churn schedule for `nodes` over [0, horizonMs) (DEFAULT_CHURN unless given). Validates first. */
export function churnSchedule (nodes: readonly string[], horizonMs: number, prng: Prng, params: ChurnParams = DEFAULT_CHURN): ChurnSchedule {
  validateChurnParams(params)
  checkHorizon(horizonMs)
  return {
    horizonMs,
    nodes: nodes.map((node) => {
      const own = prng.fork(`churn:${node}`)
      const churny = own.chance(params.churnyFraction)
      const process = churny ? params.churny : params.stable
      return { node, churny, offline: process === undefined ? [] : alternate(process, horizonMs, own) }
    })
  }
}

/** Whether `n` is online at `t` (an interval's `from` is offline, its `until` online again). */
export function isOnline (n: NodeChurn, t: number): boolean {
  let lo = 0
  let hi = n.offline.length
  while (lo < hi) {
    const mid = (lo + hi) >> 1
    if ((n.offline[mid] as Interval).until <= t) lo = mid + 1
    else hi = mid
  }
  const iv = n.offline[lo]
  return iv === undefined || t < iv.from
}

/** The nodes offline at t = 0 (they start the run away, without a leave event). */
export function offlineAtStart (s: ChurnSchedule): string[] {
  return s.nodes.filter((n) => n.offline[0]?.from === 0).map((n) => n.node)
}

/** One node's leaves and joins, in time order. */
function nodeEvents (n: NodeChurn, horizonMs: number): ChurnEvent[] {
  const out: ChurnEvent[] = []
  for (const iv of n.offline) {
    if (iv.from > 0) out.push({ at: iv.from, node: n.node, kind: 'leave' })
    if (iv.until < horizonMs) out.push({ at: iv.until, node: n.node, kind: 'join' })
  }
  return out
}

/**
 * Every leave and join inside the horizon, by time, then in node order: a leave at each offline
 * interval's start (none at 0: see offlineAtStart) and a join at its end (none at the horizon).
 * Each node's events are already in order, so they are merged through a heap of one cursor per
 * node (a million events from 10,000 nodes: no global sort).
 */
export function churnEvents (s: ChurnSchedule): ChurnEvent[] {
  const lists = s.nodes.map((n) => nodeEvents(n, s.horizonMs))
  const n = lists.length
  const next = new Uint32Array(n)
  const head = new Float64Array(n)
  const heap = new Int32Array(n)
  let size = 0
  const less = (a: number, b: number): boolean => (head[a] as number) < (head[b] as number) || (head[a] === head[b] && a < b)
  const down = (i: number): void => {
    for (;;) {
      const l = 2 * i + 1
      const r = l + 1
      let m = i
      if (l < size && less(heap[l] as number, heap[m] as number)) m = l
      if (r < size && less(heap[r] as number, heap[m] as number)) m = r
      if (m === i) return
      const t = heap[i] as number
      heap[i] = heap[m] as number
      heap[m] = t
      i = m
    }
  }
  for (let order = 0; order < n; order++) {
    const first = (lists[order] as ChurnEvent[])[0]
    if (first !== undefined) { head[order] = first.at; heap[size++] = order }
  }
  for (let i = (size >> 1) - 1; i >= 0; i--) down(i)
  const events: ChurnEvent[] = []
  while (size > 0) {
    const order = heap[0] as number
    const list = lists[order] as ChurnEvent[]
    const k = next[order] as number
    events.push(list[k] as ChurnEvent)
    next[order] = k + 1
    if (k + 1 === list.length) heap[0] = heap[--size] as number
    else head[order] = (list[k + 1] as ChurnEvent).at
    down(0)
  }
  return events
}

/** Fraction of node-time spent online over the horizon (1 = nobody ever away). */
export function availability (s: ChurnSchedule): number {
  if (s.nodes.length === 0) return 1
  let away = 0
  for (const n of s.nodes) for (const iv of n.offline) away += iv.until - iv.from
  return 1 - away / (s.nodes.length * s.horizonMs)
}

/** A churn burst: at `at`, `fraction` of the nodes online then leave, for `downtimeMs` (Infinity: for good). */
export interface ChurnBurst { at: number, fraction: number, downtimeMs: number }

/** Add `iv` to sorted, disjoint intervals, merging what it overlaps or touches. */
function union (ivs: readonly Interval[], iv: Interval): Interval[] {
  const out: Interval[] = []
  let cur = { ...iv }
  let placed = false
  for (const x of ivs) {
    if (x.until < cur.from) out.push(x)
    else if (x.from > cur.until) {
      if (!placed) { out.push(cur); placed = true }
      out.push(x)
    } else cur = { from: Math.min(cur.from, x.from), until: Math.max(cur.until, x.until) }
  }
  if (!placed) out.push(cur)
  return out
}

/**
 * `s` with a burst applied: round(fraction × online-at-`at`) of the nodes online at `at`, chosen by
 * `prng` (a partial shuffle in node order), go offline over [at, min(at + downtimeMs, horizon)).
 * Their own later leaves and joins inside that window are absorbed. Returns a new schedule.
 */
export function withBurst (s: ChurnSchedule, burst: ChurnBurst, prng: Prng): ChurnSchedule {
  if (!(Number.isFinite(burst.at) && burst.at >= 0 && burst.at < s.horizonMs)) throw new InvalidChurnParamsError('burst.at', `expected a time in [0, ${s.horizonMs}), got ${String(burst.at)}`)
  if (!(burst.fraction >= 0 && burst.fraction <= 1)) throw new InvalidChurnParamsError('burst.fraction', `expected a number in 0 … 1, got ${String(burst.fraction)}`)
  if (!(burst.downtimeMs > 0)) throw new InvalidChurnParamsError('burst.downtimeMs', `expected a number > 0 (Infinity: for good), got ${String(burst.downtimeMs)}`)
  const online = s.nodes.map((n, i) => [n, i] as const).filter(([n]) => isOnline(n, burst.at)).map(([, i]) => i)
  const take = Math.round(burst.fraction * online.length)
  for (let i = 0; i < take; i++) {
    const j = prng.int(i, online.length - 1)
    const t = online[i] as number
    online[i] = online[j] as number
    online[j] = t
  }
  const leaving = new Set(online.slice(0, take))
  const window: Interval = { from: burst.at, until: Math.min(s.horizonMs, burst.at + burst.downtimeMs) }
  return {
    horizonMs: s.horizonMs,
    nodes: s.nodes.map((n, i) => leaving.has(i) ? { ...n, offline: union(n.offline, window) } : n)
  }
}
