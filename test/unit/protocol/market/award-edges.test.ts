/**
 * decideAward, auditAward and verifyAward at their edges (issue 9, mutation audit of protocol/market/award.ts):
 * the input bounds exactly and one past, screening at exactly the limits, the audit's fault for each kind of
 * tampering (not just "some fault"), the view-independent winner test at an exact tie, and the price bounds of
 * both payment rules. Real signed bids throughout.
 */
import assert from 'node:assert/strict'
import { Identity, cidOfValue, type CID } from '../../../../crypto/index.js'
import { jobIdOf, openMessage, sealMessage, type Award, type Bid, type JobRequest } from '../../../../protocol/index.js'
import {
  AwardFault, BidRejection, InvalidAwardInputError, MAX_ATTEMPTS, MAX_CONSIDERED, MAX_EXCLUDED, auditAward, betterOwnOffer, decideAward,
  screenBid, screenBids, secondScorePrice, verifyAward,
  type AuctionBid, type AuctionJob, type AwardCheck, type AwardFields, type AwardInput
} from '../../../../protocol/market/award.js'
import { createScoringParams, rankBids } from '../../../../protocol/market/scoring.js'
import type { Tier } from '../../../../protocol/market/types.js'
import { NOW } from '../../../helpers/arbitraries.js'
import { DECIDED, awarded, decide, uniform, withHeader } from '../../../helpers/award-decide.js'

const M = 1_000_000
const providers = Array.from({ length: 6 }, (_, i) => new Identity(new Uint8Array(32).fill(140 + i)))
const peer = (i: number): string => (providers[i] as Identity).peerId
/** gold's worst factor is exactly 2 with no distance penalty: exact ties at the audit's bound. */
const exact = createScoringParams({ maxDistancePenalty: 0, distancePenaltyPer100Ms: 0 })

type Rule = JobRequest['auction']['paymentRule']

function makeJob (edit: { tier?: Tier, rule?: Rule, maxPrice?: number, resources?: Partial<JobRequest['resources']>, placement?: JobRequest['placement'] } = {}): AuctionJob {
  const payload: JobRequest = {
    v: 1,
    issuedAt: NOW,
    expiresAt: NOW + 3_600_000,
    nonce: new Uint8Array(16).fill(21),
    workload: { executor: 'process', argv: ['python3', 'eval.py'], env: {}, inputs: [], outputs: ['out.json'], maxRuntimeSec: 3600, network: false },
    resources: { gpus: 1, minVramGB: 40, models: [], cpuCores: 4, memoryMiB: 16_384, diskMiB: 10_240, ...edit.resources },
    sla: { tier: edit.tier ?? 'silver', maxPrice: edit.maxPrice ?? 3 * M, maxStartDelaySec: 300 },
    placement: edit.placement ?? { regions: ['eu'], residency: 'prefer' },
    verification: { mode: 'none' },
    auction: { bidWindowMs: 500, paymentRule: edit.rule ?? 'first-price' }
  }
  return { cid: jobIdOf(payload), payload }
}

/** A real bid: sealed by provider `i` and opened as a receiver would. */
function bid (job: AuctionJob, i: number, price: number, edit: Partial<Bid> = {}): AuctionBid {
  const payload: Bid = {
    v: 1,
    issuedAt: NOW,
    expiresAt: NOW + 60_000,
    job: job.cid,
    provider: peer(i),
    price,
    gpus: [`GPU-${i}0000000-0000-0000`],
    model: 'nvidia-h100-80gb-hbm3',
    vramMiB: 81_559,
    region: 'eu-west',
    startBy: NOW + 60_000,
    ad: cidOfValue({ ad: i }).cid,
    ...edit
  }
  return openMessage(sealMessage(providers[i] as Identity, 'bid', payload).bytes, 'bid', { now: NOW })
}




function faultOf (check: AwardCheck): string | undefined {
  return check.ok ? undefined : check.reason
}

