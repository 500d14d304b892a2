/**
 * npm run bench:dht — provider discovery on real gpumesh daemons, and the idle cost of one.
 *
 * 1. For each network size (plus one bootstrap peer; memory transport, plaintext, yamux, memory
 *    peer store, in one process, built as test/helpers/network.ts's startNetwork builds them): how
 *    long each capability-key provide takes while the announcers place every key (timed per key),
 *    how many peers accepted each provider record, how long until every node has announced every
 *    key, and sequential provides of fresh keys on the settled network. All nodes start at once, so
 *    the start-up numbers measure one event loop running every daemon's announcer together.
 * 2. `daemon.findProviders(query)` (DHT lookup + ad fetches + filtering) from random peers over a
 *    mix of queries, checked against the providers that must answer; and the raw DHT lookup
 *    `node.contentRouting.findProviders(cid)`: time to the first provider and to completion.
 * 3. Idle daemons as separate OS processes (bench/dht-idle.ts): RSS, CPU, start and shutdown time.
 *
 * Benchmarks print numbers and targets; they never fail on a target.
 *
 * Env: BENCH_NODES="20,50", BENCH_QUERIES=100 (find-providers per size), BENCH_RAW_QUERIES=40,
 * BENCH_PROVIDES=20 (fresh-key provides per size), BENCH_PROVIDE_CONCURRENCY=1 (each node's dht.provideConcurrency, bench/in-process.ts), BENCH_ANNOUNCE_TIMEOUT_S=240, BENCH_SEED=1,
 * BENCH_IDLE=0 skips part 3; BENCH_IDLE_S, BENCH_IDLE_SETTLE_S, BENCH_IDLE_NETWORK, BENCH_IDLE_PEERS
 * (see bench/dht-idle.ts); BENCH_PROFILE=1 prints a CPU profile of the announce phase of each size
 * (bench/profile.ts) and writes it to gpumesh-dht-<n>.cpuprofile in the working directory.
 */
import '../node/polyfill.js'
import { ms, pct, printTable, rng, type Row } from './stats.js'
import { mkdtemp, rm } from 'node:fs/promises'
import { cpus, tmpdir, totalmem } from 'node:os'
import { join } from 'node:path'
import { Announcer, PROVIDE_TIMEOUT_MS as ANNOUNCER_TIMEOUT_MS } from '../node/announcer.js'
import type { Daemon } from '../node/daemon.js'
import { capabilityKeyCid, lookupKeyFor, type ProviderQuery } from '../protocol/index.js'
import { startDaemon, waitForAnnouncements, type NodeSpec, type TestNetwork } from '../test/helpers/network.js'
import { IDLE_RSS_TARGET_MB, cleanupNow, idleOptionsFromEnv, runIdle, tempRoots, type IdleRow } from './dht-idle.js'
import { CATALOG } from '../test/helpers/catalog.js'
import { report as reportProfile, startProfile } from './profile.js'
import { PROVIDE_CONCURRENCY, benchDht } from './in-process.js'

const SIZES = (process.env.BENCH_NODES ?? '20,50').split(',').map((s) => Number(s.trim())).filter((n) => n > 0)
const QUERIES = Number(process.env.BENCH_QUERIES ?? 100)
const RAW_QUERIES = Number(process.env.BENCH_RAW_QUERIES ?? 40)
const FRESH_PROVIDES = Number(process.env.BENCH_PROVIDES ?? 20)
const ANNOUNCE_TIMEOUT_MS = Number(process.env.BENCH_ANNOUNCE_TIMEOUT_S ?? 240) * 1000
const SEED = Number(process.env.BENCH_SEED ?? 1)
const IDLE = process.env.BENCH_IDLE !== '0'
const PROFILE = process.env.BENCH_PROFILE === '1'
const FIND_P95_TARGET_MS = 500
const FIND_TARGET_NODES = 50
const PROVIDE_TIMEOUT_MS = 30_000

// ---------------------------------------------------------------------------------------------
// the network: providers cycling through a fixed catalog of GPUs and regions
// ---------------------------------------------------------------------------------------------

const specsFor = (n: number): NodeSpec[] => Array.from({ length: n }, (_, i) => {
  const spec = CATALOG[i % CATALOG.length] as NodeSpec
  return { ...spec, dht: benchDht(spec.dht) }
})

interface QueryKind { name: string, query: ProviderQuery, matches: (spec: NodeSpec) => boolean }

