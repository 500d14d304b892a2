/**
 * Colluding cheaters and wrong results accepted (issue 11) on hand-checkable fleets: a cheater signs a
 * receipt for the colluders' shared wrong output, which passes the requester's own check, and the
 * requester's acceptance (a settled final payment) is counted per job against the job's true output.
 */
import assert from 'node:assert/strict'
import { Harness, colludedOutput, counterCid, credits, trueOutput, type AcceptanceRecord, type AwardRecord, type ReceiptRecord } from '../../simulations/harness/index.js'
import { jobVerdicts, verificationMeasures } from '../../simulations/scenarios/verification-measures.js'
import { MIN, assertSettledBooks, awardsOf, ending, peer } from './setup.js'

/** Four H100 providers in eu-west at 2, 2.5, 3 and 3.5 credits; `cheat` names the colluders. */
function fleet (cheat: readonly string[], seed = 21): Harness {
  const h = new Harness({ seed })
  const floors: Record<string, number> = { a: 2, b: 2.5, c: 3, d: 3.5 }
  for (const [name, floor] of Object.entries(floors)) {
    h.provider(name, { region: 'eu-west', gpus: { h100: 1 }, floor: credits(floor), ...(cheat.includes(name) ? { behaviour: { collude: true } } : {}) })
  }
  h.requester('buyer', { region: 'eu-west' })
  return h
}

/** `n` one-GPU jobs of 5 minutes, 20 minutes apart (each ends before the next: the cheapest bidder wins every one). */
function sequential (h: Harness, n: number): string[] {
  const buyer = h.requesters.get('buyer')!
  const jobs: string[] = []
  for (let i = 0; i < n; i++) h.at(h.scheduler.now() + i * 20 * MIN, () => { jobs.push(buyer.submit({ gpus: 1, maxPrice: credits(4), lifetimeMs: 10 * MIN }, { durationMs: 5 * MIN })) })
  h.runUntilQuiet()
  return jobs
}

describe('scenario: colluding cheaters (issue 11)', () => {
  it('honest runs name the job\'s true output, colluders the one shared wrong output, and the two differ per job', () => {
    const h = fleet(['a', 'b'])
    const buyer = h.requesters.get('buyer')!
    // four jobs at once: every provider runs one
    const jobs = [0, 1, 2, 3].map(() => buyer.submit({ gpus: 1, maxPrice: credits(4), lifetimeMs: 10 * MIN }, { durationMs: 5 * MIN }))
    h.runUntilQuiet()
    for (const r of h.recorder.receipts) {
      const expected = r.provider === peer('a') || r.provider === peer('b') ? colludedOutput(r.job) : trueOutput(r.job)
      assert.equal(r.outputs, expected.toString(), `${r.provider} on ${r.job}`)
    }
    assert.ok(new Set(h.recorder.receipts.map((r) => r.provider)).size >= 2)
    assert.notEqual(trueOutput(jobs[0]!).toString(), colludedOutput(jobs[0]!).toString())
    assert.notEqual(trueOutput(jobs[0]!).toString(), trueOutput(jobs[1]!).toString())
    assert.notEqual(colludedOutput(jobs[0]!).toString(), colludedOutput(jobs[1]!).toString())
  })

  it('4 providers, the cheapest a cheater: every one of 4 jobs is accepted wrong, and settles (its outputs pass the CID check)', () => {
    const h = fleet(['a'])
    const jobs = sequential(h, 4)
    assert.equal(jobs.length, 4)
    for (const job of jobs) {
      assert.deepEqual(awardsOf(h, job).map((a) => a.provider), [peer('a')])
      assert.equal(ending(h, job).status, 'settled')
    }
    const m = verificationMeasures(h.recorder, jobs)
    assert.deepEqual([m.accepted, m.wrongAccepted, m.wrongShare], [4, 4, 1])
    assert.deepEqual([m.gpuSecondsRun, m.gpuSecondsNeeded, m.overhead, m.replicatedJobs], [4 * 300, 4 * 300, 1, 0])
    assertSettledBooks(h)
  })

  it('4 providers, the dearest a cheater: it never wins, and no wrong result is accepted', () => {
    const h = fleet(['d'])
    const jobs = sequential(h, 3)
    const m = verificationMeasures(h.recorder, jobs)
    assert.deepEqual([m.accepted, m.wrongAccepted, m.wrongShare], [3, 0, 0])
    assert.ok(h.recorder.awards.every((a) => a.provider === peer('a')))
  })

  it('a job cancelled while a cheater runs it is not accepted', () => {
    const h = fleet(['a'])
    const buyer = h.requesters.get('buyer')!
    const job = buyer.submit({ gpus: 1, maxPrice: credits(4), lifetimeMs: 10 * MIN }, { durationMs: 30 * MIN })
    h.at(h.scheduler.now() + 10 * MIN, () => { buyer.cancel(job) })
    h.runUntilQuiet()
    assert.equal(ending(h, job).status, 'cancelled')
    assert.deepEqual(jobVerdicts(h.recorder, [job]), [{ job, accepted: false, wrongAccepted: false }])
  })
})

