/**
 * Over-commit (protocol/README §5.6, "Reservations"): a provider's outstanding bids hold their GPUs,
 * so a provider never wins more concurrent jobs than it has GPUs for and never declines an award
 * BUSY. Many concurrent jobs on a few multi-GPU providers: before reservations, the cheapest provider
 * bid on every job, won them all and declined the ones beyond its GPUs (a failed attempt each).
 */
import assert from 'node:assert/strict'
import { Harness, credits } from '../../simulations/harness/index.js'
import { MIN, assertSettledBooks, awardsOf, ending } from './setup.js'

/** Three providers with four H100s each (2.0, 2.5, 3.0 credits/GPU-h) and a buyer, in eu-west. */
function fleet (): Harness {
  const h = new Harness({ seed: 11 })
  h.provider('cheap', { region: 'eu-west', gpus: { h100: 4 }, floor: credits(2) })
  h.provider('mid', { region: 'eu-west', gpus: { h100: 4 }, floor: credits(2.5) })
  h.provider('dear', { region: 'eu-west', gpus: { h100: 4 }, floor: credits(3) })
  h.requester('buyer', { region: 'eu-west' })
  return h
}

/** Provider-side endings with a BUSY decline in their reason. */
function busyDeclines (h: Harness): string[] {
  return h.recorder.offers.filter((o) => /BUSY/.test(o.reason ?? '')).map((o) => `${o.node}: ${o.status} ${o.reason ?? ''}`)
}

describe('scenario: a provider does not over-commit its GPUs', () => {
  it('twelve concurrent one-GPU jobs on three four-GPU providers (every GPU taken): no award is declined BUSY and every job settles', () => {
    const h = fleet()
    const buyer = h.requesters.get('buyer')!
    const jobs = Array.from({ length: 12 }, () => buyer.submit({ gpus: 1, maxPrice: credits(4), maxStartDelaySec: 60, maxRuntimeSec: 3600 }, { durationMs: 10 * MIN }))
    h.runUntilQuiet()
    assert.deepEqual(busyDeclines(h), [])
    assert.deepEqual(h.recorder.failures, [])
    for (const job of jobs) {
      assert.equal(ending(h, job).status, 'settled', `job ${job}`)
      assert.equal(awardsOf(h, job).length, 1, `job ${job}: one award`)
    }
    // each provider won at most as many jobs as it has GPUs
    const won = new Map<string, number>()
    for (const a of h.recorder.awards) won.set(a.provider, (won.get(a.provider) ?? 0) + 1)
    for (const [provider, n] of won) assert.ok(n <= 4, `${provider} won ${n} concurrent jobs with 4 GPUs`)
    assertSettledBooks(h)
  })

  it('a bid seen to lose frees its GPU in the same round: two jobs at once on two one-GPU providers, one award each, no re-opened round', () => {
    const h = new Harness({ seed: 5 })
    // neither has a record with the buyer: cheap's bid scores below dear's, so dear's bid on a job cheap bids on has lost
    h.provider('cheap', { region: 'eu-west', gpus: { h100: 1 }, floor: credits(2) })
    h.provider('dear', { region: 'eu-west', gpus: { h100: 1 }, floor: credits(2.5) })
    const buyer = h.requester('buyer', { region: 'eu-west' })
    const jobs = [0, 1].map(() => buyer.submit({ gpus: 1, maxPrice: credits(4), maxStartDelaySec: 60 }, { durationMs: 10 * MIN }))
    h.runUntilQuiet()
    assert.deepEqual(busyDeclines(h), [])
    assert.equal(h.recorder.count('auction-round').count, 0, 'both jobs are awarded in their first round')
    assert.deepEqual(jobs.map((j) => awardsOf(h, j).length), [1, 1])
    assert.deepEqual(new Set(h.recorder.awards.map((a) => a.provider)), new Set(['peer:cheap', 'peer:dear']))
    for (const job of jobs) assert.equal(ending(h, job).status, 'settled')
    assertSettledBooks(h)
  })
})
