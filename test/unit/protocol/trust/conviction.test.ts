/**
 * Convictions on a verified fraud proof (protocol/README.md §5.9): the reputation view scores the
 * subject 0 for good, its reports weigh nothing, a snapshot keeps it, and decideAward screens the
 * subject's bids out (CONVICTED) even when it asks least; the requester agent convicts on its event.
 */
import assert from 'node:assert/strict'
import { Identity, cidOfValue } from '../../../../crypto/index.js'
import { jobIdOf, openMessage, sealMessage, type Bid, type JobRequest } from '../../../../protocol/index.js'
import { BidRejection, type AuctionBid, type AuctionJob } from '../../../../protocol/market/award.js'
import { Reputation } from '../../../../protocol/market/reputation.js'
import { RequesterAgent } from '../../../../protocol/market/requester-agent.js'
import { InvalidReputationSnapshotError } from '../../../../protocol/trust/reputation-snapshot.js'
import { ReputationStore } from '../../../../protocol/trust/reputation.js'
import { NOW } from '../../../helpers/arbitraries.js'
import { awarded, decide } from '../../../helpers/award-decide.js'

const ME = 'me'
const T0 = 1_767_225_600_000
const PROOF = 'bafyreie7obtyerb5w5ssjwaxgou6jl7n4g45lxsprmir2bmyhnatnc74ge'

describe('convictions', () => {
  describe('ReputationStore', () => {
    it('a convicted subject scores 0 whatever its history, is known, and names the proof', () => {
      const s = new ReputationStore(ME)
      for (let i = 0; i < 20; i++) s.add({ signer: ME, subject: 'cheat', kind: 'receipt', at: T0 })
      assert.ok(s.score('cheat', T0) > 0.8)
      assert.equal(s.convict('cheat', PROOF), true)
      assert.equal(s.convict('cheat', 'another'), false)
      assert.equal(s.score('cheat', T0), 0)
      assert.equal(s.reliability('cheat', T0), 0)
      assert.equal(s.explain('cheat', T0).convicted, PROOF)
      assert.equal(s.convictionOf('cheat'), PROOF)
      // a subject convicted with no history at all is known too, and scores 0 rather than the prior
      s.convict('stranger', PROOF)
      assert.equal(s.reliability('stranger', T0), 0)
      assert.equal(s.explain('stranger', T0).known, true)
      // and nobody else is touched
      assert.equal(s.explain('honest', T0).convicted, undefined)
      assert.equal(s.reliability('honest', T0), undefined)
    })

    it('never convicts itself', () => {
      const s = new ReputationStore(ME)
      assert.equal(s.convict(ME, PROOF), false)
      assert.equal(s.convictionOf(ME), undefined)
    })

    it('a convicted reporter\'s evidence weighs nothing', () => {
      const s = new ReputationStore(ME)
      for (let i = 0; i < 10; i++) s.add({ signer: ME, subject: 'reporter', kind: 'receipt', at: T0 })
      s.add({ signer: 'reporter', subject: 'victim', kind: 'failure', reason: 'no-show', at: T0 })
      assert.ok(s.trustIn('reporter', T0) > 0)
      const before = s.score('victim', T0)
      s.convict('reporter', PROOF)
      assert.equal(s.trustIn('reporter', T0), 0)
      assert.ok(s.score('victim', T0) > before)
    })

    it('a snapshot keeps convictions (JSON round trip), and a bad convicted entry is a typed error', () => {
      const s = new ReputationStore(ME)
      s.add({ signer: ME, subject: 'cheat', kind: 'receipt', at: T0 })
      s.convict('cheat', PROOF)
      const back = new ReputationStore(ME)
      back.load(JSON.parse(JSON.stringify(s.snapshot())))
      assert.equal(back.convictionOf('cheat'), PROOF)
      assert.equal(back.score('cheat', T0), 0)
      // loading a snapshot without convictions clears them
      back.load(new ReputationStore(ME).snapshot())
      assert.equal(back.convictionOf('cheat'), undefined)
      assert.equal('convicted' in new ReputationStore(ME).snapshot(), false)
      for (const convicted of [{}, [['cheat']], [['cheat', '']], [[ME, PROOF]], [[7, PROOF]]]) {
        assert.throws(() => back.load({ ...s.snapshot(), convicted }), InvalidReputationSnapshotError, JSON.stringify(convicted))
      }
    })
  })

  describe('decideAward', () => {
    const providers = [1, 2].map((n) => new Identity(new Uint8Array(32).fill(60 + n)))
    const payload: JobRequest = {
      v: 1,
      issuedAt: NOW,
      expiresAt: NOW + 3_600_000,
      nonce: new Uint8Array(16).fill(9),
      workload: { executor: 'wasm', argv: ['m.wasm'], env: {}, inputs: [], outputs: ['out.txt'], maxRuntimeSec: 60, network: false },
      resources: { gpus: 0, minVramGB: 0, models: [], cpuCores: 1, memoryMiB: 256, diskMiB: 64 },
      sla: { tier: 'silver', maxPrice: 2_500_000, maxStartDelaySec: 300 },
      placement: { regions: [], residency: 'prefer' },
      verification: { mode: 'none' },
      auction: { bidWindowMs: 500, paymentRule: 'first-price' }
    }
    const job: AuctionJob = { cid: jobIdOf(payload), payload }
    function bid (i: number, price: number): AuctionBid {
      const p = providers[i] as Identity
      const b: Bid = {
        v: 1, issuedAt: NOW, expiresAt: NOW + 60_000, job: job.cid, provider: p.peerId, price, gpus: [], model: 'cpu', vramMiB: 0,
        region: 'eu-west', startBy: NOW + 60_000, ad: cidOfValue({ ad: i }).cid
      }
      return openMessage(sealMessage(p, 'bid', b).bytes, 'bid', { now: NOW })
    }
    const cheap = bid(0, 1_000_000)
    const dear = bid(1, 2_000_000)

    it('screens a convicted provider\'s bid out with CONVICTED though it asks least; the award stays auditable (it is not considered)', () => {
      const cheater = (providers[0] as Identity).peerId
      assert.equal(awarded(decide(job, [cheap, dear])).winner, cheater)
      const decision = decide(job, [cheap, dear], { convicted: (peer) => peer === cheater })
      const award = awarded(decision)
      assert.equal(award.winner, (providers[1] as Identity).peerId)
      assert.deepEqual(award.considered.map(String), [dear.cid.toString()])
      assert.deepEqual(decision.rejected, [{ cid: cheap.cid.toString(), signer: cheater, reason: BidRejection.CONVICTED }])
      // only convicted bids: no award
      const none = decide(job, [cheap], { convicted: () => true })
      assert.equal(none.kind, 'none')
    })
  })

  it('RequesterAgent: a provider-convicted event convicts in the agent\'s view', () => {
    const agent = new RequesterAgent('me')
    assert.deepEqual(agent.handle({ type: 'provider-convicted', now: T0, provider: 'cheat', proof: PROOF }), [])
    assert.equal(agent.reputation.convictionOf('cheat'), PROOF)
    assert.ok(agent.reputation instanceof Reputation)
    assert.equal(agent.reputation.reliability('cheat', T0), 0)
  })
})