const vramOf = (gpu: string): number => Number(/:(\d+)/.exec(gpu)?.[1])
const meets = (gpu: string, gb: number): boolean => vramOf(gpu) >= Math.floor(gb * 1024 * 0.92)
const inRegion = (spec: NodeSpec, wanted: string): boolean => spec.region === wanted || (spec.region ?? '').startsWith(`${wanted}-`)
const hasGpu = (spec: NodeSpec, test: (gpu: string) => boolean): boolean => (spec.gpus ?? []).some(test)

/** The query mix, with the rule each answer must follow written out by hand. */
const QUERY_KINDS: QueryKind[] = [
  { name: 'min VRAM 40', query: { minVramGB: 40 }, matches: (s) => hasGpu(s, (g) => meets(g, 40)) },
  { name: 'region eu', query: { region: 'eu' }, matches: (s) => inRegion(s, 'eu') },
  { name: 'region eu + VRAM 40', query: { region: 'eu', minVramGB: 40 }, matches: (s) => inRegion(s, 'eu') && hasGpu(s, (g) => meets(g, 40)) },
  { name: 'model h100', query: { gpu: 'h100' }, matches: (s) => hasGpu(s, (g) => g.startsWith('NVIDIA H100')) }
]

// ---------------------------------------------------------------------------------------------
// statistics and printing
// ---------------------------------------------------------------------------------------------





const latencyCells = (values: number[], ps: number[]): string[] => [String(values.length), ...ps.map((p) => ms(pct(values, p))), ms(Math.max(...values))]

// ---------------------------------------------------------------------------------------------
// instrumentation only (no behaviour change): per-key provide time inside the announcer, and how
// many peers accepted each provider record (kad-dht's provide resolves even when none did)
// ---------------------------------------------------------------------------------------------

interface ProvideSample { ms: number, ok: boolean }
let announcerSamples: ProvideSample[] = []
{
  const proto = Announcer.prototype as unknown as { provideOne: (this: { keys: Map<string, { provided: boolean }> }, key: string) => Promise<void> }
  const original = proto.provideOne
  proto.provideOne = async function (key: string) {
    const state = this.keys.get(key)
    if (state === undefined || state.provided) return await original.call(this, key)
    const started = performance.now()
    await original.call(this, key)
    announcerSamples.push({ ms: performance.now() - started, ok: this.keys.get(key)?.provided === true })
  }
}

/** Per kad-dht provide: ADD_PROVIDER messages delivered, and failed, out of the closest peers found. */
interface Placement { phase: string, placed: number, failed: number }
let placements: Placement[] = []
let phase = 'announce'
let dhtPatched = false

function patchKadProvide (dht: unknown): void {
  if (dhtPatched) return
  dhtPatched = true
  // kad-dht binds `provide` in its constructor: patching the prototype reaches every DHT built later
  const proto = Object.getPrototypeOf(dht) as { provide: (this: unknown, key: unknown, options?: unknown) => AsyncGenerator<{ name: string, messageName?: string }> }
  const original = proto.provide
  proto.provide = async function * (key, options) {
    const record: Placement = { phase, placed: 0, failed: 0 }
    placements.push(record)
    for await (const event of original.call(this, key, options)) {
      if (event.name === 'PEER_RESPONSE' && event.messageName === 'ADD_PROVIDER') record.placed++
      if (event.name === 'QUERY_ERROR') record.failed++
      yield event
    }
  }
}

/** As startNetwork (one bootstrap peer, then every node at once, each dialling it), instrumented. */
async function startInstrumentedNetwork (specs: NodeSpec[]): Promise<TestNetwork> {
  const root = await mkdtemp(join(tmpdir(), 'gpumesh-bench-dht-'))
  tempRoots.add(root)
  const all: Daemon[] = []
  const stop = async (): Promise<void> => {
    try {
      const results = await Promise.allSettled(all.map(async (d) => { await d.stop() }))
      const failed = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected')
      if (failed.length > 0) console.log(`  ${failed.length} daemon(s) failed to stop: ${String((failed[0]?.reason as Error)?.message ?? failed[0]?.reason).slice(0, 200)}`)
    } finally {
      await rm(root, { recursive: true, force: true })
      tempRoots.delete(root)
    }
  }
  try {
    const bootstrap = await startDaemon(root, {}, { role: 'bootstrap' })
    all.push(bootstrap)
    patchKadProvide(bootstrap.node.services.dht)
    const dial = [bootstrap.addresses()[0] as string]
    const nodes = await Promise.all(specs.map(async (spec) => {
      const d = await startDaemon(root, spec, { dial })
      all.push(d)
      return d
    }))
    return { root, bootstraps: [bootstrap], nodes, all: [bootstrap, ...nodes], stop }
  } catch (err) {
    await stop().catch(() => {})
    throw err
  }
}

