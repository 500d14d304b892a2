/**
 * The provider's view of requesters (protocol/market/requester-view.ts): the prior a stranger gets, own
 * endings counted fully, others' nonpayment reports weighted by trust in the reporter (none without
 * it), the refusal rule's edges, and the job-request rate growing with trust.
 */
import assert from 'node:assert/strict'
import {
  DEFAULT_MIN_REQUESTER_TRUST, InvalidRequesterTrustError, REQUESTER_PRIOR_MEAN, RequesterView, SCORE_STEP_MS,
  refusesRequester, requesterRate, requesterTrust, validateMinRequesterTrust
} from '../../../../protocol/market/requester-view.js'
import { STRANGER_JOB_RATE, TRUSTED_JOB_RATE } from '../../../../protocol/trust/budget.js'

const SELF = 'peer-provider'
const X = 'peer-bad-requester'
const H = 'peer-honest-requester'
const OTHER = 'peer-other-provider'
const T = 1_000_000_000_000

const close = (a: number, b: number, eps = 1e-9): void => { assert.ok(Math.abs(a - b) < eps, `${a} ≉ ${b}`) }

describe('the provider\'s view of requesters', () => {
  it('scores a stranger at the prior (0.5), which the default threshold (0.45) serves', () => {
    const v = new RequesterView(SELF)
    assert.equal(v.score(X, T), REQUESTER_PRIOR_MEAN)
    assert.equal(v.decisionScore(X, T), 0.5)
    assert.equal(v.reliability(X, T), undefined)
    assert.equal(refusesRequester(v.decisionScore(X, T), DEFAULT_MIN_REQUESTER_TRUST), false)
    assert.deepEqual(v.rate(X, T), STRANGER_JOB_RATE)
  })

  it('counts own endings fully: a nonpayment 1/3, a paid job 2/3, one of each 1/2', () => {
    const v = new RequesterView(SELF)
    v.record(X, false, T)
    close(v.score(X, T), 1 / 3)
    v.record(H, true, T)
    close(v.score(H, T), 2 / 3)
    v.record(H, false, T)
    close(v.score(H, T), 0.5)
    assert.equal(refusesRequester(v.score(X, T), DEFAULT_MIN_REQUESTER_TRUST), true)
    assert.equal(refusesRequester(v.score(H, T), DEFAULT_MIN_REQUESTER_TRUST), false)
  })

  it('gives a report from a reporter it has no experience of no weight', () => {
    const v = new RequesterView(SELF)
    assert.equal(v.addReport({ signer: OTHER, subject: X, kind: 'failure', reason: 'nonpayment', at: T }), true)
    assert.equal(v.score(X, T), 0.5)
    assert.equal(v.explain(X, T).known, true)
    assert.equal(v.explain(X, T).others.trusted, 0)
  })

  it('weights a nonpayment report by trust in its signer: a reporter that paid this node counts at the cap (0.5), scoring 0.4', () => {
    const v = new RequesterView(SELF)
    // the other provider once bought from this one and paid: own experience, so it is trusted as a reporter
    v.record(OTHER, true, T)
    v.addReport({ signer: OTHER, subject: X, kind: 'failure', reason: 'nonpayment', at: T })
    close(v.trustIn(OTHER, T), 0.5)
    close(v.score(X, T), 1 / 2.5)
    assert.equal(refusesRequester(v.score(X, T), DEFAULT_MIN_REQUESTER_TRUST), true)
  })

  it('carries trust along payments: a requester that paid this node vouches for the provider it paid', () => {
    const v = new RequesterView(SELF)
    v.record(H, true, T)
    // H's payment to OTHER (gossiped as a settlement): OTHER gains trust through H
    assert.equal(v.addReport({ signer: H, subject: OTHER, kind: 'settlement', at: T }), true)
    v.addReport({ signer: OTHER, subject: X, kind: 'failure', reason: 'nonpayment', at: T })
    assert.ok(v.trustIn(OTHER, T) > 0)
    assert.ok(v.score(X, T) < 0.5)
  })

  it('leaves out evidence about providers: other failure reasons and probes', () => {
    const v = new RequesterView(SELF)
    assert.equal(v.addReport({ signer: OTHER, subject: X, kind: 'failure', reason: 'no-heartbeat', at: T }), false)
    assert.equal(v.addReport({ signer: OTHER, subject: X, kind: 'probe', ok: false, at: T }), false)
    assert.equal(v.addReport({ signer: OTHER, subject: X, kind: 'receipt', at: T }), false)
    assert.equal(v.reliability(X, T), undefined)
  })

  it('refuses strictly below the threshold: exactly at it is served', () => {
    assert.equal(refusesRequester(0.45, 0.45), false)
    assert.equal(refusesRequester(0.45 - 1e-12, 0.45), true)
    assert.equal(refusesRequester(0.5, 0.5), false)
    assert.equal(refusesRequester(0, 0), false)
    const v = new RequesterView(SELF)
    v.record(X, false, T)
    const s = v.decisionScore(X, T)
    assert.equal(refusesRequester(s, s), false)
    assert.equal(refusesRequester(s, s + 1e-12), true)
  })

  it('reads decision scores at whole seconds', () => {
    const v = new RequesterView(SELF)
    v.record(X, false, T)
    assert.equal(v.decisionScore(X, T + SCORE_STEP_MS - 1), v.score(X, T))
    assert.equal(v.decisionScore(X, T + SCORE_STEP_MS), v.score(X, T + SCORE_STEP_MS))
  })

  it('validates minRequesterTrust: 0..1', () => {
    assert.equal(validateMinRequesterTrust(0), 0)
    assert.equal(validateMinRequesterTrust(1), 1)
    for (const bad of [-0.01, 1.01, Number.NaN, Infinity]) assert.throws(() => validateMinRequesterTrust(bad), InvalidRequesterTrustError)
  })

  describe('the job-request rate', () => {
    it('maps the score above the prior onto 0..1: 0 at or below the prior, 1 at 1', () => {
      assert.equal(requesterTrust(0.5), 0)
      assert.equal(requesterTrust(0.2), 0)
      assert.equal(requesterTrust(1), 1)
      close(requesterTrust(0.75), 0.5)
      assert.equal(requesterTrust(Number.NaN), 0)
      assert.deepEqual(requesterRate({ score: 0.5 }), STRANGER_JOB_RATE)
      assert.deepEqual(requesterRate({ score: 0.1 }), STRANGER_JOB_RATE)
      assert.deepEqual(requesterRate({ score: 1 }), TRUSTED_JOB_RATE)
    })

    it('grows with paid jobs: one → trust 1/3 (burst 128), eight → 0.8 (burst 262)', () => {
      const v = new RequesterView(SELF)
      v.record(H, true, T)
      assert.equal(v.rate(H, T).burst, 128)
      for (let i = 1; i < 8; i++) v.record(H, true, T)
      close(requesterTrust(v.score(H, T)), 0.8)
      assert.equal(v.rate(H, T).burst, 262)
      assert.ok(v.rate(H, T).refillMs < STRANGER_JOB_RATE.refillMs)
      // a requester that stopped paying keeps a stranger's rate
      v.record(X, false, T)
      assert.deepEqual(v.rate(X, T), STRANGER_JOB_RATE)
    })
  })
})
