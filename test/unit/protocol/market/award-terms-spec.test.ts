/**
 * protocol/README.md §7.7 "Terms": a provider accepts every `leaseMs` and `billingIntervalSec` the award
 * schema allows, and declines none for its terms. Checked at both ends of each range through the
 * reference provider lifecycle and the award schema, and against the spec's text.
 */
import assert from 'node:assert/strict'
import { MAX_BILLING_INTERVAL_SEC, MAX_LEASE_MS, MIN_BILLING_INTERVAL_SEC, MIN_LEASE_MS } from '../../../../protocol/limits.js'
import { reduceProvider, startProviderJob } from '../../../../protocol/market/lifecycle.js'
import { JOB, REQ, TERMS, at } from '../../../helpers/lifecycle-builders.js'
import { specSection } from '../../../helpers/spec-text.js'

const offered = startProviderJob({ job: JOB, requester: REQ, bid: 'b1', gpus: 1, offerExpiresAt: at(60_000) }, at(0)).state
const award = (leaseMs: number, billingIntervalSec: number): string =>
  reduceProvider(offered, { type: 'award-received', now: at(1000), from: REQ, award: { ...TERMS, leaseMs, billingIntervalSec } }).state.status

describe('protocol/README.md §7.7: the award terms a provider accepts', () => {
  it('every lease and billing interval in the schema\'s ranges is taken for review; nothing outside', () => {
    for (const lease of [MIN_LEASE_MS, MAX_LEASE_MS]) {
      for (const interval of [MIN_BILLING_INTERVAL_SEC, MAX_BILLING_INTERVAL_SEC]) assert.equal(award(lease, interval), 'awarded', `${lease} ms, ${interval} s`)
    }
    assert.equal(award(MIN_LEASE_MS - 1, 300), 'offered')
    assert.equal(award(MAX_LEASE_MS + 1, 300), 'offered')
    assert.equal(award(30_000, MIN_BILLING_INTERVAL_SEC - 1), 'offered')
    assert.equal(award(30_000, MAX_BILLING_INTERVAL_SEC + 1), 'offered')
  })

  it('the spec names the same ranges', () => {
    const text = specSection('7.7').replace(/\s+/g, ' ')
    assert.ok(text.includes(`accepts every \`leaseMs\` (${MIN_LEASE_MS} … ${MAX_LEASE_MS}) and \`billingIntervalSec\` (${MIN_BILLING_INTERVAL_SEC} … ${MAX_BILLING_INTERVAL_SEC})`))
  })
})
