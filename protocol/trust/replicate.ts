/**
 * `replicate k` (protocol/README.md "Verification and fraud proofs"): award a job to k independent
 * providers and compare the output CIDs of their receipts.
 *
 * Choosing. The award's ranking (decideAward, award.ts; scoring.ts's order) is walked best first; a
 * bid is taken unless its provider shares a network (IPv4 /16, IPv6 /48: subnet.ts) or a trust cluster
 * with one already taken. Greedy in ranking order, so anyone with the ranking, the addresses and the
 * cluster function gets the same replicas. Each replica's award considers the bids still eligible when
 * it was taken, with it first, so auditAward holds for every replica's award on its own.
 *
 * Comparing. Each replica votes with the one output CID its receipts for the job name; a replica
 * without a usable receipt, or with receipts naming two outputs, does not vote. An output voted by more
 * than half of the replicas awarded is the majority: its voters are paid, the others are reported.
 * Without one, nobody is paid on the comparison and the buyer gets the groups. For a deterministic job,
 * a replica that signed two outputs is the subject of a fraud proof (fraud-proof.ts).
 */
import { CID } from '../../crypto/index.js'
import { decideAward, secondScorePrice, type AwardDecision, type AwardFields, type AwardInput } from '../market/award.js'
import { compareStrings, defaultScoringParams, scoringParamsForJob, type RankedBid } from '../market/scoring.js'
import type { OpenedMessage } from '../message.js'
import { buildFraudProof, completedRun, isDeterministic, type FraudProofFields } from './fraud-proof.js'
import { InvalidVerificationInputError } from './invalid-input.js'
import { subnetKeys } from './subnet.js'

/** The job request schema's bound on `verification.k`. */
export const MAX_REPLICAS = 5

/** The addresses a provider is known at (its ad's `addrs` and the remote addresses of connections to it). */
export type AddressLookup = (provider: string) => readonly string[] | undefined
/**
 * The networks a provider runs in, as keys two independent replicas may not share. Default: the
 * subnet keys of its addresses (subnet.ts). `peerNetworks` (each provider its own network) is the
 * owner's explicit opt-out for a network where every provider shares one address range: a lab or a
 * test on one host, behind one NAT. It gives up the defence against one operator's many identities.
 */
export type NetworkLookup = (provider: string) => readonly string[]
export const peerNetworks: NetworkLookup = (provider) => [`peer/${provider}`]

/** A provider's networks under `input`: its `networks` override, else the subnet keys of its addresses. */
export function networksOf (input: { readonly addresses: AddressLookup, readonly networks?: NetworkLookup }, provider: string): readonly string[] {
  return input.networks?.(provider) ?? subnetKeys(input.addresses(provider) ?? [])
}

/** A provider's trust cluster (peers the node believes one operator runs), undefined = none known. */
export type ClusterLookup = (provider: string) => string | undefined

export const ReplicaSkip = {
  /** No IP address to tell its network by (relayed only, DNS only, none). */
  NO_ADDRESS: 'NO_ADDRESS',
  /** Shares an IPv4 /16 or IPv6 /48 with a replica taken before it. */
  SAME_SUBNET: 'SAME_SUBNET',
  /** In the same trust cluster as a replica taken before it. */
  SAME_CLUSTER: 'SAME_CLUSTER'
} as const
export type ReplicaSkip = typeof ReplicaSkip[keyof typeof ReplicaSkip]

export interface SkippedBid {
  readonly cid: string
  readonly provider: string
  readonly reason: ReplicaSkip
  /** The replica it conflicts with (undefined for NO_ADDRESS). */
  readonly conflictsWith?: string
}

export interface Replica {
  readonly bid: RankedBid
  /** The bids still eligible when it was taken, best first; `bid` is the first. */
  readonly considered: RankedBid[]
}

export interface ReplicaSelection {
  /** In the order taken (ranking order). */
  readonly replicas: Replica[]
  readonly skipped: SkippedBid[]
  /** k − replicas taken: how many independent providers were missing. */
  readonly shortfall: number
}

