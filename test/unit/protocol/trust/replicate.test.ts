import assert from 'node:assert/strict'
import fc from 'fast-check'
import { cidOfValue } from '../../../../crypto/index.js'
import { auditAward, verifyAward, type AuctionBid, type AuctionJob, type Bid, type RankedBid } from '../../../../protocol/index.js'
import { verifyFraudProof } from '../../../../protocol/trust/fraud-proof.js'
import { InvalidVerificationInputError } from '../../../../protocol/trust/invalid-input.js'
import { ReplicaSkip, compareReplicas, decideReplicatedAward, peerNetworks, selectReplicas } from '../../../../protocol/trust/replicate.js'
import { HOUR, T, awardCid, jobPayload, openedJob, outputs, provider, receipt } from '../../../helpers/trust-fixtures.js'

const ranked = (n: number, price = 1000 + n): RankedBid => ({ cid: `bafy-${String(n).padStart(2, '0')}`, provider: `p${n}`, price, effectivePrice: price })
const ips = (table: Record<string, string[]>) => (p: string): string[] | undefined => table[p]

describe('protocol/trust/replicate: choosing', () => {
  it('takes the best k in ranking order when all are independent; k = 1 is the plain winner', () => {
    const ranking = [ranked(1), ranked(2), ranked(3), ranked(4)]
    const addresses = ips({ p1: ['/ip4/10.1.0.1/tcp/1'], p2: ['/ip4/10.2.0.1/tcp/1'], p3: ['/ip4/10.3.0.1/tcp/1'], p4: ['/ip4/10.4.0.1/tcp/1'] })
    const three = selectReplicas({ ranking, k: 3, addresses })
    assert.deepEqual(three.replicas.map((r) => r.bid.provider), ['p1', 'p2', 'p3'])
    assert.deepEqual(three.replicas.map((r) => r.considered.map((c) => c.provider)), [['p1', 'p2', 'p3', 'p4'], ['p2', 'p3', 'p4'], ['p3', 'p4']])
    assert.equal(three.shortfall, 0)
    const one = selectReplicas({ ranking, k: 1, addresses })
    assert.deepEqual(one.replicas.map((r) => r.bid.provider), ['p1'])
    assert.deepEqual(one.skipped, [])
  })

  it('skips a provider in the /16 of one taken: 10.1.255.255 conflicts with 10.1.0.0, not with 10.2.0.0', () => {
    const addresses = ips({ p1: ['/ip4/10.1.0.0/tcp/1'], p2: ['/ip4/10.1.255.255/tcp/1'], p3: ['/ip4/10.2.0.0/tcp/1'] })
    const s = selectReplicas({ ranking: [ranked(1), ranked(2), ranked(3)], k: 2, addresses })
    assert.deepEqual(s.replicas.map((r) => r.bid.provider), ['p1', 'p3'])
    assert.deepEqual(s.skipped, [{ cid: 'bafy-02', provider: 'p2', reason: ReplicaSkip.SAME_SUBNET, conflictsWith: 'p1' }])
    assert.deepEqual(s.replicas[1]?.considered.map((c) => c.provider), ['p3'])
  })

  it('with peerNetworks (the owner\'s opt-out), providers on one host are independent by peer id; a provider without an address too', () => {
    const local = ips({ p1: ['/ip4/127.0.0.1/tcp/1'], p2: ['/ip4/127.0.0.1/tcp/2'], p3: ['/ip4/127.0.0.1/tcp/3'] })
    const ranking = [ranked(1), ranked(2), ranked(3), ranked(4)]
    const strict = selectReplicas({ ranking, k: 2, addresses: local })
    assert.deepEqual(strict.replicas.map((r) => r.bid.provider), ['p1'])
    assert.equal(strict.shortfall, 1)
    const byPeer = selectReplicas({ ranking, k: 3, addresses: local, networks: peerNetworks })
    assert.deepEqual(byPeer.replicas.map((r) => r.bid.provider), ['p1', 'p2', 'p3'])
    assert.deepEqual(byPeer.skipped, [])
    assert.deepEqual(byPeer.replicas.map((r) => r.considered.length), [4, 3, 2])
  })

  it('a provider conflicts through any of its addresses, and IPv6 by /48', () => {
    const addresses = ips({
      p1: ['/ip4/192.0.2.1/tcp/1', '/ip6/2001:db8:aa::1/tcp/1'],
      p2: ['/ip6/2001:db8:aa:1::2/tcp/1'],
      p3: ['/ip6/2001:db8:ab::1/tcp/1', '/ip4/198.51.100.1/tcp/1'],
      p4: ['/ip4/203.0.113.1/tcp/1', '/ip4/192.0.200.200/tcp/1']
    })
    const s = selectReplicas({ ranking: [ranked(1), ranked(2), ranked(3), ranked(4)], k: 3, addresses })
    assert.deepEqual(s.replicas.map((r) => r.bid.provider), ['p1', 'p3'])
    assert.deepEqual(s.skipped.map((x) => [x.provider, x.reason, x.conflictsWith]), [['p2', 'SAME_SUBNET', 'p1'], ['p4', 'SAME_SUBNET', 'p1']])
    assert.equal(s.shortfall, 1)
  })

  it('skips a provider of a taken one\'s trust cluster, and one with no IP address at all', () => {
    const addresses = ips({ p1: ['/ip4/10.1.0.1/tcp/1'], p2: ['/ip4/10.2.0.1/tcp/1'], p3: ['/dns4/x.example/tcp/1'], p4: ['/ip4/10.4.0.1/tcp/1'] })
    const cluster = (p: string): string | undefined => (p === 'p1' || p === 'p2' ? 'operator-a' : undefined)
    const s = selectReplicas({ ranking: [ranked(1), ranked(2), ranked(3), ranked(4), ranked(5)], k: 3, addresses, cluster })
    assert.deepEqual(s.replicas.map((r) => r.bid.provider), ['p1', 'p4'])
    assert.deepEqual(s.skipped.map((x) => [x.provider, x.reason]).sort(), [['p2', 'SAME_CLUSTER'], ['p3', 'NO_ADDRESS'], ['p5', 'NO_ADDRESS']])
    assert.equal(s.shortfall, 1)
  })

  it('with k above the eligible bids, takes them all and reports the shortfall; rejects k outside 1 … 5', () => {
    const s = selectReplicas({ ranking: [ranked(1)], k: 5, addresses: () => ['/ip4/10.1.0.1/tcp/1'] })
    assert.equal(s.replicas.length, 1)
    assert.equal(s.shortfall, 4)
    assert.equal(selectReplicas({ ranking: [], k: 2, addresses: () => [] }).shortfall, 2)
    for (const k of [0, 6, 1.5]) assert.throws(() => selectReplicas({ ranking: [], k, addresses: () => [] }), InvalidVerificationInputError)
  })

  it('property: replicas never share a /16, follow the ranking, and a skipped bid always conflicts with an earlier replica', () => {
    const net = fc.integer({ min: 0, max: 5 })
    fc.assert(fc.property(fc.array(net, { minLength: 0, maxLength: 12 }), fc.integer({ min: 1, max: 5 }), (nets, k) => {
      const ranking = nets.map((_, i) => ranked(i))
      const addresses = (p: string): string[] => [`/ip4/10.${nets[Number(p.slice(1))] as number}.${p.slice(1)}.1/tcp/1`]
      const s = selectReplicas({ ranking, k, addresses })
      const taken = s.replicas.map((r) => nets[Number(r.bid.provider.slice(1))])
      assert.equal(new Set(taken).size, taken.length)
      assert.equal(s.replicas.length, Math.min(k, new Set(nets).size))
      const order = s.replicas.map((r) => ranking.indexOf(r.bid))
      assert.deepEqual(order, [...order].sort((a, b) => a - b))
      for (const skip of s.skipped) assert.ok(s.replicas.some((r) => r.bid.provider === skip.conflictsWith))
    }))
  })
})

