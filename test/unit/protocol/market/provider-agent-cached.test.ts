/**
 * The provider agent and cached inputs (issue 12): the shell says which of a job's input CIDs it holds
 * (`job-seen` `held`), the agent names those in its bid (`send-bid` `cached`, distinct, in the job's
 * order) and damps with them: bids it would lose to at equal price without them no longer silence it.
 */
import assert from 'node:assert/strict'
import { cidOfRaw, type CID } from '../../../../crypto/index.js'
import { Reservations, allocationFor, decideBid, defaultScoringParams, jobIdOf, type AgentJob } from '../../../../protocol/index.js'
import { Harness, NOW, REQUESTER, find, makeAd, makeJob, otherBid } from '../../../helpers/provider-agent-harness.js'

const enc = (s: string): Uint8Array => new TextEncoder().encode(s)
const [A, B, C] = ['a', 'b', 'c'].map((s) => cidOfRaw(enc(s))) as [CID, CID, CID]

/** makeJob's job with inputs (big enough against its 600 s runtime that the cache factor counts). */
function withInputs (): AgentJob {
  const base = makeJob()
  const payload = { ...base.payload, workload: { ...base.payload.workload, inputs: [{ path: 'b', cid: B, size: 300 * 1024 * 1024 }, { path: 'a', cid: A, size: 300 * 1024 * 1024 }, { path: 'b2', cid: B, size: 300 * 1024 * 1024 }] } }
  return { ...base, cid: jobIdOf(payload), payload }
}

describe('market/provider-agent: cached inputs', () => {
  it('lists the held inputs of the job, distinct and in its order, and nothing it does not hold', () => {
    const h = new Harness(undefined, false)
    const job = withInputs()
    const bid = find(h.send({ type: 'job-seen', now: NOW, job, held: [A.toString(), C.toString(), B.toString()] }), 'send-bid')
    assert.deepEqual(bid?.cached?.map(String), [B, A].map(String))
  })

  it('no held inputs: the bid names none (absent, not empty)', () => {
    for (const held of [undefined, [], [C.toString()]]) {
      const h = new Harness(undefined, false)
      const bid = find(h.send({ type: 'job-seen', now: NOW, job: withInputs(), ...(held !== undefined ? { held } : {}) }), 'send-bid')
      assert.ok(bid !== undefined)
      assert.equal('cached' in bid, false)
    }
  })

  it('damps with its cached inputs: five equal-price uncached bids silence it without them, not with them', () => {
    for (const [held, silent] of [[undefined, true], [[A.toString()], false]] as const) {
      const h = new Harness()
      const job = withInputs()
      h.send({ type: 'job-seen', now: NOW, job, ...(held !== undefined ? { held } : {}) })
      // the others ask what this provider asks (its floor, makeAd's 2 credits)
      for (let i = 0; i < 5; i++) h.send({ type: 'bid-seen', now: NOW + 1, bid: otherBid(job, i, 2_000_000) })
      const out = h.tick(h.wake!)
      assert.equal(find(out, 'send-bid') === undefined, silent, JSON.stringify(held))
    }
  })

  it('a hold is released by a stranger\'s equal-price bid that caches an input this one lacks, not the other way round', () => {
    const job = withInputs()
    const decision = decideBid(job.payload, { ad: makeAd(), allocations: [] }, NOW)
    assert.equal(decision.kind, 'bid')
    const id = job.cid.toString()
    const release = (mine: CID[] | undefined, theirs: CID[] | undefined): string[] => {
      const holds = new Reservations()
      holds.hold('a', { job: id, request: job, round: 1, attempt: 1, requester: REQUESTER, hold: allocationFor(id, job.payload, decision), ...(mine !== undefined ? { cached: mine } : {}), closesAt: NOW + 5_000, until: NOW + 15_000 })
      return holds.bidSeen(otherBid(job, 1, decision.kind === 'bid' ? decision.price : 0, theirs !== undefined ? { cached: theirs } : {}), defaultScoringParams)
    }
    assert.deepEqual(release(undefined, undefined), [], 'a tie does not release')
    assert.deepEqual(release(undefined, [A]), ['a'])
    assert.deepEqual(release([A], [A]), [])
    assert.deepEqual(release([B], [A]), [], 'B is two of the three input entries: worth more than A')
  })
})