const byString = (a: CID, b: CID): number => a.toString() < b.toString() ? -1 : a.toString() > b.toString() ? 1 : 0

describe('auction award at its edges', () => {
  describe('decideAward input bounds', () => {
    const job = makeJob()
    const bids = [bid(job, 0, M)]

    it('accepts attempt 1 and MAX_ATTEMPTS, lease 1 s and 1 h, billing 1 s and 1 day, and carries them', () => {
      for (const extra of [{ attempt: 1 }, { attempt: MAX_ATTEMPTS }, { leaseMs: 1_000 }, { leaseMs: 3_600_000 }, { billingIntervalSec: 1 }, { billingIntervalSec: 86_400 }]) {
        const award = awarded(decide(job, bids, extra))
        for (const [field, value] of Object.entries(extra)) assert.equal(award[field as keyof AwardFields], value, field)
      }
    })

    it('refuses each one past its bound and non-integers, naming the field', () => {
      const cases: Array<[string, Partial<AwardInput>]> = [
        ['attempt', { attempt: MAX_ATTEMPTS + 1 }], ['attempt', { attempt: 1.5 }],
        ['leaseMs', { leaseMs: 3_600_001 }], ['leaseMs', { leaseMs: 999 }],
        ['billingIntervalSec', { billingIntervalSec: 86_401 }], ['billingIntervalSec', { billingIntervalSec: 0.5 }]
      ]
      for (const [field, extra] of cases) {
        assert.throws(() => decide(job, bids, extra), (err: unknown) => err instanceof InvalidAwardInputError && err.field === field, JSON.stringify(extra))
      }
    })

    it('takes exactly MAX_EXCLUDED excluded providers, refuses one more, and carries them sorted and unique', () => {
      const many = Array.from({ length: MAX_EXCLUDED + 1 }, (_, i) => new Identity(new Uint8Array(32).fill(10 + i)).peerId)
      assert.throws(() => decide(job, bids, { excluded: many }), (err: unknown) => err instanceof InvalidAwardInputError && err.field === 'excluded')
      const exactly = many.slice(0, MAX_EXCLUDED)
      const award = awarded(decide(job, bids, { excluded: [...exactly].reverse() }))
      assert.deepEqual(award.excluded, [...exactly].sort())
      assert.deepEqual(awarded(decide(job, bids, { excluded: [peer(3), peer(2), peer(3)] })).excluded, [peer(2), peer(3)].sort())
    })
  })

  describe('screenBid at the limits', () => {
    it('a bid expiring at exactly the decision is EXPIRED, one ms later it is fine', () => {
      const job = makeJob()
      assert.equal(screenBid(bid(job, 0, M, { expiresAt: DECIDED }), job, DECIDED), BidRejection.EXPIRED)
      assert.equal(screenBid(bid(job, 0, M, { expiresAt: DECIDED + 1 }), job, DECIDED), undefined)
    })

    it('exactly the GPU count, exactly the VRAM, one of several wanted models is enough; one GPU fewer is not', () => {
      const job = makeJob({ resources: { gpus: 2, minVramGB: 80, models: ['a100', 'h100'] } })
      assert.equal(screenBid(bid(job, 0, M, { gpus: ['GPU-a', 'GPU-b'] }), job, DECIDED), undefined)
      assert.equal(screenBid(bid(job, 0, M, { gpus: ['GPU-a'] }), job, DECIDED), BidRejection.HARDWARE)
      assert.equal(screenBid(bid(job, 0, M, { gpus: ['GPU-a', 'GPU-b'], model: 'nvidia-a100-sxm4-80gb', vramMiB: 81_920 }), job, DECIDED), undefined)
      assert.equal(screenBid(bid(job, 0, M, { gpus: ['GPU-a', 'GPU-b'], model: 'nvidia-l40s' }), job, DECIDED), BidRejection.HARDWARE)
    })

    it('a CPU job (0 GPUs) takes any hardware: model, VRAM and GPU count are not screened', () => {
      const job = makeJob({ resources: { gpus: 0, minVramGB: 80, models: ['h100'] } })
      assert.equal(screenBid(bid(job, 0, M, { model: 'nvidia-l4', vramMiB: 23_034 }), job, DECIDED), undefined)
      assert.equal(awarded(decide(job, [bid(job, 0, M, { model: 'nvidia-l4', vramMiB: 23_034 })])).winner, peer(0))
    })

    it('strict residency screens regions by prefix; with no regions, or preferred residency, any region passes', () => {
      const strict = makeJob({ placement: { regions: ['us', 'eu'], residency: 'strict' } })
      assert.equal(screenBid(bid(strict, 0, M, { region: 'eu-west' }), strict, DECIDED), undefined)
      assert.equal(screenBid(bid(strict, 0, M, { region: 'eu' }), strict, DECIDED), undefined)
      assert.equal(screenBid(bid(strict, 0, M, { region: 'europe' }), strict, DECIDED), BidRejection.REGION)
      assert.equal(screenBid(bid(strict, 0, M, { region: 'ap-south' }), strict, DECIDED), BidRejection.REGION)
      const anywhere = makeJob({ placement: { regions: [], residency: 'strict' } })
      assert.equal(screenBid(bid(anywhere, 0, M, { region: 'ap-south' }), anywhere, DECIDED), undefined)
      const prefer = makeJob({ placement: { regions: ['eu'], residency: 'prefer' } })
      assert.equal(screenBid(bid(prefer, 0, M, { region: 'ap-south' }), prefer, DECIDED), undefined)
    })

    it('screens in order: another job before price, price before expiry, hardware before region before start', () => {
      const job = makeJob({ maxPrice: M, placement: { regions: ['eu'], residency: 'strict' } })
      const other = makeJob({ maxPrice: 2 * M })
      assert.equal(screenBid(bid(job, 0, 2 * M, { job: other.cid, expiresAt: DECIDED }), job, DECIDED), BidRejection.WRONG_JOB)
      assert.equal(screenBid(bid(job, 0, M + 1, { expiresAt: DECIDED }), job, DECIDED), BidRejection.OVER_MAX_PRICE)
      assert.equal(screenBid(bid(job, 0, M, { expiresAt: DECIDED, vramMiB: 1_024 }), job, DECIDED), BidRejection.EXPIRED)
      assert.equal(screenBid(bid(job, 0, M, { vramMiB: 1_024, region: 'us' }), job, DECIDED), BidRejection.HARDWARE)
      assert.equal(screenBid(bid(job, 0, M, { region: 'us', startBy: DECIDED + 300_001 }), job, DECIDED), BidRejection.REGION)
    })
  })

  describe('one offer per signer', () => {
    it('betterOwnOffer: lower price first, then lower CID; an offer is not better than itself', () => {
      assert.equal(betterOwnOffer({ price: 1, cid: 'b' }, { price: 2, cid: 'a' }), true)
      assert.equal(betterOwnOffer({ price: 2, cid: 'a' }, { price: 1, cid: 'b' }), false)
      assert.equal(betterOwnOffer({ price: 1, cid: 'a' }, { price: 1, cid: 'b' }), true)
      assert.equal(betterOwnOffer({ price: 1, cid: 'b' }, { price: 1, cid: 'a' }), false)
      assert.equal(betterOwnOffer({ price: 1, cid: 'a' }, { price: 1, cid: 'a' }), false)
    })

    it('keeps the cheapest of three whatever the order, and rejects each of the others once', () => {
      const job = makeJob()
      const offers = [bid(job, 0, 1_300_000), bid(job, 0, 1_100_000), bid(job, 0, 1_200_000)]
      for (const order of [[0, 1, 2], [1, 0, 2], [2, 0, 1], [2, 1, 0]]) {
        const { valid, rejected } = screenBids(job, order.map((i) => offers[i] as AuctionBid), new Set(), DECIDED)
        assert.deepEqual([...valid.keys()], [(offers[1] as AuctionBid).cid.toString()], order.join())
        assert.deepEqual(rejected.map((r) => r.cid).sort(), [offers[0], offers[2]].map((b) => (b as AuctionBid).cid.toString()).sort())
        assert.ok(rejected.every((r) => r.reason === BidRejection.DUPLICATE_SIGNER && r.signer === peer(0)))
      }
    })

    it('a CID claimed by three signers is a conflict for each; an excluded signer\'s bid is EXCLUDED, the rest stand', () => {
      const job = makeJob()
      const original = bid(job, 0, M)
      const copies = [original, { ...original, signer: peer(1) }, { ...original, signer: peer(2) }]
      const honest = bid(job, 3, 2 * M)
      const shunned = bid(job, 4, M / 2)
      // handed over in descending (CID, signer) order, so the rejections come out sorted only if screening sorts them
      const key = (b: AuctionBid): string => `${b.cid.toString()} ${b.signer}`
      const doomed = [...copies, shunned].sort((a, b) => key(a) < key(b) ? 1 : -1)
      const { valid, rejected } = screenBids(job, [...doomed, honest], new Set([peer(4)]), DECIDED)
      assert.deepEqual([...valid.keys()], [honest.cid.toString()])
      assert.deepEqual(rejected.filter((r) => r.reason === BidRejection.CID_CONFLICT).map((r) => r.signer).sort(), [peer(0), peer(1), peer(2)].sort())
      assert.deepEqual(rejected.filter((r) => r.reason === BidRejection.EXCLUDED).map((r) => r.signer), [peer(4)])
      // the rejections are sorted by CID, then signer
      const keys = rejected.map((r) => `${r.cid} ${r.signer}`)
      assert.deepEqual(keys, [...keys].sort())
    })
  })

  describe('auditAward and verifyAward name the fault', () => {
    const job = makeJob({ tier: 'gold', rule: 'second-score' })
    const bids = [bid(job, 0, 1_000_000), bid(job, 1, 1_500_000), bid(job, 2, 1_700_000)]
    const views = { reliability: new Map([[peer(0), 0.2], [peer(1), 1], [peer(2), 0.9]]), rtt: () => 40 }
    const award = withHeader(awarded(decide(job, bids, views)))
    const audit = (a: Award): string | undefined => faultOf(auditAward(a, { job, bids }))
    const verify = (a: Award): string | undefined => faultOf(verifyAward(a, { job, bids, ...views }))

    it('the untampered award passes both', () => {
      assert.equal(award.winner, peer(1))
      assert.equal(audit(award), undefined)
      assert.equal(verify(award), undefined)
    })

    it('BAD_CONSIDERED: empty, unsorted, duplicated, or without the winning bid', () => {
      const sorted = [...award.considered]
      const withoutBid = sorted.filter((c) => !c.equals(award.bid))
      for (const considered of [[], [...sorted].reverse(), [sorted[0] as CID, ...sorted], withoutBid]) {
        assert.equal(audit({ ...award, considered }), AwardFault.BAD_CONSIDERED, considered.map(String).join())
        assert.equal(verify({ ...award, considered }), AwardFault.BAD_CONSIDERED)
      }
    })

    it('considered may list exactly MAX_CONSIDERED bids (then an unknown one is MISSING_BID), not one more', () => {
      const fill = (n: number): CID[] => [...award.considered, ...Array.from({ length: n - award.considered.length }, (_, i) => cidOfValue({ filler: i }).cid)].sort(byString)
      assert.equal(audit({ ...award, considered: fill(MAX_CONSIDERED) }), AwardFault.MISSING_BID)
      assert.equal(audit({ ...award, considered: fill(MAX_CONSIDERED + 1) }), AwardFault.BAD_CONSIDERED)
    })

    it('WINNER_MISMATCH: a winner that did not sign the winning bid, a considered peer or a stranger', () => {
      assert.equal(audit({ ...award, winner: peer(0) }), AwardFault.WINNER_MISMATCH)
      assert.equal(audit({ ...award, winner: peer(5) }), AwardFault.WINNER_MISMATCH)
      assert.equal(verify({ ...award, winner: peer(5) }), AwardFault.WINNER_MISMATCH)
    })

    it('WRONG_PRICE under the requester\'s views for one micro more or less; WRONG_WINNER for another winner', () => {
      assert.equal(verify({ ...award, price: award.price + 1 }), AwardFault.WRONG_PRICE)
      assert.equal(verify({ ...award, price: award.price - 1 }), AwardFault.WRONG_PRICE)
      // provider 2 could win under some view (the audit passes) but not under these
      const loser = bids[2] as AuctionBid
      assert.equal(audit({ ...award, winner: loser.signer, bid: loser.cid }), undefined)
      assert.equal(verify({ ...award, winner: loser.signer, bid: loser.cid }), AwardFault.WRONG_WINNER)
    })

    it('the decision time is the award\'s issuedAt unless one is given; with neither it throws', () => {
      // bids expire at NOW + 60 s: an award issued then cannot have considered them
      const late = { ...award, issuedAt: NOW + 60_000 }
      assert.equal(audit(late), AwardFault.INVALID_BID)
      assert.equal(faultOf(auditAward(late, { job, bids, now: DECIDED })), undefined)
      assert.equal(faultOf(verifyAward(late, { job, bids, ...views, now: DECIDED })), undefined)
      assert.equal(faultOf(auditAward({ ...award, issuedAt: NOW + 59_999 }, { job, bids })), undefined)
      const { issuedAt: _, ...headerless } = award
      assert.throws(() => auditAward(headerless, { job, bids }), (err: unknown) => err instanceof InvalidAwardInputError && err.field === 'now')
      assert.equal(faultOf(auditAward(headerless, { job, bids, now: DECIDED })), undefined)
    })

    it('WRONG_JOB is found before a bad payment rule, which is found before a bad considered list', () => {
      const other = makeJob({ tier: 'gold', rule: 'second-score', maxPrice: 4 * M })
      assert.equal(faultOf(auditAward({ ...award, paymentRule: 'first-price', considered: [] }, { job: other, bids })), AwardFault.WRONG_JOB)
      assert.equal(audit({ ...award, paymentRule: 'first-price', considered: [] }), AwardFault.WRONG_PAYMENT_RULE)
    })
  })

  describe('the view-independent winner test at an exact tie', () => {
    // gold, no distance penalty: the worst factor is exactly 2, so a 2 M ask ties a 1 M ask under the worst view
    const job = makeJob({ tier: 'gold', rule: 'first-price', maxPrice: 5 * M })
    const cheap = bid(job, 0, M)
    const candidates = Array.from({ length: 8 }, (_, k) => bid(job, 1, 2 * M, { startBy: NOW + 60_000 + k }))
    const forge = (winner: AuctionBid, price = winner.payload.price): Award => withHeader({
      ...awarded(decide(job, [cheap, winner], { params: exact })),
      winner: winner.signer,
      bid: winner.cid,
      price,
      considered: [cheap.cid, winner.cid].sort(byString)
    })

    it('an ask of exactly twice the cheapest is admissible when its CID sorts first, not when it sorts after', () => {
      const first = candidates.find((c) => c.cid.toString() < cheap.cid.toString())
      const after = candidates.find((c) => c.cid.toString() > cheap.cid.toString())
      assert.ok(first !== undefined && after !== undefined, 'the fixtures hold CIDs on both sides of the cheap one')
      assert.equal(faultOf(auditAward(forge(first), { job, bids: [cheap, first], params: exact })), undefined)
      assert.equal(faultOf(auditAward(forge(after), { job, bids: [cheap, after], params: exact })), AwardFault.WRONG_WINNER)
    })

    it('one micro above twice the cheapest is never admissible', () => {
      const over = bid(job, 1, 2 * M + 1)
      assert.equal(faultOf(auditAward(forge(over), { job, bids: [cheap, over], params: exact })), AwardFault.WRONG_WINNER)
    })
  })

  describe('price bounds', () => {
    it('first-price with competition: exactly the ask, one micro more or less is WRONG_PRICE', () => {
      const job = makeJob({ tier: 'gold', rule: 'first-price' })
      const bids = [bid(job, 0, M), bid(job, 1, 1_200_000)]
      const award = withHeader(awarded(decide(job, bids)))
      assert.equal(award.price, M)
      assert.equal(faultOf(auditAward(award, { job, bids })), undefined)
      assert.equal(faultOf(auditAward({ ...award, price: M + 1 }, { job, bids })), AwardFault.WRONG_PRICE)
      assert.equal(faultOf(auditAward({ ...award, price: M - 1 }, { job, bids })), AwardFault.WRONG_PRICE)
    })

    it('second-score with a lone bid: exactly the ask, not one micro more', () => {
      const job = makeJob({ tier: 'gold', rule: 'second-score' })
      const bids = [bid(job, 0, M)]
      const award = withHeader(awarded(decide(job, bids)))
      assert.equal(award.price, M)
      assert.equal(faultOf(auditAward(award, { job, bids })), undefined)
      assert.equal(faultOf(auditAward({ ...award, price: M + 1 }, { job, bids })), AwardFault.WRONG_PRICE)
    })

    it('second-score with competition: the ask itself and the bound are admissible, below the ask is not', () => {
      const job = makeJob({ tier: 'gold', rule: 'second-score', maxPrice: 5 * M })
      const bids = [bid(job, 0, M), bid(job, 1, 1_500_000)]
      const award = withHeader(awarded(decide(job, bids, { params: exact })))
      assert.equal(award.winner, peer(0))
      const check = (price: number): string | undefined => faultOf(auditAward({ ...award, price }, { job, bids, params: exact }))
      assert.equal(check(M), undefined)
      assert.equal(check(M - 1), AwardFault.WRONG_PRICE)
      // the bound is the lowest other ask × 2 = 3 M
      assert.equal(check(3 * M), undefined)
      assert.equal(check(3 * M + 1), AwardFault.WRONG_PRICE)
    })

    it('secondScorePrice: the runner-up\'s ask under uniform views, capped at maxPrice, never below the ask', () => {
      const [winner, runnerUp] = rankBids([
        { cid: 'bafya', provider: 'a', price: M, reliability: 1, rttMs: 0 },
        { cid: 'bafyb', provider: 'b', price: 1_500_000, reliability: 1, rttMs: 0 }
      ], 'gold') as [ReturnType<typeof rankBids>[0], ReturnType<typeof rankBids>[0]]
      // an exact tie goes to the lower CID, the winner's: it may ask exactly the runner-up's price
      assert.equal(secondScorePrice(winner, runnerUp, 'gold', 5 * M), 1_500_000)
      assert.equal(secondScorePrice(winner, runnerUp, 'gold', 1_200_000), 1_200_000)
      assert.equal(secondScorePrice(winner, runnerUp, 'gold', M), M)
      assert.equal(secondScorePrice(winner, undefined, 'gold', 5 * M), M)
      // with the higher CID it must stay one micro under the runner-up
      const [w2, r2] = rankBids([
        { cid: 'bafyz', provider: 'a', price: M, reliability: 1, rttMs: 0 },
        { cid: 'bafyb', provider: 'b', price: 1_500_000, reliability: 1, rttMs: 0 }
      ], 'gold') as [ReturnType<typeof rankBids>[0], ReturnType<typeof rankBids>[0]]
      assert.equal(secondScorePrice(w2, r2, 'gold', 5 * M), 1_499_999)
    })
  })

  describe('scoring parameters and the rejection list', () => {
    // gold with the default weights: a reliable 1.5 M bid beats an unknown 1.0 M one (1.0 M × 1.75 × 1.04);
    // with a tier weight of 0 only the price and the distance count, and the cheap one wins
    const job = makeJob({ tier: 'gold', rule: 'first-price' })
    const cheapUnknown = bid(job, 0, M)
    const dearKnown = bid(job, 1, 1_500_000)
    const views = { reliability: new Map([[peer(1), 1]]), rtt: () => 0 }
    const indifferent = createScoringParams({ tierWeights: { gold: 0 } })

    it('decideAward ranks with the given parameters, not the defaults', () => {
      assert.equal(awarded(decide(job, [cheapUnknown, dearKnown], views)).winner, peer(1))
      assert.equal(awarded(decide(job, [cheapUnknown, dearKnown], { ...views, params: indifferent })).winner, peer(0))
    })

    it('verifyAward recomputes with the given parameters, not the defaults', () => {
      const award = withHeader(awarded(decide(job, [cheapUnknown, dearKnown], { ...views, params: indifferent })))
      assert.equal(faultOf(verifyAward(award, { job, bids: [cheapUnknown, dearKnown], ...views, params: indifferent })), undefined)
      assert.equal(faultOf(verifyAward(award, { job, bids: [cheapUnknown, dearKnown], ...views })), AwardFault.WRONG_WINNER)
    })

    it('lists screening and CONSIDERED_LIMIT rejections together, sorted by CID then signer', function () {
      this.timeout(20_000)
      const wide = makeJob({ tier: 'bronze', rule: 'first-price', maxPrice: 10 * M })
      const seed = (i: number): Identity => {
        const bytes = new Uint8Array(32).fill(99)
        bytes[0] = i & 0xff
        bytes[1] = i >> 8
        return new Identity(bytes)
      }
      const make = (i: number, price: number, edit: Partial<Bid> = {}): AuctionBid => {
        const identity = seed(i)
        const sealed = sealMessage(identity, 'bid', { ...bid(wide, 0, price).payload, provider: identity.peerId, ...edit })
        return { cid: sealed.cid, signer: identity.peerId, payload: sealed.payload }
      }
      const valid = Array.from({ length: MAX_CONSIDERED + 4 }, (_, i) => make(i, M + i))
      const expired = Array.from({ length: 4 }, (_, i) => make(1_000 + i, M, { expiresAt: DECIDED }))
      const decision = decide(wide, [...valid, ...expired])
      const reasons = decision.rejected.map((r) => r.reason)
      assert.equal(reasons.filter((r) => r === BidRejection.CONSIDERED_LIMIT).length, 4)
      assert.equal(reasons.filter((r) => r === BidRejection.EXPIRED).length, 4)
      const keys = decision.rejected.map((r) => `${r.cid} ${r.signer}`)
      assert.deepEqual(keys, [...keys].sort())
    })
  })

  describe('no award', () => {
    it('NO_BIDS for none, NO_VALID_BIDS when every bid is rejected, with each rejection listed', () => {
      const job = makeJob({ maxPrice: M })
      const empty = decide(job, [])
      assert.equal(empty.kind === 'none' ? empty.reason : '', 'NO_BIDS')
      assert.deepEqual(empty.rejected, [])
      const none = decide(job, [bid(job, 0, M + 1), bid(job, 1, M, { expiresAt: DECIDED })])
      assert.equal(none.kind, 'none')
      assert.equal(none.kind === 'none' ? none.reason : '', 'NO_VALID_BIDS')
      assert.deepEqual(none.rejected.map((r) => r.reason).sort(), [BidRejection.EXPIRED, BidRejection.OVER_MAX_PRICE])
    })
  })
})