export interface ReplicaSelectionInput {
  /** The award's ranking, best first (AwardDecision's `ranking`). */
  readonly ranking: readonly RankedBid[]
  /** 1 … MAX_REPLICAS. */
  readonly k: number
  readonly addresses: AddressLookup
  /** Overrides the subnet keys of `addresses` (see NetworkLookup). */
  readonly networks?: NetworkLookup
  readonly cluster?: ClusterLookup
}

function checkK (k: number): void {
  if (!Number.isInteger(k) || k < 1 || k > MAX_REPLICAS) throw new InvalidVerificationInputError('k', `expected an integer in 1..${MAX_REPLICAS}`)
}

interface Candidate { bid: RankedBid, subnets: readonly string[], cluster: string | undefined }

/** Why `c` may not run beside `taken`, if it may not. */
function conflict (c: Candidate, taken: Candidate): ReplicaSkip | undefined {
  if (c.subnets.some((s) => taken.subnets.includes(s))) return ReplicaSkip.SAME_SUBNET
  if (c.cluster !== undefined && c.cluster === taken.cluster) return ReplicaSkip.SAME_CLUSTER
  return undefined
}

/** Choose up to k independent replicas from a ranking (see the file comment). Throws InvalidVerificationInputError for a bad k. */
export function selectReplicas (input: ReplicaSelectionInput): ReplicaSelection {
  checkK(input.k)
  const skipped: SkippedBid[] = []
  let candidates: Candidate[] = []
  for (const bid of input.ranking) {
    const subnets = networksOf(input, bid.provider)
    if (subnets.length === 0) skipped.push({ cid: bid.cid, provider: bid.provider, reason: ReplicaSkip.NO_ADDRESS })
    else candidates.push({ bid, subnets, cluster: input.cluster?.(bid.provider) })
  }
  const replicas: Replica[] = []
  while (replicas.length < input.k && candidates.length > 0) {
    const taken = candidates[0] as Candidate
    replicas.push({ bid: taken.bid, considered: candidates.map((c) => c.bid) })
    candidates = candidates.slice(1).filter((c) => {
      const reason = conflict(c, taken)
      if (reason !== undefined) skipped.push({ cid: c.bid.cid, provider: c.bid.provider, reason, conflictsWith: taken.bid.provider })
      return reason === undefined
    })
  }
  return { replicas, skipped, shortfall: input.k - replicas.length }
}

export interface ReplicatedAwardInput extends AwardInput {
  readonly k: number
  readonly addresses: AddressLookup
  readonly networks?: NetworkLookup
  readonly cluster?: ClusterLookup
}

export type ReplicatedAwardDecision =
  | { kind: 'awards', awards: AwardFields[], selection: ReplicaSelection, decision: Extract<AwardDecision, { kind: 'award' }> }
  | { kind: 'none', reason: 'NO_BIDS' | 'NO_VALID_BIDS' | 'NO_INDEPENDENT_BIDS', detail: string, decision: AwardDecision }

/**
 * The awards of a replicated job: decideAward's screening and ranking, then selectReplicas; one award
 * per replica, each naming the bids still eligible when it was taken as `considered` and paid by the
 * job's payment rule against the runner-up among them. The caller decides what a shortfall means.
 */
export function decideReplicatedAward (input: ReplicatedAwardInput): ReplicatedAwardDecision {
  checkK(input.k)
  const decision = decideAward(input)
  if (decision.kind === 'none') return { kind: 'none', reason: decision.reason, detail: decision.detail, decision }
  const selection = selectReplicas({ ranking: decision.ranking, k: input.k, addresses: input.addresses, ...(input.networks !== undefined ? { networks: input.networks } : {}), ...(input.cluster !== undefined ? { cluster: input.cluster } : {}) })
  if (selection.replicas.length === 0) return { kind: 'none', reason: 'NO_INDEPENDENT_BIDS', detail: `none of ${decision.ranking.length} bids has an IP address`, decision }
  const { sla, auction } = input.job.payload
  // the job's own scoring (a latency-sensitive job weighs distance more), as decideAward ranked with
  const params = scoringParamsForJob(input.params ?? defaultScoringParams, input.job.payload.placement)
  const awards = selection.replicas.map(({ bid, considered }): AwardFields => ({
    ...decision.award,
    winner: bid.provider,
    bid: CID.parse(bid.cid),
    price: auction.paymentRule === 'first-price' ? bid.price : secondScorePrice(bid, considered[1], sla.tier, sla.maxPrice, params),
    considered: considered.map((c) => c.cid).sort(compareStrings).map((cid) => CID.parse(cid))
  }))
  return { kind: 'awards', awards, selection, decision }
}

