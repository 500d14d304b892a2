/**
 * Replicated and spot-checked jobs in the requester agent (protocol/README.md §5.9): one lifecycle
 * (`reduceRequester`) per replica, each with its own award, lease, heartbeats and payments; the job's
 * own lifecycle ran the first auction and then only shows the whole.
 *
 * - At the first close of a `replicate k` job, decideReplicatedAward takes up to k independent bids
 *   (subnet/cluster rule), one award each at the same attempt. Fewer than two: the round is re-opened
 *   once (then the job expires); two or more but fewer than k: those run, and the view says so.
 * - A replica that fails is re-auctioned alone by its own lifecycle: its round excludes every other
 *   replica's provider, and at its close a bid that shares a network or trust cluster with one is skipped.
 * - Once every replica has a verified receipt or has ended, replicaVerdict decides: matched replicas
 *   get their final payment, outvoted ones an `output-mismatch` failure report (and, for a
 *   deterministic job, a `publish-fraud-proof`), a split asks for a local re-execution (wasm) or one
 *   tie-break replica; a split that stays is shown to the buyer, the job `failed` with the groups.
 * - A spotcheck: after the single run is verified, the draw (spotcheck.ts, the agent's secret seed)
 *   may start a check: a new attempt on another independent provider, compared with the first.
 */
import { MAX_EXCLUDED_PEERS } from '../limits.js'
import { AWARD_ATTEMPT_LIMIT } from './lifecycle-shared.js'
import { decideReplicatedAward, networksOf, type AddressLookup, type ClusterLookup, type NetworkLookup } from '../trust/replicate.js'
import { spotchecked } from '../trust/spotcheck.js'
import { isDeterministic } from '../trust/fraud-proof.js'
import type { AuctionBid } from './award.js'
import type { MarketParams } from './params.js'
import { describeGroups, replicaVerdict, type Verdict } from './replica-verdict.js'
import type { RequesterAgentEffect, ReplicationView } from './requester-agent-types.js'
import { HELD_BACK, heldBackText, type StandingSelection } from './standing.js'
import { awardKey, credits, note, short, type AgentJob, type ReplicaSlot, type Replication, type Run } from './requester-agent-job.js'
import { isRequesterFinal, nextRequesterDeadline, type RequesterEvent, type RequesterJob, type RequesterStatus } from './requester-lifecycle.js'

/** What the runs need from the agent. */
export interface ReplicaHost {
  readonly params: MarketParams
  /** Feed one lifecycle event to a run and carry out its effects. */
  step: (job: AgentJob, run: Run, event: RequesterEvent, out: RequesterAgentEffect[]) => void
  reliability: (peer: string, now: number) => number | undefined
  /** The RTT to `peer` in this node's view at `now` (rtt-view.ts); undefined: unknown. */
  rttMs: (peer: string, now: number) => number | undefined
  /** Convicted on a verified fraud proof in this node's view: never a replica (decideAward's CONVICTED). */
  convicted: (peer: string) => boolean
  readonly addresses: AddressLookup
  /** Overrides the subnet keys of `addresses` (replicate.ts NetworkLookup). */
  readonly networks?: NetworkLookup
  readonly cluster?: ClusterLookup
  /** The provider has never delivered to this node. */
  newcomer: (peer: string) => boolean
  /**
   * The bids of a round closing at `now` that screening leaves (with `excluded`), split by the standing
   * rule (standing.ts); `mayReopen` false: never a re-open. `screenedOut`: the others.
   */
  byStanding: (job: AgentJob, bids: readonly AuctionBid[], now: number, excluded: readonly string[], mayReopen?: boolean) => StandingSelection & { screenedOut: AuctionBid[] }
  /** A verified delivery or a failure, into the reputation view. */
  record: (peer: string, ok: boolean, now: number) => void
  readonly spotcheckSeed?: Uint8Array
  /** Share (per mille) of agreeing deterministic replicated jobs re-executed all the same, drawn with `spotcheckSeed`. */
  readonly agreementAuditPerMille?: number
  /** Re-execute an agreement of deterministic replicas (or a lone delivered one) none of whose providers is proven to this node (default on). */
  readonly auditUnproven: boolean
  /** The provider's output matched this node's own re-execution, or a proven provider's (the proof audit). */
  proven: (peer: string) => boolean
  prove: (peer: string) => void
  /** An outvoted provider is proven no more. */
  unprove: (peer: string) => void
  /** The longest run this node re-executes, ms (absent: no limit): the proof audit skips longer ones. */
  readonly reexecuteLimitMs?: number
}

