import assert from 'node:assert/strict'
import { Identity, cidOfValue, type CID } from '../../../crypto/index.js'
import {
  DAY_MS, DAY_SEC, HOUR_MS, KINDS, MAX_AUCTION_ROUND, MAX_AWARD_ATTEMPTS, MAX_BILLING_INTERVAL_SEC, MAX_CONSIDERED_BIDS, MAX_EXCLUDED_PEERS,
  MAX_JOB_FILES, MAX_JOB_GPUS, MAX_LEASE_MS, MAX_RUNTIME_SEC, MINUTE_MS, MIN_BILLING_INTERVAL_SEC, MIN_LEASE_MS, MessageRejectedError,
  SECOND_MS, WEEK_MS, createMarketParams, InvalidMarketParamsError, decideAward, InvalidAwardInputError, jobIdOf, validatePayload,
  type AwardInput, type Award, type JobRequest, type Kind
} from '../../../protocol/index.js'
import { AWARD_ATTEMPT_LIMIT } from '../../../protocol/market/lifecycle-shared.js'
import { MAX_ATTEMPTS, MAX_CONSIDERED, MAX_EXCLUDED } from '../../../protocol/market/award.js'
import { NOW } from '../../helpers/arbitraries.js'

const winner = new Identity(new Uint8Array(32).fill(4))
const sortedCids = (n: number): CID[] => Array.from({ length: n }, (_, i) => cidOfValue({ bid: i }).cid)
  .sort((a, b) => a.toString() < b.toString() ? -1 : 1)
const peers = Array.from({ length: MAX_EXCLUDED_PEERS + 1 }, (_, i) => new Identity(new Uint8Array(32).fill(0).map((_, j) => j === 0 ? i + 1 : 7)).peerId)

function jobRequest (overrides: { gpus?: number, maxRuntimeSec?: number, files?: number } = {}): JobRequest {
  const files = Array.from({ length: overrides.files ?? 0 }, (_, i) => `out-${i}.json`)
  return {
    v: 1,
    issuedAt: NOW,
    expiresAt: NOW + HOUR_MS,
    nonce: new Uint8Array(16).fill(9),
    workload: { executor: 'process', argv: ['python3', 'eval.py'], env: {}, inputs: [], outputs: files, maxRuntimeSec: overrides.maxRuntimeSec ?? 3600, network: false },
    resources: { gpus: overrides.gpus ?? 1, minVramGB: 0, models: [], cpuCores: 1, memoryMiB: 1024, diskMiB: 1024 },
    sla: { tier: 'silver', maxPrice: 2_000_000, maxStartDelaySec: 300 },
    placement: { regions: [], residency: 'prefer' },
    verification: { mode: 'none' },
    auction: { bidWindowMs: 500, paymentRule: 'first-price' }
  }
}

const job = jobRequest()
const auctionJob = { cid: jobIdOf(job), payload: job }

function award (overrides: Partial<Award> = {}): Award {
  const considered = overrides.considered ?? sortedCids(1)
  return {
    v: 1, issuedAt: NOW, expiresAt: NOW + MINUTE_MS, job: auctionJob.cid, attempt: 1, winner: winner.peerId, bid: considered[0] as CID,
    price: 1_000_000, paymentRule: 'first-price', considered, excluded: [], leaseMs: 30_000, billingIntervalSec: 60, ...overrides
  }
}

function accepts (kind: Kind, payload: unknown): boolean {
  try {
    validatePayload(kind, payload)
    return true
  } catch (err) {
    if (err instanceof MessageRejectedError) return false
    throw err
  }
}

function decides (extra: Partial<AwardInput>): boolean {
  try {
    decideAward({ job: auctionJob, bids: [], attempt: 1, now: NOW, leaseMs: 30_000, billingIntervalSec: 60, reliability: () => 1, rtt: () => 0, ...extra })
    return true
  } catch (err) {
    if (err instanceof InvalidAwardInputError) return false
    throw err
  }
}

function params (init: Parameters<typeof createMarketParams>[0]): boolean {
  try {
    createMarketParams(init)
    return true
  } catch (err) {
    if (err instanceof InvalidMarketParamsError) return false
    throw err
  }
}

/** [value, accepted] at and around a bound [min, max]. */
function edges (min: number, max: number): Array<[number, boolean]> {
  return [[min - 1, false], [min, true], [max, true], [max + 1, false]]
}

