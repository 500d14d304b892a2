/**
 * `cheaters`: colluding providers that return wrong results (issue 11). On the `market` workload, 30 % of
 * the fleet's nodes run their agent honestly — bid at their owner's floor, accept, run for the job's time,
 * heartbeat — and then sign a receipt for the colluders' one shared wrong output of that job
 * (harness/outputs.ts): the outputs match their CIDs, so the requester's own check passes, and two
 * cheaters on one job agree. Runs on the same workload: gpumesh without cheaters, with them under
 * verification `none`, with them under `replicate 2` on every job, and under `replicate 2` with every job a
 * (deterministic) wasm job, whose split the requester settles by re-executing it and whose outvoted cheater
 * it proves wrong (a `wrong-output` fraud proof that every requester checks and convicts on); the central matcher that never
 * places a job on a cheater (the bound) and the old way. Every node's ad lists one address in a /16 of its
 * own (cheaters too: the worst case for replicate's independence rule, which cannot tell them apart).
 *
 * Every renter runs the proof audit (replica-runs.ts unprovenAgreement: an agreement of providers none of
 * which is proven to it is re-executed), and audits after a conviction (protocol/market/result-audit.ts: its settled results the convicted
 * provider signed are re-executed, a wrong one disproved and its co-signers proven wrong), and a further run
 * adds the agreement audit (a drawn share of the wasm jobs whose replicas agree re-executed all the same).
 *
 * The section counts, per run, the jobs whose requester accepted a wrong output and the compute overhead
 * ((GPU-hours run + the requesters' own verification runs) / GPU-hours needed, verification-measures.ts)
 * and the convictions, the wrong results disproved later, and the conviction curve: the wrong share per fifth
 * of the accepted jobs and the providers convicted by each fifth's end (the last fifth: the steady state). A replicate run in which no job got a
 * second award says so: `replicate 2` was not carried out (no two independent bids), and its numbers are not
 * reported as replication's.
 */
import type { ReportSection } from '../report/report.js'
import type { FleetNode, Workload } from '../model.js'
import { runAdversarial, type AdversarialContext, type AdversarialSpec } from './adversarial.js'
import { acceptanceWindows, auditMeasures, verificationMeasures, type AcceptanceWindow, type AuditMeasures, type VerificationMeasures } from './verification-measures.js'
import type { Scenario, ScenarioData, ScenarioOptions, ScenarioResult } from './scenario.js'

export const CHEATERS_DEFAULTS = Object.freeze({ nodes: 200, jobs: 100 })
export const CHEATER_SHARE = 0.30
export const REPLICATE_VARIANT = 'replicate-2'
/** The same, every job a wasm job: re-execution settles a split, fraud proofs convict. */
export const REPLICATE_WASM_VARIANT = 'replicate-2-wasm'
/** The same as the wasm run, and the renters re-execute a share of the jobs whose replicas agree (the agreement audit). */
export const REPLICATE_WASM_AUDIT_VARIANT = 'replicate-2-wasm-audit'
/** The agreement audit's share, per mille. */
export const AGREEMENT_AUDIT_PER_MILLE = 100
/** Windows of the conviction curve (the last one is the steady state). */
export const CURVE_WINDOWS = 5
/** The issue's target for wrong results accepted under `replicate 2` with fraud proofs. */
export const REPLICATE_MAX_WRONG_SHARE = 0.0005

/** One IPv4 address per node, each in a /16 of its own (index i → 20+⌊i/256⌋.(i mod 256).0.1). */
export function distinctNetworks (workload: Workload): (node: FleetNode) => readonly string[] {
  const index = new Map(workload.fleet.map((n, i) => [n.id, i]))
  return (node) => {
    const i = index.get(node.id) ?? 0
    return [`/ip4/${20 + Math.floor(i / 256)}.${i % 256}.0.1/tcp/4001`]
  }
}

