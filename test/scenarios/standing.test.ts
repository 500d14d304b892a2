/**
 * The requester's standing rule (protocol/market/standing.ts) in a market: a cheap provider that
 * delivers once and then vanishes costs its buyer one job, not every later one; a stranger takes one
 * job at a time, except among jobs closing together; five held-back bidders re-open the round, and
 * the honest providers their bids silenced bid in it. Each case also runs with the rule off, so the
 * test shows the rule, not the scoring, makes the difference.
 */
import assert from 'node:assert/strict'
import { Harness, credits } from '../../simulations/harness/index.js'
import { MIN, awardsOf, ending, peer } from './setup.js'

function fleet (standing: boolean, vanishing = 1): Harness {
  const h = new Harness({ seed: 3, params: { standing: { enabled: standing } } })
  for (let i = 0; i < vanishing; i++) h.provider(`vanish${i}`, { region: 'eu-west', gpus: { h100: 4 }, floor: credits(1 + i * 0.01), behaviour: { noShowAfter: 1 } })
  h.provider('honest', { region: 'eu-west', gpus: { h100: 4 }, floor: credits(3) })
  h.requester('buyer', { region: 'eu-west' })
  return h
}

/** `n` one-GPU jobs of 5 minutes, one every `gapMs`. */
function submitEvery (h: Harness, n: number, gapMs: number): string[] {
  const buyer = h.requesters.get('buyer')!
  const jobs: string[] = []
  for (let i = 0; i < n; i++) h.at(h.scheduler.now() + i * gapMs, () => { jobs.push(buyer.submit({ gpus: 1, maxPrice: credits(4), maxStartDelaySec: 3600 }, { durationMs: 5 * MIN })) })
  return jobs
}

describe('scenario: the requester\'s standing rule', () => {
  it('a provider that delivers once and then vanishes loses its buyer at most the one job it held', () => {
    const outcome = (standing: boolean): { settled: number, vanishAwards: number } => {
      const h = fleet(standing)
      const jobs = submitEvery(h, 6, 20 * MIN)
      h.runUntilQuiet()
      return {
        settled: jobs.filter((j) => ending(h, j).status === 'settled').length,
        vanishAwards: h.recorder.awards.filter((a) => a.provider === peer('vanish0')).length
      }
    }
    const on = outcome(true)
    const off = outcome(false)
    assert.equal(on.settled, 6, 'every job settles')
    assert.equal(on.vanishAwards, 2, 'one delivered, one vanished; then held back')
    assert.ok(off.vanishAwards > on.vanishAwards, `without the rule it keeps winning (${off.vanishAwards} awards)`)
  })

  it('a stranger takes one job at a time from a buyer, but all of a batch closing together', () => {
    const spread = (standing: boolean, gapMs: number): string[] => {
      const h = new Harness({ seed: 3, params: { standing: { enabled: standing } } })
      h.provider('cheap', { region: 'eu-west', gpus: { h100: 4 }, floor: credits(2) })
      h.provider('dear', { region: 'eu-west', gpus: { h100: 4 }, floor: credits(3) })
      h.requester('buyer', { region: 'eu-west' })
      const jobs = submitEvery(h, 3, gapMs)
      h.runUntilQuiet()
      return jobs.map((j) => awardsOf(h, j)[0]?.provider ?? 'none')
    }
    // the third: both hold an unfinished award, none is in good standing, so the cheaper wins again
    assert.deepEqual(spread(true, 30_000), [peer('cheap'), peer('dear'), peer('cheap')], 'the stranger holds one unfinished award')
    assert.deepEqual(spread(false, 30_000), [peer('cheap'), peer('cheap'), peer('cheap')])
    assert.deepEqual(spread(true, 0), [peer('cheap'), peer('cheap'), peer('cheap')], 'jobs closing together are one decision')
  })

  it('five over-exposed honest providers and more concurrent jobs than they take one at a time: the re-opened round falls back on their bids, no job is lost', () => {
    const h = new Harness({ seed: 21 })
    ;['a', 'b', 'c', 'd', 'e'].forEach((name, i) => h.provider(name, { region: 'eu-west', gpus: { h100: 4 }, floor: credits(2 + i * 0.2) }))
    h.requester('buyer', { region: 'eu-west' })
    const buyer = h.requesters.get('buyer')!
    const jobs: string[] = []
    for (let i = 0; i < 8; i++) h.at(h.scheduler.now() + i * 30_000, () => { jobs.push(buyer.submit({ gpus: 1, maxPrice: credits(4), lifetimeMs: 20 * MIN }, { durationMs: 10 * MIN })) })
    h.runUntilQuiet()
    assert.deepEqual(jobs.map((j) => ending(h, j).status), Array(8).fill('settled'))
  })

  it('replicas: with fewer bids in good standing than replicas wanted, every independent bid is ranked, no job is lost', () => {
    const h = new Harness({ seed: 21 })
    ;['a', 'b', 'c'].forEach((name, i) => h.provider(name, { region: 'eu-west', gpus: { h100: 4 }, floor: credits(2 + i * 0.5), addrs: [`/ip4/20.${i}.0.1/tcp/4001`] }))
    h.requester('buyer', { region: 'eu-west' })
    const buyer = h.requesters.get('buyer')!
    const jobs: string[] = []
    for (let i = 0; i < 3; i++) h.at(h.scheduler.now() + i * 30_000, () => { jobs.push(buyer.submit({ gpus: 1, maxPrice: credits(4), lifetimeMs: 20 * MIN, verification: { mode: 'replicate', k: 2 }, executor: 'wasm' }, { durationMs: 10 * MIN })) })
    h.runUntilQuiet()
    assert.deepEqual(jobs.map((j) => ending(h, j).status), ['settled', 'settled', 'settled'])
  })

  it('five held-back bidders and none in good standing re-open the round without them, where the honest provider bids', () => {
    const h = fleet(true, 5)
    // each vanishing provider delivers one job and then fails one, one after the other
    const warmup = submitEvery(h, 10, 20 * MIN)
    h.runUntilQuiet()
    assert.ok(warmup.length === 10)
    const buyer = h.requesters.get('buyer')!
    const last = buyer.submit({ gpus: 1, maxPrice: credits(4), maxStartDelaySec: 3600 }, { durationMs: 5 * MIN })
    h.runUntilQuiet()
    assert.deepEqual(awardsOf(h, last).map((a) => a.provider), [peer('honest')])
    assert.equal(ending(h, last).status, 'settled')
  })
})
