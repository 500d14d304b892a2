/**
 * Cached inputs in the auction (issue 12; protocol/README §5.4 `cached`, §5.6 "Cached inputs"): which
 * lists fit a job, what they save, how they rank, and that audit, verification, damping and the
 * reservations' rule weigh each bid at its own cache factor.
 */
import assert from 'node:assert/strict'
import { Identity, cidOfRaw, cidOfValue, type CID } from '../../../../crypto/index.js'
import { jobIdOf, openMessage, sealMessage, type Bid, type JobRequest } from '../../../../protocol/index.js'
import { AwardFault, BidRejection, auditAward, bidCacheFactor, screenBid, verifyAward, type AuctionBid, type AuctionJob } from '../../../../protocol/market/award.js'
import { shouldStaySilent } from '../../../../protocol/market/damping.js'
import { cachedFitsJob, cachedInputs, cachedSummary, transferSaving } from '../../../../protocol/market/input-cache.js'
import { beats } from '../../../../protocol/market/reservations.js'
import { defaultScoringParams } from '../../../../protocol/market/scoring.js'
import { NOW } from '../../../helpers/arbitraries.js'
import { DECIDED, awarded, decide, withHeader } from '../../../helpers/award-decide.js'

const MiB = 1024 * 1024
const providers = Array.from({ length: 8 }, (_, i) => new Identity(new Uint8Array(32).fill(60 + i)))
const [A, B, C] = ['a', 'b', 'c'].map((s) => cidOfRaw(new TextEncoder().encode(s))) as [CID, CID, CID]
const MANIFEST = cidOfValue({ files: [] }).cid

function makeJob (paymentRule: JobRequest['auction']['paymentRule'] = 'first-price', inputs = [
  { path: 'a', cid: A, size: 700 * MiB }, { path: 'b', cid: B, size: 100 * MiB }, { path: 'a2', cid: A, size: 700 * MiB }, { path: 'm', cid: MANIFEST, size: 10 * MiB }
]): AuctionJob {
  const payload: JobRequest = {
    v: 1,
    issuedAt: NOW,
    expiresAt: NOW + 3_600_000,
    nonce: new Uint8Array(16).fill(3),
    workload: { executor: 'process', argv: ['run'], env: {}, inputs, outputs: [], maxRuntimeSec: 3600, network: false },
    resources: { gpus: 1, minVramGB: 40, models: [], cpuCores: 0, memoryMiB: 0, diskMiB: 0 },
    sla: { tier: 'silver', maxPrice: 3_000_000, maxStartDelaySec: 300 },
    placement: { regions: [], residency: 'prefer' },
    verification: { mode: 'none' },
    auction: { bidWindowMs: 500, paymentRule }
  }
  return { cid: jobIdOf(payload), payload }
}

function bid (job: AuctionJob, provider: number, price: number, cached?: CID[]): AuctionBid {
  const identity = providers[provider] as Identity
  const payload: Bid = {
    v: 1,
    issuedAt: NOW,
    expiresAt: NOW + 60_000,
    job: job.cid,
    provider: identity.peerId,
    price,
    gpus: [`GPU-${provider}`],
    model: 'nvidia-h100-80gb-hbm3',
    vramMiB: 81_559,
    region: 'eu-west',
    startBy: NOW + 10_000,
    ad: cidOfValue({ ad: provider }).cid,
    ...(cached !== undefined ? { cached } : {})
  }
  return openMessage(sealMessage(identity, 'bid', payload).bytes, 'bid', { now: NOW })
}