/** The job's `verification` as the agent carries it out (none without the opened request, which the comparison needs). */
export function verificationOf (job: AgentJob): JobVerification {
  const v = job.request.verification
  return job.envelope === undefined ? { mode: 'none' } : v
}
type JobVerification = AgentJob['request']['verification']

/** The job's runs: its replicas, or its own lifecycle. */
export function runsOf (job: AgentJob): Run[] {
  return job.replication?.slots ?? [job]
}

/** The run an event from `provider` under `attempt` belongs to. */
export function runOf (job: AgentJob, attempt: number, provider: string | undefined): Run | undefined {
  return runsOf(job).find((r) => r.state.attempt === attempt && (provider === undefined || r.state.award?.provider === provider || r.decision?.provider === provider))
}

/** The run taking bids now, if any. */
export function biddingRun (job: AgentJob): Run | undefined {
  return runsOf(job).find((r) => r.state.status === 'bidding' && !r.state.auction.closing)
}

/** The provider each other replica holds (or last held). */
function takenBy (job: AgentJob, except: Run): string[] {
  return (job.replication?.slots ?? []).filter((s) => s !== except).flatMap((s) => s.state.award?.provider ?? s.decision?.provider ?? [])
}

/** Whether `provider` may run beside the `taken` ones: not one of them, no shared network, no shared trust cluster. */
export function independentOf (host: ReplicaHost, provider: string, taken: readonly string[]): boolean {
  if (taken.includes(provider)) return false
  const nets = networksOf(host, provider)
  const cluster = host.cluster?.(provider)
  return taken.every((t) => {
    const theirs = networksOf(host, t)
    return !nets.some((n) => theirs.includes(n)) && (cluster === undefined || cluster !== host.cluster?.(t))
  })
}

/** Exclusions of a run's rounds: its own failed providers and every other replica's. */
export function exclusionsOf (job: AgentJob, run: Run, own: readonly string[]): string[] {
  return [...new Set([...own, ...takenBy(job, run)])].slice(0, MAX_EXCLUDED_PEERS)
}

/**
 * The close of a round for a replicated job (`want` replicas: k at the first close, 1 for a re-auctioned
 * or further replica): the awards, or an empty close that the lifecycle turns into a re-opened round.
 */
