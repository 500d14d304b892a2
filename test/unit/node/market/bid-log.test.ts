import assert from 'node:assert/strict'
import { jobIdOf, type Award, type AuctionBid, type LossReason } from '../../../../protocol/index.js'
import { BidLog } from '../../../../node/market/bid-log.js'
import { NOW, bidFor, jobPayload, peer } from '../../../helpers/requester-agent-driver.js'

const M = 1_000_000
const job = { payload: jobPayload(), get cid () { return jobIdOf(this.payload) } }

function award (winner: AuctionBid, considered: AuctionBid[], issuedAt = NOW + 1_000): { payload: Award } {
  return {
    payload: {
      v: 1, issuedAt, expiresAt: issuedAt + 60_000, job: job.cid, attempt: 1, winner: winner.signer, bid: winner.cid, price: winner.payload.price,
      paymentRule: 'first-price', considered: considered.map((b) => b.cid).sort((a, b) => (a.toString() < b.toString() ? -1 : 1)), excluded: [], leaseMs: 30_000, billingIntervalSec: 60
    }
  }
}

describe('the provider\'s bid log (GET /v1/bids)', () => {
  const ours = bidFor(job.cid, 1, 2 * M, NOW)
  const cheaper = bidFor(job.cid, 2, 1.5 * M, NOW)

  function log (seen: AuctionBid[] = [], decided: Array<[string, LossReason | undefined]> = []): BidLog {
    const l = new BidLog({ seenBid: (_j, cid) => seen.find((b) => b.cid.toString() === cid), onDecided: (o, r) => { decided.push([o, r]) } })
    l.sent(job, ours, NOW)
    return l
  }

  it('pending from the bid, with the ask in micros per GPU-hour, its GPU count and an ISO time', () => {
    assert.deepEqual(log().list(), [{ job: job.cid.toString(), bid: ours.cid.toString(), pricePerGpuHour: 2 * M, gpus: 1, outcome: 'pending', at: new Date(NOW).toISOString() }])
  })

  it('an award on gossip naming a cheaper bid it saw: lost on price, winner named, counted once', () => {
    const decided: Array<[string, LossReason | undefined]> = []
    const l = log([cheaper], decided)
    l.awardSeen(award(cheaper, [ours, cheaper]))
    l.awardSeen(award(cheaper, [ours, cheaper]))
    assert.deepEqual([l.list()[0]?.outcome, l.list()[0]?.reason, l.list()[0]?.winner], ['lost', 'price', peer(2)])
    assert.deepEqual(decided, [['lost', 'price']])
  })

  it('a winning bid never seen: lost without a reason; an award that did not consider ours: not-considered', () => {
    const unseen = log()
    unseen.awardSeen(award(cheaper, [ours, cheaper]))
    assert.equal(unseen.list()[0]?.reason, undefined)
    assert.equal(unseen.list()[0]?.outcome, 'lost')
    const skipped = log([cheaper])
    skipped.awardSeen(award(cheaper, [cheaper]))
    assert.equal(skipped.list()[0]?.reason, 'not-considered')
  })

  it('an award issued before our bid that does not name it (an earlier attempt) leaves it pending', () => {
    const l = log([cheaper])
    l.awardSeen(award(cheaper, [cheaper], NOW - 1))
    assert.equal(l.list()[0]?.outcome, 'pending')
  })

  it('won by an award, then declined: declined with the review\'s reason; counted won once however it came', () => {
    const decided: Array<[string, LossReason | undefined]> = []
    const l = log([], decided)
    l.awardSeen(award(ours, [ours, cheaper]))
    l.won(ours.cid.toString())
    assert.equal(l.list()[0]?.outcome, 'won')
    l.ended(ours.cid.toString(), 'declined', 'BUSY: no free GPU')
    assert.deepEqual([l.list()[0]?.outcome, l.list()[0]?.reason], ['declined', 'BUSY: no free GPU'])
    assert.deepEqual(decided, [['won', undefined]])
  })

  it('an offer ending with no award: lost when it expired, withdrawn when cancelled; an award after that changes nothing', () => {
    const expired = log()
    expired.ended(ours.cid.toString(), 'lost', 'no award before the bid expired')
    assert.deepEqual([expired.list()[0]?.outcome, expired.list()[0]?.winner], ['lost', undefined])
    const cancelled = log([cheaper])
    cancelled.ended(ours.cid.toString(), 'cancelled', undefined)
    cancelled.awardSeen(award(cheaper, [ours, cheaper]))
    assert.equal(cancelled.list()[0]?.outcome, 'withdrawn')
  })

  it('keeps the newest `max`, newest first; a pending bid pushed out no longer waits on its job', () => {
    const l = new BidLog({ max: 2 })
    const other = { payload: jobPayload({ nonce: new Uint8Array(16).fill(5) }), get cid () { return jobIdOf(this.payload) } }
    const bids = [bidFor(job.cid, 1, M, NOW), bidFor(other.cid, 1, M, NOW + 1), bidFor(other.cid, 3, M, NOW + 2)]
    l.sent(job, bids[0] as AuctionBid, NOW)
    l.sent(other, bids[1] as AuctionBid, NOW + 1)
    l.sent(other, bids[2] as AuctionBid, NOW + 2)
    assert.deepEqual(l.list().map((e) => e.bid), [bids[2], bids[1]].map((b) => b?.cid.toString()))
    // the award for the first job finds nothing pending (and does not throw)
    l.awardSeen(award(bids[0] as AuctionBid, [bids[0] as AuctionBid]))
    assert.equal(l.list().length, 2)
  })
})
