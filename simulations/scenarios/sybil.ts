/**
 * `sybil`: one operator's many identities (issue 11). On the `market` workload, 20 % of the fleet's
 * provider identities belong to one operator. They bid low — their agents bid from a floor of
 * `SYBIL_PRICE_SHARE` of their model's list price — deliver their first award honestly (to earn a real
 * receipt) and then take every later award's stream and never answer (a no-show). All along they vouch for
 * each other: every 30 minutes each signs a payment commitment to the next three Sybils of the ring and
 * gossips it on the evidence topic (harness/sybil-ring.ts). Every renter's reputation view takes gossiped
 * payments and failure reports as the daemon's does (requester-node.ts `evidence`, in both runs), where
 * evidence counts only as far as the renter trusts its signer (protocol/trust/reputation.ts).
 *
 * Compared on the same workload: gpumesh without the Sybils (the calm run), with them, with them but
 * silent (the same Sybils, no vouching: what the vouches add), and the central bound. The report gives
 * honest completion against the calm run (faults), the Sybils' award share by thirds (adversaries), and
 * here completion of both Sybil runs and each renter's view at the end: the best Sybil's score and rank
 * against the best honest provider it has its own history with.
 */
import type { ReportSection } from '../report/report.js'
import { runAdversarial, type AdversarialContext, type AdversarialSpec } from './adversarial.js'
import type { Scenario, ScenarioData, ScenarioOptions, ScenarioResult } from './scenario.js'

export const SYBIL_DEFAULTS = Object.freeze({ nodes: 200, jobs: 100 })
export const SYBIL_SHARE = 0.20
/** A Sybil's floor: this share of its model's list price (honest owners: 40–70 %). */
export const SYBIL_PRICE_SHARE = 0.25
/** Awards a Sybil delivers before it starts vanishing. */
export const SYBIL_HONEST_AWARDS = 1
export const SYBIL_RING = Object.freeze({ periodMs: 30 * 60_000, fanout: 3 })
/** The run with the same Sybils not vouching for each other. */
export const SILENT_VARIANT = 'silent'

export const SYBIL_SPEC: AdversarialSpec = {
  name: 'sybil',
  groups: [{
    name: 'sybil',
    share: SYBIL_SHARE,
    behaviour: () => ({ noShowAfter: SYBIL_HONEST_AWARDS }),
    describe: `one operator's identities: bid from ${SYBIL_PRICE_SHARE * 100} % of list, deliver ${SYBIL_HONEST_AWARDS} award then never answer, vouch for ${SYBIL_RING.fanout} others every ${SYBIL_RING.periodMs / 60_000} min`
  }],
  minRelativeCompletion: 0.9,
  claim: 'honest jobs complete despite 20 % Sybil identities (at least 90 % of the completion without them)',
  assumptions: [
    `Sybils: ${SYBIL_SHARE * 100} % of the provider identities, one operator; their floors are ${SYBIL_PRICE_SHARE * 100} % of list; each delivers its first ${SYBIL_HONEST_AWARDS} award and no-shows on every later one; each gossips a made-up payment to each of the next ${SYBIL_RING.fanout} Sybils every ${SYBIL_RING.periodMs / 60_000} min, admitted everywhere (the worst case). The central bound does not use their GPUs.`,
    'Every renter\'s reputation view takes gossiped payments and failure reports, weighted by its trust in the signer, in both gpumesh runs.'
  ],
  market: () => ({ evidence: true }),
  faultyMarket: (workload, adversaries, prices) => {
    const members = workload.fleet.filter((n) => adversaries.has(n.id)).map((n) => n.id)
    return {
      floorOf: (n) => (adversaries.has(n.id) ? Math.max(1, Math.round((prices.listPrice(n.model) ?? 0) * SYBIL_PRICE_SHARE)) : prices.floorOf(n)),
      sybilRing: { members, ...SYBIL_RING, fromMs: 0, untilMs: workload.horizonMs }
    }
  },
  variants: [{ name: SILENT_VARIANT, market: { sybilRing: undefined } }],
  sections: (context) => [sybilRankSection(context)]
}

const r4 = (x: number): number => Math.round(x * 10_000) / 10_000

export interface RenterView {
  renter: string
  /** Providers this renter holds any evidence on (its own or others'). */
  known: number
  bestSybil: { provider: string, score: number, rank: number, ownOk: number, ownFailed: number, trustedReporters: number } | null
  bestHonest: { provider: string, score: number, rank: number, ownOk: number } | null
  /** Honest providers with own history that rank above the best Sybil. */
  honestAbove: number
}

