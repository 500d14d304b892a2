/**
 * Issue 11: "Twenty Sybil identities that only vouch for each other never outrank one honest provider
 * with real history." N = 1 own-observed success: trust comes only from this node's own experience, so
 * identities it never dealt with hold exactly 0 trust and score exactly the prior (0.25), while any own
 * success, however old (up to ten half-lives here), puts a provider strictly above it (2/5 when fresh).
 * N = 1 is the smallest history the claim can be made for, and every larger N only widens the gap.
 */
import assert from 'node:assert/strict'
import fc from 'fast-check'
import { ReputationStore, type Evidence } from '../../../../protocol/trust/reputation.js'
import { REPUTATION_HALF_LIFE_MS } from '../../../../protocol/trust/reputation-params.js'
import { UNKNOWN_RELIABILITY } from '../../../../protocol/market/scoring.js'

const ME = 'me'
const HONEST = 'honest'
const NOW = 1_767_225_600_000
const H = REPUTATION_HALF_LIFE_MS
const sybil = (i: number): string => `sybil-${i}`

/** Equal to 1e-12 relative: far below what any record with weight changes (a single one decayed 20 half-lives still moves a score by ~1e-7). */
function assertClose (actual: number, expected: number): void {
  assert.ok(Math.abs(actual - expected) <= 1e-12 * Math.max(1, Math.abs(expected)), `${actual} ≠ ${expected}`)
}

const vouch = (sybils: number) => fc.record({
  from: fc.nat({ max: sybils - 1 }),
  // a target past the Sybils is an accusation of the honest provider or of a trusted reporter
  to: fc.nat({ max: sybils + 1 }),
  kind: fc.constantFrom('receipt', 'settlement', 'probe-ok', 'failure'),
  count: fc.integer({ min: 1, max: 20 }),
  at: fc.integer({ min: NOW - 20 * H, max: NOW + H })
})

const world = fc.integer({ min: 1, max: 50 }).chain((sybils) => fc.record({
  sybils: fc.constant(sybils),
  vouches: fc.array(vouch(sybils), { maxLength: 200 }),
  honestAge: fc.integer({ min: 0, max: 10 * H }),
  // this node's honest context: reporters it dealt with, and what they say of the honest provider
  reporters: fc.array(fc.record({ delivered: fc.integer({ min: 1, max: 3 }), saysOk: fc.nat({ max: 3 }) }), { maxLength: 3 }),
  order: fc.boolean()
}))

type World = typeof world extends fc.Arbitrary<infer T> ? T : never

function evidenceOf (w: World): { honest: Evidence[], sybil: Evidence[] } {
  const honest: Evidence[] = [{ signer: ME, subject: HONEST, kind: 'receipt', at: NOW - w.honestAge }]
  w.reporters.forEach((r, i) => {
    for (let k = 0; k < r.delivered; k++) honest.push({ signer: ME, subject: `reporter-${i}`, kind: 'receipt', at: NOW })
    for (let k = 0; k < r.saysOk; k++) honest.push({ signer: `reporter-${i}`, subject: HONEST, kind: 'settlement', at: NOW })
  })
  const sybilRecords: Evidence[] = []
  for (const v of w.vouches) {
    const subject = v.to < w.sybils ? sybil(v.to) : v.to === w.sybils ? HONEST : 'reporter-0'
    const base = { signer: sybil(v.from), subject, at: v.at }
    const e: Evidence = v.kind === 'probe-ok' ? { ...base, kind: 'probe', ok: true } : v.kind === 'failure' ? { ...base, kind: 'failure', reason: 'no-show' } : { ...base, kind: v.kind as 'receipt' }
    for (let k = 0; k < v.count; k++) sybilRecords.push(e)
  }
  return { honest, sybil: sybilRecords }
}

describe('reputation under Sybil vouching (protocol/trust/reputation.ts)', () => {
  it('any ≤ 50 Sybils, any vouching graph among them: none outranks an honest provider with one own success, and they change nothing', () => {
    fc.assert(fc.property(world, (w) => {
      const { honest, sybil: sybilRecords } = evidenceOf(w)
      const clean = new ReputationStore(ME)
      for (const e of honest) clean.add(e)
      const attacked = new ReputationStore(ME)
      for (const e of w.order ? [...sybilRecords, ...honest] : [...honest, ...sybilRecords]) attacked.add(e)
      const honestScore = attacked.score(HONEST, NOW)
      assert.ok(honestScore > UNKNOWN_RELIABILITY)
      for (let i = 0; i < w.sybils; i++) {
        assert.equal(attacked.trustIn(sybil(i), NOW), 0)
        assert.equal(attacked.score(sybil(i), NOW), UNKNOWN_RELIABILITY)
        assert.ok(attacked.score(sybil(i), NOW) < honestScore)
      }
      // accusations from the clique move neither the honest provider nor this node's reporters (beyond
      // rounding: zero-trust records still change the order the trust iteration sums in, by an ulp or two)
      assertClose(honestScore, clean.score(HONEST, NOW))
      assertClose(attacked.trustIn('reporter-0', NOW), clean.trustIn('reporter-0', NOW))
    }), { numRuns: 150 })
  })

  it('twenty Sybils vouching densely for each other stay at the prior, below one honest provider', () => {
    const s = new ReputationStore(ME)
    s.add({ signer: ME, subject: HONEST, kind: 'receipt', at: NOW })
    for (let a = 0; a < 20; a++) {
      for (let b = 0; b < 20; b++) {
        for (let k = 0; k < 50; k++) s.add({ signer: sybil(a), subject: sybil(b), kind: 'settlement', at: NOW })
      }
    }
    const best = Math.max(...Array.from({ length: 20 }, (_, i) => s.score(sybil(i), NOW)))
    assert.equal(best, UNKNOWN_RELIABILITY)
    assert.equal(s.score(HONEST, NOW), 2 / 5)
    assert.equal(s.explain(sybil(0), NOW).others.reporters, 19)
    assert.equal(s.explain(sybil(0), NOW).others.trusted, 0)
  })

  it('one vouch from a peer this node trusts does lift a stranger (the rule is trust, not a ban on others\' evidence)', () => {
    const s = new ReputationStore(ME)
    s.add({ signer: ME, subject: 'friend', kind: 'receipt', at: NOW })
    s.add({ signer: 'friend', subject: sybil(0), kind: 'settlement', at: NOW })
    assert.ok(s.score(sybil(0), NOW) > UNKNOWN_RELIABILITY)
  })
})
