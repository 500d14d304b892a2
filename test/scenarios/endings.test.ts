/**
 * Every lifecycle ending of both sides, reached through whole auctions, and in every ending both
 * ledgers agree on every award. The final statuses come from the lifecycles' own transition tables,
 * so a new ending fails this test until a scenario reaches it.
 */
import assert from 'node:assert/strict'
import { finalStatuses } from '../../protocol/market/lifecycle-shared.js'
import { PROVIDER_TRANSITIONS } from '../../protocol/market/provider-lifecycle.js'
import { REQUESTER_TRANSITIONS } from '../../protocol/market/requester-lifecycle.js'
import { Harness, credits } from '../../simulations/harness/index.js'
import { MIN, market } from './setup.js'

interface Outcome { requester: string[], provider: string[] }

/** Scenarios, each ending its jobs in some way; every one returns its harness after the run. */
const SCENARIOS: Record<string, () => Harness> = {
  'settled, with losing bids': () => {
    const h = market()
    h.requesters.get('buyer')!.submit({ gpus: 1, maxPrice: credits(4) }, { durationMs: 6 * MIN })
    return h
  },
  'no bids: expired': () => {
    const h = market()
    h.requesters.get('buyer')!.submit({ gpus: 8, maxPrice: credits(4) })
    return h
  },
  'cancelled while bidding and while running': () => {
    const h = market()
    const buyer = h.requesters.get('buyer')!
    const a = buyer.submit({ gpus: 1, maxPrice: credits(4) })
    h.at(h.scheduler.now() + 500, () => { buyer.cancel(a) })
    const b = buyer.submit({ gpus: 1, maxPrice: credits(4) }, { durationMs: 30 * MIN })
    h.at(h.scheduler.now() + 7 * MIN, () => { buyer.cancel(b) })
    return h
  },
  'declined after the owner withdrew': () => {
    const h = market()
    h.requesters.get('buyer')!.submit({ gpus: 1, maxPrice: credits(4) }, { durationMs: 2 * MIN })
    h.at(h.scheduler.now() + 1_000, () => { h.providers.get('cheap')!.setAd({ region: 'eu-west', gpus: { h100: 1 }, floor: credits(2), windows: [] }) })
    return h
  },
  'every run crashes: failed': () => {
    const h = market()
    h.requesters.get('buyer')!.submit({ gpus: 1, maxPrice: credits(4) }, { exitCode: -1 })
    return h
  },
  'preempted by a gold job': () => {
    const h = new Harness({ seed: 5 })
    h.provider('h100', { region: 'eu-west', gpus: { h100: 1 }, floor: credits(2) })
    h.provider('a100', { region: 'eu-west', gpus: { a100: 1 }, floor: credits(2.5) })
    const buyer = h.requester('buyer', { region: 'eu-west' })
    buyer.submit({ gpus: 1, tier: 'bronze', models: ['nvidia-h100-80gb-hbm3'], maxPrice: credits(4), maxRuntimeSec: 7_200 }, { durationMs: 60 * MIN })
    h.at(h.scheduler.now() + 5 * MIN, () => { buyer.submit({ gpus: 1, tier: 'gold', models: ['nvidia-h100-80gb-hbm3'], maxPrice: credits(6), maxStartDelaySec: 60 }, { durationMs: 5 * MIN }) })
    return h
  },
  'the requester stops paying: stopped-unpaid': () => {
    const h = new Harness({ seed: 4 })
    h.provider('p', { region: 'eu-west', gpus: { h100: 1 }, floor: credits(2) })
    h.requester('buyer', { region: 'eu-west', behaviour: { stopPayingAfter: 0 } }).submit({ gpus: 1, maxPrice: credits(4) }, { durationMs: 30 * MIN })
    return h
  }
}

describe('scenario: every lifecycle ending', () => {
  const seen: Outcome = { requester: [], provider: [] }

  for (const [name, build] of Object.entries(SCENARIOS)) {
    it(`${name}: both ledgers agree on every award`, () => {
      const h = build()
      h.runUntilQuiet()
      assert.deepEqual(h.ledgerMismatches(), [])
      const snap = h.recorder.snapshot()
      assert.ok(snap.jobs.length > 0)
      seen.requester.push(...snap.jobs.map((j) => j.status))
      seen.provider.push(...snap.offers.map((o) => o.status))
    })
  }

  it('reaches every final status of both lifecycles', () => {
    assert.deepEqual([...new Set(seen.requester)].sort(), finalStatuses(REQUESTER_TRANSITIONS).sort())
    assert.deepEqual([...new Set(seen.provider)].sort(), finalStatuses(PROVIDER_TRANSITIONS).sort())
  })
})
