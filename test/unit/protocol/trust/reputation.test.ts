import assert from 'node:assert/strict'
import { ReputationStore, type Evidence } from '../../../../protocol/trust/reputation.js'
import { InvalidEvidenceError } from '../../../../protocol/trust/reputation-evidence.js'
import {
  InvalidReputationParamsError, MAX_REPORTERS_PER_SUBJECT, MAX_SUBJECTS_PER_REPORTER, REPORTER_WEIGHT_CAP, REPUTATION_HALF_LIFE_MS, createReputationParams
} from '../../../../protocol/trust/reputation-params.js'
import { UNKNOWN_RELIABILITY } from '../../../../protocol/market/scoring.js'

const ME = 'me'
const T0 = 1_767_225_600_000
const H = REPUTATION_HALF_LIFE_MS

function ok (signer: string, subject: string, at = T0): Evidence {
  return { signer, subject, kind: 'receipt', at }
}
function fail (signer: string, subject: string, at = T0): Evidence {
  return { signer, subject, kind: 'failure', reason: 'no-show', at }
}
function times (n: number, e: Evidence, store: ReputationStore): void {
  for (let i = 0; i < n; i++) store.add(e)
}

describe('ReputationStore (protocol/trust/reputation.ts)', () => {
  describe('a stranger', () => {
    it('scores the low prior, is unknown, and has no reliability', () => {
      const s = new ReputationStore(ME)
      assert.equal(s.score('nobody', T0), UNKNOWN_RELIABILITY)
      assert.equal(s.reliability('nobody', T0), undefined)
      const x = s.explain('nobody', T0)
      assert.equal(x.known, false)
      assert.deepEqual(x.prior, { mean: UNKNOWN_RELIABILITY, weight: 4 })
      assert.deepEqual(x.own, { ok: 0, failed: 0, okCount: 0, failedCount: 0 })
    })

    it('one own success lifts a provider above the prior, one failure drops it below', () => {
      const s = new ReputationStore(ME)
      s.add(ok(ME, 'good'))
      s.add(fail(ME, 'bad'))
      assert.equal(s.score('good', T0), 2 / 5)
      assert.equal(s.score('bad', T0), 1 / 5)
    })
  })

  describe('own experience first', () => {
    // R delivered to this node once, so this node trusts R as a reporter
    function withTrustedReporter (): ReputationStore {
      const s = new ReputationStore(ME)
      s.add(ok(ME, 'R'))
      return s
    }

    it('a directly trusted reporter counts at most the cap, and less than this node itself', () => {
      const s = withTrustedReporter()
      const w = s.trustIn('R', T0)
      assert.ok(w > 0 && w <= REPORTER_WEIGHT_CAP, `weight ${w}`)
      assert.equal(s.trustIn(ME, T0), 1)
    })

    it('the same three successes count more from this node than from the trusted reporter', () => {
      const own = withTrustedReporter()
      times(3, ok(ME, 'P'), own)
      const heard = withTrustedReporter()
      times(3, ok('R', 'P'), heard)
      assert.ok(own.score('P', T0) > heard.score('P', T0), `${own.score('P', T0)} vs ${heard.score('P', T0)}`)
      assert.ok(heard.score('P', T0) > UNKNOWN_RELIABILITY)
    })

    it('own outcomes outweigh as many contrary ones from a trusted reporter', () => {
      // mirrored: 2 own failures against R's 2 successes score below 2 own successes against R's 2 failures
      const s = withTrustedReporter()
      times(2, fail(ME, 'P'), s)
      times(2, ok('R', 'P'), s)
      times(2, ok(ME, 'Q'), s)
      times(2, fail('R', 'Q'), s)
      const w = s.trustIn('R', T0)
      assert.equal(s.score('P', T0), (2 * w + 1) / (2 * w + 2 + 4))
      assert.ok(s.score('P', T0) < s.score('Q', T0), `${s.score('P', T0)} vs ${s.score('Q', T0)}`)
      // own failures alone would drop it below the prior; the reporter's word lifts it, by less than own successes would
      assert.ok(s.score('P', T0) < 3 / 7)
    })

    it('trust passes on along vouches, damped: a peer vouched for by a trusted reporter counts, less', () => {
      const s = withTrustedReporter()
      s.add(ok('R', 'R2'))
      s.add(ok('R2', 'P'))
      const w1 = s.trustIn('R', T0)
      const w2 = s.trustIn('R2', T0)
      assert.ok(w2 > 0 && w2 < w1, `${w2} vs ${w1}`)
      const x = s.explain('P', T0)
      assert.equal(x.others.trusted, 1)
      assert.equal(x.others.ok, w2)
    })

    it('a trusted reporter and a peer it vouches for, vouching back, cannot lift it past the cap', () => {
      // uncapped, R's trust would be 2/3 of this node's: the mutual vouch feeds half of R's trust back to it
      const s = withTrustedReporter()
      s.add(ok('R', 'X'))
      s.add(ok('X', 'R'))
      assert.equal(s.trustIn('R', T0), REPORTER_WEIGHT_CAP)
      times(4, ok('R', 'P'), s)
      assert.equal(s.explain('P', T0).others.ok, 4 * REPORTER_WEIGHT_CAP)
    })

    it('a reporter this node only saw fail holds no trust, and its reports count for nothing', () => {
      const s = new ReputationStore(ME)
      s.add(fail(ME, 'R'))
      times(5, ok('R', 'P'), s)
      assert.equal(s.trustIn('R', T0), 0)
      assert.equal(s.score('P', T0), UNKNOWN_RELIABILITY)
      assert.equal(s.explain('P', T0).others.reporters, 1)
    })

    it('a reporter this node saw fail as often as it delivered holds no trust; one more delivery gives it some', () => {
      const s = new ReputationStore(ME)
      times(2, ok(ME, 'R'), s)
      times(2, fail(ME, 'R'), s)
      assert.equal(s.trustIn('R', T0), 0)
      s.add(ok(ME, 'R'))
      assert.ok(s.trustIn('R', T0) > 0)
    })

    it('self-issued evidence gains nothing', () => {
      const s = new ReputationStore(ME)
      assert.equal(s.add(ok('P', 'P')), 'self-issued')
      assert.equal(s.reliability('P', T0), undefined)
    })
  })

  describe('time decay', () => {
    it('halves a record\'s weight at the half-life exactly', () => {
      const s = new ReputationStore(ME)
      s.add(ok(ME, 'P'))
      assert.equal(s.explain('P', T0 + H).own.ok, 0.5)
      assert.ok(s.explain('P', T0 + H - 1).own.ok > 0.5)
      assert.ok(s.explain('P', T0 + H + 1).own.ok < 0.5)
      assert.equal(s.explain('P', T0 + 2 * H).own.ok, 0.25)
      assert.equal(s.score('P', T0 + H), (0.5 + 1) / (0.5 + 4))
      assert.equal(s.explain('P', T0 + H).own.okCount, 1)
    })

    it('folds late and early records alike: an older record counts by its own age', () => {
      const s = new ReputationStore(ME)
      s.add(ok(ME, 'P', T0 + H))
      s.add(ok(ME, 'P', T0))
      assert.equal(s.explain('P', T0 + H).own.ok, 1.5)
      assert.equal(s.explain('P', T0 + 2 * H).own.ok, 0.75)
    })

    it('a record from the future counts fully, never more', () => {
      const s = new ReputationStore(ME)
      s.add(ok(ME, 'P', T0 + H))
      assert.equal(s.explain('P', T0).own.ok, 1)
    })

    it('decays others\' evidence too', () => {
      const s = new ReputationStore(ME)
      s.add(ok(ME, 'R', T0))
      s.add(ok('R', 'P', T0))
      const w = s.trustIn('R', T0 + H)
      assert.equal(s.explain('P', T0 + H).others.ok, w * 0.5)
    })
  })

  describe('bounded memory: the caps hold at exactly the cap', () => {
    it(`${MAX_REPORTERS_PER_SUBJECT} other reporters per subject: the next untrusted one is dropped`, () => {
      const s = new ReputationStore(ME)
      s.add(ok(ME, 'P'))
      for (let i = 0; i < MAX_REPORTERS_PER_SUBJECT; i++) assert.equal(s.add(ok(`u${i}`, 'P')), 'counted')
      assert.equal(s.add(ok('one-more', 'P')), 'dropped')
      assert.equal(s.explain('P', T0).others.reporters, MAX_REPORTERS_PER_SUBJECT)
      assert.equal(s.dropped, 1)
      // an existing reporter still adds to its pair
      assert.equal(s.add(ok('u0', 'P')), 'counted')
    })

    it('a trusted reporter displaces the least trusted one from a full subject', () => {
      const s = new ReputationStore(ME, { maxReportersPerSubject: 2 })
      s.add(ok('u1', 'P'))
      s.add(ok('u2', 'P'))
      s.add(ok(ME, 'R'))
      s.score('P', T0) // computes trust
      assert.equal(s.add(ok('R', 'P')), 'counted')
      const x = s.explain('P', T0)
      assert.equal(x.others.reporters, 2)
      assert.equal(x.others.trusted, 1)
      assert.equal(s.add(ok('u1', 'P')), 'dropped') // u1 was the one displaced, and cannot come back untrusted
    })

    it(`${MAX_SUBJECTS_PER_REPORTER} subjects per other reporter: the next displaces its lightest`, () => {
      const s = new ReputationStore(ME)
      s.add(ok('R', 'heavy'))
      s.add(ok('R', 'heavy'))
      for (let i = 1; i < MAX_SUBJECTS_PER_REPORTER; i++) s.add(ok('R', `s${i}`))
      assert.equal(s.size().pairs, MAX_SUBJECTS_PER_REPORTER)
      assert.equal(s.add(ok('R', 'new')), 'counted')
      assert.equal(s.size().pairs, MAX_SUBJECTS_PER_REPORTER)
      assert.equal(s.reliability('s1', T0), undefined)
      assert.notEqual(s.reliability('heavy', T0), undefined)
      assert.notEqual(s.reliability('new', T0), undefined)
    })

    it('own subjects: the next beyond the cap displaces the lightest own pair', () => {
      const s = new ReputationStore(ME, { maxOwnSubjects: 2 })
      s.add(ok(ME, 'a'))
      s.add(ok(ME, 'a'))
      s.add(ok(ME, 'b'))
      assert.equal(s.add(fail(ME, 'c')), 'own')
      assert.equal(s.size().own, 2)
      assert.deepEqual([s.own('a'), s.own('b'), s.own('c')], [{ ok: 2, failed: 0 }, undefined, { ok: 0, failed: 1 }])
    })

    it('others\' pairs in all: at the cap a new pair is dropped, own records still enter', () => {
      const s = new ReputationStore(ME, { maxOthersPairs: 3 })
      for (let i = 0; i < 3; i++) assert.equal(s.add(ok(`r${i}`, 'P')), 'counted')
      assert.equal(s.add(ok('r3', 'P')), 'dropped')
      assert.equal(s.add(ok('r0', 'Q')), 'dropped')
      assert.equal(s.add(ok(ME, 'Q')), 'own')
      assert.equal(s.size().pairs, 4)
    })
  })

  describe('bad input', () => {
    it('refuses a record out of shape with a typed error', () => {
      const s = new ReputationStore(ME)
      const bad: Array<[string, Partial<Evidence> & Record<string, unknown>]> = [
        ['signer', { signer: '' }],
        ['at', { at: -1 }],
        ['at', { at: 1.5 }],
        ['kind', { kind: 'vouch' as never }],
        ['ok', { kind: 'probe' }],
        ['ok', { ok: true }],
        ['reason', { reason: 'no-show' }],
        ['reason', { kind: 'failure', reason: 'bored' as never }]
      ]
      for (const [field, change] of bad) {
        assert.throws(() => s.add({ ...ok(ME, 'P'), ...change } as Evidence), (err: unknown) => err instanceof InvalidEvidenceError && err.field === field, field)
      }
      assert.equal(s.size().pairs, 0)
    })

    it('counts probes by their result', () => {
      const s = new ReputationStore(ME)
      s.add({ signer: ME, subject: 'P', kind: 'probe', ok: true, at: T0 })
      s.add({ signer: ME, subject: 'P', kind: 'probe', ok: false, at: T0 })
      assert.deepEqual(s.own('P'), { ok: 1, failed: 1 })
    })

    it('refuses parameters out of range', () => {
      for (const p of [{ halfLifeMs: 0 }, { damping: 1 }, { reporterWeightCap: 1 }, { priorMean: 1.5 }, { maxOthersPairs: 0 }, { iterations: 0.5 }]) {
        assert.throws(() => createReputationParams(p), InvalidReputationParamsError, JSON.stringify(p))
      }
    })
  })
})