async function processCpuPercent (seconds: number): Promise<number> {
  const before = process.cpuUsage()
  const started = performance.now()
  await new Promise((resolve) => setTimeout(resolve, seconds * 1000))
  const used = process.cpuUsage(before)
  return (used.user + used.system) / 1000 / (performance.now() - started) * 100
}

// ---------------------------------------------------------------------------------------------
// one network size
// ---------------------------------------------------------------------------------------------

/**
 * `exact`: the listed set is the set the catalog says must answer. `exactAnnounced`: nothing wrong listed and
 * no provider missed whose provide of the looked-up key succeeded (a loaded machine leaves keys unannounced;
 * those misses are the announcer's, not the lookup's). `complete`: the answer called itself complete.
 */
interface FindSample { kind: string, ms: number, found: number, expected: number, exact: boolean, exactAnnounced: boolean, complete: boolean, failures: number, filtered: number }
interface RawSample { kind: string, firstMs: number, doneMs: number, found: number, expected: number, missing: number, extra: number }

interface SizeResult {
  n: number
  startMs: number
  announceAllMs: number
  announceAfterUpMs: number
  announcePerNodeMs: number[]
  unannounced: number
  keysPerNode: number[]
  rssMB: number
  announcer: ProvideSample[]
  announcePlacements: Placement[]
  freshPlacements: Placement[]
  idleCpu: number
  fresh: ProvideSample[]
  finds: FindSample[]
  raws: RawSample[]
  stopMs: number
}

