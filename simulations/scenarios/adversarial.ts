/**
 * What the adversary scenarios (`no-shows`, `spam`) share: the `market` scenario's workload and prices,
 * a seeded choice of which fleet nodes turn adversary, and three runs on the very same workload —
 * gpumesh without adversaries (`gpumesh`), gpumesh with them (`gpumesh+NAME`), and the central matcher
 * that never awards to an adversary (the bound: an adversary's floor is put above every cap) — plus
 * the old way for the headline claims. The report gets a faults entry (completion with and without,
 * re-auctions, waits by tier, by thirds of the jobs' submissions) and a section of its own: how often
 * adversaries won awards, over the run's thirds (do the requesters' reliability views learn to avoid
 * them?), and the traffic per job with and without them (what the flood cost).
 */
import { central, oldWay } from '../baselines/index.js'
import type { ProviderBehaviour } from '../harness/provider-node.js'
import { Prng } from '../harness/prng.js'
import { runMarket, type MarketRun, type MarketRunOptions, type MarketRunStats } from '../market/run-market.js'
import type { FleetNode, Workload } from '../model.js'
import type { FaultPhase } from '../report/faults.js'
import type { ReportSection } from '../report/report.js'
import { marketWorkload, measuredNetwork } from './market.js'
import { scenarioPrices, type ScenarioPrices } from './pricing.js'
import type { ScenarioData, ScenarioOptions, ScenarioResult } from './scenario.js'

/** One kind of adversary: a share of the fleet, and what each of them does (its price list to hand). */
export interface AdversaryGroup {
  name: string
  /** Share of the fleet's nodes, 0..1 (rounded to whole nodes; groups never overlap). */
  share: number
  behaviour: (node: FleetNode, prices: ScenarioPrices) => ProviderBehaviour
  /** One sentence for the report. */
  describe: string
}

export interface AdversarialSpec {
  /** Scenario name (`no-shows`): the fault run is `gpumesh+<name>`. */
  name: string
  groups: readonly AdversaryGroup[]
  /** The faults entry's claim: completion under the adversaries at least this share of without them. */
  minRelativeCompletion: number
  claim: string
  assumptions: string[]
  /** Market options of every gpumesh run, with and without the adversaries (e.g. evidence, addresses). */
  market?: (workload: Workload, adversaries: ReadonlyMap<string, string>) => Partial<MarketRunOptions>
  /** More options of the runs with the adversaries (e.g. their floors, their vouching). */
  faultyMarket?: (workload: Workload, adversaries: ReadonlyMap<string, string>, prices: ScenarioPrices) => Partial<MarketRunOptions>
  /** Further runs with the adversaries, strategy `gpumesh+<name>+<variant name>`, after `gpumesh+<name>`. */
  variants?: ReadonlyArray<{ name: string, market: Partial<MarketRunOptions> }>
  /** The scenario's own sections, after the adversaries' (every gpumesh run by its strategy name). */
  sections?: (context: AdversarialContext) => ReportSection[]
}

/** What a scenario's own sections are built from. */
export interface AdversarialContext {
  runs: ReadonlyMap<string, MarketRun>
  adversaries: ReadonlyMap<string, string>
  workload: Workload
  phases: readonly FaultPhase[]
}

/** Each node's group: a seeded shuffle (Fisher–Yates) of the fleet, cut into the groups in order. */
export function pickAdversaries (fleet: readonly FleetNode[], seed: number, groups: readonly AdversaryGroup[]): Map<string, string> {
  const ids = fleet.map((n) => n.id)
  const prng = new Prng(seed).fork('adversaries')
  for (let i = ids.length - 1; i > 0; i--) {
    const j = prng.int(0, i)
    const t = ids[i] as string
    ids[i] = ids[j] as string
    ids[j] = t
  }
  const out = new Map<string, string>()
  let at = 0
  for (const g of groups) {
    const k = Math.min(ids.length - at, Math.round(g.share * ids.length))
    for (const id of ids.slice(at, at + k)) out.set(id, g.name)
    at += k
  }
  return out
}

/** A floor no cap reaches: the central bound never places a job on an adversary. */
const NEVER = Number.MAX_SAFE_INTEGER

