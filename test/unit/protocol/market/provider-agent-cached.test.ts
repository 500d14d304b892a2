/**
 * The provider agent and cached inputs (issue 12): the shell says which of a job's input CIDs it holds
 * (`job-seen` `held`), the agent names those in its bid (`send-bid` `cached`, distinct, in the job's
 * order) and damps with them: bids it would lose to at equal price without them no longer silence it.
 */
import assert from 'node:assert/strict'
import { cidOfRaw } from '../../../../crypto/index.js'
import { jobIdOf, type AgentJob } from '../../../../protocol/index.js'
import { Harness, NOW, find, makeJob, otherBid } from '../../../helpers/provider-agent-harness.js'

const enc = (s: string): Uint8Array => new TextEncoder().encode(s)
const [A, B, C] = ['a', 'b', 'c'].map((s) => cidOfRaw(enc(s)))

/** makeJob's job with inputs (big enough against its 600 s runtime that the cache factor counts). */
function withInputs (): AgentJob {
  const base = makeJob()
  const payload = { ...base.payload, workload: { ...base.payload.workload, inputs: [{ path: 'b', cid: B!, size: 300 * 1024 * 1024 }, { path: 'a', cid: A!, size: 300 * 1024 * 1024 }, { path: 'b2', cid: B!, size: 300 * 1024 * 1024 }] } }
  return { ...base, cid: jobIdOf(payload), payload }
}

describe('market/provider-agent: cached inputs', () => {
  it('lists the held inputs of the job, distinct and in its order, and nothing it does not hold', () => {
    const h = new Harness(undefined, false)
    const job = withInputs()
    const bid = find(h.send({ type: 'job-seen', now: NOW, job, held: [A!.toString(), C!.toString(), B!.toString()] }), 'send-bid')
    assert.deepEqual(bid?.cached?.map(String), [B, A].map(String))
  })

  it('no held inputs: the bid names none (absent, not empty)', () => {
    for (const held of [undefined, [], [C!.toString()]]) {
      const h = new Harness(undefined, false)
      const bid = find(h.send({ type: 'job-seen', now: NOW, job: withInputs(), ...(held !== undefined ? { held } : {}) }), 'send-bid')
      assert.ok(bid !== undefined)
      assert.equal('cached' in bid, false)
    }
  })

  it('damps with its cached inputs: five equal-price uncached bids silence it without them, not with them', () => {
    for (const [held, silent] of [[undefined, true], [[A!.toString()], false]] as const) {
      const h = new Harness()
      const job = withInputs()
      h.send({ type: 'job-seen', now: NOW, job, ...(held !== undefined ? { held } : {}) })
      // the others ask what this provider asks (its floor, makeAd's 2 credits)
      for (let i = 0; i < 5; i++) h.send({ type: 'bid-seen', now: NOW + 1, bid: otherBid(job, i, 2_000_000) })
      const out = h.tick(h.wake!)
      assert.equal(find(out, 'send-bid') === undefined, silent, JSON.stringify(held))
    }
  })
})