/** The outputs one group of replicas voted for. */
export interface OutputGroup {
  readonly outputs: CID
  /** Sorted. */
  readonly providers: string[]
}

interface ComparisonCommon {
  /** Groups by output, most votes first, ties by output CID string. */
  readonly groups: OutputGroup[]
  /** Replicas without a usable receipt: none, a run that did not end on its own, other inputs than the job's. Sorted. */
  readonly unusable: string[]
  /** Replicas whose usable receipts name two or more outputs; they do not vote. Sorted. */
  readonly equivocators: string[]
  /** For a deterministic job: one proof per equivocator, to sign and publish. */
  readonly fraudProofs: FraudProofFields[]
}

export type ReplicationOutcome =
  | (ComparisonCommon & {
    kind: 'majority'
    outputs: CID
    /** Voted for the majority: to be paid. Sorted. */
    matched: string[]
    /** Voted for another output: to be reported (`output-mismatch`), not paid. Sorted. */
    mismatched: string[]
  })
  /** No output has more than half of the replicas: reported to the buyer, nobody is paid on it. */
  | (ComparisonCommon & { kind: 'no-majority' })

export interface ReplicaComparisonInput {
  /** The job, opened. */
  readonly request: OpenedMessage<'job-request'>
  /** The providers awarded (distinct); their number is the quorum's base. */
  readonly replicas: readonly string[]
  /** Every verified receipt held for the job; others' receipts and other jobs' are ignored. */
  readonly receipts: ReadonlyArray<OpenedMessage<'receipt'>>
}

function sameInputs (receipt: OpenedMessage<'receipt'>, request: OpenedMessage<'job-request'>): boolean {
  const inputs = request.payload.workload.inputs
  return receipt.payload.inputs.length === inputs.length && receipt.payload.inputs.every((cid, i) => cid.equals(inputs[i]?.cid))
}

/** Compare the replicas' receipts (see the file comment). */
export function compareReplicas (input: ReplicaComparisonInput): ReplicationOutcome {
  const { request } = input
  const replicas = [...new Set(input.replicas)].sort(compareStrings)
  if (replicas.length < 1 || replicas.length > MAX_REPLICAS) throw new InvalidVerificationInputError('replicas', `expected 1..${MAX_REPLICAS} providers`)
  const usable = new Map<string, Array<OpenedMessage<'receipt'>>>()
  for (const receipt of input.receipts) {
    if (!replicas.includes(receipt.signer) || !receipt.payload.job.equals(request.cid) || !completedRun(receipt) || !sameInputs(receipt, request)) continue
    usable.set(receipt.signer, [...(usable.get(receipt.signer) ?? []), receipt])
  }
  const votes = new Map<string, { outputs: CID, providers: string[] }>()
  const unusable: string[] = []
  const equivocators: string[] = []
  const fraudProofs: FraudProofFields[] = []
  for (const provider of replicas) {
    const own = usable.get(provider) ?? []
    const outputs = new Set(own.map((r) => r.payload.outputs.toString()))
    if (outputs.size === 0) { unusable.push(provider); continue }
    if (outputs.size > 1) {
      equivocators.push(provider)
      if (isDeterministic(request.payload)) fraudProofs.push(buildFraudProof(request, own))
      continue
    }
    const key = [...outputs][0] as string
    const group = votes.get(key) ?? { outputs: (own[0] as OpenedMessage<'receipt'>).payload.outputs, providers: [] }
    group.providers.push(provider)
    votes.set(key, group)
  }
  const groups = [...votes.values()].sort((a, b) => b.providers.length - a.providers.length || compareStrings(a.outputs.toString(), b.outputs.toString()))
  const common = { groups, unusable, equivocators, fraudProofs }
  const top = groups[0]
  if (top === undefined || 2 * top.providers.length <= replicas.length) return { kind: 'no-majority', ...common }
  const mismatched = groups.slice(1).flatMap((g) => g.providers).sort(compareStrings)
  return { kind: 'majority', outputs: top.outputs, matched: top.providers, mismatched, ...common }
}