describe('protocol/trust/replicate: the awards', () => {
  const job = openedJob()
  const auctionJob: AuctionJob = { cid: job.cid, payload: job.payload }
  const decided = T + 3_000

  function bid (n: number, price: number): AuctionBid {
    const payload: Bid = {
      v: 1, issuedAt: T + 1_000, expiresAt: T + HOUR, job: job.cid, provider: `p${n}`, price, gpus: [], model: 'cpu', vramMiB: 0,
      region: 'eu-west', startBy: T + 60_000, ad: cidOfValue({ ad: n }).cid
    }
    return { cid: cidOfValue(payload).cid, signer: `p${n}`, payload }
  }
  const bids = [bid(1, 1000), bid(2, 1100), bid(3, 1200), bid(4, 1300)]
  const addresses = ips({ p1: ['/ip4/10.1.0.1/tcp/1'], p2: ['/ip4/10.1.7.7/tcp/1'], p3: ['/ip4/10.3.0.1/tcp/1'], p4: ['/ip4/10.4.0.1/tcp/1'] })
  const base = { job: auctionJob, bids, attempt: 1, now: decided, leaseMs: 30_000, billingIntervalSec: 60, reliability: () => 1, rtt: () => 0, addresses }

  it('one award per replica, each passing audit and verification on its own considered bids', () => {
    for (const paymentRule of ['first-price', 'second-score'] as const) {
      const j = { ...auctionJob, payload: { ...auctionJob.payload, auction: { ...auctionJob.payload.auction, paymentRule } } }
      const d = decideReplicatedAward({ ...base, job: j, k: 3 })
      assert.equal(d.kind, 'awards')
      if (d.kind !== 'awards') return
      assert.deepEqual(d.awards.map((a) => a.winner), ['p1', 'p3', 'p4'])
      for (const award of d.awards) {
        assert.deepEqual(auditAward({ ...award, issuedAt: decided }, { job: j, bids }), { ok: true })
        assert.deepEqual(verifyAward({ ...award, issuedAt: decided }, { job: j, bids, reliability: () => 1, rtt: () => 0 }), { ok: true })
      }
      // p3's award considers p3 and p4 only: p1 was taken and p2 shares p1's /16.
      assert.equal(d.awards[1]?.considered.length, 2)
      if (paymentRule === 'first-price') assert.deepEqual(d.awards.map((a) => a.price), [1000, 1200, 1300])
      // Second-score at factor 1: the runner-up's ask when the winner's CID string sorts first (ties go to it), a lone bid its ask.
      else assert.deepEqual(d.awards.map((a) => a.price), [1100, 1300, 1300])
    }
  })

  it('no awards when no bid arrived or none has an IP address', () => {
    assert.equal(decideReplicatedAward({ ...base, bids: [], k: 2 }).kind, 'none')
    const d = decideReplicatedAward({ ...base, k: 2, addresses: () => ['/dns4/x/tcp/1'] })
    assert.equal(d.kind === 'none' && d.reason, 'NO_INDEPENDENT_BIDS')
  })
})