export function closeReplicas (host: ReplicaHost, job: AgentJob, run: Run, round: number, exclude: string[], want: number, out: RequesterAgentEffect[]): void {
  const now = run.state.now
  const taken = takenBy(job, run)
  const independent = run.state.auction.bids.map((b) => job.bids.get(b.bid))
    .filter((b): b is AuctionBid => b !== undefined && independentOf(host, b.signer, taken))
  const excluded = exclusionsOf(job, run, exclude)
  const standing = host.byStanding(job, independent, now, excluded)
  // replicas cross-check each other: when fewer bids are in good standing than replicas are wanted, rank them all
  const bids = standing.fallback || standing.bids.length < want ? independent : [...standing.bids, ...standing.screenedOut]
  if (standing.heldBack.length > 0) out.push(note(job, 'held-back', heldBackText(standing)))
  const first = run === job
  let decision
  try {
    decision = decideReplicatedAward({
      job: { cid: job.cid, payload: job.request },
      bids,
      reliability: (peer) => host.reliability(peer, now),
      rtt: (peer) => host.rttMs(peer, now),
      convicted: host.convicted,
      excluded,
      attempt: run.state.attempt + 1,
      now,
      leaseMs: run.state.config.leaseMs,
      billingIntervalSec: run.state.config.billingIntervalMs / 1000,
      params: host.params.scoring,
      k: want,
      addresses: host.addresses,
      ...(host.networks !== undefined ? { networks: host.networks } : {}),
      ...(host.cluster !== undefined ? { cluster: host.cluster } : {})
    })
  } catch (err) {
    out.push({ type: 'ignored', job: job.id, reason: `award decision failed: ${(err as Error).message}` })
    host.step(job, run, { type: 'bidding-closed', now, round }, out)
    return
  }
  const ranked = decision.decision
  for (const view of job.bidViews) {
    const r = ranked.kind === 'award' ? ranked.ranking.find((b) => b.cid === view.cid) : undefined
    if (r !== undefined) view.effectivePrice = Math.round(r.effectivePrice)
    const rejected = ranked.rejected.find((b) => b.cid === view.cid)
    if (rejected !== undefined) view.rejected = rejected.reason
    else if (r === undefined && standing.heldBack.some((h) => h.bid.cid.toString() === view.cid)) view.rejected = HELD_BACK
  }
  const awards = decision.kind === 'awards' ? decision.awards : []
  const selection = decision.kind === 'awards' ? decision.selection : undefined
  if (awards.length === 0 || (first && awards.length < 2)) {
    const skipped = selection?.skipped.length ?? 0
    out.push(note(job, 'replicas', `${awards.length} independent bid(s), ${want} wanted${skipped > 0 ? ` (${skipped} skipped: same network or cluster, or no address)` : ''}`))
    host.step(job, run, { type: 'bidding-closed', now, round }, out)
    return
  }
  if (first) {
    const base = { ...job.state, auction: { ...job.state.auction, closing: true } }
    const slots: ReplicaSlot[] = awards.map(() => ({ role: 'replica', state: base }))
    job.replication = { mode: 'replicate', k: want, slots, tieBroken: false, judged: false, cancelled: false }
    if (awards.length < want) {
      job.replication.shortfall = `only ${awards.length} independent provider(s) of ${want} bid`
      out.push(note(job, 'replicas', `running ${awards.length} replicas: ${job.replication.shortfall}`))
    }
  }
  const targets = first ? (job.replication as Replication).slots : [run]
  awards.forEach((award, i) => {
    const target = targets[i] as Run
    const replica = selection?.replicas[i]
    const next = replica?.considered[1]
    const why = `replica ${i + 1} of ${awards.length}: effective price ${credits(Math.round(replica?.bid.effectivePrice ?? award.price))}` +
      (next !== undefined ? ` vs ${credits(Math.round(next.effectivePrice))} next` : '')
    target.decision = { type: 'send-award', job: job.id, attempt: award.attempt, provider: award.winner, price: award.price, fields: award, ranking: replica?.considered ?? [], why }
    host.step(job, target, { type: 'bidding-closed', now, round, winner: { bid: award.bid.toString(), provider: award.winner, price: award.price, ...(host.newcomer(award.winner) ? { newcomer: true } : {}) } }, out)
  })
  summarise(job)
}

const PROGRESS: readonly RequesterStatus[] = ['awarded', 'running', 'verifying', 'completed', 'verified']

/** The job's own state while its replicas run: the least advanced replica's status, no award, no deadline. */
export function summarise (job: AgentJob): void {
  const rep = job.replication
  if (rep === undefined) return
  const live = rep.slots.filter((s) => !isRequesterFinal(s.state.status)).map((s) => s.state.status === 'bidding' ? 'awarded' : s.state.status)
  const at = live.length === 0 ? 'completed' : PROGRESS[Math.min(...live.map((s) => PROGRESS.indexOf(s)))] as RequesterStatus
  const { wakeAt: _wake, award: _award, ...rest } = job.state
  const status: RequesterStatus = rep.ending?.status ?? at
  job.state = {
    ...rest,
    status,
    ...(rep.ending !== undefined ? { reason: rep.ending.reason } : {}),
    attempt: Math.max(job.state.attempt, ...rep.slots.map((s) => s.state.attempt)),
    failures: rep.slots.reduce((n, s) => n + s.state.failures, 0),
    auction: { ...job.state.auction, round: nextRound(job) - 1, closing: false, bids: [] }
  }
}

