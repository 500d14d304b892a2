import assert from 'node:assert/strict'
import fc from 'fast-check'
import { Identity, cidOfValue, type CID } from '../../../../crypto/index.js'
import { jobIdOf, openMessage, sealMessage, validatePayload, type Award, type Bid, type JobRequest } from '../../../../protocol/index.js'
import {
  AwardFault, BidRejection, InvalidAwardInputError, MAX_CONSIDERED, auditAward, decideAward, secondScorePrice, verifyAward,
  type AuctionBid, type AuctionJob, type AwardInput, type PeerView
} from '../../../../protocol/market/award.js'
import { compareRanked, effectivePrice, rankBids, scoreFactor } from '../../../../protocol/market/scoring.js'
import type { Tier } from '../../../../protocol/market/types.js'
import { NOW } from '../../../helpers/arbitraries.js'
import { DECIDED, awarded, decide, uniform, withHeader } from '../../../helpers/award-decide.js'
import { plain } from '../../../helpers/plain.js'

const M = 1_000_000
const providers = Array.from({ length: 8 }, (_, i) => new Identity(new Uint8Array(32).fill(40 + i)))
const requester = new Identity(new Uint8Array(32).fill(2))

type Rule = JobRequest['auction']['paymentRule']

function makeJob (tier: Tier = 'silver', paymentRule: Rule = 'first-price', maxPrice = 2_500_000): AuctionJob {
  const payload: JobRequest = {
    v: 1,
    issuedAt: NOW,
    expiresAt: NOW + 3_600_000,
    nonce: new Uint8Array(16).fill(9),
    workload: { executor: 'process', argv: ['python3', 'eval.py'], env: {}, inputs: [], outputs: ['out.json'], maxRuntimeSec: 3600, network: false },
    resources: { gpus: 1, minVramGB: 40, models: [], cpuCores: 4, memoryMiB: 16_384, diskMiB: 10_240 },
    sla: { tier, maxPrice, maxStartDelaySec: 300 },
    placement: { regions: ['eu'], residency: 'prefer' },
    verification: { mode: 'none' },
    auction: { bidWindowMs: 500, paymentRule }
  }
  return { cid: jobIdOf(payload), payload }
}

interface BidOptions { job?: CID, expiresAt?: number, startBy?: number }

function bidPayload (job: AuctionJob, provider: number, price: number, options: BidOptions = {}): Bid {
  return {
    v: 1,
    issuedAt: NOW,
    expiresAt: options.expiresAt ?? NOW + 60_000,
    job: options.job ?? job.cid,
    provider: (providers[provider] as Identity).peerId,
    price,
    gpus: [`GPU-${provider}0000000-0000-0000`],
    model: 'nvidia-h100-80gb-hbm3',
    vramMiB: 81_559,
    region: 'eu-west',
    startBy: options.startBy ?? NOW + 60_000,
    ad: cidOfValue({ ad: provider }).cid
  }
}

/** A real bid: sealed by provider `provider` and opened as a receiver would. */
function bid (job: AuctionJob, provider: number, price: number, options: BidOptions = {}, signer = providers[provider] as Identity): AuctionBid {
  const sealed = sealMessage(signer, 'bid', bidPayload(job, provider, price, options))
  return openMessage(sealed.bytes, 'bid', { now: NOW })
}

/** A bid sealed but not opened (for properties, where opening every bid would only cost time). */
function sealedBid (job: AuctionJob, provider: number, price: number, options: BidOptions = {}): AuctionBid {
  const identity = providers[provider] as Identity
  const sealed = sealMessage(identity, 'bid', bidPayload(job, provider, price, options))
  return { cid: sealed.cid, signer: identity.peerId, payload: sealed.payload }
}

const peer = (i: number): string => (providers[i] as Identity).peerId





const cidString = (b: AuctionBid): string => b.cid.toString()
const sortedCids = (bids: AuctionBid[]): string[] => bids.map(cidString).sort()

