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