describe('cached inputs in the auction (issue 12)', () => {
  const job = makeJob()
  const inputs = job.payload.workload.inputs

  it('a cached list fits its job only as distinct job inputs in the order they first appear', () => {
    assert.equal(cachedFitsJob(inputs, undefined), true)
    assert.equal(cachedFitsJob(inputs, [A]), true)
    assert.equal(cachedFitsJob(inputs, [A, B, MANIFEST]), true)
    assert.equal(cachedFitsJob(inputs, [B, MANIFEST]), true)
    assert.equal(cachedFitsJob(inputs, [B, A]), false, 'out of order')
    assert.equal(cachedFitsJob(inputs, [A, A]), false, 'twice')
    assert.equal(cachedFitsJob(inputs, [C]), false, 'not an input')
    assert.equal(cachedFitsJob(inputs, [A, C]), false, 'one not an input')
    assert.equal(cachedFitsJob(inputs, []), false, 'empty (the schema forbids it)')
  })

  it('cachedInputs lists the held inputs distinct, in job order', () => {
    const held = new Set([MANIFEST, A].map(String))
    assert.deepEqual(cachedInputs(inputs, (c) => held.has(c)).map(String), [A, MANIFEST].map(String))
    assert.deepEqual(cachedInputs(inputs, () => false), [])
  })

  it('the saving counts every input entry with a listed CID, at 1 MiB/s, over runtime + transfer', () => {
    const s = transferSaving(job.payload.workload, [A])
    assert.equal(s.inputBytes, 1510 * MiB)
    assert.equal(s.cachedBytes, 1400 * MiB)
    assert.equal(s.savedSec, 1400)
    assert.equal(s.factor, 1 - 1400 / (3600 + 1510))
    // more cached, lower factor; a CID not in the job counts nothing
    assert.ok(transferSaving(job.payload.workload, [A, B]).factor < s.factor)
    assert.equal(transferSaving(job.payload.workload, [C]).factor, 1)
  })

  it('the job view\'s summary: the paths of every input entry listed, and the seconds saved; none when nothing is cached', () => {
    assert.deepEqual(cachedSummary(job.payload.workload, [A, MANIFEST]), { paths: ['a', 'a2', 'm'], savedSec: 1410 })
    assert.equal(cachedSummary(job.payload.workload, undefined), undefined)
    assert.equal(cachedSummary(job.payload.workload, []), undefined)
  })

  it('screening refuses a bid whose cached list does not fit the job (BAD_CACHED)', () => {
    assert.equal(screenBid(bid(job, 0, 2_000_000, [A]), job, DECIDED), undefined)
    assert.equal(screenBid(bid(job, 0, 2_000_000, [C]), job, DECIDED), BidRejection.BAD_CACHED)
    assert.equal(screenBid(bid(job, 0, 2_000_000, [B, A]), job, DECIDED), BidRejection.BAD_CACHED)
    const d = decide(job, [bid(job, 0, 1_000_000, [C]), bid(job, 1, 2_000_000)])
    assert.equal(awarded(d).winner, providers[1]?.peerId)
    assert.deepEqual(d.rejected.map((r) => r.reason), [BidRejection.BAD_CACHED])
  })

  it('a provider holding the inputs wins over an equal-price one that does not, and over a somewhat cheaper one', () => {
    const cached = bid(job, 0, 2_000_000, [A])
    for (const other of [bid(job, 1, 2_000_000), bid(job, 1, 1_500_000)]) {
      const d = decide(job, [cached, other])
      assert.equal(awarded(d).winner, providers[0]?.peerId)
      assert.equal(awarded(d).price, 2_000_000, 'first-price pays the ask, not the discounted score')
    }
    // below ask × factor the uncached bid wins
    const f = bidCacheFactor(job, cached)
    assert.equal(awarded(decide(job, [cached, bid(job, 1, Math.floor(2_000_000 * f) - 1)])).winner, providers[1]?.peerId)
  })

  it('the audit and verification recompute the cache factor: a cached winner passes, a winner it beats fails', () => {
    const cached = bid(job, 0, 2_000_000, [A])
    const plain = bid(job, 1, 2_000_000)
    const award = withHeader(awarded(decide(job, [cached, plain])))
    assert.deepEqual(auditAward(award, { job, bids: [cached, plain] }), { ok: true })
    assert.deepEqual(verifyAward(award, { job, bids: [cached, plain], reliability: () => 1, rtt: () => 0 }), { ok: true })
    // an award to the uncached bid under these views is wrong, and one the cached bid beats under every view is caught by the audit
    const swapped = { ...award, winner: plain.signer, bid: plain.cid }
    assert.equal((verifyAward(swapped, { job, bids: [cached, plain], reliability: () => 1, rtt: () => 0 }) as { reason: string }).reason, AwardFault.WRONG_WINNER)
    const all = [A, B, MANIFEST]
    const strongly = bid(job, 2, 1_000_000, all)
    const pricey = bid(job, 3, 2_900_000)
    const wrong = withHeader(awarded(decide(job, [pricey])))
    const considered = [strongly, pricey].map((b) => b.cid).sort((x, y) => x.toString() < y.toString() ? -1 : 1)
    const check = auditAward({ ...wrong, considered }, { job, bids: [strongly, pricey] })
    assert.equal((check as { reason: string }).reason, AwardFault.WRONG_WINNER)
  })

  it('the audit credits the winner its own cache factor: a cached winner dearer than another ask × the worst factor passes', () => {
    const cached = bid(job, 0, 2_100_000, [A])
    const cheaper = bid(job, 1, 1_200_000)
    assert.ok(2_100_000 > 1_200_000 * 1.5 * 1.1 && 2_100_000 * bidCacheFactor(job, cached) < 1_200_000 * 1.5 * 1.1)
    // a requester that rates the cheaper bidder at 0 awards the cached one
    const d = decide(job, [cached, cheaper], { reliability: (p) => p === cached.signer ? 1 : 0 })
    assert.equal(awarded(d).winner, cached.signer)
    assert.deepEqual(auditAward(withHeader(awarded(d)), { job, bids: [cached, cheaper] }), { ok: true })
  })

  it('second-score: the cached winner is paid up to what keeps it first, and the audit\'s bound allows it', () => {
    const ss = makeJob('second-score')
    const cached = bid(ss, 0, 1_000_000, [A])
    const plain = bid(ss, 1, 1_000_000)
    const award = withHeader(awarded(decide(ss, [cached, plain])))
    const f = bidCacheFactor(ss, cached)
    assert.ok(award.price > 1_000_000, 'paid above its ask: the runner-up scores higher')
    assert.ok(award.price <= Math.floor(1_000_000 / f) && award.price >= Math.floor(1_000_000 / f) - 1, String(award.price))
    assert.deepEqual(auditAward(award, { job: ss, bids: [cached, plain] }), { ok: true })
    // the bound under every view: the runner-up at its worst factor, the winner at its best (its cache factor)
    const bound = Math.floor(1_000_000 * (1.5 * 1.1) / f)
    assert.ok(bound < ss.payload.sla.maxPrice)
    assert.deepEqual(auditAward({ ...award, price: bound }, { job: ss, bids: [cached, plain] }), { ok: true })
    assert.equal((auditAward({ ...award, price: bound + 1 }, { job: ss, bids: [cached, plain] }) as { reason: string }).reason, AwardFault.WRONG_PRICE)
  })

  it('damping weighs each bid at its own factor: an uncached bid at the same price does not silence a cached one', () => {
    const seen = [1, 2, 3, 4, 5].map((i) => bid(job, i, 2_000_000))
    const common = { job, seen, decidedAt: DECIDED, params: defaultScoringParams }
    assert.equal(shouldStaySilent({ ...common, price: 2_000_000 }), true)
    assert.equal(shouldStaySilent({ ...common, price: 2_000_000, cached: [A] }), false)
    // and five cached bids silence an uncached one that asks a little less
    const cachedSeen = [1, 2, 3, 4, 5].map((i) => bid(job, i, 2_000_000, [A]))
    assert.equal(shouldStaySilent({ ...common, seen: cachedSeen, price: 1_900_000 }), true)
  })

  it('the reservations\' rule: a cached stranger\'s bid at my price beats my uncached hold', () => {
    const f = bidCacheFactor(job, bid(job, 1, 1, [A]))
    assert.equal(beats(2_000_000, 2_000_000, 0.25, job, defaultScoringParams), false)
    assert.equal(beats(2_000_000, 2_000_000, 0.25, job, defaultScoringParams, f, 1), true)
    assert.equal(beats(2_000_000, 2_000_000, 0.25, job, defaultScoringParams, 1, f), false)
  })
})