export function runAdversarial (spec: AdversarialSpec, data: ScenarioData, options: ScenarioOptions): ScenarioResult {
  options.onProgress?.('workload', 0, 1)
  const { workload, summary } = marketWorkload(data, options)
  options.onProgress?.('workload', 1, 1)
  const prices = scenarioPrices(data.prices, workload.fleet, options.seed)
  const capOf = (job: Workload['jobs'][number]): number => prices.capOf(job) ?? 0
  const adversaries = pickAdversaries(workload.fleet, options.seed, spec.groups)
  const behaviours = new Map<string, ProviderBehaviour>()
  for (const n of workload.fleet) {
    const g = spec.groups.find((x) => x.name === adversaries.get(n.id))
    if (g !== undefined) behaviours.set(n.id, g.behaviour(n, prices))
  }
  const base = {
    seed: options.seed,
    ...(data.rtt !== undefined ? { network: measuredNetwork(data.rtt, workload) } : {}),
    floorOf: prices.floorOf,
    capOf,
    mesh: true,
    discovery: true
  }
  const progress = (phase: string): { onProgress?: (done: number, total: number) => void, progressEvery?: number } =>
    options.onProgress === undefined ? {} : { onProgress: (done, total) => options.onProgress?.(phase, done, total), progressEvery: 50 }
  const shared = spec.market?.(workload, adversaries) ?? {}
  const withThem = { ...base, ...shared, behaviours, ...spec.faultyMarket?.(workload, adversaries, prices) }
  const honest = runMarket(workload, { ...base, ...shared, ...progress('gpumesh') })
  const faulty = runMarket(workload, { ...withThem, ...progress(spec.name) })
  const faultName = `gpumesh+${spec.name}`
  const variants = (spec.variants ?? []).map((v) => ({ name: `${faultName}+${v.name}`, run: runMarket(workload, { ...withThem, ...v.market, ...progress(`${spec.name}+${v.name}`) }) }))
  const baseline = { listPrice: prices.listPrice, floorOf: prices.floorOf, capOf: prices.capOf }
  const bound = central(workload, { ...baseline, floorOf: (n) => (adversaries.has(n.id) ? NEVER : prices.floorOf(n)) })
  const runs = [honest.run, { ...faulty.run, strategy: faultName }, ...variants.map((v) => ({ ...v.run.run, strategy: v.name })), bound, oldWay(workload, baseline)]
  const phases = thirds(workload)
  const counts = spec.groups.map((g) => `${[...adversaries.values()].filter((x) => x === g.name).length} ${g.describe}`).join('; ')
  return {
    scenario: spec.name,
    seed: options.seed,
    nodes: workload.fleet.length,
    jobs: workload.jobs.length,
    workload,
    summary,
    runs,
    market: faulty.stats,
    listPrice: prices.listPrice,
    faults: [{
      name: spec.name,
      fault: `${counts} (of ${workload.fleet.length} nodes, chosen by seed); the same workload without them, and the central matcher that never awards to them`,
      strategy: faultName,
      without: 'gpumesh',
      bound: 'central',
      phases,
      expect: [{ id: `${spec.name}-completion`, claim: spec.claim, minCompletion: spec.minRelativeCompletion, relative: true }]
    }],
    sections: [
      adversarySection(spec, faulty, honest, adversaries, phases, workload),
      ...(spec.sections?.({ runs: new Map([['gpumesh', honest], [faultName, faulty], ...variants.map((v): [string, MarketRun] => [v.name, v.run])]), adversaries, workload, phases }) ?? [])
    ],
    assumptions: [
      ...spec.assumptions,
      'Workload, fleet, places and prices: as the `market` scenario (the Alibaba 2023 trace\'s busy days, RIPE Atlas delays, the price snapshot); gpumesh runs with a 10-minute lease, so a silent winner is found out after 10 minutes.'
    ]
  }
}

/** The jobs' submissions cut into thirds (by submission order): first, middle, last. */
export function thirds (workload: Workload): FaultPhase[] {
  const times = workload.jobs.map((j) => j.submitAt)
  const n = times.length
  if (n === 0) return []
  const cut = (k: number): number => (k >= n ? (times[n - 1] as number) + 1 : times[k] as number)
  const a = cut(Math.ceil(n / 3))
  const b = cut(Math.ceil(2 * n / 3))
  return [
    { name: 'first third', fromMs: 0, untilMs: a },
    { name: 'middle third', fromMs: a, untilMs: b },
    { name: 'last third', fromMs: b, untilMs: cut(n) }
  ]
}

export interface AwardShare {
  phase: string
  jobs: number
  awards: number
  /** Awards (any attempt) that went to an adversary. */
  toAdversaries: number
  /** Jobs whose first award went to an adversary. */
  firstToAdversaries: number
  /** Awards to each group's adversaries (every group named, in the spec's order). */
  byGroup: Record<string, number>
}