export const CHEATERS_SPEC: AdversarialSpec = {
  name: 'cheaters',
  groups: [{
    name: 'cheater',
    share: CHEATER_SHARE,
    behaviour: () => ({ collude: true }),
    describe: 'bid and run like honest providers, then sign a receipt for the colluders\' shared wrong output'
  }],
  minRelativeCompletion: 0.95,
  claim: 'colluding cheaters do not lower completion (at least 95 % of the completion without them): they deliver, wrongly',
  assumptions: [
    `Cheaters: ${CHEATER_SHARE * 100} % of the nodes collude: each job's wrong output is one CID they all sign, so two cheaters replicating a job agree. Every node's ad lists an address in its own /16, so replicate's subnet rule never keeps two cheaters apart.`,
    'A wrong result accepted: the requester paid a final settled payment for a receipt naming another output than the job\'s true one. Overhead: GPU-seconds of every receipt signed, plus the requesters\' own runs (re-executions of a split, fraud-proof checks), over one complete run of each job that ran.',
    'After a conviction every renter revisits the results it accepted that the convicted provider signed (protocol/market/result-audit.ts): a wasm job is re-executed (once per job, one at a time), and a wrong one is marked disproved and its other signers proven wrong (a wrong-output proof each, gossiped); a process job is marked suspect. A disproved result stays counted as a wrong result accepted: its settled payment is final.',
    'The proof audit (the daemon\'s default, in every replicate run): a renter re-executes the agreeing replicas of a wasm job — or its lone delivered replica — when none of their providers is proven to it yet (its output matched the renter\'s own run, or a proven provider\'s); agreeing with each other proves colluders nothing.',
    `The audit run: as the wasm run, and each renter re-executes ${AGREEMENT_AUDIT_PER_MILLE / 10} % of the jobs whose two replicas agree (a secret draw per job), which is how two colluders that agree get caught.`,
    'The wasm run: the same trace\'s jobs marked deterministic (executor wasm), each running for its trace duration wherever it runs, the requester\'s own re-execution and every proof check included. A requester that hears a fraud proof re-executes its job once per subject (node/trust/fraud-verifier.ts: none for a subject it convicted already or is checking), every renter alike.'
  ],
  market: (workload) => ({ addrsOf: distinctNetworks(workload) }),
  variants: [
    { name: REPLICATE_VARIANT, market: { verification: { mode: 'replicate', k: 2 } } },
    { name: REPLICATE_WASM_VARIANT, market: { verification: { mode: 'replicate', k: 2 }, executor: 'wasm' } },
    { name: REPLICATE_WASM_AUDIT_VARIANT, market: { verification: { mode: 'replicate', k: 2 }, executor: 'wasm', agreementAuditPerMille: AGREEMENT_AUDIT_PER_MILLE } }
  ],
  sections: (context) => [verificationSection(context)]
}

const r4 = (x: number | null): number | null => (x === null ? null : Math.round(x * 10_000) / 10_000)
const pct = (x: number | null, digits = 1): string => (x === null ? 'n/a' : `${(x * 100).toFixed(digits)} %`)

interface RunRow extends VerificationMeasures, AuditMeasures { curve: AcceptanceWindow[], steadyWrongShare: number | null, run: string, verification: string, carriedOut: boolean, awardsToCheaters: number, awards: number, convicted: number, convictedHonest: number, awardsAfterConviction: number }

