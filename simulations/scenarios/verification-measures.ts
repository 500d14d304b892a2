/**
 * What verification bought in a market run (issue 11, `cheaters`): per job, whether the requester accepted
 * a wrong output — it paid a final `settled` payment for a receipt naming another output than the job's
 * true one (harness/outputs.ts; Recorder.acceptances) — and the compute it cost: GPU-seconds run (every
 * receipt signed, replicas and failed attempts included) against GPU-seconds needed (one complete run of
 * each job that ran), plus the requesters' own verification runs (re-executions of a split, fraud-proof
 * checks: Recorder.verificationRuns). Also whether any job got awards to two providers at one attempt, which is how a
 * run shows that the requester agent carried out `replicate k` at all.
 */
import type { Recorder } from '../harness/recorder.js'
import { trueOutput } from '../harness/outputs.js'

export interface JobVerdict {
  job: string
  /** The requester accepted (paid as settled) at least one provider's outputs. */
  accepted: boolean
  /** One of the outputs it accepted is not the job's true output. */
  wrongAccepted: boolean
}

export interface VerificationMeasures {
  /** Jobs submitted in the run. */
  jobs: number
  /** Jobs whose outputs the requester accepted. */
  accepted: number
  /** Of those, jobs where it accepted a wrong output. */
  wrongAccepted: number
  /** wrongAccepted / accepted (null when none was accepted). */
  wrongShare: number | null
  /** GPU-seconds of every run a receipt was signed for. */
  gpuSecondsRun: number
  /** GPU-seconds of the requesters' own runs: re-executions and fraud-proof checks. */
  gpuSecondsVerifying: number
  /** GPU-seconds of one complete run of each job that ran (its longest receipt). */
  gpuSecondsNeeded: number
  /** (gpuSecondsRun + gpuSecondsVerifying) / gpuSecondsNeeded (null when nothing ran). */
  overhead: number | null
  /** Jobs awarded to two or more providers at one attempt (replicas). */
  replicatedJobs: number
}

/** Each job's verdict, in the order of `jobs`. */
export function jobVerdicts (recorder: Pick<Recorder, 'acceptances'>, jobs: readonly string[]): JobVerdict[] {
  const byJob = new Map<string, string[]>()
  for (const a of recorder.acceptances) byJob.set(a.job, [...(byJob.get(a.job) ?? []), a.outputs])
  return jobs.map((job) => {
    const outputs = byJob.get(job) ?? []
    const truth = trueOutput(job).toString()
    return { job, accepted: outputs.length > 0, wrongAccepted: outputs.some((o) => o !== truth) }
  })
}

export function verificationMeasures (recorder: Pick<Recorder, 'acceptances' | 'receipts' | 'awards'> & Partial<Pick<Recorder, 'verificationRuns'>>, jobs: readonly string[]): VerificationMeasures {
  const verdicts = jobVerdicts(recorder, jobs)
  const accepted = verdicts.filter((v) => v.accepted).length
  const wrongAccepted = verdicts.filter((v) => v.wrongAccepted).length
  let gpuSecondsRun = 0
  const longest = new Map<string, number>()
  for (const r of recorder.receipts) {
    gpuSecondsRun += r.gpuSeconds
    longest.set(r.job, Math.max(longest.get(r.job) ?? 0, r.gpuSeconds))
  }
  let gpuSecondsVerifying = 0
  for (const r of recorder.verificationRuns ?? []) gpuSecondsVerifying += r.gpuSeconds
  let gpuSecondsNeeded = 0
  for (const s of longest.values()) gpuSecondsNeeded += s
  const providersAt = new Map<string, Set<string>>()
  for (const a of recorder.awards) {
    const k = `${a.job} ${a.attempt}`
    providersAt.set(k, (providersAt.get(k) ?? new Set()).add(a.provider))
  }
  const replicated = new Set<string>()
  for (const [k, providers] of providersAt) if (providers.size >= 2) replicated.add(k.slice(0, k.indexOf(' ')))
  return {
    jobs: jobs.length,
    accepted,
    wrongAccepted,
    wrongShare: accepted > 0 ? wrongAccepted / accepted : null,
    gpuSecondsRun,
    gpuSecondsVerifying,
    gpuSecondsNeeded,
    overhead: gpuSecondsNeeded > 0 ? (gpuSecondsRun + gpuSecondsVerifying) / gpuSecondsNeeded : null,
    replicatedJobs: replicated.size
  }
}