describe('protocol/trust/replicate: comparing', () => {
  const job = openedJob()
  const [A, B, C] = [provider(1), provider(2), provider(3)]
  const all = [A.peerId, B.peerId, C.peerId]
  const sorted = (xs: string[]): string[] => [...xs].sort()

  it('two of three agreeing are the majority: they are paid, the third is mismatched', () => {
    const out = compareReplicas({ request: job, replicas: all, receipts: [receipt(A, job), receipt(B, job), receipt(C, job, { outputs: outputs('7') })] })
    assert.equal(out.kind, 'majority')
    if (out.kind !== 'majority') return
    assert.equal(out.outputs.toString(), outputs('6').toString())
    assert.deepEqual(out.matched, sorted([A.peerId, B.peerId]))
    assert.deepEqual(out.mismatched, [C.peerId])
    assert.deepEqual(out.fraudProofs, [])
  })

  it('exactly half is no majority: 1 of 2, and 1 + 1 + 1 of 3, go to the buyer', () => {
    const two = compareReplicas({ request: job, replicas: [A.peerId, B.peerId], receipts: [receipt(A, job), receipt(B, job, { outputs: outputs('7') })] })
    assert.equal(two.kind, 'no-majority')
    assert.equal(two.groups.length, 2)
    const three = compareReplicas({ request: job, replicas: all, receipts: [receipt(A, job), receipt(B, job, { outputs: outputs('7') }), receipt(C, job, { outputs: outputs('8') })] })
    assert.equal(three.kind, 'no-majority')
    const lone = compareReplicas({ request: job, replicas: [A.peerId, B.peerId], receipts: [receipt(A, job)] })
    assert.equal(lone.kind, 'no-majority')
    assert.deepEqual(lone.unusable, [B.peerId])
  })

  it('a majority counts the replicas awarded, not the receipts that came: 2 of 3 with one missing is enough', () => {
    const out = compareReplicas({ request: job, replicas: all, receipts: [receipt(A, job), receipt(B, job)] })
    assert.equal(out.kind, 'majority')
    assert.deepEqual(out.unusable, [C.peerId])
  })

  it('ignores receipts of non-replicas, of other jobs, with other inputs and of runs that did not end on their own', () => {
    const other = openedJob({ ...job.payload, nonce: new Uint8Array(16).fill(0xbb) })
    const out = compareReplicas({
      request: job,
      replicas: all,
      receipts: [receipt(A, job), receipt(provider(4), job, { outputs: outputs('7') }), receipt(B, other, { outputs: outputs('7') }),
        receipt(B, job, { outputs: outputs('7'), inputs: [] }), receipt(C, job, { outputs: outputs('7'), exitCode: 137 })]
    })
    assert.equal(out.kind, 'no-majority')
    assert.deepEqual(out.unusable, sorted([B.peerId, C.peerId]))
  })

  it('a replica that signed two outputs does not vote; for a wasm job it is the subject of a proof that verifies', () => {
    const receipts = [receipt(A, job), receipt(B, job), receipt(C, job), receipt(C, job, { outputs: outputs('7'), award: awardCid(2) })]
    const out = compareReplicas({ request: job, replicas: all, receipts })
    assert.equal(out.kind, 'majority')
    assert.deepEqual(out.equivocators, [C.peerId])
    assert.equal(out.fraudProofs.length, 1)
    const fields = out.fraudProofs[0]
    assert.ok(fields !== undefined)
    assert.equal(verifyFraudProof({ payload: { v: 1, issuedAt: T, expiresAt: T + HOUR, ...fields } }, { now: T }).subject, C.peerId)
    const process = openedJob(jobPayload({ executor: 'process' }))
    const noProof = compareReplicas({ request: process, replicas: [C.peerId], receipts: [receipt(C, process), receipt(C, process, { outputs: outputs('7') })] })
    assert.deepEqual(noProof.equivocators, [C.peerId])
    assert.deepEqual(noProof.fraudProofs, [])
  })

  it('property: the majority is an output with more than half of the replicas\' votes, and only its voters are paid', () => {
    const providers = [1, 2, 3, 4, 5].map(provider)
    const labels = providers.map((p) => p.peerId)
    const votes = fc.array(fc.option(fc.constantFrom('6', '7'), { nil: undefined }), { minLength: 1, maxLength: 5 })
    fc.assert(fc.property(votes, (vs) => {
      const replicas = labels.slice(0, vs.length)
      const receipts = vs.flatMap((v, i) => (v === undefined ? [] : [receipt(providers[i] as never, job, { outputs: outputs(v) })]))
      const out = compareReplicas({ request: job, replicas, receipts })
      const count = (o: string): number => vs.filter((v) => v === o).length
      const winner = ['6', '7'].find((o) => 2 * count(o) > vs.length)
      assert.equal(out.kind, winner === undefined ? 'no-majority' : 'majority')
      if (out.kind === 'majority') assert.deepEqual(out.matched, sorted(replicas.filter((_, i) => vs[i] === winner)))
    }), { numRuns: 40 })
  })
})