describe('simulations: verification measures on a hand-made record', () => {
  const jobs = [1, 2, 3].map((n) => counterCid('job', n).toString())
  const acc = (j: string, outputs: string, provider = 'peer:p'): AcceptanceRecord => ({ job: j, requester: 'peer:r', provider, attempt: 1, outputs, at: 0 })
  const rec = (j: string, provider: string, gpuSeconds: number): ReceiptRecord => ({ job: j, provider, outputs: '', exitCode: 0, gpuSeconds, at: 0 })
  const award = (j: string, attempt: number, provider: string): AwardRecord => ({ job: j, attempt, award: `${j}${attempt}${provider}`, requester: 'peer:r', provider, price: 1, at: 0 })

  it('counts a job wrong when any accepted output is not its true one, and the shares and overhead from the receipts', () => {
    const [a, b, c] = jobs as [string, string, string]
    const m = verificationMeasures({
      acceptances: [acc(a, trueOutput(a).toString()), acc(b, colludedOutput(b).toString()), acc(c, trueOutput(c).toString()), acc(c, trueOutput(a).toString(), 'peer:q')],
      receipts: [rec(a, 'peer:p', 100), rec(b, 'peer:p', 50), rec(b, 'peer:q', 50), rec(c, 'peer:p', 10)],
      awards: [award(a, 1, 'peer:p'), award(b, 1, 'peer:p'), award(b, 1, 'peer:q'), award(c, 1, 'peer:p'), award(c, 2, 'peer:q')]
    }, [a, b, c, counterCid('job', 4).toString()])
    assert.deepEqual(jobVerdicts({ acceptances: [acc(a, trueOutput(a).toString())] }, [a, b]), [{ job: a, accepted: true, wrongAccepted: false }, { job: b, accepted: false, wrongAccepted: false }])
    assert.equal(m.jobs, 4)
    assert.equal(m.accepted, 3)
    assert.equal(m.wrongAccepted, 2, 'b accepted the colluders\' output; c accepted another job\'s output beside its own')
    assert.equal(m.wrongShare, 2 / 3)
    assert.deepEqual([m.gpuSecondsRun, m.gpuSecondsNeeded, m.overhead], [210, 160, 210 / 160])
    assert.equal(m.replicatedJobs, 1, 'b: two providers at attempt 1; c: one provider per attempt is a re-award, not a replica')
  })

  it('has no share and no overhead when nothing was accepted or run', () => {
    const m = verificationMeasures({ acceptances: [], receipts: [], awards: [] }, [])
    assert.deepEqual([m.accepted, m.wrongShare, m.overhead, m.replicatedJobs], [0, null, null, 0])
  })
})