async function benchSize (n: number): Promise<SizeResult> {
  const random = rng(SEED * 1000 + n)
  const pick = <T>(list: T[]): T => list[Math.floor(random() * list.length)] as T
  const specs = specsFor(n)
  announcerSamples = []
  placements = []
  phase = 'announce'
  console.log(`\n— ${n} nodes + 1 bootstrap peer —`)

  const t0 = performance.now()
  const t0Wall = Date.now()
  let net: TestNetwork | undefined
  try {
    net = await startInstrumentedNetwork(specs)
    const startMs = performance.now() - t0
    console.log(`  network up in ${ms(startMs)}; waiting for announcements…`)
    let unannounced = 0
    const stopProfile = PROFILE ? await startProfile() : undefined
    try {
      await waitForAnnouncements(net.nodes, ANNOUNCE_TIMEOUT_MS)
    } catch (err) {
      console.log(`  not every key announced within ${ANNOUNCE_TIMEOUT_MS / 1000} s: ${(err as Error).message.slice(0, 200)}`)
    }
    if (stopProfile !== undefined) await reportProfile(`announce phase, ${n} nodes`, await stopProfile(), `gpumesh-dht-${n}.cpuprofile`)
    const announceDoneMs = performance.now() - t0
    const perNode: number[] = []
    let lastProvided = t0Wall
    for (const d of net.nodes) {
      const keys = d.announcer.state()
      unannounced += keys.filter((k) => !k.provided).length
      const times = keys.filter((k) => k.providedAt !== undefined).map((k) => k.providedAt as number)
      if (keys.length > 0 && times.length === keys.length) perNode.push(Math.max(...times) - t0Wall)
      for (const t of times) lastProvided = Math.max(lastProvided, t)
    }
    const announceAllMs = unannounced === 0 ? lastProvided - t0Wall : announceDoneMs
    const keysPerNode = net.nodes.map((d) => d.announcer.state().length).filter((k) => k > 0)
    const announcer = announcerSamples
    announcerSamples = []
    console.log(`  all keys announced ${ms(announceAllMs)} after start (${unannounced} unannounced); ${announcer.length} announcer provides timed`)
    const rssMB = process.memoryUsage().rss / 2 ** 20
    const announcePlacements = placements.filter((p) => p.phase === 'announce')
    const idleCpu = await processCpuPercent(3)
    console.log(`  in-process network idle: ${idleCpu.toFixed(0)} % of one core; measuring provides…`)
    phase = 'fresh'

    // fresh keys, one provide at a time on the settled network
    const fresh: ProvideSample[] = []
    for (let i = 0; i < FRESH_PROVIDES; i++) {
      const node = pick(net.nodes)
      const started = performance.now()
      let ok = true
      try {
        await node.node.contentRouting.provide(capabilityKeyCid(`bench/fresh/${SEED}/${n}/${i}`), { signal: AbortSignal.timeout(PROVIDE_TIMEOUT_MS) })
      } catch {
        ok = false
      }
      fresh.push({ ms: performance.now() - started, ok })
    }
    const freshPlacements = placements.filter((p) => p.phase === 'fresh')
    phase = 'other'
    console.log(`  ${fresh.length} fresh-key provides: p50 ${ms(pct(fresh.map((s) => s.ms), 50))}`)

    // find-providers, the daemon's full path, one query at a time from random peers
    const expectedFor = (kind: QueryKind): Set<string> => new Set(specs
      .map((spec, i) => ({ spec, id: net?.nodes[i]?.identity.peerId as string }))
      .filter(({ spec }) => spec.sell !== false && kind.matches(spec))
      .map(({ id }) => id))
    const expected = new Map(QUERY_KINDS.map((k) => [k.name, expectedFor(k)]))
    const announcersOf = (key: string): Set<string> => new Set(net?.nodes.filter((d) => d.announcer.state().some((k) => k.key === key && k.provided)).map((d) => d.identity.peerId))
    const finds: FindSample[] = []
    for (let i = 0; i < QUERIES; i++) {
      const kind = QUERY_KINDS[i % QUERY_KINDS.length] as QueryKind
      const asker = pick(net.all)
      const want = expected.get(kind.name) as Set<string>
      const started = performance.now()
      const result = await asker.findProviders(kind.query)
      const elapsed = performance.now() - started
      const got = new Set(result.providers.map((p) => p.peerId))
      const exact = got.size === want.size && [...want].every((id) => got.has(id))
      const announced = announcersOf(lookupKeyFor(kind.query))
      const exactAnnounced = [...got].every((id) => want.has(id)) && [...want].every((id) => got.has(id) || (!announced.has(id) && id !== asker.identity.peerId))
      finds.push({ kind: kind.name, ms: elapsed, found: got.size, expected: want.size, exact, exactAnnounced, complete: result.complete, failures: result.failures.length, filtered: result.filtered })
      if ((i + 1) % 10 === 0) console.log(`    ${i + 1} find-providers: p50 ${ms(pct(finds.map((f) => f.ms), 50))}, ${finds.filter((f) => !f.exactAnnounced).length} not exact counting only announced keys`)
    }
    const mismatches = finds.filter((f) => !f.exact).length
    console.log(`  ${finds.length} find-providers: p50 ${ms(pct(finds.map((f) => f.ms), 50))}, p95 ${ms(pct(finds.map((f) => f.ms), 95))}, ${mismatches} not exact, ${finds.filter((f) => !f.exactAnnounced).length} not exact counting only announced keys`)

    // the raw DHT lookup of each query's key
    const raws: RawSample[] = []
    for (let i = 0; i < RAW_QUERIES; i++) {
      const kind = QUERY_KINDS[i % QUERY_KINDS.length] as QueryKind
      const key = lookupKeyFor(kind.query)
      const asker: Daemon = pick(net.all)
      const want = announcersOf(key)
      const found = new Set<string>()
      const started = performance.now()
      let firstMs = NaN
      try {
        for await (const info of asker.node.contentRouting.findProviders(capabilityKeyCid(key), { signal: AbortSignal.timeout(PROVIDE_TIMEOUT_MS) })) {
          if (Number.isNaN(firstMs)) firstMs = performance.now() - started
          found.add(info.id.toString())
        }
      } catch {}
      const doneMs = performance.now() - started
      const self = asker.identity.peerId
      const missing = [...want].filter((id) => id !== self && !found.has(id)).length
      const extra = [...found].filter((id) => !want.has(id)).length
      raws.push({ kind: `${kind.name} → ${key}`, firstMs, doneMs, found: found.size, expected: want.size, missing, extra })
    }
    const t1 = performance.now()
    await net.stop()
    net = undefined
    const stopMs = performance.now() - t1
    return { n, startMs, announceAllMs, announceAfterUpMs: announceAllMs - startMs, announcePerNodeMs: perNode, unannounced, keysPerNode, rssMB, announcer, announcePlacements, freshPlacements, idleCpu, fresh, finds, raws, stopMs }
  } finally {
    await net?.stop().catch(() => {})
  }
}