/** The round number a new round of the job takes (rounds are numbered across all replicas). */
export function nextRound (job: AgentJob): number {
  return Math.max(job.state.auction.round, ...runsOf(job).map((r) => r.state.auction.round)) + 1
}

/**
 * A further replica (a tie-break or a spotcheck's check) in a new round excluding every replica's
 * provider; undefined when the job can no longer be auctioned (expired, out of award attempts).
 */
function openReplica (job: AgentJob, role: ReplicaSlot['role'], template: RequesterJob, out: RequesterAgentEffect[]): ReplicaSlot | undefined {
  const rep = job.replication as Replication
  const now = Math.max(template.now, job.state.now)
  const attempt = Math.max(job.state.attempt, ...rep.slots.map((s) => s.state.attempt))
  if (now >= template.config.expiresAt || attempt >= AWARD_ATTEMPT_LIMIT) return undefined
  const slot: ReplicaSlot = { role, state: template }
  const excluded = exclusionsOf(job, slot, rep.slots.flatMap((s) => s.state.excluded))
  const { wakeAt: _w, award: _a, reason: _r, ...rest } = template
  const closesAt = now + template.config.bidWindowMs
  slot.state = { ...rest, status: 'bidding', now, attempt, failures: 0, excluded, auction: { round: nextRound(job), closesAt, closing: false, reopened: false, bids: [] } }
  const deadline = nextRequesterDeadline(slot.state)
  if (deadline !== undefined) {
    slot.state = { ...slot.state, wakeAt: deadline.at }
    out.push({ type: 'wake', job: job.id, at: deadline.at })
  }
  rep.slots.push(slot)
  out.push({ type: 'publish-round', job: job.id, round: slot.state.auction.round, attempt: attempt + 1, excluded, reason: 'replica' })
  return slot
}

/** After the single run was verified: whether the spotcheck draws this job. */
export function spotcheckDrawn (host: ReplicaHost, job: AgentJob): boolean {
  const v = verificationOf(job)
  return v.mode === 'spotcheck' && host.spotcheckSeed !== undefined && spotchecked(job.cid, host.spotcheckSeed, v.perMille)
}

/**
 * Whether the agreement audit draws this job: a deterministic replicated job whose replicas agree is
 * re-executed all the same (the same secret draw as a spotcheck's, at `agreementAuditPerMille`).
 */
export function agreementAuditDrawn (host: ReplicaHost, job: AgentJob): boolean {
  const perMille = host.agreementAuditPerMille ?? 0
  return perMille > 0 && host.spotcheckSeed !== undefined && isDeterministic(job.request) && spotchecked(job.cid, host.spotcheckSeed, perMille)
}

/** Move the verified single run into a replica and start the check on another independent provider. */
export function startSpotcheck (job: AgentJob, out: RequesterAgentEffect[]): void {
  const original: ReplicaSlot = { role: 'original', state: job.state, ...(job.decision !== undefined ? { decision: job.decision } : {}), ...(job.award !== undefined ? { award: job.award } : {}), ...(job.receipt !== undefined ? { receipt: job.receipt } : {}) }
  job.replication = { mode: 'spotcheck', k: 2, slots: [original], tieBroken: false, judged: false, cancelled: false }
  const check = openReplica(job, 'check', job.state, out)
  out.push(note(job, 'spotcheck', check === undefined ? 'the spotcheck drew this job, but it can no longer be auctioned: paid unverified' : `the spotcheck drew this job: re-running it on another provider (round ${check.state.auction.round})`))
  summarise(job)
}

