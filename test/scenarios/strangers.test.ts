/**
 * Issue 9, bug 10: three throw-away identities underbid every round and never answer the exec
 * stream. An honest job must still complete: a no-show by an identity with no history does not use
 * up the job's attempts, later rounds prefer providers that delivered, and the job ends on its own
 * deadline, not on a count strangers control.
 */
import assert from 'node:assert/strict'
import { Harness, credits } from '../../simulations/harness/index.js'
import { MIN, assertSettledBooks, awardsOf, ending, peer, reports } from './setup.js'

describe('scenario: strangers that underbid and no-show (bug 10)', () => {
  it('completes the honest job on the honest provider; the strangers\' no-shows do not count against the job', () => {
    const h = new Harness({ seed: 10 })
    h.provider('honest', { region: 'eu-west', gpus: { h100: 1 }, floor: credits(2) })
    for (const s of ['s1', 's2', 's3']) h.provider(s, { region: 'eu-west', gpus: { h100: 1 }, floor: credits(0.5), behaviour: { noShow: true } })
    const buyer = h.requester('buyer', { region: 'eu-west' })
    const job = buyer.submit({ gpus: 1, maxPrice: credits(4), lifetimeMs: 30 * MIN }, { durationMs: 5 * MIN })
    h.runUntilQuiet()

    assert.equal(ending(h, job).status, 'settled', ending(h, job).reason)
    const awards = awardsOf(h, job)
    assert.equal(awards.at(-1)?.provider, peer('honest'))
    const blamed = h.recorder.failures.filter((f) => f.job === job && f.reporter === peer('buyer'))
    assert.ok(blamed.length > 0 && blamed.every((f) => f.reason === 'no-show' && f.subject !== peer('honest')))
    assert.ok(blamed.every((f) => f.counted === false), 'a newcomer\'s no-show uses up none of the job\'s attempts')
    assert.deepEqual(reports(h, job).filter(([s]) => s === peer('honest')), [])
    assertSettledBooks(h)
  })

  it('completes the next job on the provider that delivered, however often the strangers bid again', () => {
    const h = new Harness({ seed: 10 })
    h.provider('honest', { region: 'eu-west', gpus: { h100: 1 }, floor: credits(2) })
    for (const s of ['s1', 's2', 's3']) h.provider(s, { region: 'eu-west', gpus: { h100: 1 }, floor: credits(0.5), behaviour: { noShow: true } })
    const buyer = h.requester('buyer', { region: 'eu-west' })
    const first = buyer.submit({ gpus: 1, maxPrice: credits(4), lifetimeMs: 30 * MIN }, { durationMs: 2 * MIN })
    h.runUntilQuiet()
    assert.equal(ending(h, first).status, 'settled')
    const second = buyer.submit({ gpus: 1, maxPrice: credits(4), lifetimeMs: 30 * MIN }, { durationMs: 2 * MIN })
    h.runUntilQuiet()
    assert.equal(ending(h, second).status, 'settled')
    assert.equal(awardsOf(h, second).at(-1)?.provider, peer('honest'))
    assert.ok(h.recorder.failures.filter((f) => f.reporter === peer('buyer')).every((f) => f.counted === false))
    assertSettledBooks(h)
  })
})