/** Awards to adversaries by the phase their job was submitted in (from the run's recorder). */
export function awardShares (run: MarketRun, adversaries: ReadonlyMap<string, string>, phases: readonly FaultPhase[], groups: readonly string[]): AwardShare[] {
  const byJob = new Map<string, Array<{ provider: string, attempt: number }>>()
  for (const a of run.harness.recorder.awards) {
    const list = byJob.get(a.job) ?? []
    list.push({ provider: a.provider.slice('peer:'.length), attempt: a.attempt })
    byJob.set(a.job, list)
  }
  // a job's submission, ms since the run's start: its request was issued when it was submitted
  const submitted: Array<[string, number]> = [...run.harness.world.jobs].map(([id, r]) => [id, r.payload.issuedAt - run.start])
  return phases.map((p) => {
    const s: AwardShare = { phase: p.name, jobs: 0, awards: 0, toAdversaries: 0, firstToAdversaries: 0, byGroup: Object.fromEntries(groups.map((g) => [g, 0])) }
    for (const [job, at] of submitted) {
      if (at < p.fromMs || at >= p.untilMs) continue
      s.jobs++
      const awards = (byJob.get(job) ?? []).sort((x, y) => x.attempt - y.attempt)
      s.awards += awards.length
      for (const a of awards) {
        const group = adversaries.get(a.provider)
        if (group === undefined) continue
        s.toAdversaries++
        s.byGroup[group] = (s.byGroup[group] ?? 0) + 1
      }
      if (awards[0] !== undefined && adversaries.has(awards[0].provider)) s.firstToAdversaries++
    }
    return s
  })
}

const r3 = (x: number): number => Math.round(x * 1_000) / 1_000
const r4 = (x: number | null): number | null => (x === null ? null : Math.round(x * 10_000) / 10_000)
const share = (a: number, b: number): number | null => (b > 0 ? a / b : null)
const pct = (x: number | null): string => (x === null ? 'n/a' : `${(x * 100).toFixed(1)} %`)

/** Traffic per job of one run: bids (valid, sent), messages and bytes (everything sent, drops at the first hop included), and those drops. */
function traffic (stats: MarketRunStats, jobs: number): Record<string, number> {
  const kind = (k: string): { count: number, bytes: number } => stats.byKind[k] ?? { count: 0, bytes: 0 }
  const per = (x: number): number => (jobs > 0 ? r3(x / jobs) : 0)
  return {
    bidsPerJob: per(kind('bid').count),
    messagesPerJob: per(stats.messages),
    bytesPerJob: per(stats.bytes),
    replaysPerJob: per(kind('bid-replay').count),
    forgedPerJob: per(kind('bid-forged').count)
  }
}

/** The adversaries' own section: who they were, how often they won (by thirds), what the run's traffic cost. */
export function adversarySection (spec: AdversarialSpec, faulty: MarketRun, honest: MarketRun, adversaries: ReadonlyMap<string, string>, phases: readonly FaultPhase[], workload: Workload): ReportSection {
  const names = spec.groups.map((g) => g.name)
  const shares = awardShares(faulty, adversaries, phases, names)
  const jobs = workload.jobs.length
  const groups = spec.groups.map((g) => ({ name: g.name, nodes: [...adversaries.values()].filter((x) => x === g.name).length, behaviour: g.describe }))
  const t = { honest: traffic(honest.stats, jobs), faulty: traffic(faulty.stats, jobs) }
  const json = {
    groups,
    awardsByThird: shares.map((s) => ({ ...s, share: r4(share(s.toAdversaries, s.awards)), firstShare: r4(share(s.firstToAdversaries, s.jobs)) })),
    traffic: { gpumesh: t.honest, [`gpumesh+${spec.name}`]: t.faulty }
  }
  const md: string[] = []
  md.push(`Adversaries: ${groups.map((g) => `${g.nodes} × ${g.name} (${g.behaviour})`).join('; ')}.`, '')
  md.push("Awards to adversaries by when the job was submitted (share of all awards; share of jobs whose first award went to one). A falling share would show the requesters' reliability views learning to avoid them.", '')
  md.push(`| jobs submitted | jobs | awards | to adversaries | share | first award to one | ${names.map((n) => `to ${n}s`).join(' | ')} |`)
  md.push(`|---|---:|---:|---:|---:|---:|${names.map(() => '---:|').join('')}`)
  for (const s of shares) md.push(`| ${s.phase} | ${s.jobs} | ${s.awards} | ${s.toAdversaries} | ${pct(share(s.toAdversaries, s.awards))} | ${pct(share(s.firstToAdversaries, s.jobs))} | ${names.map((n) => s.byGroup[n] ?? 0).join(' | ')} |`)
  md.push('', 'Traffic per job (bids: valid bids sent; messages and bytes: everything sent, the replays and forgeries dropped at the first hop included):', '')
  md.push('| run | bids | messages | bytes | replays | forged |')
  md.push('|---|---:|---:|---:|---:|---:|')
  for (const [name, x] of [['gpumesh', t.honest], [`gpumesh+${spec.name}`, t.faulty]] as const) md.push(`| ${name} | ${x.bidsPerJob} | ${x.messagesPerJob} | ${x.bytesPerJob} | ${x.replaysPerJob} | ${x.forgedPerJob} |`)
  return { key: 'adversaries', title: 'Adversaries', json, markdown: md }
}