/** What the retroactive audits after convictions (protocol/market/result-audit.ts) found in a run. */
export interface AuditMeasures {
  /** Jobs whose accepted result a requester's audit disproved (each job once, however often it was recorded). */
  disproved: number
  /** Of the jobs with a wrong output accepted, those disproved afterwards (the buyer was told). */
  wrongDisproved: number
  /** Jobs marked suspect (non-deterministic, signed by a convicted provider). */
  suspect: number
  /** Audit re-executions run and their GPU-seconds (part of gpuSecondsVerifying). */
  auditRuns: number
  gpuSecondsAuditing: number
}

export function auditMeasures (recorder: Pick<Recorder, 'acceptances' | 'audits' | 'verificationRuns'>, jobs: readonly string[]): AuditMeasures {
  const wrong = new Set(jobVerdicts(recorder, jobs).filter((v) => v.wrongAccepted).map((v) => v.job))
  const disproved = new Set(recorder.audits.filter((a) => a.status === 'disproved').map((a) => a.job))
  const suspect = new Set(recorder.audits.filter((a) => a.status === 'suspect').map((a) => a.job))
  const runs = recorder.verificationRuns.filter((r) => r.kind === 'audit')
  return {
    disproved: disproved.size,
    wrongDisproved: [...disproved].filter((j) => wrong.has(j)).length,
    suspect: suspect.size,
    auditRuns: runs.length,
    gpuSecondsAuditing: runs.reduce((s, r) => s + r.gpuSeconds, 0)
  }
}

/** One window of a run's accepted jobs, in the order they were accepted. */
export interface AcceptanceWindow {
  /** Time of the window's first and last acceptance, ms from the run's first acceptance. */
  fromMs: number
  toMs: number
  accepted: number
  wrongAccepted: number
  wrongShare: number | null
  /** Distinct providers convicted by any node by the window's last acceptance. */
  convictedBy: number
}

/**
 * The run's accepted jobs (a job at its last acceptance) split into `windows` windows of equal counts
 * (the first ones take the remainder), with the wrong share in each and the convictions so far: the
 * conviction curve, and in the last window the steady state.
 */
export function acceptanceWindows (recorder: Pick<Recorder, 'acceptances' | 'convictions'>, jobs: readonly string[], windows: number): AcceptanceWindow[] {
  if (!Number.isInteger(windows) || windows < 1) throw new RangeError(`windows: expected an integer ≥ 1, got ${windows}`)
  const wanted = new Set(jobs)
  const at = new Map<string, number>()
  for (const a of recorder.acceptances) if (wanted.has(a.job)) at.set(a.job, Math.max(at.get(a.job) ?? -Infinity, a.at))
  const verdict = new Map(jobVerdicts(recorder, [...at.keys()]).map((v) => [v.job, v.wrongAccepted]))
  const order = [...at.entries()].sort((x, y) => x[1] - y[1] || (x[0] < y[0] ? -1 : 1))
  const first = order[0]?.[1] ?? 0
  const conviction = new Map<string, number>()
  for (const c of recorder.convictions) conviction.set(c.provider, Math.min(conviction.get(c.provider) ?? Infinity, c.at))
  const out: AcceptanceWindow[] = []
  const n = Math.min(windows, order.length)
  let start = 0
  for (let w = 0; w < n; w++) {
    const size = Math.floor(order.length / n) + (w < order.length % n ? 1 : 0)
    const slice = order.slice(start, start + size)
    start += size
    const wrong = slice.filter(([job]) => verdict.get(job) === true).length
    const toAt = slice[slice.length - 1]?.[1] ?? first
    out.push({
      fromMs: (slice[0]?.[1] ?? first) - first,
      toMs: toAt - first,
      accepted: slice.length,
      wrongAccepted: wrong,
      wrongShare: slice.length > 0 ? wrong / slice.length : null,
      convictedBy: [...conviction.values()].filter((t) => t <= toAt).length
    })
  }
  return out
}
