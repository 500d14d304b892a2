import assert from 'node:assert/strict'
import fc from 'fast-check'
import { bidFit } from '../../../../protocol/market/bid-policy.js'
import { Identity, cidOfValue } from '../../../../crypto/index.js'
import { jobIdOf, openMessage, sealMessage, type Bid, type JobRequest } from '../../../../protocol/index.js'
import { BidRejection, screenBid, type AuctionBid, type AuctionJob } from '../../../../protocol/market/award.js'
import { BID_DELAY_FRACTION, ENOUGH_BETTER_BIDS, bidDelayMs, dampingScore, shouldStaySilent, stayingSilent } from '../../../../protocol/market/damping.js'
import { effectivePrice, UNKNOWN_RELIABILITY } from '../../../../protocol/market/scoring.js'
import { NOW } from '../../../helpers/arbitraries.js'

/** mulberry32: a small seeded PRNG, so a property run can build 1000 providers from one seed. */
function prng (seed: number): () => number {
  let s = seed >>> 0
  return () => {
    s = (s + 0x6D2B79F5) >>> 0
    let t = s
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

interface Provider { score: number, delay: number }

/**
 * One auction: every provider waits its delay, then bids unless it has already seen `enough` bids at least
 * as good as its own. A bid is seen by those whose delay is strictly later (same-ms bids cross unseen).
 */
function simulate (providers: readonly Provider[], enough = ENOUGH_BETTER_BIDS): Provider[] {
  const order = [...providers].sort((a, b) => a.delay - b.delay)
  const sent: Provider[] = []
  for (let i = 0; i < order.length;) {
    const delay = (order[i] as Provider).delay
    const seen = sent.map((p) => p.score)
    const group = order.filter((p) => p.delay === delay)
    for (const p of group) if (!stayingSilent(p.score, seen, enough)) sent.push(p)
    i += group.length
  }
  return sent
}

const MAX_PRICE = 10_000_000

/** Providers whose fit comes from their own ask, as the bid policy computes it. */
function market (n: number, seed: number, bidWindowMs: number): Provider[] {
  const random = prng(seed)
  return Array.from({ length: n }, () => {
    const price = 1_000_000 + Math.floor(random() * (MAX_PRICE - 1_000_000 + 1))
    const fit = bidFit(price, MAX_PRICE, random())
    return { score: price, delay: bidDelayMs(fit, bidWindowMs) }
  })
}

/** The round closes (and the award is decided) a second after NOW. */
const CLOSE = NOW + 1_000
const bidders = Array.from({ length: 12 }, (_, i) => new Identity(new Uint8Array(32).fill(60 + i)))

function dampJob (fields: { maxPrice?: number, residency?: 'strict' | 'prefer', issuedAt?: number } = {}): AuctionJob {
  const payload: JobRequest = {
    v: 1,
    issuedAt: fields.issuedAt ?? NOW,
    expiresAt: NOW + 3_600_000,
    nonce: new Uint8Array(16).fill(7),
    workload: { executor: 'process', argv: ['python3', 'eval.py'], env: {}, inputs: [], outputs: ['out.json'], maxRuntimeSec: 3600, network: false },
    resources: { gpus: 1, minVramGB: 40, models: ['nvidia-h100-80gb-hbm3'], cpuCores: 4, memoryMiB: 16_384, diskMiB: 10_240 },
    sla: { tier: 'gold', maxPrice: fields.maxPrice ?? 3_000_000, maxStartDelaySec: 300 },
    placement: { regions: ['eu'], residency: fields.residency ?? 'strict' },
    verification: { mode: 'none' },
    auction: { bidWindowMs: 1_000, paymentRule: 'first-price' }
  }
  return { cid: jobIdOf(payload), payload }
}

/** A real bid by bidder `i`, sealed and opened as a provider receives it from gossip. */
function seenBid (job: AuctionJob, i: number, price: number, fields: Partial<Bid> = {}): AuctionBid {
  const signer = bidders[i] as Identity
  const payload: Bid = {
    v: 1,
    issuedAt: NOW,
    expiresAt: NOW + 60_000,
    job: job.cid,
    provider: signer.peerId,
    price,
    gpus: [`GPU-${i}0000000-0000-0000`],
    model: 'nvidia-h100-80gb-hbm3',
    vramMiB: 81_559,
    region: 'eu-west',
    startBy: NOW + 60_000,
    ad: cidOfValue({ ad: i }).cid,
    ...fields
  }
  return openMessage(sealMessage(signer, 'bid', payload).bytes, 'bid', { now: NOW })
}

describe('market/damping', () => {
  describe('bidDelayMs', () => {
    it('waits (1 − fit) × 60 % of the bid window', () => {
      assert.equal(BID_DELAY_FRACTION, 0.6)
      assert.equal(bidDelayMs(1, 1000), 0)
      assert.equal(bidDelayMs(0, 1000), 600)
      assert.equal(bidDelayMs(0.5, 1000), 300)
      assert.equal(bidDelayMs(0.25, 5000), 2250)
      assert.equal(bidDelayMs(0.5, 1000, 0.8), 400)
      assert.equal(bidDelayMs(0.3333, 50), 20)
    })

    it('clamps fits outside [0, 1] and NaN', () => {
      assert.equal(bidDelayMs(1.7, 1000), 0)
      assert.equal(bidDelayMs(-3, 1000), 600)
      assert.equal(bidDelayMs(Number.NaN, 1000), 600)
    })

    it('lands every bid inside the window and bids better fits earlier (property)', () => {
      fc.assert(fc.property(fc.double({ min: -1, max: 2, noNaN: true }), fc.double({ min: -1, max: 2, noNaN: true }), fc.integer({ min: 50, max: 600_000 }), (a, b, window) => {
        const da = bidDelayMs(a, window)
        assert.ok(Number.isInteger(da) && da >= 0 && da <= BID_DELAY_FRACTION * window)
        if (a >= b) assert.ok(da <= bidDelayMs(b, window))
      }))
    })
  })

  describe('stayingSilent', () => {
    it('stays silent once `enough` seen bids are at least as good (lower wins)', () => {
      assert.equal(ENOUGH_BETTER_BIDS, 5)
      assert.equal(stayingSilent(10, [1, 2, 3, 4]), false)
      assert.equal(stayingSilent(10, [1, 2, 3, 4, 5]), true)
      assert.equal(stayingSilent(10, [1, 2, 3, 4, 11, 12, 13]), false, 'worse bids do not count')
      assert.equal(stayingSilent(10, [10, 10, 10, 10, 10]), true, 'equal bids count')
      assert.equal(stayingSilent(10, [1, 2], 2), true)
      assert.equal(stayingSilent(10, [], 1), false)
      assert.equal(stayingSilent(10, new Set([1, 2, 3, 4, 9])), true, 'any iterable')
    })
  })

  describe('shouldStaySilent (scored and screened as the award is)', () => {
    const job = dampJob()
    const ask = 2_000_000
    const silent = (seen: AuctionBid[], price = ask, j = job): boolean => shouldStaySilent({ job: j, price, seen, decidedAt: CLOSE })

    it('five cheap bids that fail the award\'s screening do not silence a provider (issue 9 bug 4)', () => {
      const other = dampJob({ maxPrice: 2_999_999 })
      const junk = [
        seenBid(job, 0, 1, { startBy: NOW + 86_400_000 }),
        seenBid(job, 1, 1, { region: 'us-east' }),
        seenBid(job, 2, 1, { vramMiB: 24_000 }),
        seenBid(job, 3, 1, { model: 'nvidia-a100-80gb' }),
        seenBid(job, 4, 1, { gpus: [] as unknown as Bid['gpus'] }),
        seenBid(job, 5, 3_000_001),
        seenBid(job, 6, 1, { expiresAt: CLOSE }),
        seenBid(other, 7, 1)
      ]
      // each really fails screening at the close, each for the reason meant
      assert.deepEqual(junk.map((b) => screenBid(b, job, CLOSE)), [
        BidRejection.LATE_START, BidRejection.REGION, BidRejection.HARDWARE, BidRejection.HARDWARE, BidRejection.HARDWARE,
        BidRejection.OVER_MAX_PRICE, BidRejection.EXPIRED, BidRejection.WRONG_JOB
      ])
      assert.equal(silent(junk), false)
      // five cheap junk bids and four good ones: still one short of enough
      const good = [8, 9, 10, 11].map((i) => seenBid(job, i, ask - 1))
      assert.equal(silent([...junk, ...good]), false)
    })

    it('stays silent at exactly `enough` better bids that pass screening, not at one fewer', () => {
      const better = [0, 1, 2, 3, 4].map((i) => seenBid(job, i, ask - 1 - i))
      assert.equal(silent(better), true)
      assert.equal(silent(better.slice(0, 4)), false)
      assert.equal(silent([...better.slice(0, 4), seenBid(job, 5, ask + 1)]), false, 'a worse bid does not count')
      assert.equal(silent([...better.slice(0, 4), seenBid(job, 5, ask - 1, { startBy: CLOSE + 300_001 })]), false, 'one failing bid short')
      assert.equal(shouldStaySilent({ job, price: ask, seen: better.slice(0, 2), decidedAt: CLOSE, enough: 2 }), true)
    })

    it('does not count the bids of providers excluded from the round', () => {
      const better = [0, 1, 2, 3, 4].map((i) => seenBid(job, i, 1))
      const excluded = [(bidders[4] as Identity).peerId]
      assert.equal(shouldStaySilent({ job, price: ask, seen: better, decidedAt: CLOSE, excluded: [] }), true)
      assert.equal(shouldStaySilent({ job, price: ask, seen: better, decidedAt: CLOSE, excluded }), false)
      assert.equal(shouldStaySilent({ job, price: ask, seen: [...better, seenBid(job, 5, ask)], decidedAt: CLOSE, excluded }), true)
    })

    it('counts ties: five bids at exactly this ask silence it, four and one a micro dearer do not', () => {
      const ties = [0, 1, 2, 3, 4].map((i) => seenBid(job, i, ask))
      assert.equal(silent(ties), true)
      assert.equal(silent([...ties.slice(0, 4), seenBid(job, 5, ask + 1)]), false)
    })

    it('screens at the round\'s close: expiry and start exactly at the limit', () => {
      const four = [0, 1, 2, 3].map((i) => seenBid(job, i, 1))
      const limit = CLOSE + 300_000
      assert.equal(silent([...four, seenBid(job, 4, 1, { startBy: limit })]), true, 'startBy = close + maxStartDelay counts')
      assert.equal(silent([...four, seenBid(job, 4, 1, { startBy: limit + 1 })]), false, 'one ms later does not')
      assert.equal(silent([...four, seenBid(job, 4, 1, { expiresAt: CLOSE + 1 })]), true, 'valid at the close counts')
      assert.equal(silent([...four, seenBid(job, 4, 1, { expiresAt: CLOSE })]), false, 'expired at the close does not')
      assert.equal(silent([...four, seenBid(job, 4, 3_000_000)], 3_000_000), true, 'exactly maxPrice counts')
      assert.equal(silent([...four, seenBid(job, 4, 3_000_001)], 3_000_000), false, 'one micro over it does not')
    })

    it('gives the answer of screening and scoring every seen bid, while it skips worse ones and stops at enough (property)', () => {
      // the definition the one-pass shouldStaySilent replaced (bench:pipeline): screen all, score all, count
      const reference = (seen: AuctionBid[], price: number, excluded: string[], enough: number): boolean =>
        stayingSilent(dampingScore(price, job), seen.filter((b) => !excluded.includes(b.signer) && screenBid(b, job, CLOSE) === undefined).map((b) => dampingScore(b.payload.price, job)), enough)
      const pool = [
        ...[0, 1, 2, 3, 4, 5].map((i) => seenBid(job, i, ask - 1 + (i % 3))),
        seenBid(job, 6, ask, { region: 'us-east' }), seenBid(job, 7, 1, { expiresAt: CLOSE }), seenBid(job, 8, ask), seenBid(job, 9, 3_000_001)
      ]
      fc.assert(fc.property(
        fc.array(fc.integer({ min: 0, max: pool.length - 1 }), { maxLength: 12 }),
        fc.constantFrom(1, ask - 1, ask, ask + 1, 3_000_000),
        fc.subarray([0, 3, 6, 8].map((i) => (bidders[i] as Identity).peerId)),
        fc.integer({ min: 0, max: 7 }),
        (picks, price, excluded, enough) => {
          const seen = picks.map((i) => pool[i] as AuctionBid)
          assert.equal(shouldStaySilent({ job, price, seen, decidedAt: CLOSE, excluded, enough }), reference(seen, price, excluded, enough))
        }), { numRuns: 500 })
    })

    it('scores every bid, its own included, with the award\'s formula at the prior and the default RTT', () => {
      assert.equal(dampingScore(ask, job), effectivePrice({ price: ask, reliability: UNKNOWN_RELIABILITY }, 'gold'))
      assert.equal(dampingScore(ask, job), effectivePrice({ price: ask, reliability: undefined, rttMs: undefined }, 'gold'))
      // one scale for everyone keeps the price order, ties included
      fc.assert(fc.property(fc.integer({ min: 0, max: 3_000_000 }), fc.integer({ min: 0, max: 3_000_000 }), (a, b) => {
        assert.equal(Math.sign(dampingScore(a, job) - dampingScore(b, job)), Math.sign(a - b))
      }))
    })
  })

  describe('simulated auctions', () => {
    it('keeps bids per job bounded as providers grow from 10 to 1000, and the best bid is always sent', () => {
      const counts: Record<number, number[]> = { 10: [], 100: [], 1000: [] }
      fc.assert(fc.property(fc.integer({ min: 0, max: 2 ** 31 }), fc.integer({ min: 10_000, max: 600_000 }), (seed, window) => {
        for (const n of [10, 100, 1000]) {
          const providers = market(n, seed, window)
          const sent = simulate(providers)
          counts[n]?.push(sent.length)
          // the excess over `enough` comes from bids landing in the same millisecond (they cannot see each other)
          assert.ok(sent.length <= ENOUGH_BETTER_BIDS + 4, `${sent.length} bids from ${n} providers`)
          assert.ok(sent.length >= Math.min(n, ENOUGH_BETTER_BIDS))
          assert.equal(Math.min(...sent.map((p) => p.score)), Math.min(...providers.map((p) => p.score)), 'the best bid is sent')
        }
      }), { numRuns: 60 })
      const mean = (xs: number[]): number => xs.reduce((a, b) => a + b, 0) / xs.length
      assert.ok(mean(counts[1000] ?? []) - mean(counts[10] ?? []) < 1, 'no growth with N')
    })

    it('sends the best bid even among ties and simultaneous bids (property)', () => {
      fc.assert(fc.property(fc.array(fc.record({ score: fc.integer({ min: 0, max: 5 }), delay: fc.integer({ min: 0, max: 3 }) }), { minLength: 1, maxLength: 60 }), (providers) => {
        const sent = simulate(providers)
        assert.equal(Math.min(...sent.map((p) => p.score)), Math.min(...providers.map((p) => p.score)))
      }))
    })

    it('would not stay bounded if the fit ignored price (why fit follows price)', () => {
      const counts = [10, 1000].map((n) => {
        let total = 0
        for (let seed = 1; seed <= 20; seed++) {
          const random = prng(seed)
          const providers = Array.from({ length: n }, () => ({ score: random(), delay: bidDelayMs(random(), 10_000) }))
          total += simulate(providers).length
        }
        return total / 20
      })
      assert.ok((counts[0] ?? 0) < 9 && (counts[1] ?? 0) > 20, `mean bids ${counts.join(' → ')}`)
    })
  })
})