/** The section: wrong results accepted and compute overhead per run. */
export function verificationSection ({ runs, adversaries }: AdversarialContext): ReportSection {
  const rows: RunRow[] = []
  for (const [name, run] of runs) {
    const jobs = [...run.harness.world.jobs.keys()]
    const m = verificationMeasures(run.harness.recorder, jobs)
    const audit = name.endsWith(`+${REPLICATE_WASM_AUDIT_VARIANT}`)
    const wasm = audit || name.endsWith(`+${REPLICATE_WASM_VARIANT}`)
    const replicate = wasm || name.endsWith(`+${REPLICATE_VARIANT}`)
    const curve = acceptanceWindows(run.harness.recorder, jobs, CURVE_WINDOWS)
    const { awards, convictions } = run.harness.recorder
    const convicted = new Set(convictions.map((c) => c.provider))
    // awards a requester made to a provider it had convicted before
    const convictedAt = new Map(convictions.map((c) => [`${c.node} ${c.provider}`, c.at]))
    const afterConviction = awards.filter((a) => { const at = convictedAt.get(`${a.requester} ${a.provider}`); return at !== undefined && a.at > at }).length
    rows.push({
      run: name,
      verification: audit ? `replicate 2, wasm, agreement audit ${AGREEMENT_AUDIT_PER_MILLE / 10} %` : wasm ? 'replicate 2, wasm' : replicate ? 'replicate 2' : 'none',
      // replicate 2 is carried out only where some job got a second award at one attempt
      carriedOut: !replicate || m.replicatedJobs > 0,
      awards: awards.length,
      awardsToCheaters: awards.filter((a) => adversaries.has(a.provider.slice('peer:'.length))).length,
      convicted: convicted.size,
      convictedHonest: [...convicted].filter((p) => !adversaries.has(p.slice('peer:'.length))).length,
      awardsAfterConviction: afterConviction,
      ...m,
      ...auditMeasures(run.harness.recorder, jobs),
      curve,
      steadyWrongShare: curve[curve.length - 1]?.wrongShare ?? null
    })
  }
  const json = rows.map((r) => r.carriedOut
    ? { ...r, wrongShare: r4(r.wrongShare), steadyWrongShare: r4(r.steadyWrongShare), overhead: r4(r.overhead), curve: r.curve.map((w) => ({ ...w, wrongShare: r4(w.wrongShare) })), meetsTarget: r.wrongShare !== null && r.wrongShare <= REPLICATE_MAX_WRONG_SHARE, steadyMeetsTarget: r.steadyWrongShare !== null && r.steadyWrongShare <= REPLICATE_MAX_WRONG_SHARE }
    : { run: r.run, verification: r.verification, carriedOut: false, jobs: r.jobs, replicatedJobs: r.replicatedJobs, accepted: null, wrongAccepted: null, wrongShare: null, overhead: null, note: 'replicate 2 was not carried out: no job got a second award' })
  const md: string[] = []
  md.push('Wrong results accepted (the requester paid as settled for a receipt naming a wrong output) and the compute verification cost (GPU-hours run / GPU-hours needed). The wrong share follows the cheaters\' share of the awards, not of the identities; in the run without cheaters their nodes are honest.', '')
  md.push('| run | verification | jobs | accepted | wrong accepted | share of accepted | last fifth | wrong, disproved later | suspect | awards to the cheaters\' nodes | GPU-h run | GPU-h verifying (auditing) | GPU-h needed | overhead | convicted (honest) | awards after conviction |')
  md.push('|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|')
  for (const r of rows) {
    if (!r.carriedOut) { md.push(`| ${r.run} | ${r.verification} | ${r.jobs} | — | — | not carried out | — | — | — | — | — | — | — | — | — | — |`); continue }
    md.push(`| ${r.run} | ${r.verification} | ${r.jobs} | ${r.accepted} | ${r.wrongAccepted} | ${pct(r.wrongShare, 2)} | ${pct(r.steadyWrongShare, 2)} | ${r.wrongDisproved} | ${r.suspect} | ${r.awardsToCheaters} of ${r.awards} | ${(r.gpuSecondsRun / 3600).toFixed(1)} | ${(r.gpuSecondsVerifying / 3600).toFixed(1)} (${(r.gpuSecondsAuditing / 3600).toFixed(1)}) | ${(r.gpuSecondsNeeded / 3600).toFixed(1)} | ${r.overhead === null ? 'n/a' : `${r.overhead.toFixed(3)}×`} | ${r.convicted} (${r.convictedHonest}) | ${r.awardsAfterConviction} |`)
  }
  md.push('')
  md.push(`"Last fifth": the wrong share among the last ${100 / CURVE_WINDOWS} % of the accepted jobs (in the order accepted), the steady state. "Wrong, disproved later": wrong results accepted whose requester's audit after a conviction re-executed them and told the buyer; they stay counted as wrong accepted (the settled payment is final). The target is wrong results accepted ≤ ${pct(REPLICATE_MAX_WRONG_SHARE, 2)}.`, '')
  for (const r of rows.filter((x) => x.carriedOut && x.verification !== 'none')) {
    const met = r.wrongShare !== null && r.wrongShare <= REPLICATE_MAX_WRONG_SHARE
    const steady = r.steadyWrongShare !== null && r.steadyWrongShare <= REPLICATE_MAX_WRONG_SHARE
    md.push(`**${r.run}:** the target is ${met ? 'met' : 'not met'} over the run (${pct(r.wrongShare, 2)}) and ${steady ? 'met' : 'not met'} in the last fifth (${pct(r.steadyWrongShare, 2)}).`, '')
  }
  md.push('The conviction curve: wrong results accepted per fifth of the accepted jobs, and the providers convicted (by any node) by the end of each fifth.', '')
  md.push('| run | ' + Array.from({ length: CURVE_WINDOWS }, (_, i) => `fifth ${i + 1}`).join(' | ') + ' |')
  md.push('|---|' + Array.from({ length: CURVE_WINDOWS }, () => '---:').join('|') + '|')
  for (const r of rows.filter((x) => x.carriedOut)) {
    md.push(`| ${r.run} | ` + r.curve.map((w) => `${w.wrongAccepted}/${w.accepted} wrong, ${w.convictedBy} convicted (by ${(w.toMs / 3_600_000).toFixed(1)} h)`).join(' | ') + ' |')
  }
  md.push('')
  for (const r of rows.filter((x) => x.awardsAfterConviction > 0)) {
    md.push(`**${r.run}:** ${r.awardsAfterConviction} awards went to a provider its requester had convicted before: a replicated job's awards (protocol/market/replica-runs.ts closeReplicas) do not screen convicted bidders, as a single award's do (decideAward's CONVICTED). Each such replica is outvoted again, at the cost of its run and a re-execution.`, '')
  }
  for (const r of rows.filter((x) => !x.carriedOut)) {
    md.push(`**${r.run}: not measured.** No job of ${r.jobs} got a second award at one attempt (no two independent bids: the bidders' addresses unknown or shared), so each ran once, as under \`none\`. The target (wrong results accepted ≤ ${pct(REPLICATE_MAX_WRONG_SHARE, 2)} with fraud proofs) is neither met nor missed here.`)
  }
  return { key: 'verification', title: 'Verification', json: { runs: json }, markdown: md }
}

export const cheaters: Scenario = {
  name: 'cheaters',
  summary: `${CHEATER_SHARE * 100} % colluding cheaters returning one shared wrong output: wrong results accepted and compute overhead under verification none and replicate 2`,
  defaults: CHEATERS_DEFAULTS,
  run (data: ScenarioData, options: ScenarioOptions): ScenarioResult {
    return runAdversarial(CHEATERS_SPEC, data, { ...options, nodes: options.nodes ?? CHEATERS_DEFAULTS.nodes, jobs: options.jobs ?? CHEATERS_DEFAULTS.jobs })
  }
}