/** Cancel every replica: those running are cancelled (and paid for the time run); verified ones are paid. */
export function cancelReplicas (host: ReplicaHost, job: AgentJob, now: number, out: RequesterAgentEffect[]): void {
  const rep = job.replication as Replication
  if (rep.ending !== undefined || rep.cancelled) { out.push({ type: 'ignored', job: job.id, reason: 'the job is ending' }); return }
  rep.cancelled = true
  for (const slot of rep.slots) if (!isRequesterFinal(slot.state.status) && slot.state.status !== 'completed') host.step(job, slot, { type: 'cancel', now }, out)
}

/** The requester's own re-execution came back (output CID string, or undefined: it failed). */
export function onReexecuted (job: AgentJob, output: string | undefined, detail: string, out: RequesterAgentEffect[]): void {
  const rep = job.replication
  if (rep?.reexecution !== 'asked') { out.push({ type: 'ignored', job: job.id, reason: 'no re-execution asked' }); return }
  rep.reexecution = output ?? `failed: ${detail.slice(0, 200)}`
  out.push(note(job, 'reexecuted', output !== undefined ? `re-executed locally: outputs ${output}` : `local re-execution failed: ${detail.slice(0, 200)}`))
}

/**
 * Once every replica has delivered or ended, decide (replicaVerdict) and carry it out; once the paid
 * replicas have settled (and every other one ended), end the job. Call after every event of the job.
 */
export function advanceReplication (host: ReplicaHost, job: AgentJob, out: RequesterAgentEffect[]): void {
  const rep = job.replication
  if (rep === undefined || rep.ending !== undefined) return
  const waiting = rep.slots.some((s) => !isRequesterFinal(s.state.status) && s.state.status !== 'completed')
  if (!rep.judged && !waiting && rep.reexecution !== 'asked') {
    if (rep.cancelled) {
      for (const s of rep.slots) if (s.state.status === 'completed') pay(host, job, s, out)
      rep.judged = true
    } else {
      judge(host, job, rep, out)
    }
  }
  summarise(job)
  if (!rep.judged || rep.slots.some((s) => !isRequesterFinal(s.state.status))) return
  rep.ending = endingOf(rep)
  summarise(job)
  out.push(note(job, job.state.status, `${job.state.status}: ${rep.ending.reason}`))
  out.push({ type: 'finished', job: job.id, status: job.state.status, reason: rep.ending.reason })
}

function endingOf (rep: Replication): NonNullable<Replication['ending']> {
  if (rep.cancelled) return { status: 'cancelled', reason: 'cancelled by the requester' }
  const settled = rep.slots.filter((s) => s.verdict === 'matched' && s.state.status === 'settled').length
  if (settled === 0) return { status: 'failed', reason: rep.outcome ?? 'no replica delivered' }
  return { status: 'settled', reason: rep.outcome ?? 'paid in full' }
}

/**
 * The proof audit: whether the delivered replicas of a deterministic job (an agreement, or a lone one whose
 * co-replicas failed) are re-executed because none of their providers is proven to this node yet (its
 * output matched this node's own run, or a proven provider's). Colluders that agree are then caught on
 * their first job together; a provider earns proof only by matching a run this node trusts, so agreeing
 * with each other earns them nothing.
 */
export function unprovenAgreement (host: ReplicaHost, job: AgentJob, providers: readonly string[], runMs = 0): 'audit' | 'over-limit' | undefined {
  if (!host.auditUnproven || !isDeterministic(job.request) || providers.length === 0 || providers.some((p) => host.proven(p))) return undefined
  return host.reexecuteLimitMs !== undefined && runMs > host.reexecuteLimitMs ? 'over-limit' : 'audit'
}