/** Each renter's view at the end of the run with the Sybils: ranks are 1-based among the providers it knows, by score. */
export function renterViews ({ runs, adversaries }: AdversarialContext, run = 'gpumesh+sybil'): RenterView[] {
  const market = runs.get(run)
  if (market === undefined) return []
  const now = market.harness.scheduler.now()
  const out: RenterView[] = []
  for (const r of market.harness.requesters.values()) {
    const rep = r.agent.reputation
    const scored = [...market.harness.providers.values()]
      .filter((p) => rep.reliability(p.peerId, now) !== undefined)
      .map((p) => ({ p, x: rep.explain(p.peerId, now) }))
      .sort((a, b) => b.x.score - a.x.score || (a.p.peerId < b.p.peerId ? -1 : 1))
    const isSybil = (peer: string): boolean => adversaries.has(peer.slice('peer:'.length))
    const sybilAt = scored.findIndex((s) => isSybil(s.p.peerId))
    const honestAt = scored.findIndex((s) => !isSybil(s.p.peerId) && s.x.own.okCount > 0)
    const sybil = scored[sybilAt]
    const honest = scored[honestAt]
    out.push({
      renter: r.peerId,
      known: scored.length,
      bestSybil: sybil === undefined ? null : { provider: sybil.p.peerId, score: r4(sybil.x.score), rank: sybilAt + 1, ownOk: sybil.x.own.okCount, ownFailed: sybil.x.own.failedCount, trustedReporters: sybil.x.others.trusted },
      bestHonest: honest === undefined ? null : { provider: honest.p.peerId, score: r4(honest.x.score), rank: honestAt + 1, ownOk: honest.x.own.okCount },
      honestAbove: scored.filter((s, i) => !isSybil(s.p.peerId) && s.x.own.okCount > 0 && (sybilAt < 0 || i < sybilAt)).length
    })
  }
  return out
}

/** Completed jobs and awards to Sybils of one run. */
function runLine (context: AdversarialContext, name: string): { run: string, jobs: number, completed: number, awards: number, toSybils: number } {
  const run = context.runs.get(name)
  const awards = run?.harness.recorder.awards ?? []
  return {
    run: name,
    jobs: run?.run.jobs.length ?? 0,
    completed: run?.run.jobs.filter((j) => j.status === 'completed').length ?? 0,
    awards: awards.length,
    toSybils: awards.filter((a) => context.adversaries.has(a.provider.slice('peer:'.length))).length
  }
}

export function sybilRankSection (context: AdversarialContext): ReportSection {
  const names = ['gpumesh', 'gpumesh+sybil', `gpumesh+sybil+${SILENT_VARIANT}`]
  const lines = names.map((n) => runLine(context, n))
  const views = Object.fromEntries(names.slice(1).map((n) => [n, renterViews(context, n)]))
  const md: string[] = []
  md.push('Honest completion and the Sybils\' awards, with the Sybils vouching for each other and without (`+silent`: the same Sybils, no payments gossiped):', '')
  md.push('| run | jobs | completed | completion | awards | to Sybils |')
  md.push('|---|---:|---:|---:|---:|---:|')
  for (const l of lines) md.push(`| ${l.run} | ${l.jobs} | ${l.completed} | ${l.jobs > 0 ? `${(100 * l.completed / l.jobs).toFixed(1)} %` : 'n/a'} | ${l.awards} | ${l.toSybils} |`)
  md.push('', 'Each renter\'s reputation view at the end of the run: the best-scored Sybil against the best-scored honest provider it has its own history with (rank 1 = best among the providers it holds evidence on).', '')
  md.push('| run | renter | known | best Sybil: score | rank | own ok / failed | trusted reporters | best honest: score | rank | own ok | honest with history above the best Sybil |')
  md.push('|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|')
  for (const [run, vs] of Object.entries(views)) {
    for (const v of vs) {
      const s = v.bestSybil
      const h = v.bestHonest
      md.push(`| ${run} | ${v.renter} | ${v.known} | ${s?.score ?? '—'} | ${s?.rank ?? '—'} | ${s === null ? '—' : `${s.ownOk} / ${s.ownFailed}`} | ${s?.trustedReporters ?? '—'} | ${h?.score ?? '—'} | ${h?.rank ?? '—'} | ${h?.ownOk ?? '—'} | ${v.honestAbove} |`)
    }
  }
  return { key: 'sybil', title: 'Sybil identities', json: { runs: lines, renters: views }, markdown: md }
}

export const sybil: Scenario = {
  name: 'sybil',
  summary: `${SYBIL_SHARE * 100} % Sybil identities of one operator that bid low, deliver once, then vanish, and vouch for each other: honest completion against the calm run, their award share, their rank`,
  defaults: SYBIL_DEFAULTS,
  run (data: ScenarioData, options: ScenarioOptions): ScenarioResult {
    return runAdversarial(SYBIL_SPEC, data, { ...options, nodes: options.nodes ?? SYBIL_DEFAULTS.nodes, jobs: options.jobs ?? SYBIL_DEFAULTS.jobs })
  }
}