function printSize (r: SizeResult): void {
  const keys = r.keysPerNode
  console.log(`\n=== ${r.n} nodes + 1 bootstrap peer ===`)
  console.log(`  network start ${ms(r.startMs)}; all ${keys.reduce((a, b) => a + b, 0)} keys announced ${ms(r.announceAllMs)} after start (${ms(r.announceAfterUpMs)} after the network was up)${r.unannounced > 0 ? `, ${r.unannounced} NOT announced` : ''}`)
  console.log(`  per node, start → its last key provided: p50 ${ms(pct(r.announcePerNodeMs, 50))}, max ${ms(Math.max(...r.announcePerNodeMs))}`)
  console.log(`  keys per selling node: min ${Math.min(...keys)}, mean ${(keys.reduce((a, b) => a + b, 0) / keys.length).toFixed(1)}, max ${Math.max(...keys)} (${keys.length} sellers)`)
  console.log(`  bench process RSS with the network up: ${r.rssMB.toFixed(0)} MB (${(r.rssMB / (r.n + 1)).toFixed(1)} MB per daemon, upper bound); CPU while it idles: ${r.idleCpu.toFixed(0)} % of one core; stop all: ${ms(r.stopMs)}`)

  const ok = (s: ProvideSample[]): number[] => s.filter((x) => x.ok).map((x) => x.ms)
  printTable('provide latency (one contentRouting.provide)', ['n', 'failed', 'p50', 'p95', 'max'], [
    { label: `announcer, start-up (${PROVIDE_CONCURRENCY} concurrent per node, all nodes at once)`, cells: [String(r.announcer.length), String(r.announcer.filter((s) => !s.ok).length), ms(pct(ok(r.announcer), 50)), ms(pct(ok(r.announcer), 95)), ms(Math.max(...ok(r.announcer)))] },
    { label: 'fresh key, settled network, one at a time', cells: [String(r.fresh.length), String(r.fresh.filter((s) => !s.ok).length), ms(pct(ok(r.fresh), 50)), ms(pct(ok(r.fresh), 95)), ms(Math.max(...ok(r.fresh)))] }
  ])

  const late = r.announcer.filter((s) => s.ms > ANNOUNCER_TIMEOUT_MS).length
  if (late > 0) console.log(`  ${late} announcer provides returned after the announcer's own ${ANNOUNCER_TIMEOUT_MS / 1000} s timeout (its AbortSignal never fired)`)
  const placementRow = (label: string, list: Placement[]): Row => ({
    label,
    cells: [String(list.length), String(pct(list.map((p) => p.placed), 5)), String(pct(list.map((p) => p.placed), 50)), String(Math.max(0, ...list.map((p) => p.placed))),
      String(list.filter((p) => p.placed === 0).length), String(list.filter((p) => p.placed < 10).length), String(list.reduce((a, p) => a + p.failed, 0))]
  })
  printTable('provider records placed per provide (ADD_PROVIDER delivered; kad-dht sends to the 20 closest peers found)', ['provides', 'p5', 'p50', 'max', 'none placed', '< 10 placed', 'send/query errors'], [
    placementRow('announcer, start-up', r.announcePlacements),
    placementRow('fresh key, settled network', r.freshPlacements)
  ])

  const findRow = (label: string, list: FindSample[]): Row => ({
    label,
    cells: [...latencyCells(list.map((f) => f.ms), [50, 95, 99]),
      `${list.filter((f) => !f.exact).length}`,
      `${list.filter((f) => !f.exactAnnounced).length}`,
      `${list.filter((f) => !f.complete).length}`,
      `${(list.reduce((a, f) => a + f.found, 0) / list.length).toFixed(1)}/${(list.reduce((a, f) => a + f.expected, 0) / list.length).toFixed(1)}`,
      `${list.reduce((a, f) => a + f.failures, 0)}`]
  })
  printTable('find-providers: daemon.findProviders(query) = DHT lookup + ad fetches + filter, sequential, random asker',
    ['n', 'p50', 'p95', 'p99', 'max', 'not exact', 'not exact (announced)', 'said "at least"', 'found/expected', 'fetch failures'],
    [findRow('all queries', r.finds), ...QUERY_KINDS.map((k) => findRow(k.name, r.finds.filter((f) => f.kind === k.name)))])

  const rawRow = (label: string, list: RawSample[]): Row => ({
    label,
    cells: [String(list.length),
      ms(pct(list.map((x) => x.firstMs).filter((v) => !Number.isNaN(v)), 50)), ms(pct(list.map((x) => x.firstMs).filter((v) => !Number.isNaN(v)), 95)),
      ms(pct(list.map((x) => x.doneMs), 50)), ms(pct(list.map((x) => x.doneMs), 95)), ms(Math.max(...list.map((x) => x.doneMs))),
      `${(list.reduce((a, x) => a + x.found, 0) / list.length).toFixed(1)}/${(list.reduce((a, x) => a + x.expected, 0) / list.length).toFixed(1)}`,
      String(list.filter((x) => x.missing > 0).length), String(list.reduce((a, x) => a + x.missing, 0))]
  })
  const rawKinds = [...new Set(r.raws.map((x) => x.kind))]
  printTable('raw DHT lookup: node.contentRouting.findProviders(cid), sequential, random asker',
    ['n', 'first p50', 'first p95', 'done p50', 'done p95', 'done max', 'found/announced', 'incomplete', 'missed'],
    [rawRow('all keys', r.raws), ...rawKinds.map((k) => rawRow(k, r.raws.filter((x) => x.kind === k)))])
}