function judge (host: ReplicaHost, job: AgentJob, rep: Replication, out: RequesterAgentEffect[]): void {
  const delivered = (s: ReplicaSlot): boolean => s.state.status === 'completed' && s.receipt !== undefined
  const deliverers = rep.slots.filter(delivered).map((s) => s.state.award?.provider).filter((p): p is string => p !== undefined)
  // the shortest run the replicas report: this node's own run would take about as long
  const runs = rep.slots.filter(delivered).map((s) => (s.receipt?.payload.endedAt ?? 0) - (s.receipt?.payload.startedAt ?? 0))
  const runMs = runs.length > 0 ? Math.min(...runs) : 0
  const proofAudit = unprovenAgreement(host, job, deliverers, runMs)
  const unproven = proofAudit === 'audit'
  if (proofAudit === 'over-limit') out.push(note(job, 'compared', `no proof audit: the replicas ran ${Math.round(runMs / 1000)} s, beyond this node's ${Math.round((host.reexecuteLimitMs ?? 0) / 1000)} s re-execution limit`))
  const verdict: Verdict = replicaVerdict({
    request: job.envelope as NonNullable<AgentJob['envelope']>,
    runs: rep.slots.map((s) => ({ ...(s.state.award !== undefined ? { provider: s.state.award.provider } : {}), ...(delivered(s) ? { receipt: s.receipt } : {}) })),
    ...(rep.reexecution !== undefined && !rep.reexecution.startsWith('failed') ? { reexecuted: rep.reexecution } : {}),
    reexecuteFailed: rep.reexecution?.startsWith('failed') === true,
    tieBroken: rep.tieBroken,
    auditAgreement: unproven || agreementAuditDrawn(host, job)
  })
  if ('groups' in verdict) rep.groups = verdict.groups.map((g) => ({ outputs: g.outputs.toString(), providers: [...g.providers] }))
  const slotOf = (p: string): ReplicaSlot | undefined => rep.slots.find((s) => delivered(s) && s.state.award?.provider === p)
  switch (verdict.kind) {
    case 'failed':
      rep.outcome = verdict.reason
      rep.judged = true
      break
    case 'unverified': {
      rep.outcome = `unverified: only ${short(verdict.provider)} delivered`
      const slot = slotOf(verdict.provider)
      if (slot !== undefined) { slot.verdict = 'matched'; pay(host, job, slot, out) }
      rep.judged = true
      break
    }
    case 'decided': {
      const n = verdict.paid.length + verdict.outvoted.length
      rep.outcome = verdict.paid.length === 0
        ? `no replica's outputs match the re-execution (${verdict.outputs ?? '?'})`
        : `${verdict.paid.length} of ${n} replicas agree${verdict.by === 're-execution' ? ', confirmed by re-execution' : ''}: outputs ${verdict.outputs ?? '?'}`
      out.push(note(job, 'compared', rep.outcome))
      // matching this node's own run, or a proven provider's, proves a provider
      if (verdict.by === 're-execution' || verdict.paid.some((p) => host.proven(p))) for (const p of verdict.paid) host.prove(p)
      for (const p of verdict.paid) { const s = slotOf(p); if (s !== undefined) { s.verdict = 'matched'; pay(host, job, s, out) } }
      for (const p of verdict.outvoted) { const s = slotOf(p); if (s !== undefined) outvote(host, job, s, verdict.outputs, out) }
      rep.judged = true
      break
    }
    case 'reexecute':
      rep.reexecution = 'asked'
      out.push(note(job, 'compared', verdict.groups.length === 1
        ? `${(verdict.groups[0]?.providers.length ?? 0) > 1 ? 'the replicas agree' : 'one replica delivered'} (${describeGroups(verdict.groups)}) and ${unproven ? 'none of their providers is proven to this node yet' : 'the agreement audit drew the job'}: re-executing it locally`
        : `no majority (${describeGroups(verdict.groups)}): re-executing the job locally`))
      out.push({ type: 'reexecute', job: job.id })
      break
    case 'tie-break': {
      rep.tieBroken = true
      const template = rep.slots.find(delivered)?.state ?? job.state
      const slot = openReplica(job, 'tie-break', template, out)
      out.push(note(job, 'compared', `no majority (${describeGroups(verdict.groups)}): ${slot === undefined ? 'no tie-break possible' : 'one tie-break replica on a further provider'}`))
      if (slot === undefined) dispute(job, rep, verdict.groups.length > 0 ? describeGroups(verdict.groups) : '', out)
      break
    }
    case 'disputed':
      dispute(job, rep, describeGroups(verdict.groups), out)
  }
}

