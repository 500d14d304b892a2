import assert from 'node:assert/strict'
import { Identity, cidOfValue } from '../../../../crypto/index.js'
import { jobIdOf, sealMessage, type Bid, type JobRequest } from '../../../../protocol/index.js'
import { BidRejection, MAX_CONSIDERED, decideAward, type AuctionBid, type AuctionJob } from '../../../../protocol/market/award.js'
import {
  BidRefusal, MAX_BIDS_PER_ROUND, admitBid, assessBid, storeBid, type HeldBid
} from '../../../../protocol/market/bid-store.js'
import { reduceRequester, startRequesterJob, type RequesterEffect, type RequesterJob } from '../../../../protocol/market/lifecycle.js'
import { NOW } from '../../../helpers/arbitraries.js'

const held = (i: number, effectivePrice = 1000 + i, provider = `peer-${i}`, price = effectivePrice): HeldBid =>
  ({ bid: `bafy-${String(i).padStart(4, '0')}`, provider, price, effectivePrice })

/** `n` held bids from `n` peers, effective prices 1000..1000+n−1. */
const full = (n: number): HeldBid[] => Array.from({ length: n }, (_, i) => held(i))

describe('the round\'s bid store (protocol/market/bid-store.ts, protocol/README §5.6)', () => {
  describe('admitBid at the edges', () => {
    it('holds as many bids as an award can consider', () => {
      assert.equal(MAX_BIDS_PER_ROUND, MAX_CONSIDERED)
      assert.equal(MAX_BIDS_PER_ROUND, 256)
    })

    it('the first bid, and the 256th, are admitted however bad', () => {
      assert.deepEqual(admitBid([], held(0, 9e12)), { kind: 'admit' })
      assert.deepEqual(admitBid(full(255), held(900, 9e12)), { kind: 'admit' })
    })

    it('the 257th bid: refused when it ranks after every held bid, or ties the worst (CID after it)', () => {
      const store = full(256)
      assert.deepEqual(admitBid(store, held(900, 5000)), { kind: 'refuse', reason: BidRefusal.OUTRANKED })
      // ties the worst (1255) with a higher CID: the award would rank it after, so it is refused
      assert.deepEqual(admitBid(store, held(900, 1255)), { kind: 'refuse', reason: BidRefusal.OUTRANKED })
    })

    it('a better bid arriving when full replaces the worst-ranked one (ties to the higher CID)', () => {
      const store = full(256)
      assert.deepEqual(admitBid(store, held(900, 999)), { kind: 'replace', evict: 'bafy-0255', because: 'FULL' })
      // equal effective price to the worst, lower CID string: ranks before it
      assert.deepEqual(admitBid(store, { ...held(900, 1255), bid: 'bafy-0000a' }), { kind: 'replace', evict: 'bafy-0255', because: 'FULL' })
      // two bids tie for worst: the one with the higher CID goes
      const tied = [...full(255), { ...held(255, 1254), bid: 'bafy-0254z' }]
      assert.deepEqual(admitBid(tied, held(900, 1)), { kind: 'replace', evict: 'bafy-0254z', because: 'FULL' })
      const after = storeBid(store, held(900, 999), admitBid(store, held(900, 999)))
      assert.equal(after.length, 256)
      assert.ok(!after.some((b) => b.bid === 'bafy-0255') && after.some((b) => b.bid === 'bafy-0900'))
    })

    it('a second bid from the same peer replaces its first only when it is the better own bid', () => {
      const store = [held(0), held(1, 1500, 'peer-x', 1500)]
      // lower price: replaces, even in a full store, without evicting anyone else
      assert.deepEqual(admitBid(store, held(7, 1400, 'peer-x', 1400)), { kind: 'replace', evict: 'bafy-0001', because: 'SAME_PEER' })
      assert.deepEqual(admitBid([...full(255), held(300, 1500, 'peer-x', 1500)], held(700, 1400, 'peer-x', 1400)), { kind: 'replace', evict: 'bafy-0300', because: 'SAME_PEER' })
      // higher price, or the same price with a higher CID: refused
      assert.deepEqual(admitBid(store, held(7, 1600, 'peer-x', 1600)), { kind: 'refuse', reason: BidRefusal.PEER_HAS_BETTER })
      assert.deepEqual(admitBid(store, held(7, 1500, 'peer-x', 1500)), { kind: 'refuse', reason: BidRefusal.PEER_HAS_BETTER })
      // same price, lower CID: the award's DUPLICATE_SIGNER rule keeps it, so the store does too
      assert.deepEqual(admitBid(store, { ...held(7, 1500, 'peer-x', 1500), bid: 'bafy-0000' + 'a' }), { kind: 'replace', evict: 'bafy-0001', because: 'SAME_PEER' })
      // the same CID again
      assert.deepEqual(admitBid(store, held(0)), { kind: 'refuse', reason: BidRefusal.DUPLICATE })
    })

    it('a store of capacity 0 refuses everything', () => {
      assert.deepEqual(admitBid([], held(0), 0), { kind: 'refuse', reason: BidRefusal.OUTRANKED })
    })
  })

  describe('300 junk bids before one honest bid (through the requester lifecycle and the award)', () => {
    const identity = (i: number): Identity => {
      const seed = new Uint8Array(32).fill(7)
      seed[0] = i & 0xff
      seed[1] = i >> 8
      return new Identity(seed)
    }
    const payload: JobRequest = {
      v: 1,
      issuedAt: NOW,
      expiresAt: NOW + 3_600_000,
      nonce: new Uint8Array(16).fill(3),
      workload: { executor: 'process', argv: ['python3', 'train.py'], env: {}, inputs: [], outputs: ['out.json'], maxRuntimeSec: 3600, network: false },
      resources: { gpus: 1, minVramGB: 40, models: ['h100'], cpuCores: 4, memoryMiB: 16_384, diskMiB: 10_240 },
      sla: { tier: 'silver', maxPrice: 3_000_000, maxStartDelaySec: 300 },
      placement: { regions: ['eu'], residency: 'strict' },
      verification: { mode: 'none' },
      auction: { bidWindowMs: 500, paymentRule: 'first-price' }
    }
    const job: AuctionJob = { cid: jobIdOf(payload), payload }
    const closesAt = NOW + 500

    function sealBid (i: number, price: number, changes: Partial<Bid> = {}): AuctionBid {
      const signer = identity(i)
      const sealed = sealMessage(signer, 'bid', {
        v: 1,
        issuedAt: NOW,
        expiresAt: NOW + 60_000,
        job: job.cid,
        provider: signer.peerId,
        price,
        gpus: [`GPU-${i}`],
        model: 'nvidia-h100-80gb-hbm3',
        vramMiB: 81_559,
        region: 'eu-west',
        startBy: NOW + 60_000,
        ad: cidOfValue({ ad: i }).cid,
        ...changes
      })
      return { cid: sealed.cid, signer: signer.peerId, payload: sealed.payload }
    }

    /** Cheap bids that fail screening, in five ways, and sound bids outbid by the honest one. */
    function junk (i: number): AuctionBid {
      switch (i % 6) {
        case 0: return sealBid(i, 1, { model: 'nvidia-a10' })
        case 1: return sealBid(i, 1, { vramMiB: 1024 })
        case 2: return sealBid(i, 1, { region: 'us-east' })
        case 3: return sealBid(i, 1, { startBy: closesAt + 300_001 })
        case 4: return sealBid(i, 1, { expiresAt: closesAt })
        default: return sealBid(i, 2_900_000 - i)
      }
    }

    it('screening on arrival refuses each cheap junk bid with the award\'s reason', () => {
      const reasons = [0, 1, 2, 3, 4].map((i) => assessBid(job, junk(i), { at: closesAt }))
      assert.deepEqual(reasons, [
        { fault: BidRejection.HARDWARE }, { fault: BidRejection.HARDWARE }, { fault: BidRejection.REGION },
        { fault: BidRejection.LATE_START }, { fault: BidRejection.EXPIRED }
      ])
      // exactly at the start limit and one ms before expiry-at-close: admitted
      assert.ok('held' in assessBid(job, sealBid(900, 1, { startBy: closesAt + 300_000 }), { at: closesAt }))
      assert.ok('held' in assessBid(job, sealBid(901, 1, { expiresAt: closesAt + 1 }), { at: closesAt }))
    })

    it('the honest bid arriving last still wins', () => {
      const bids = [...Array.from({ length: 300 }, (_, i) => junk(i)), sealBid(1000, 2_000_000)]
      const byCid = new Map(bids.map((b) => [b.cid.toString(), b]))
      let state: RequesterJob = startRequesterJob({ job: job.cid.toString(), bidWindowMs: 500, expiresAt: payload.expiresAt, gpus: 1, maxRuntimeSec: 3600 }, NOW).state
      bids.forEach((b, i) => {
        const now = NOW + 1 + i
        const assessed = assessBid(job, b, { at: Math.max(now, state.auction.closesAt) })
        if ('fault' in assessed) return
        state = reduceRequester(state, { type: 'bid-received', now, ...assessed.held }).state
      })
      assert.ok(state.auction.bids.length <= MAX_BIDS_PER_ROUND)
      const closed = reduceRequester(state, { type: 'tick', now: closesAt })
      const close = closed.effects.find((e): e is Extract<RequesterEffect, { type: 'close-auction' }> => e.type === 'close-auction')
      assert.ok(close !== undefined)
      const decision = decideAward({
        job,
        bids: close.bids.map((b) => byCid.get(b.bid) as AuctionBid),
        attempt: 1,
        now: closesAt,
        leaseMs: 30_000,
        billingIntervalSec: 60
      })
      assert.equal(decision.kind, 'award')
      assert.equal(decision.kind === 'award' ? decision.award.winner : '', identity(1000).peerId)
    })
  })
})
