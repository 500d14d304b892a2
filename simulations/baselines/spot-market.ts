/**
 * The two decentralized-auction baselines without waiting (lowest-price.ts, random.ts) share this loop:
 * at each job's submit instant, among the fitting nodes (fit.ts) whose ask is within the job's cap and
 * that have the job's GPUs free over its whole duration starting now, a `choose` rule picks one; a job
 * with none is unserved (no node waits for it, no job waits for a node).
 *
 * Failure model (`failures`): the nodes in `noShows` are unreliable — they win like any node (they ask
 * what their floor says) and vanish: the job never starts there and their GPUs are not held. The renter
 * notices after one lease without a heartbeat (`leaseMs`, default the protocol's
 * `defaultMarketParams.leaseMs`) and re-auctions the job then, never awarding it to the same node twice,
 * while the re-auction still lies within the tier's max start delay and fewer than `maxAttempts` awards
 * (default `defaultMarketParams.maxFailedAttempts`) came to nothing; past that it ends `failed`. A no-show
 * node stays in the market and wins other jobs: nothing here weighs reliability, which is the point.
 */
import { defaultMarketParams } from '../../protocol/market/params.js'
import type { JobOutcome, FleetNode, SimJob, StrategyRun, Workload } from '../model.js'
import { FleetIndex, capOf, tierRank } from './fit.js'
import { accounting, type FleetBaselineOptions } from './options.js'
import { BaselineOptionError, inWorkloadOrder, nodeOutcomes, notRun, ownerCapacity, placed, servingOrder } from './outcome.js'
import { CandidateScan, FreeHints, probeFor } from './free-hints.js'

export interface FailureModel {
  /** Node ids that win awards and never run them. */
  noShows?: ReadonlySet<string>
  /** How long a renter waits for a no-show's first heartbeat before re-auctioning, ms. */
  leaseMs?: number
  /** Awards per job before it ends failed. */
  maxAttempts?: number
}

export interface SpotMarketOptions extends FleetBaselineOptions {
  failures?: FailureModel
}

/** Whether `node` can take the job now: ask within the cap, not tried before, GPUs free over [now, now + duration). */
export type Usable = (node: FleetNode) => boolean

/**
 * Visits, group by group (fit.ts) and cheapest ask first within each, the nodes that may have the job's
 * GPUs free now (a superset of the usable ones: full nodes skipped without a look); the visitor returns
 * false to leave the current group.
 */
export type ScanFree = (visit: (node: FleetNode) => boolean) => void

/** Picks one usable node, from `candidates()` (all fitting nodes, cheapest first) or through `scanFree`, or undefined. */
export type Choose = (job: SimJob, candidates: () => readonly FleetNode[], usable: Usable, scanFree: ScanFree) => FleetNode | undefined

interface Attempt { job: SimJob, at: number, tried: Set<string>, lastNode?: string, lastAward?: number }

export function spotMarket (strategy: string, workload: Workload, options: SpotMarketOptions, choose: Choose): StrategyRun {
  const acc = accounting(workload, options)
  const noShows = options.failures?.noShows ?? new Set<string>()
  const leaseMs = options.failures?.leaseMs ?? defaultMarketParams.leaseMs
  const maxAttempts = options.failures?.maxAttempts ?? defaultMarketParams.maxFailedAttempts
  if (!Number.isInteger(leaseMs) || leaseMs <= 0) throw new BaselineOptionError(`failures.leaseMs must be a whole number of ms > 0, got ${leaseMs}`)
  if (!Number.isInteger(maxAttempts) || maxAttempts < 1) throw new BaselineOptionError(`failures.maxAttempts must be a whole number ≥ 1, got ${maxAttempts}`)
  const capacity = ownerCapacity(workload)
  const index = new FleetIndex(workload.fleet, options.floorOf)
  const hints = new FreeHints(capacity)
  const scan = new CandidateScan(hints)
  const outcomes = new Map<string, JobOutcome>()
  const arrivals = servingOrder(workload.jobs)
  // re-auctions come one lease after an event handled in time order, so they are in time order too
  const retries: Attempt[] = []
  let a = 0
  let r = 0
  while (a < arrivals.length || r < retries.length) {
    const arrival = arrivals[a]
    const retry = retries[r]
    let attempt: Attempt
    if (retry !== undefined && (arrival === undefined || before(retry, arrival))) {
      attempt = retry
      r++
    } else {
      attempt = { job: arrival as SimJob, at: (arrival as SimJob).submitAt, tried: new Set() }
      a++
    }
    const { job, at, tried } = attempt
    const usable = usableNow(job, at, tried, capOf(job, options.capOf), options, hints)
    const inTime = at < acc.horizonMs && at <= job.submitAt + acc.delays[job.tier]
    const scanFree: ScanFree = (visit) => {
      for (const group of index.groups(job)) scan.scan(group.nodes, job.gpus, probeFor(job.durationMs), at, () => at, (n) => visit(n))
    }
    const node = inTime ? choose(job, () => index.candidates(job), usable, scanFree) : undefined
    if (node === undefined) {
      outcomes.set(job.id, notRun(acc, job, Math.min(at, acc.horizonMs), tried.size, attempt.lastNode, attempt.lastAward))
      continue
    }
    if (noShows.has(node.id)) {
      tried.add(node.id)
      const next: Attempt = { job, at: at + leaseMs, tried, lastNode: node.id, lastAward: at }
      if (tried.size < maxAttempts) retries.push(next)
      else outcomes.set(job.id, notRun(acc, job, Math.min(next.at, acc.horizonMs), tried.size, node.id, at))
      continue
    }
    capacity.timeline(node.id).add(at, at + job.durationMs, job.gpus)
    outcomes.set(job.id, placed(acc, job, node.id, at, options.floorOf(node), at, tried.size + 1))
  }
  return { strategy, jobs: inWorkloadOrder(workload, outcomes), nodes: nodeOutcomes(workload, [...outcomes.values()]) }
}

function before (retry: Attempt, arrival: SimJob): boolean {
  if (retry.at !== arrival.submitAt) return retry.at < arrival.submitAt
  return tierRank(retry.job.tier) <= tierRank(arrival.tier)
}

function usableNow (job: SimJob, now: number, tried: Set<string>, cap: number, options: SpotMarketOptions, hints: FreeHints): Usable {
  return (node) => options.floorOf(node) <= cap && !tried.has(node.id) &&
    hints.firstFree(node, job.gpus, now, now, probeFor(job.durationMs)) !== undefined &&
    hints.timeline(node).free(now, now + job.durationMs) >= job.gpus
}