/** No majority that stays: nobody is paid on the comparison; each delivered replica's award ends unpaid, nobody blamed. */
function dispute (job: AgentJob, rep: Replication, groups: string, out: RequesterAgentEffect[]): void {
  rep.outcome = `disagreement: the replicas' outputs differ (${groups}); nobody is paid on the comparison`
  out.push(note(job, 'compared', rep.outcome))
  for (const s of rep.slots) if (s.state.status === 'completed') close(job, s, 'unpaid', 'no majority among the replicas', out)
  rep.judged = true
}

/** A matched (or unverified single) replica: its final payment, through its own lifecycle. */
function pay (host: ReplicaHost, job: AgentJob, slot: ReplicaSlot, out: RequesterAgentEffect[]): void {
  host.step(job, slot, { type: 'verification-done', now: slot.state.now, ok: true }, out)
}

/** An outvoted replica: reported (`output-mismatch`), not paid; for a deterministic job, a fraud proof too. */
function outvote (host: ReplicaHost, job: AgentJob, slot: ReplicaSlot, majority: string | undefined, out: RequesterAgentEffect[]): void {
  const a = slot.state.award
  if (a === undefined) return
  const detail = `outvoted: outputs ${slot.receipt?.payload.outputs.toString() ?? '?'}, ${majority !== undefined ? `the majority's ${majority}` : 'no majority'}`
  host.record(a.provider, false, slot.state.now)
  host.unprove(a.provider)
  out.push(note(job, 'failure', `output-mismatch: ${detail}`, a.provider))
  out.push({ type: 'record-failure', job: job.id, attempt: a.attempt, subject: a.provider, reason: 'output-mismatch', evidence: ['award', 'receipt'], detail, counted: false })
  if (isDeterministic(job.request) && slot.receipt !== undefined) {
    out.push({ type: 'publish-fraud-proof', job: job.id, subject: a.provider, receipt: slot.receipt.cid.toString() })
  }
  close(job, slot, 'outvoted', detail, out)
}

/** End a delivered replica without paying it: its award's ledger ends `failed` at what was committed. */
function close (job: AgentJob, slot: ReplicaSlot, verdict: 'outvoted' | 'unpaid', reason: string, out: RequesterAgentEffect[]): void {
  const a = slot.state.award
  slot.verdict = verdict
  slot.state = { ...slot.state, status: 'failed', reason }
  if (a === undefined) return
  const key = awardKey(a.attempt, a.provider)
  if (job.ended.has(key)) return
  job.ended.add(key)
  out.push({ type: 'end-award', job: job.id, attempt: a.attempt, payee: a.provider, ending: 'failed', cumulative: job.committed.get(key) ?? 0 })
}

/** What the job view shows of the replicas. */
export function replicationView (rep: Replication): ReplicationView {
  return {
    mode: rep.mode,
    k: rep.k,
    replicas: rep.slots.map((s) => {
      const provider = s.state.award?.provider ?? (s.state.status === 'bidding' ? undefined : s.decision?.provider)
      return {
        role: s.role,
        status: s.state.status,
        attempt: s.state.attempt,
        ...(provider !== undefined ? { provider } : {}),
        ...(s.award !== undefined && s.award.provider === provider ? { award: s.award.cid } : {}),
        ...(s.receipt !== undefined && s.receipt.signer === provider ? { outputs: s.receipt.payload.outputs.toString() } : {}),
        ...(s.verdict !== undefined ? { verdict: s.verdict } : {})
      }
    }),
    ...(rep.shortfall !== undefined ? { shortfall: rep.shortfall } : {}),
    ...(rep.groups !== undefined ? { groups: rep.groups.map((g) => ({ ...g, providers: [...g.providers] })) } : {}),
    ...(rep.reexecution !== undefined ? { reexecution: rep.reexecution } : {}),
    ...(rep.outcome !== undefined ? { outcome: rep.outcome } : {})
  }
}
