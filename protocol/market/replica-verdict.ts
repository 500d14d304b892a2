/**
 * What a requester does once every replica of a job has run (protocol/README.md §5.9, "replicate k",
 * "spotcheck perMille"): a pure decision over the replicas' verified receipts, taken by the requester
 * agent (replica-runs.ts) and carried out there.
 *
 * - No replica delivered: the job failed. One delivered (the others failed all their attempts, or a
 *   spotcheck found no second provider): it is paid, unverified — unless the job is deterministic and
 *   audited (`auditAgreement`, below): then it is re-run and judged as a group of one.
 * - Any split of a deterministic job (wasm), majority or not: the requester re-runs the job itself;
 *   the group whose output equals its own is paid, every other voter outvoted; none equal to it:
 *   every voter outvoted. A majority of colluders cannot outvote the right output, and the requester
 *   re-runs the job to sign its fraud proofs anyway.
 * - Agreeing replicas of a deterministic job are paid on their agreement, unless the job is audited
 *   (`auditAgreement`: the agreement audit drew it, or none of their providers is proven, replica-runs.ts): then the requester re-runs it as for a split, so colluders that
 *   agree on a wrong output are outvoted by the re-execution.
 * - A majority (compareReplicas) of another job: its voters are paid, the other voters outvoted.
 * - No majority, another job: one tie-break replica on a further independent provider (once, while the
 *   job has fewer than MAX_REPLICAS); after it, or when none can run, the buyer is shown the groups
 *   and nobody is paid on the comparison (`disputed`).
 */
import type { OpenedMessage } from '../message.js'
import { isDeterministic } from '../trust/fraud-proof.js'
import { MAX_REPLICAS, compareReplicas, type OutputGroup } from '../trust/replicate.js'
import { compareStrings } from './scoring.js'

/** One replica's run as the verdict sees it. */
export interface ReplicaRunInput {
  readonly provider?: string
  /** Its verified receipt (outputs fetched and checked), when it delivered one; undefined = none (a run without a provider never delivered). */
  readonly receipt?: OpenedMessage<'receipt'>
}

export interface VerdictInput {
  readonly request: OpenedMessage<'job-request'>
  /** Every replica slot's last run (failed ones without a receipt). */
  readonly runs: readonly ReplicaRunInput[]
  /** The manifest CID string of the requester's own re-execution, once it has one. */
  readonly reexecuted?: string
  /** The local re-execution could not be done. */
  readonly reexecuteFailed?: boolean
  /** A tie-break replica was already run (or tried) for this job. */
  readonly tieBroken: boolean
  /**
   * The agreement audit drew this job: replicas of a deterministic job that all agree are re-executed
   * too (colluders who agree are caught only so), and the re-execution decides as for a split.
   */
  readonly auditAgreement?: boolean
}

export type Verdict =
  | { kind: 'failed', reason: string }
  | { kind: 'unverified', provider: string }
  /** Pay `paid`, report `outvoted`; `by`: what decided. */
  | { kind: 'decided', by: 'majority' | 're-execution', outputs?: string, paid: string[], outvoted: string[], groups: OutputGroup[] }
  | { kind: 'reexecute', groups: OutputGroup[] }
  | { kind: 'tie-break', groups: OutputGroup[] }
  | { kind: 'disputed', groups: OutputGroup[] }

/** The verdict over the replicas' runs (see the file comment). */
export function replicaVerdict (input: VerdictInput): Verdict {
  const delivered = input.runs.filter((r): r is { provider: string, receipt: OpenedMessage<'receipt'> } => r.receipt !== undefined && r.provider !== undefined)
  const only = delivered[0]
  if (only === undefined) return { kind: 'failed', reason: 'no replica delivered a verified receipt' }
  const deterministic = isDeterministic(input.request.payload)
  // an agreement audit whose own run failed leaves the agreement to decide, as without the audit
  const audited = deterministic && input.auditAgreement === true && input.reexecuteFailed !== true
  // a lone delivered replica is paid unverified, unless the audit re-executes it as it would an agreement
  if (delivered.length === 1 && !audited) return { kind: 'unverified', provider: only.provider }
  const outcome = compareReplicas({ request: input.request, replicas: delivered.map((r) => r.provider), receipts: delivered.map((r) => r.receipt) })
  const { groups } = outcome
  if (outcome.kind === 'majority' && (!deterministic || (groups.length === 1 && !audited))) {
    return { kind: 'decided', by: 'majority', outputs: outcome.outputs.toString(), paid: outcome.matched, outvoted: outcome.mismatched, groups }
  }
  if (deterministic) {
    if (input.reexecuted === undefined) return input.reexecuteFailed === true ? { kind: 'disputed', groups } : { kind: 'reexecute', groups }
    const right = groups.find((g) => g.outputs.toString() === input.reexecuted)
    const voters = groups.flatMap((g) => g.providers)
    const paid = right?.providers ?? []
    return { kind: 'decided', by: 're-execution', outputs: input.reexecuted, paid, outvoted: voters.filter((p) => !paid.includes(p)).sort(compareStrings), groups }
  }
  if (!input.tieBroken && input.runs.length < MAX_REPLICAS) return { kind: 'tie-break', groups }
  return { kind: 'disputed', groups }
}

/** One line for the job's view: the output groups, most votes first. */
export function describeGroups (groups: readonly OutputGroup[]): string {
  return groups.map((g) => `${g.outputs.toString()} by ${g.providers.length}`).join(' vs ')
}