describe('auction award (DESIGN §5)', () => {
  describe('decideAward', () => {
    it('awards the cheapest bid at its ask (first-price) and names every bid considered', () => {
      const job = makeJob()
      const bids = [bid(job, 0, 1_800_000), bid(job, 1, 1_200_000), bid(job, 2, 2_000_000)]
      const decision = decide(job, bids, { attempt: 2, excluded: [peer(5)] })
      const award = awarded(decision)
      assert.equal(award.winner, peer(1))
      assert.ok(award.bid.equals(bids[1]?.cid))
      assert.equal(award.price, 1_200_000)
      assert.equal(award.paymentRule, 'first-price')
      assert.deepEqual(award.considered.map(String), sortedCids(bids))
      assert.deepEqual(award.excluded, [peer(5)])
      assert.equal(award.attempt, 2)
      assert.equal(award.leaseMs, 30_000)
      assert.equal(award.billingIntervalSec, 60)
      assert.ok(award.job.equals(job.cid))
      assert.deepEqual(decision.kind === 'award' && decision.ranking.map((r) => r.provider), [peer(1), peer(0), peer(2)])
    })

    it('produces fields that, with a header, are a valid and sealable award', () => {
      const job = makeJob('gold', 'second-score')
      const award = withHeader(awarded(decide(job, [bid(job, 0, 1_800_000), bid(job, 1, 1_200_000)])))
      assert.deepEqual(plain(validatePayload('award', award)), plain(award))
      const opened = openMessage(sealMessage(requester, 'award', award).bytes, 'award', { now: DECIDED })
      assert.equal(opened.payload.price, award.price)
    })

    it('lets the tier decide between a cheap unreliable and an expensive reliable provider', () => {
      const reliability = new Map([[peer(0), 0.2], [peer(1), 1]])
      const winner = (tier: Tier): string => {
        const job = makeJob(tier)
        return awarded(decide(job, [bid(job, 0, 1_000_000), bid(job, 1, 1_500_000)], { reliability, rtt: () => 0 })).winner
      }
      assert.equal(winner('gold'), peer(1))
      assert.equal(winner('silver'), peer(0))
      assert.equal(winner('bronze'), peer(0))
    })

    it('scores providers missing from the views as unknown: low reliability, default RTT', () => {
      const job = makeJob('gold')
      const bids = [bid(job, 0, 1_000_000), bid(job, 1, 1_700_000)]
      // provider 0 is unknown: 1.0 M × 1.75 × 1.04 = 1.82 M > provider 1 known-good at 1.7 M
      const award = awarded(decide(job, bids, { reliability: new Map([[peer(1), 1]]), rtt: new Map([[peer(1), 0]]) }))
      assert.equal(award.winner, peer(1))
    })

    it('breaks equal effective prices by bid CID', () => {
      const job = makeJob()
      const bids = [bid(job, 0, M), bid(job, 1, M), bid(job, 2, M)]
      const award = awarded(decide(job, bids))
      assert.equal(award.bid.toString(), sortedCids(bids)[0])
      assert.ok(awarded(decide(job, [...bids].reverse())).bid.equals(award.bid))
    })

    describe('second-score payment', () => {
      it('pays the price at which the winner would tie the runner-up', () => {
        const job = makeJob('gold', 'second-score')
        // winner: 1.0 M × 1.5 (reliability 0.5) = 1.5 M; runner-up 1.6 M × 1 → p = ⌊1.6 M / 1.5⌋ = 1,066,666
        const bids = [bid(job, 0, 1_000_000), bid(job, 1, 1_600_000)]
        const award = awarded(decide(job, bids, { reliability: new Map([[peer(0), 0.5], [peer(1), 1]]), rtt: () => 0 }))
        assert.equal(award.winner, peer(0))
        assert.equal(award.price, 1_066_666)
        assert.ok(1_066_666 * 1.5 < 1_600_000 && 1_066_667 * 1.5 > 1_600_000)
      })

      it('pays the runner-up ask with uniform views, resolving an exact tie by CID', () => {
        const job = makeJob('silver', 'second-score')
        const bids = [bid(job, 0, 1_000_000), bid(job, 1, 1_200_000), bid(job, 2, 1_900_000)]
        const award = awarded(decide(job, bids))
        assert.equal(award.winner, peer(0))
        // at 1.2 M the winner ties the runner-up and wins only if its CID sorts first
        assert.equal(award.price, cidString(bids[0] as AuctionBid) < cidString(bids[1] as AuctionBid) ? 1_200_000 : 1_199_999)
      })

      it('pays the ask when the runner-up asks the same', () => {
        const job = makeJob('silver', 'second-score')
        const award = awarded(decide(job, [bid(job, 0, 1_300_000), bid(job, 1, 1_300_000)]))
        assert.equal(award.price, 1_300_000)
      })

      it('never pays above maxPrice', () => {
        const job = makeJob('gold', 'second-score', 1_200_000)
        // runner-up scores 1.1 M × 1.5 = 1.65 M, but the job caps at 1.2 M
        const bids = [bid(job, 0, 1_000_000), bid(job, 1, 1_100_000)]
        const award = awarded(decide(job, bids, { reliability: new Map([[peer(0), 1], [peer(1), 0.5]]), rtt: () => 0 }))
        assert.equal(award.winner, peer(0))
        assert.equal(award.price, 1_200_000)
      })

      it('pays a lone bidder its ask, not maxPrice', () => {
        const job = makeJob('gold', 'second-score', 5 * M)
        assert.equal(awarded(decide(job, [bid(job, 3, 1_400_000)])).price, 1_400_000)
      })

      it('never pays below the ask', () => {
        const job = makeJob('gold', 'second-score')
        // the runner-up's distance penalty is what the winner earns: 1.0 M vs 1.0 M × 1.1
        const bids = [bid(job, 0, M), bid(job, 1, M)]
        const award = awarded(decide(job, bids, { reliability: () => 1, rtt: new Map([[peer(0), 0], [peer(1), 900]]) }))
        assert.equal(award.winner, peer(0))
        assert.ok(award.price >= M)
        assert.ok(Math.abs(award.price - 1_100_000) <= 1)
      })
    })

    describe('screening', () => {
      it('drops bids that do not offer what the job asks: GPUs, VRAM, model, strict region, start', () => {
        const base = makeJob()
        const payload: JobRequest = { ...base.payload, resources: { ...base.payload.resources, gpus: 2, models: ['h100'] }, placement: { regions: ['eu'], residency: 'strict' } }
        const job: AuctionJob = { cid: jobIdOf(payload), payload }
        const make = (provider: number, edit: Partial<Bid>): AuctionBid => {
          const identity = providers[provider] as Identity
          const sealed = sealMessage(identity, 'bid', { ...bidPayload(job, provider, 1_000_000), gpus: ['GPU-a', 'GPU-b'], ...edit })
          return openMessage(sealed.bytes, 'bid', { now: NOW })
        }
        const bids = [
          make(0, {}),
          make(1, { gpus: ['GPU-a'] }),
          make(2, { vramMiB: 30_000 }),
          make(3, { model: 'nvidia-a100-sxm4-80gb' }),
          make(4, { region: 'us-east' }),
          make(5, { startBy: DECIDED + 300_001 })
        ]
        const decision = decide(job, bids)
        assert.equal(awarded(decision).winner, peer(0))
        assert.deepEqual(new Map(decision.rejected.map((r) => [r.signer, r.reason])), new Map([
          [peer(1), 'HARDWARE'], [peer(2), 'HARDWARE'], [peer(3), 'HARDWARE'], [peer(4), 'REGION'], [peer(5), 'LATE_START']
        ]))
      })

      it('drops a bid whose model only contains the wanted one (a10 is not an A100, l4 not an L40S)', () => {
        const base = makeJob()
        const forModels = (models: string[]): AuctionJob => {
          const payload: JobRequest = { ...base.payload, resources: { ...base.payload.resources, models } }
          return { cid: jobIdOf(payload), payload }
        }
        const make = (job: AuctionJob, provider: number, model: string): AuctionBid => {
          const sealed = sealMessage(providers[provider] as Identity, 'bid', { ...bidPayload(job, provider, 1_000_000), model })
          return openMessage(sealed.bytes, 'bid', { now: NOW })
        }
        const a10 = forModels(['a10'])
        const onA10 = decide(a10, [make(a10, 0, 'nvidia-a100-sxm4-80gb'), make(a10, 1, 'nvidia-a10')])
        assert.equal(awarded(onA10).winner, peer(1))
        assert.deepEqual(onA10.rejected.map((r) => [r.signer, r.reason]), [[peer(0), 'HARDWARE']])
        const l4 = forModels(['l4'])
        const onL4 = decide(l4, [make(l4, 0, 'nvidia-l40s')])
        assert.deepEqual(onL4.rejected.map((r) => [r.signer, r.reason]), [[peer(0), 'HARDWARE']])
      })

      it('drops bids for another job, over maxPrice, expired or from excluded providers', () => {
        const job = makeJob('silver', 'first-price', 2 * M)
        const other = makeJob('gold')
        const good = bid(job, 0, 1_900_000)
        const bids = [
          good,
          bid(job, 1, 1_000_000, { job: other.cid }),
          bid(job, 2, 2_000_001),
          bid(job, 3, 1_000_000, { expiresAt: DECIDED }),
          bid(job, 4, 1_000_000)
        ]
        const decision = decide(job, bids, { excluded: [peer(4)] })
        const award = awarded(decision)
        assert.equal(award.winner, peer(0))
        assert.deepEqual(award.considered.map(String), [cidString(good)])
        const reasons = new Map(decision.rejected.map((r) => [r.signer, r.reason]))
        assert.deepEqual(reasons, new Map([
          [peer(1), BidRejection.WRONG_JOB], [peer(2), BidRejection.OVER_MAX_PRICE], [peer(3), BidRejection.EXPIRED], [peer(4), BidRejection.EXCLUDED]
        ]))
      })

      it('admits a start exactly maxStartDelaySec after the decision, not one ms later; with 0 only an immediate start', () => {
        const withDelay = (maxStartDelaySec: number): AuctionJob => {
          const base = makeJob()
          const payload: JobRequest = { ...base.payload, sla: { ...base.payload.sla, maxStartDelaySec } }
          return { cid: jobIdOf(payload), payload }
        }
        const reasons = (job: AuctionJob, starts: number[]): Array<string | undefined> => {
          const decision = decide(job, starts.map((startBy, i) => bid(job, i, 1_000_000, { startBy })))
          const rejected = new Map(decision.rejected.map((r) => [r.signer, r.reason]))
          return starts.map((_, i) => rejected.get(peer(i)))
        }
        assert.deepEqual(reasons(withDelay(300), [DECIDED + 300_000, DECIDED + 300_001]), [undefined, BidRejection.LATE_START])
        assert.deepEqual(reasons(withDelay(0), [DECIDED - 1, DECIDED, DECIDED + 1]), [undefined, undefined, BidRejection.LATE_START])
      })

      it('accepts a bid at exactly maxPrice that expires after now', () => {
        const job = makeJob('silver', 'first-price', 2 * M)
        assert.equal(awarded(decide(job, [bid(job, 0, 2 * M, { expiresAt: DECIDED + 1 })])).price, 2 * M)
      })

      it('keeps one bid per signer: the lowest price, then the lowest CID', () => {
        const job = makeJob()
        const dear = bid(job, 0, 1_500_000)
        const cheap = bid(job, 0, 1_100_000)
        const twin = bid(job, 0, 1_100_000, { startBy: NOW + 1 })
        const rival = bid(job, 1, 1_300_000)
        const decision = decide(job, [dear, cheap, twin, rival])
        const award = awarded(decision)
        const kept = cidString(cheap) < cidString(twin) ? cheap : twin
        assert.ok(award.bid.equals(kept.cid))
        assert.deepEqual(award.considered.map(String), sortedCids([kept, rival]))
        assert.deepEqual(decision.rejected.map((r) => r.reason), [BidRejection.DUPLICATE_SIGNER, BidRejection.DUPLICATE_SIGNER])
      })

      it('counts a bid received twice once', () => {
        const job = makeJob()
        const once = bid(job, 0, M)
        const decision = decide(job, [once, bid(job, 0, M), once])
        assert.deepEqual(awarded(decision).considered.map(String), [cidString(once)])
        assert.deepEqual(decision.rejected, [])
      })

      it('refuses a bid re-signed by another peer, and drops a CID claimed by several signers', () => {
        const job = makeJob()
        const original = bid(job, 0, 900_000)
        // opening refuses the copy outright: the payload names provider 0, provider 1 signed it
        assert.throws(() => bid(job, 0, 900_000, {}, providers[1]), /SIGNER_MISMATCH/)
        // bids handed to decideAward some other way still cannot share a CID
        const copy: AuctionBid = { ...original, signer: peer(1) }
        assert.ok(copy.cid.equals(original.cid))
        assert.notEqual(copy.signer, original.signer)
        const honest = bid(job, 2, 1_000_000)
        const decision = decide(job, [original, copy, honest])
        assert.equal(awarded(decision).winner, peer(2))
        assert.deepEqual(decision.rejected.map((r) => r.reason), [BidRejection.CID_CONFLICT, BidRejection.CID_CONFLICT])
      })

      it('answers none when no bid arrived or none is valid', () => {
        const job = makeJob('silver', 'first-price', M)
        assert.deepEqual(decide(job, []), { kind: 'none', reason: 'NO_BIDS', detail: 'no bids arrived', rejected: [] })
        const none = decide(job, [bid(job, 0, 2 * M), bid(job, 1, 500_000)], { excluded: [peer(1)] })
        assert.equal(none.kind, 'none')
        assert.equal(none.kind === 'none' && none.reason, 'NO_VALID_BIDS')
        assert.equal(none.rejected.length, 2)
      })

      it(`considers at most the ${MAX_CONSIDERED} best bids`, function () {
        this.timeout(20_000)
        const job = makeJob('bronze', 'second-score', 10 * M)
        const many = Array.from({ length: MAX_CONSIDERED + 4 }, (_, i) => {
          const seed = new Uint8Array(32).fill(77)
          seed[0] = i & 0xff
          seed[1] = i >> 8
          const identity = new Identity(seed)
          const sealed = sealMessage(identity, 'bid', { ...bidPayload(job, 0, M + i * 1_000), provider: identity.peerId })
          return { cid: sealed.cid, signer: identity.peerId, payload: sealed.payload }
        })
        const decision = decide(job, many)
        const award = awarded(decision)
        assert.equal(award.considered.length, MAX_CONSIDERED)
        // ranked by ask under uniform views: the runner-up asks 1,001,000; an exact tie goes by CID
        const [first, second] = decision.kind === 'award' ? decision.ranking : []
        assert.equal(first?.price, M)
        assert.equal(award.price, (first?.cid ?? '') < (second?.cid ?? '') ? M + 1_000 : M + 999)
        assert.deepEqual(decision.rejected.map((r) => r.reason), Array(4).fill(BidRejection.CONSIDERED_LIMIT))
        assert.deepEqual(plain(validatePayload('award', withHeader(award))), plain(withHeader(award)))
        assert.deepEqual(verifyAward(withHeader(award), { job, bids: many, ...uniform }), { ok: true })
      })
    })

    it('refuses values an award cannot carry', () => {
      const job = makeJob()
      const bids = [bid(job, 0, M)]
      for (const extra of [{ attempt: 0 }, { attempt: 17 }, { leaseMs: 999 }, { leaseMs: 1.5e3 + 0.5 }, { billingIntervalSec: 0 }, { billingIntervalSec: 86_401 }]) {
        assert.throws(() => decide(job, bids, extra), InvalidAwardInputError, JSON.stringify(extra))
      }
      const excluded = Array.from({ length: 65 }, (_, i) => new Identity(new Uint8Array(32).fill(100 + i)).peerId)
      assert.throws(() => decide(job, bids, { excluded }), InvalidAwardInputError)
      assert.equal(awarded(decide(job, bids, { excluded: [...excluded.slice(0, 64), excluded[0] as string] })).excluded.length, 64)
    })
  })

  describe('verifyAward and auditAward', () => {
    const job = makeJob('gold', 'second-score')
    const bids = [bid(job, 0, 1_000_000), bid(job, 1, 1_500_000), bid(job, 2, 1_700_000)]
    const views = { reliability: new Map([[peer(0), 0.2], [peer(1), 1], [peer(2), 0.9]]), rtt: () => 40 }
    const award = withHeader(awarded(decide(job, bids, views)))

    it('accepts the award under the requester\'s views', () => {
      assert.equal(award.winner, peer(1))
      assert.deepEqual(verifyAward(award, { job, bids, ...views }), { ok: true })
      assert.deepEqual(auditAward(award, { job, bids }), { ok: true })
    })

    it('a third party with uniform views disagrees on the winner but its audit passes', () => {
      const check = verifyAward(award, { job, bids, ...uniform })
      assert.equal(check.ok === false && check.reason, AwardFault.WRONG_WINNER)
      assert.deepEqual(auditAward(award, { job, bids }), { ok: true })
    })

    it('needs every considered bid; extra bids are ignored', () => {
      const check = verifyAward(award, { job, bids: bids.slice(1), ...views })
      assert.equal(check.ok === false && check.reason, AwardFault.MISSING_BID)
      assert.deepEqual(verifyAward(award, { job, bids: [...bids, bid(job, 3, 100_000)], ...views }), { ok: true })
    })

    it('rejects an award for another job or with another payment rule', () => {
      const other = makeJob('gold', 'first-price')
      const check = verifyAward(award, { job: other, bids, ...views })
      assert.equal(check.ok === false && check.reason, AwardFault.WRONG_JOB)
      const rule = verifyAward({ ...award, paymentRule: 'first-price' }, { job, bids, ...views })
      assert.equal(rule.ok === false && rule.reason, AwardFault.WRONG_PAYMENT_RULE)
    })

    it('rejects a considered bid that was invalid at the award time', () => {
      const late = { ...award, issuedAt: NOW + 60_000, expiresAt: NOW + 120_000 }
      const check = auditAward(late, { job, bids })
      assert.equal(check.ok === false && check.reason, AwardFault.INVALID_BID)
      const excluded = auditAward({ ...award, excluded: [peer(2)] }, { job, bids })
      assert.equal(excluded.ok === false && excluded.reason, AwardFault.INVALID_BID)
    })

    it('audit catches a winner no admissible view explains', () => {
      // gold's worst factor is 2 × 1.1 = 2.2: a 2.3 M bid can never beat a 1.0 M one
      const rigged = makeJob('gold', 'first-price', 5 * M)
      const cheap = bid(rigged, 0, 1_000_000)
      const friend = bid(rigged, 1, 2_300_000)
      const fields = awarded(decide(rigged, [cheap, friend]))
      const forged = { ...withHeader(fields), winner: peer(1), bid: friend.cid, price: 2_300_000 }
      const check = auditAward(forged, { job: rigged, bids: [cheap, friend] })
      assert.equal(check.ok === false && check.reason, AwardFault.WRONG_WINNER)
      // 2.1 M is within 2.2 × 1.0 M: a view exists (provider 0 unknown and far) under which it wins
      const nearFriend = bid(rigged, 1, 2_100_000)
      const considered = [cheap.cid, nearFriend.cid].sort((a, b) => a.toString() < b.toString() ? -1 : 1)
      const plausible = { ...forged, bid: nearFriend.cid, price: 2_100_000, considered }
      assert.deepEqual(auditAward(plausible, { job: rigged, bids: [cheap, nearFriend] }), { ok: true })
    })

    it('audit bounds a second-score price by maxPrice and the lowest other ask × worst factor', () => {
      const high = { ...award, price: 1_000_000 * 2.2 + 1 }
      const check = auditAward(high, { job, bids })
      assert.equal(check.ok === false && check.reason, AwardFault.WRONG_PRICE)
      const low = { ...award, price: 1_499_999 }
      const lowCheck = auditAward(low, { job, bids })
      assert.equal(lowCheck.ok === false && lowCheck.reason, AwardFault.WRONG_PRICE)
    })
  })

  describe('audit of a second-score price bound that is not a whole number of micros', () => {
    // the bound is ⌊lowest other ask × worst factor⌋; a mutant rounding it up accepted one micro above it
    const job = makeJob('gold', 'second-score', 5 * M)
    const bids = [bid(job, 0, 1_000_003), bid(job, 1, 1_500_000)]
    const views = { reliability: new Map([[peer(0), 0.2], [peer(1), 1]]), rtt: () => 40 }
    const award = withHeader(awarded(decide(job, bids, views)))
    // gold's worst factor 2.2 × 1,000,003 = 2,200,006.6
    const bound = Math.floor(1_000_003 * 2.2)

    it('accepts the bound itself and refuses one micro above it', () => {
      assert.equal(award.winner, peer(1))
      assert.equal(bound, 2_200_006)
      assert.deepEqual(auditAward({ ...award, price: bound }, { job, bids }), { ok: true })
      const above = auditAward({ ...award, price: bound + 1 }, { job, bids })
      assert.equal(above.ok === false && above.reason, AwardFault.WRONG_PRICE)
    })

    it('caps the bound at maxPrice when that is lower', () => {
      const capped = makeJob('gold', 'second-score', bound - 6)
      const cappedBids = [bid(capped, 0, 1_000_003), bid(capped, 1, 1_500_000)]
      const fields = withHeader(awarded(decide(capped, cappedBids, views)))
      assert.deepEqual(auditAward({ ...fields, price: bound - 6 }, { job: capped, bids: cappedBids }), { ok: true })
      const over = auditAward({ ...fields, price: bound - 5 }, { job: capped, bids: cappedBids })
      assert.equal(over.ok === false && over.reason, AwardFault.WRONG_PRICE)
    })
  })

  describe('properties', () => {
    const tiers = fc.constantFrom<Tier>('gold', 'silver', 'bronze')
    const rules = fc.constantFrom<Rule>('first-price', 'second-score')
    const price = fc.oneof(fc.constantFrom(1_000_000, 1_200_000, 1_500_000, 2_000_000), fc.integer({ min: 100_000, max: 3_000_000 }))
    const bidSpec = fc.record({
      provider: fc.nat(providers.length - 1),
      price,
      startBy: fc.nat(3),
      // the edges at the decision's instant: expiring at it (out) or 1 ms after (in), starting exactly
      // maxStartDelaySec after it (in) or 1 ms later (out)
      fault: fc.oneof({ weight: 6, arbitrary: fc.constant('none' as const) },
        { weight: 2, arbitrary: fc.constantFrom('wrong-job' as const, 'expired' as const, 'expires-after' as const, 'start-at-limit' as const, 'late-start' as const) })
    })
    const view = <T>(value: fc.Arbitrary<T>) => fc.array(fc.option(value, { nil: undefined }), { minLength: providers.length, maxLength: providers.length })
    const scenario = fc.record({
      tier: tiers,
      rule: rules,
      maxPrice: fc.integer({ min: 1_000_000, max: 3_000_000 }),
      specs: fc.array(bidSpec, { minLength: 1, maxLength: 10 }),
      reliability: view(fc.double({ min: 0, max: 1, noNaN: true })),
      rtt: view(fc.nat(800)),
      excluded: fc.subarray([0, 1, 2, 3, 4, 5, 6, 7], { maxLength: 2 })
    })

    interface Built { job: AuctionJob, bids: AuctionBid[], input: AwardInput, views: { reliability: PeerView, rtt: PeerView } }

    type Scenario = typeof scenario extends fc.Arbitrary<infer T> ? T : never

    function build (s: Scenario): Built {
      const job = makeJob(s.tier, s.rule, s.maxPrice)
      const other = makeJob(s.tier, s.rule, s.maxPrice + 1)
      const startDelayMs = job.payload.sla.maxStartDelaySec * 1000
      const bids = s.specs.map((b) => sealedBid(job, b.provider, b.price, {
        startBy: b.fault === 'start-at-limit' ? DECIDED + startDelayMs : b.fault === 'late-start' ? DECIDED + startDelayMs + 1 : NOW + b.startBy,
        job: b.fault === 'wrong-job' ? other.cid : undefined,
        expiresAt: b.fault === 'expired' ? DECIDED : b.fault === 'expires-after' ? DECIDED + 1 : undefined
      }))
      const views = {
        reliability: new Map(s.reliability.flatMap((r, i) => r === undefined ? [] : [[peer(i), r] as const])),
        rtt: new Map(s.rtt.flatMap((r, i) => r === undefined ? [] : [[peer(i), r] as const]))
      }
      const input: AwardInput = { job, bids, attempt: 1, now: DECIDED, leaseMs: 30_000, billingIntervalSec: 60, excluded: s.excluded.map(peer), ...views }
      return { job, bids, input, views }
    }

    const withPermutation = scenario.chain((s) => fc.tuple(fc.constant(s), fc.shuffledSubarray(s.specs.map((_, i) => i), { minLength: s.specs.length, maxLength: s.specs.length })))

    it('the award does not depend on the order of the bids or the excluded list', () => {
      fc.assert(fc.property(withPermutation, ([s, order]) => {
        const { input } = build(s)
        const shuffled = { ...input, bids: order.map((i) => input.bids[i] as AuctionBid), excluded: [...(input.excluded ?? [])].reverse() }
        assert.deepEqual(plain(decideAward(shuffled)), plain(decideAward(input)))
      }), { numRuns: 60 })
    })

    it('a decided award validates, verifies under the same views and passes audit', () => {
      fc.assert(fc.property(scenario, (s) => {
        const { job, bids, input, views } = build(s)
        const decision = decideAward(input)
        if (decision.kind === 'none') {
          assert.ok(bids.every((b) => decision.rejected.some((r) => r.cid === cidString(b))))
          return
        }
        const award = withHeader(decision.award)
        validatePayload('award', award)
        assert.deepEqual(verifyAward(award, { job, bids, ...views }), { ok: true })
        assert.deepEqual(auditAward(award, { job, bids }), { ok: true })
        // the winner is the best considered bid under the views, and no valid bid was left out
        const considered = new Set(award.considered.map(String))
        assert.equal(considered.size + decision.rejected.length, new Set(bids.map((b) => `${cidString(b)} ${b.signer}`)).size)
        assert.equal(decision.ranking[0]?.provider, award.winner)
      }), { numRuns: 80 })
    })

    it('screening rejects each bid for its first fault, edges at the decision\'s instant included', () => {
      const screening = new Set<string>([BidRejection.WRONG_JOB, BidRejection.OVER_MAX_PRICE, BidRejection.EXPIRED, BidRejection.LATE_START])
      fc.assert(fc.property(scenario, (s) => {
        const { bids, input } = build(s)
        const decision = decideAward(input)
        const reasons = new Map(decision.rejected.map((r) => [r.cid, r.reason]))
        s.specs.forEach((spec, i) => {
          const expected = spec.fault === 'wrong-job'
            ? BidRejection.WRONG_JOB
            : spec.price > s.maxPrice ? BidRejection.OVER_MAX_PRICE : spec.fault === 'expired' ? BidRejection.EXPIRED : spec.fault === 'late-start' ? BidRejection.LATE_START : undefined
          const got = reasons.get(cidString(bids[i] as AuctionBid))
          if (expected !== undefined) assert.equal(got, expected, `${spec.fault} at ${spec.price}`)
          else assert.ok(got === undefined || !screening.has(got), `${spec.fault} rejected as ${String(got)}`)
        })
      }), { numRuns: 120 })
    })

    it('pays first-price at the ask and second-score within [ask, maxPrice] at the winning threshold', () => {
      fc.assert(fc.property(scenario, (s) => {
        const { job, input } = build(s)
        const decision = decideAward(input)
        if (decision.kind === 'none') return
        const [winner, runnerUp] = decision.ranking
        assert.ok(winner !== undefined)
        const ask = winner.price
        const { price } = decision.award
        if (s.rule === 'first-price' || runnerUp === undefined) { assert.equal(price, ask); return }
        assert.ok(price >= ask && price <= job.payload.sla.maxPrice, `${ask} ≤ ${price} ≤ ${job.payload.sla.maxPrice}`)
        const at = (p: number) => compareRanked({ effectivePrice: effectivePrice({ ...winner, price: p }, s.tier), cid: winner.cid }, runnerUp) < 0
        assert.ok(at(price) || price === ask)
        if (price < job.payload.sla.maxPrice) assert.ok(!at(price + 1), `the winner would still win at ${price + 1}`)
        assert.ok(scoreFactor(winner, s.tier) >= 1)
      }), { numRuns: 120 })
    })

    it('secondScorePrice finds the exact threshold, also for large prices', () => {
      const scored = (cid: string) => fc.record({
        cid: fc.constant(cid),
        provider: fc.constant(cid),
        price: fc.oneof(fc.integer({ min: 0, max: 2 ** 45 }), fc.integer({ min: 0, max: 3_000_000 })),
        reliability: fc.option(fc.double({ min: 0, max: 1, noNaN: true }), { nil: undefined }),
        rttMs: fc.option(fc.nat(2_000), { nil: undefined })
      })
      fc.assert(fc.property(tiers, scored('bafya'), scored('bafyb'), fc.integer({ min: 0, max: 2 ** 46 }), (tier, a, b, headroom) => {
        const [winner, runnerUp] = rankBids([a, b], tier) as [ReturnType<typeof rankBids>[0], ReturnType<typeof rankBids>[0]]
        const maxPrice = Math.max(a.price, b.price) + headroom
        const p = secondScorePrice(winner, runnerUp, tier, maxPrice)
        assert.ok(Number.isSafeInteger(p) && p >= winner.price && p <= maxPrice)
        const wins = (q: number) => compareRanked({ effectivePrice: effectivePrice({ ...winner, price: q }, tier), cid: winner.cid }, runnerUp) < 0
        assert.ok(wins(p), `the winner loses at ${p}`)
        if (p < maxPrice) assert.ok(!wins(p + 1), `the winner still wins at ${p + 1}`)
      }), { numRuns: 500 })
    })

    it('tampering with the winner, bid, price or considered list fails verification', () => {
      fc.assert(fc.property(scenario, fc.nat(), (s, pick) => {
        const { job, bids, input, views } = build(s)
        const decision = decideAward(input)
        if (decision.kind === 'none') return
        const award = withHeader(decision.award)
        const check = (a: Award): boolean => verifyAward(a, { job, bids, ...views }).ok

        assert.ok(!check({ ...award, price: award.price + 1 }))
        if (award.price > 0) assert.ok(!check({ ...award, price: award.price - 1 }))
        const stranger = peer((providers.findIndex((p) => p.peerId === award.winner) + 1) % providers.length)
        assert.ok(!check({ ...award, winner: stranger }))

        const losers = decision.ranking.slice(1)
        const loser = losers[pick % Math.max(1, losers.length)]
        if (loser !== undefined) {
          const loserCid = award.considered.find((c) => c.toString() === loser.cid) as CID
          assert.ok(!check({ ...award, winner: loser.provider, bid: loserCid }))
          assert.ok(!check({ ...award, considered: [...award.considered].reverse() }))
          const withoutWinner = award.considered.filter((c) => !c.equals(award.bid))
          assert.ok(!check({ ...award, considered: withoutWinner }))
        }
        const unknown = cidOfValue({ unknown: pick }).cid
        const padded = [...award.considered, unknown].sort((a, b) => a.toString() < b.toString() ? -1 : 1)
        const result = verifyAward({ ...award, considered: padded }, { job, bids, ...views })
        assert.equal(result.ok === false && result.reason, AwardFault.MISSING_BID)
      }), { numRuns: 60 })
    })
  })
})