// ---------------------------------------------------------------------------------------------

const onSignal = (): void => { cleanupNow(); process.exit(130) }
process.on('SIGINT', onSignal)
process.on('SIGTERM', onSignal)

console.log(`gpumesh bench:dht — Node ${process.version}, ${cpus()[0]?.model ?? 'unknown CPU'} ×${cpus().length}, ${(totalmem() / 2 ** 30).toFixed(0)} GiB`)
console.log(`in-process networks: ${SIZES.join(', ')} nodes + 1 bootstrap peer (memory transport, plaintext, yamux, memory peer store); ` +
  `${QUERIES} find-providers, ${RAW_QUERIES} raw lookups, ${FRESH_PROVIDES} fresh provides per size; ${PROVIDE_CONCURRENCY} provide(s) at once per node; seed ${SEED}`)

const results: SizeResult[] = []
for (const n of SIZES) results.push(await benchSize(n))
for (const r of results) printSize(r)

let idle: IdleRow[] = []
if (IDLE) {
  console.log('')
  idle = await runIdle(idleOptionsFromEnv())
}

console.log('\ntargets')
const atTarget = results.find((r) => r.n === FIND_TARGET_NODES) ?? results.at(-1)
if (atTarget !== undefined) {
  const p95 = pct(atTarget.finds.map((f) => f.ms), 95)
  const label = atTarget.n === FIND_TARGET_NODES ? '' : ` (measured on ${atTarget.n}, not ${FIND_TARGET_NODES}, nodes)`
  console.log(`  find-providers p95 ≤ ${FIND_P95_TARGET_MS} ms on ${FIND_TARGET_NODES} nodes${label}: ${ms(p95)} — ${p95 <= FIND_P95_TARGET_MS ? 'met' : 'NOT met'}`)
  for (const r of results) {
    const bad = r.finds.filter((f) => !f.exact)
    console.log(`  exact provider sets, ${r.n} nodes: ${r.finds.length - bad.length}/${r.finds.length}${bad.length > 0 ? ` — mismatches: ${[...new Set(bad.map((f) => `${f.kind} (found ${f.found} of ${f.expected})`))].slice(0, 6).join(', ')}` : ''}`)
    console.log(`    counting only providers whose provide of the key succeeded: ${r.finds.filter((f) => f.exactAnnounced).length}/${r.finds.length}; answers that said "at least": ${r.finds.filter((f) => !f.complete).length}`)
  }
}
if (idle.length > 0) {
  const alone = idle[0] as IdleRow
  console.log(`  idle daemon ≤ ${IDLE_RSS_TARGET_MB} MB RSS: ${alone.stats.rssMaxMB.toFixed(1)} MB max over ${alone.stats.seconds.toFixed(0)} s (CPU ${alone.stats.cpuPercent.toFixed(2)} % of a core) — ${alone.stats.rssMaxMB <= IDLE_RSS_TARGET_MB ? 'met' : 'NOT met'}`)
  for (const r of idle.slice(1)) console.log(`    ${r.name}: ${r.stats.rssMaxMB.toFixed(1)} MB max — ${r.stats.rssMaxMB <= IDLE_RSS_TARGET_MB ? 'met' : 'NOT met'}`)
}
// libp2p leaves no handles once stopped, but make sure the run ends
process.exit(0)