describe('protocol/limits: each bound is one constant that schemas, decisions and params share', () => {
  it('the units of time', () => {
    assert.equal(SECOND_MS, 1_000)
    assert.equal(MINUTE_MS, 60_000)
    assert.equal(HOUR_MS, 3_600_000)
    assert.equal(DAY_MS, 86_400_000)
    assert.equal(WEEK_MS, 7 * 86_400_000)
    assert.equal(DAY_SEC, 86_400)
    assert.equal(KINDS.bid.maxLifetimeMs, HOUR_MS)
    assert.equal(KINDS['job-request'].maxLifetimeMs, 7 * DAY_MS)
    assert.equal(KINDS['job-status'].maxLifetimeMs, 15 * MINUTE_MS)
  })

  it('the names callers know are the same constants', () => {
    assert.equal(MAX_ATTEMPTS, MAX_AWARD_ATTEMPTS)
    assert.equal(AWARD_ATTEMPT_LIMIT, MAX_AWARD_ATTEMPTS)
    assert.equal(MAX_CONSIDERED, MAX_CONSIDERED_BIDS)
    assert.equal(MAX_EXCLUDED, MAX_EXCLUDED_PEERS)
    assert.deepEqual([MAX_AWARD_ATTEMPTS, MAX_EXCLUDED_PEERS, MAX_CONSIDERED_BIDS], [16, 64, 256])
  })

  it('lease: the award schema, decideAward and the market params agree at 1 s and 1 h, and refuse one past', () => {
    assert.deepEqual([MIN_LEASE_MS, MAX_LEASE_MS], [1_000, 3_600_000])
    for (const [leaseMs, ok] of edges(MIN_LEASE_MS, MAX_LEASE_MS)) {
      assert.equal(accepts('award', award({ leaseMs })), ok, `schema, ${leaseMs}`)
      assert.equal(decides({ leaseMs }), ok, `decideAward, ${leaseMs}`)
      assert.equal(params({ leaseMs }), ok, `params, ${leaseMs}`)
    }
  })

  it('billing interval: agreed at 1 s and one day, refused one past', () => {
    assert.deepEqual([MIN_BILLING_INTERVAL_SEC, MAX_BILLING_INTERVAL_SEC], [1, 86_400])
    for (const [billingIntervalSec, ok] of edges(MIN_BILLING_INTERVAL_SEC, MAX_BILLING_INTERVAL_SEC)) {
      assert.equal(accepts('award', award({ billingIntervalSec })), ok, `schema, ${billingIntervalSec}`)
      assert.equal(decides({ billingIntervalSec }), ok, `decideAward, ${billingIntervalSec}`)
      assert.equal(params({ billingIntervalSec }), ok, `params, ${billingIntervalSec}`)
    }
  })

  it('attempts: awards, rounds, decideAward and maxFailedAttempts stop at 16', () => {
    const round = (attempt: number, r = 2): unknown => ({
      v: 1, issuedAt: NOW, expiresAt: NOW + MINUTE_MS, job: auctionJob.cid, round: r, attempt, excluded: [], request: new Uint8Array(8)
    })
    for (const [attempt, ok] of edges(1, MAX_AWARD_ATTEMPTS)) {
      assert.equal(accepts('award', award({ attempt })), ok, `award, ${attempt}`)
      assert.equal(accepts('auction-round', round(attempt)), ok, `round, ${attempt}`)
      assert.equal(decides({ attempt }), ok, `decideAward, ${attempt}`)
      assert.equal(params({ maxFailedAttempts: attempt }), ok, `params, ${attempt}`)
    }
    assert.equal(accepts('auction-round', round(1, MAX_AUCTION_ROUND)), true)
    assert.equal(accepts('auction-round', round(1, MAX_AUCTION_ROUND + 1)), false)
  })

  it('excluded peers: 64 fit in an award and in decideAward, 65 do not', () => {
    assert.equal(accepts('award', award({ excluded: peers.slice(0, MAX_EXCLUDED_PEERS) })), true)
    assert.equal(accepts('award', award({ excluded: peers })), false)
    assert.equal(decides({ excluded: peers.slice(0, MAX_EXCLUDED_PEERS) }), true)
    assert.equal(decides({ excluded: peers }), false)
  })

  it('considered bids: an award names 256, not 257', () => {
    assert.equal(accepts('award', award({ considered: sortedCids(MAX_CONSIDERED_BIDS) })), true)
    assert.equal(accepts('award', award({ considered: sortedCids(MAX_CONSIDERED_BIDS + 1) })), false)
  })

  it('jobs: 0 … 64 GPUs, a runtime of 1 s … 30 days, at most 256 output paths', () => {
    for (const [gpus, ok] of edges(0, MAX_JOB_GPUS)) assert.equal(accepts('job-request', jobRequest({ gpus })), ok, `gpus ${gpus}`)
    assert.equal(MAX_RUNTIME_SEC, 30 * DAY_SEC)
    for (const [maxRuntimeSec, ok] of edges(1, MAX_RUNTIME_SEC)) assert.equal(accepts('job-request', jobRequest({ maxRuntimeSec })), ok, `runtime ${maxRuntimeSec}`)
    assert.equal(accepts('job-request', jobRequest({ files: MAX_JOB_FILES })), true)
    assert.equal(accepts('job-request', jobRequest({ files: MAX_JOB_FILES + 1 })), false)
  })
})
