import assert from 'node:assert/strict'
import fc from 'fast-check'
import { jobStates, type JobState } from '../../../../protocol/messages/award.js'
import type { JobRequest } from '../../../../protocol/messages/job-request.js'
import {
  AWARD_ATTEMPT_LIMIT, MAX_FAILED_ATTEMPTS, PROVIDER_TRANSITIONS, REQUESTER_TRANSITIONS,
  chargeFor, finalStatuses, intervalsCharge, intervalsPaidBy, isAllowedTransition, nextProviderDeadline, nextRequesterDeadline, outputFetchAllowanceMs, paidUntil, paymentGraceMs, reduceProvider, reduceRequester,
  requesterCommitBound, requesterInitFromJob, startProviderJob, startRequesterJob, InvalidLifecycleConfigError,
  type AwardEnding, type AwardTerms, type ProviderEffect, type ProviderEvent, type ProviderJob, type ProviderStatus, type ProviderTransition,
  type RequesterEffect, type RequesterEvent, type RequesterJob, type RequesterJobInit, type RequesterStatus, type RequesterTransition
} from '../../../../protocol/market/lifecycle.js'
import { INIT, JOB, LEASE_MS, P1, PRICE, REQ, T0, TERMS, at, only, play, runningProvider as runningProviderThrough, tick } from '../../../helpers/lifecycle-builders.js'

const STRANGER = 'stranger-peer'
const P2 = 'provider-2'
const P3 = 'provider-3'
const PROVIDERS = [P1, P2, P3]

// ---------------------------------------------------------------------------------------------
// Harness: every step goes through here, so the transitions seen can be checked against the tables
// ---------------------------------------------------------------------------------------------

const seenRequester = new Set<string>()
const seenProvider = new Set<string>()

function stepR (s: RequesterJob, e: RequesterEvent): RequesterTransition {
  const t = reduceRequester(s, e)
  assert.ok(isAllowedTransition(REQUESTER_TRANSITIONS, s.status, t.state.status), `requester ${s.status} → ${t.state.status} on ${e?.type}`)
  seenRequester.add(`${s.status}>${t.state.status}`)
  return t
}

function stepP (s: ProviderJob, e: ProviderEvent): ProviderTransition {
  const t = reduceProvider(s, e)
  assert.ok(isAllowedTransition(PROVIDER_TRANSITIONS, s.status, t.state.status), `provider ${s.status} → ${t.state.status} on ${e?.type}`)
  seenProvider.add(`${s.status}>${t.state.status}`)
  return t
}

const playR = (state: RequesterJob, events: RequesterEvent[]): { state: RequesterJob, effects: RequesterEffect[] } => play(state, events, stepR)
const playP = (state: ProviderJob, events: ProviderEvent[]): { state: ProviderJob, effects: ProviderEffect[] } => play(state, events, stepP)

/** Play `[event, effects, status]` rows, checking each step's effects exactly. */
function traceR (start: RequesterTransition, rows: Array<[RequesterEvent, RequesterEffect[], RequesterStatus]>): RequesterJob {
  let state = start.state
  rows.forEach(([event, effects, status], i) => {
    const t = stepR(state, event)
    assert.deepEqual(t.effects, effects, `step ${i} (${event.type} at +${event.now - T0})`)
    assert.equal(t.state.status, status, `step ${i} (${event.type})`)
    state = t.state
  })
  return state
}

function traceP (start: ProviderTransition, rows: Array<[ProviderEvent, ProviderEffect[], ProviderStatus]>): ProviderJob {
  let state = start.state
  rows.forEach(([event, effects, status], i) => {
    const t = stepP(state, event)
    assert.deepEqual(t.effects, effects, `step ${i} (${event.type} at +${event.now - T0})`)
    assert.equal(t.state.status, status, `step ${i} (${event.type})`)
    state = t.state
  })
  return state
}

/** A screened bid; its effective price is its price unless given. */
const bid = (ms: number, b: string, provider: string, price = 1000, effectivePrice = price): RequesterEvent => ({ type: 'bid-received', now: at(ms), bid: b, provider, price, effectivePrice })
const closed = (ms: number, b?: string, provider?: string, price = PRICE): RequesterEvent =>
  b === undefined || provider === undefined ? { type: 'bidding-closed', now: at(ms) } : { type: 'bidding-closed', now: at(ms), winner: { bid: b, provider, price } }
const accepted = (ms: number, provider: string): RequesterEvent => ({ type: 'award-accepted', now: at(ms), provider })
const hb = (ms: number, provider: string, seq: number, state: JobState, gpuSeconds = 0): RequesterEvent =>
  ({ type: 'heartbeat', now: at(ms), provider, seq, state, gpuSeconds })
const receipt = (ms: number, provider: string, gpuSeconds: number, outputsValid = true, exitCode = 0): RequesterEvent =>
  ({ type: 'receipt-received', now: at(ms), provider, exitCode, gpuSeconds, outputsValid })
/** The shell fetched the receipt's outputs and checked them (`missingOutputs`: declared, not written). */
const fetched = (ms: number, missingOutputs?: string[]): RequesterEvent =>
  ({ type: 'outputs-verified', now: at(ms), ...(missingOutputs !== undefined ? { missingOutputs } : {}) })
const payment = (ms: number, cumulative: number, interval: number, from = REQ): ProviderEvent =>
  ({ type: 'payment-received', now: at(ms), from, cumulative, interval })

/** An interval payment (`false`), or a final one with how the award ended. */
const pay = (payee: string, attempt: number, cumulative: number, interval: number, gpuSeconds: number, final: false | AwardEnding): RequesterEffect =>
  final === false ? { type: 'pay', payee, attempt, cumulative, interval, gpuSeconds, final } : { type: 'pay', payee, attempt, cumulative, interval, gpuSeconds, final: true, ending: final }

/** A requester job awarded to P1 (bid b1; b2 from P2 also considered), accepted at +1200, running since +2000. */
function runningRequester (init: RequesterJobInit = INIT): RequesterJob {
  return playR(startRequesterJob(init, at(0)).state, [
    bid(100, 'b1', P1), bid(200, 'b2', P2), tick(1000), closed(1000, 'b1', P1),
    accepted(1200, P1), hb(1300, P1, 1, 'accepted'), hb(2000, P1, 2, 'running')
  ]).state
}

/** Award the open auction of `s` to `provider` (bid `b`) and let it accept; `now` in ms after T0. */
function awardAgain (s: RequesterJob, ms: number, b: string, provider: string): RequesterJob {
  return playR(s, [bid(ms, b, provider), tick(ms + 1000), closed(ms + 1000, b, provider), accepted(ms + 1100, provider)]).state
}

/** A provider job for bid b1, awarded TERMS, accepted at +1100, running since +2000 (every step checked). */
const runningProvider = (): ProviderJob => runningProviderThrough(2, TERMS, stepP)

// ---------------------------------------------------------------------------------------------

/**
 * The scripted tests, kept as they are declared, so the transition-coverage check can replay them all into
 * emptied sets and not depend on which tests mocha ran before it (or on mocha keeping their functions).
 */
const SCRIPTED: Array<{ title: string, fn: () => void }> = []
function scripted (title: string, fn: () => void): void {
  SCRIPTED.push({ title, fn })
  it(title, fn)
}

describe('job lifecycle (DESIGN §5–§6)', () => {
  describe('shared billing arithmetic', () => {
    scripted('charges ⌈price × gpus × ms / 3.6e6⌉ without throwing on bad input', () => {
      assert.equal(chargeFor(PRICE, 2, 60_000), 120_000)
      assert.equal(chargeFor(2_000_000, 2, 60_000), 66_667)
      assert.equal(chargeFor(Number.NaN, 2, 1000), 0)
      assert.equal(chargeFor(-5, 2, 1000), 0)
      assert.equal(chargeFor(Number.MAX_SAFE_INTEGER, 64, Number.MAX_SAFE_INTEGER), Number.MAX_SAFE_INTEGER)
    })

    scripted('counts the whole intervals a cumulative payment pays for', () => {
      fc.assert(fc.property(fc.integer({ min: 0, max: 1e12 }), fc.integer({ min: 1, max: 1e9 }), fc.integer({ min: 1, max: 64 }), fc.integer({ min: 1, max: 86_400 }),
        (cumulative, price, gpus, sec) => {
          const k = intervalsPaidBy(cumulative, price, gpus, sec * 1000)
          assert.ok(intervalsCharge(price, gpus, sec * 1000, k) <= cumulative)
          assert.ok(intervalsCharge(price, gpus, sec * 1000, k + 1) > cumulative)
        }))
      assert.equal(intervalsPaidBy(0, 0, 2, 60_000), Number.POSITIVE_INFINITY)
    })

    scripted('lists the final statuses as those without a way out', () => {
      assert.deepEqual(finalStatuses(REQUESTER_TRANSITIONS).sort(), ['cancelled', 'expired', 'failed', 'settled'])
      assert.deepEqual(finalStatuses(PROVIDER_TRANSITIONS).sort(), ['cancelled', 'declined', 'failed', 'lost', 'preempted', 'settled', 'stopped-unpaid'])
      for (const table of [REQUESTER_TRANSITIONS, PROVIDER_TRANSITIONS] as Array<Readonly<Record<string, readonly string[]>>>) {
        for (const targets of Object.values(table)) for (const t of targets) assert.ok(t in table, `${t} is a status`)
      }
    })
  })

  describe('requester', () => {
    scripted('rejects settings no job can have', () => {
      assert.throws(() => startRequesterJob({ ...INIT, leaseMs: 10 }, at(0)), InvalidLifecycleConfigError)
      assert.throws(() => startRequesterJob({ ...INIT, bidWindowMs: 1.5 }, at(0)), InvalidLifecycleConfigError)
      assert.throws(() => startRequesterJob({ ...INIT, maxFailedAttempts: 0 }, at(0)), InvalidLifecycleConfigError)
    })

    scripted('takes its settings from a job request', () => {
      const job = { expiresAt: at(5000), auction: { bidWindowMs: 700, paymentRule: 'first-price' }, resources: { gpus: 4 }, workload: { maxRuntimeSec: 90 } } as unknown as JobRequest
      const init = requesterInitFromJob(JOB, job, { leaseMs: 5000 })
      assert.deepEqual(init, { job: JOB, bidWindowMs: 700, expiresAt: at(5000), gpus: 4, maxRuntimeSec: 90, leaseMs: 5000 })
    })

    scripted('happy path: bids → award → heartbeats and interval payments → receipt → verified → settled', () => {
      const start = startRequesterJob(INIT, at(0))
      assert.deepEqual(start.effects, [{ type: 'publish-job' }, { type: 'wake', at: at(1000) }])
      const end = traceR(start, [
        [bid(100, 'b2', P2), [], 'bidding'],
        [bid(200, 'b1', P1), [], 'bidding'],
        [tick(1000), [{ type: 'close-auction', round: 1, bids: [{ bid: 'b2', provider: P2, price: 1000, effectivePrice: 1000 }, { bid: 'b1', provider: P1, price: 1000, effectivePrice: 1000 }], exclude: [] }, { type: 'wake', at: at(3_600_000) }], 'bidding'],
        [closed(1000, 'b1', P1), [
          { type: 'send-award', attempt: 1, bid: 'b1', provider: P1, price: PRICE, considered: ['b1', 'b2'], excluded: [], leaseMs: 90_000, billingIntervalSec: 60 },
          { type: 'wake', at: at(91_000) }
        ], 'awarded'],
        [accepted(1200, P1), [], 'running'],
        [hb(1300, P1, 1, 'accepted'), [], 'running'],
        // billing starts with the first `running` status: the first boundary is at +62 s
        [hb(2000, P1, 2, 'running'), [{ type: 'wake', at: at(62_000) }], 'running'],
        [hb(32_000, P1, 3, 'running', 60), [], 'running'],
        [tick(62_000), [pay(P1, 1, 120_000, 1, 120, false), { type: 'wake', at: at(122_000) }], 'running'],
        [hb(62_000, P1, 4, 'running', 120), [], 'running'],
        [tick(91_000), [], 'running'],
        [hb(92_000, P1, 5, 'running', 180), [], 'running'],
        [tick(122_000), [pay(P1, 1, 240_000, 2, 240, false), { type: 'wake', at: at(182_000) }], 'running'],
        [hb(122_000, P1, 6, 'running', 240), [], 'running'],
        [hb(149_000, P1, 7, 'completed', 294), [], 'running'],
        [receipt(150_000, P1, 294), [{ type: 'fetch-outputs', provider: P1 }], 'verifying'],
        [fetched(150_200), [{ type: 'verify', provider: P1 }], 'completed'],
        // the receipt's 294 GPU-seconds fit in the 148 s seen running (× 2 GPUs)
        [{ type: 'verification-done', now: at(150_500), ok: true }, [pay(P1, 1, 294_000, 3, 294, 'settled')], 'verified'],
        [{ type: 'payment-sent', now: at(150_600), cumulative: 294_000 }, [], 'settled']
      ])
      assert.equal(end.reason, 'paid in full')
      assert.equal(stepR(end, tick(182_000)).effects[0]?.type, 'ignored')
    })

    scripted('pays the receipt only up to the time it saw the job run', () => {
      const s = playR(runningRequester(), [hb(10_000, P1, 3, 'running'), receipt(11_000, P1, 10_000), fetched(11_050)]).state
      const t = stepR(s, { type: 'verification-done', now: at(11_100), ok: true })
      // 9 s seen running × 2 GPUs = 18 GPU-seconds, not the 10,000 claimed
      assert.deepEqual(t.effects, [pay(P1, 1, 18_000, 1, 18, 'settled')])
    })

    scripted('lease timeout: no heartbeat for a lease → failure evidence and a re-auction without the provider', () => {
      const s = runningRequester()
      const t = stepR(s, tick(92_000))
      assert.deepEqual(t.effects, [
        pay(P1, 1, 120_000, 1, 120, false),
        { type: 'record-failure', subject: P1, reason: 'no-heartbeat', evidence: ['award', 'last-status'], detail: 'no heartbeat within one lease' },
        { type: 're-auction', attempt: 2, exclude: [P1], reason: 'no-heartbeat' },
        { type: 'wake', at: at(93_000) }
      ])
      assert.equal(t.state.status, 'bidding')
      assert.deepEqual(t.state.excluded, [P1])
      assert.equal(t.state.failures, 1)
      const stray = stepR(t.state, bid(92_500, 'b9', P1))
      assert.equal(stray.state, t.state)
      assert.deepEqual(stray.effects, [{ type: 'ignored', reason: 'provider excluded after a failed attempt' }])
      // the old provider's late heartbeat is ignored too
      assert.equal(stepR(t.state, hb(92_600, P1, 9, 'running')).effects[0]?.type, 'ignored')
    })

    scripted('a late tick pays only the boundaries that came while the lease held', () => {
      // last heartbeat at +2000: lease runs out at +92,000; boundaries at +62,000 (paid) and +122,000 (not)
      const t = stepR(runningRequester(), tick(500_000))
      assert.deepEqual(only(t.effects, 'pay'), [pay(P1, 1, 120_000, 1, 120, false)])
      assert.equal(t.state.status, 'bidding')
    })

    scripted('no answer to the award within a lease is a no-show', () => {
      const s = playR(startRequesterJob(INIT, at(0)).state, [bid(100, 'b1', P1), tick(1000), closed(1000, 'b1', P1)]).state
      const t = stepR(s, tick(91_000))
      assert.deepEqual(t.effects.slice(0, 2), [
        { type: 'record-failure', subject: P1, reason: 'no-show', evidence: ['award'], detail: 'no answer to the award within one lease' },
        { type: 're-auction', attempt: 2, exclude: [P1], reason: 'no-show' }
      ])
    })

    scripted(`attempts exhausted: ${MAX_FAILED_ATTEMPTS} failed awards → failed`, () => {
      let s = startRequesterJob(INIT, at(0)).state
      let opened = 0
      let last: RequesterTransition | undefined
      for (let i = 0; i < MAX_FAILED_ATTEMPTS; i++) {
        const provider = PROVIDERS[i] as string
        s = playR(s, [bid(opened + 100, `b${i}`, provider), tick(opened + 1000), closed(opened + 1000, `b${i}`, provider)]).state
        assert.equal(s.status, 'awarded')
        assert.equal(s.attempt, i + 1)
        opened += 1000 + 90_000
        last = stepR(s, tick(opened))
        s = last.state
      }
      assert.equal(s.status, 'failed')
      assert.equal(s.reason, `${MAX_FAILED_ATTEMPTS} failed attempts`)
      assert.deepEqual(s.excluded, [P1, P2, P3])
      assert.deepEqual(last?.effects, [{ type: 'record-failure', subject: P3, reason: 'no-show', evidence: ['award'], detail: 'no answer to the award within one lease' }])
    })

    scripted('decline → failure evidence and a re-auction excluding the provider', () => {
      const s = playR(startRequesterJob(INIT, at(0)).state, [bid(100, 'b1', P1), bid(150, 'b2', P2), tick(1000), closed(1000, 'b1', P1)]).state
      const t = stepR(s, { type: 'award-declined', now: at(1500), provider: P1, reason: 'calendar changed' })
      assert.deepEqual(t.effects, [
        { type: 'record-failure', subject: P1, reason: 'declined', evidence: ['award', 'award-response'], detail: 'calendar changed' },
        { type: 're-auction', attempt: 2, exclude: [P1], reason: 'declined' },
        { type: 'wake', at: at(2500) }
      ])
      // P2 bids again and wins attempt 2; the award names P1 as excluded
      const again = playR(t.state, [bid(1600, 'b2', P2), tick(2500)]).state
      const award = stepR(again, closed(2500, 'b2', P2))
      assert.deepEqual(award.effects[0], { type: 'send-award', attempt: 2, bid: 'b2', provider: P2, price: PRICE, considered: ['b2'], excluded: [P1], leaseMs: 90_000, billingIntervalSec: 60 })
    })

    scripted('a decline from another provider than the winner is ignored', () => {
      const s = playR(startRequesterJob(INIT, at(0)).state, [bid(100, 'b1', P1), tick(1000), closed(1000, 'b1', P1)]).state
      const t = stepR(s, { type: 'award-declined', now: at(1500), provider: P2 })
      assert.equal(t.state, s)
      assert.deepEqual(t.effects, [{ type: 'ignored', reason: 'not from the provider holding the award' }])
    })

    scripted('tampered outputs → output-mismatch evidence and a re-auction, no final payment', () => {
      const t = stepR(runningRequester(), receipt(30_000, P1, 56, false))
      assert.deepEqual(t.effects, [
        { type: 'record-failure', subject: P1, reason: 'output-mismatch', evidence: ['award', 'receipt'], detail: 'the outputs do not match the receipt' },
        { type: 're-auction', attempt: 2, exclude: [P1], reason: 'output-mismatch' },
        { type: 'wake', at: at(31_000) }
      ])
      assert.equal(t.state.status, 'bidding')
    })

    scripted('a receipt stops the lease: a fetch of the outputs longer than a lease blames nobody and re-auctions nothing', () => {
      const received = stepR(runningRequester(), receipt(30_000, P1, 56))
      assert.deepEqual(received.effects, [{ type: 'fetch-outputs', provider: P1 }])
      assert.equal(received.state.status, 'verifying')
      assert.equal(nextRequesterDeadline(received.state), undefined)
      // three leases (90 s each) later, still fetching: no failure, no re-auction, no payment
      const later = stepR(received.state, tick(30_000 + 3 * 90_000))
      assert.deepEqual(later.effects, [])
      assert.equal(later.state.status, 'verifying')
      // a cancel now is refused: the work is done, the job settles
      assert.equal(stepR(later.state, { type: 'cancel', now: at(300_500) }).effects[0]?.type, 'ignored')
      // a stray heartbeat or a second receipt changes nothing
      assert.equal(stepR(later.state, hb(300_600, P1, 9, 'running')).state, later.state)
      assert.equal(stepR(later.state, receipt(300_600, P1, 56)).state, later.state)
      const done = traceR(later, [
        [fetched(300_700), [{ type: 'verify', provider: P1 }], 'completed'],
        // paid as of the receipt's arrival (28 s seen running × 2 GPUs ≥ 56), not the fetch's end
        [{ type: 'verification-done', now: at(300_800), ok: true }, [pay(P1, 1, 56_000, 1, 56, 'settled')], 'verified'],
        [{ type: 'payment-sent', now: at(300_900), cumulative: 56_000 }, [], 'settled']
      ])
      assert.equal(done.reason, 'paid in full')
      assert.equal(done.failures, 0)
    })

    scripted('outputs that fail to verify after a long fetch still fail the provider (output-mismatch)', () => {
      const fetching = stepR(stepR(runningRequester(), receipt(30_000, P1, 56)).state, tick(200_000)).state
      const t = stepR(fetching, { type: 'outputs-mismatch', now: at(200_000), detail: 'out.bin: hash mismatch' })
      assert.deepEqual(t.effects, [
        { type: 'record-failure', subject: P1, reason: 'output-mismatch', evidence: ['award', 'receipt'], detail: 'out.bin: hash mismatch' },
        { type: 're-auction', attempt: 2, exclude: [P1], reason: 'output-mismatch' },
        { type: 'wake', at: at(201_000) }
      ])
      assert.equal(t.state.status, 'bidding')
      assert.equal(t.state.failures, 1)
      // an empty detail gets the default text
      assert.equal((stepR(fetching, { type: 'outputs-mismatch', now: at(200_000), detail: '' }).effects[0] as { detail: string }).detail, 'the outputs do not match the receipt')
      // the last attempt: failed; after the job's expiry: expired
      const last = stepR(runningRequester({ ...INIT, maxFailedAttempts: 1 }), receipt(30_000, P1, 56)).state
      assert.equal(stepR(last, { type: 'outputs-mismatch', now: at(30_100), detail: 'x' }).state.status, 'failed')
      const expiring = stepR(runningRequester({ ...INIT, expiresAt: at(20_000) }), receipt(30_000, P1, 56)).state
      assert.equal(stepR(expiring, { type: 'outputs-mismatch', now: at(30_100), detail: 'x' }).state.status, 'expired')
    })

    scripted('a failed verification (replicas disagree) is an output mismatch too', () => {
      const s = playR(runningRequester(), [receipt(30_000, P1, 56), fetched(30_050)]).state
      const t = stepR(s, { type: 'verification-done', now: at(30_100), ok: false })
      assert.deepEqual(t.effects.slice(0, 2), [
        { type: 'record-failure', subject: P1, reason: 'output-mismatch', evidence: ['award', 'receipt'], detail: 'verification failed' },
        { type: 're-auction', attempt: 2, exclude: [P1], reason: 'output-mismatch' }
      ])
    })

    scripted('an executor that could not start (exit −1) is a crash', () => {
      const t = stepR(runningRequester(), receipt(30_000, P1, 0, true, -1))
      const failure = t.effects[0]
      assert.ok(failure?.type === 'record-failure')
      assert.equal(failure.reason, 'crashed')
      assert.deepEqual(failure.evidence, ['award', 'receipt'])
    })

    scripted('a provider reporting `failed` or `cancelled` fails the attempt', () => {
      for (const [state, reason] of [['failed', 'crashed'], ['cancelled', 'cancelled']] as const) {
        const t = stepR(runningRequester(), hb(5000, P1, 3, state))
        const failure = t.effects[0]
        assert.ok(failure?.type === 'record-failure')
        assert.equal(failure.reason, reason)
        assert.deepEqual(failure.evidence, ['award', 'last-status'])
        assert.equal(t.state.status, 'bidding')
      }
    })

    scripted('a declared output the job did not write fails the job: the receipt is paid, nobody is blamed, nothing re-runs', () => {
      const received = (exitCode = 0): RequesterJob => stepR(runningRequester(), receipt(30_000, P1, 56, true, exitCode)).state
      const t = stepR(received(), fetched(30_050, ['result.txt']))
      // the same final payment a completed job gets (56 GPU-s seen), and no failure report or re-auction
      assert.deepEqual(t.effects, [pay(P1, 1, 56_000, 1, 56, 'settled')])
      assert.equal(t.state.status, 'failed')
      assert.equal(t.state.reason, 'missing-output: result.txt')
      assert.deepEqual(t.state.excluded, [])
      assert.equal(t.state.failures, 0)
      const failedExit = stepR(received(1), fetched(30_050, ['a.txt', 'b.txt']))
      assert.equal(failedExit.state.reason, 'missing-output: a.txt, b.txt (exit 1)')
      // the payment going out afterwards changes nothing
      const after = stepR(t.state, { type: 'payment-sent', now: at(30_100), cumulative: 56_000 })
      assert.equal(after.state.status, 'failed')
      // an empty list is a plain completion
      assert.equal(stepR(received(), fetched(30_050, [])).state.status, 'completed')
    })

    scripted('right outputs this node could not store fail the job here: the receipt is paid, nobody is blamed, nothing re-runs', () => {
      const received = stepR(runningRequester(), receipt(30_000, P1, 56)).state
      const t = stepR(received, { type: 'outputs-unsaved', now: at(30_050), detail: 'cannot store the outputs in /d/outputs: ENOSPC' })
      assert.deepEqual(t.effects, [pay(P1, 1, 56_000, 1, 56, 'settled')])
      assert.equal(t.state.status, 'failed')
      assert.equal(t.state.reason, 'outputs-unsaved: cannot store the outputs in /d/outputs: ENOSPC')
      assert.deepEqual(t.state.excluded, [])
      assert.equal(t.state.failures, 0)
      assert.equal(t.state.award?.committed, 56_000)
      assert.equal(stepR(received, { type: 'outputs-unsaved', now: at(30_050), detail: '' }).state.reason, 'outputs-unsaved: unknown error')
      // the payment going out afterwards changes nothing; before the receipt there are no outputs to store
      assert.equal(stepR(t.state, { type: 'payment-sent', now: at(30_100), cumulative: 56_000 }).state.status, 'failed')
      const early = stepR(runningRequester(), { type: 'outputs-unsaved', now: at(20_000), detail: 'x' })
      assert.equal(early.state.status, 'running')
      assert.equal(early.effects[0]?.type, 'ignored')
    })

    scripted('an exec stream the provider broke ends the attempt at once, blaming it (not at the lease)', () => {
      for (const s of [runningRequester(), playR(startRequesterJob(INIT, at(0)).state, [bid(100, 'b1', P1), tick(1000), closed(1000, 'b1', P1)]).state]) {
        const t = stepR(s, { type: 'stream-failed', now: at(5_000), provider: P1, fault: 'remote', detail: 'bad exec frame' })
        assert.deepEqual(t.effects.slice(0, 2), [
          { type: 'record-failure', subject: P1, reason: 'no-heartbeat', evidence: s.status === 'running' ? ['award', 'last-status'] : ['award'], detail: 'exec stream: bad exec frame' },
          { type: 're-auction', attempt: 2, exclude: [P1], reason: 'no-heartbeat' }
        ])
        assert.equal(t.state.status, 'bidding')
      }
    })

    scripted('an exec stream this node could not keep up ends the job with the reason, pays the time run, blames nobody', () => {
      const t = stepR(runningRequester(), { type: 'stream-failed', now: at(30_000), provider: P1, fault: 'local', detail: 'read buffer overflow' })
      assert.deepEqual(t.effects, [
        { type: 'cancel', provider: P1, reason: 'the requester\'s exec stream failed: read buffer overflow' },
        pay(P1, 1, 56_000, 1, 56, 'cancelled')
      ])
      assert.equal(t.state.status, 'failed')
      assert.equal(t.state.reason, 'exec stream (this node): read buffer overflow')
      assert.deepEqual(t.state.excluded, [])
    })

    scripted('a stream failure from another provider, or once the receipt is in, is ignored', () => {
      const running = runningRequester()
      const other = stepR(running, { type: 'stream-failed', now: at(5_000), provider: P2, fault: 'remote', detail: 'x' })
      assert.equal(other.state, running)
      const completed = playR(running, [receipt(30_000, P1, 56)]).state
      const late = stepR(completed, { type: 'stream-failed', now: at(30_100), provider: P1, fault: 'remote', detail: 'closed' })
      assert.equal(late.state, completed)
    })

    scripted('cancel mid-run tells the provider and pays for the work done so far', () => {
      const s = playR(runningRequester(), [hb(30_000, P1, 3, 'running'), tick(62_000), hb(62_000, P1, 4, 'running')]).state
      const t = stepR(s, { type: 'cancel', now: at(92_500) })
      // 90.5 s run → 91 s × 2 GPUs
      assert.deepEqual(t.effects, [
        { type: 'cancel', provider: P1, reason: 'cancelled by the requester' },
        pay(P1, 1, 182_000, 2, 182, 'cancelled')
      ])
      assert.equal(t.state.status, 'cancelled')
      assert.ok(182_000 <= requesterCommitBound(PRICE, 2, 60_000, 90_500))
    })

    scripted('cancel exactly on a billing boundary already paid: the final payment repeats the amount, closing the award as cancelled', () => {
      const s = playR(runningRequester(), [hb(30_000, P1, 3, 'running'), tick(62_000)]).state
      assert.equal(s.award?.committed, 120_000)
      const t = stepR(s, { type: 'cancel', now: at(62_000) })
      assert.deepEqual(t.effects, [{ type: 'cancel', provider: P1, reason: 'cancelled by the requester' }, pay(P1, 1, 120_000, 1, 120, 'cancelled')])
    })

    scripted('cancel before the run started owes nothing; cancel in bidding just ends the job', () => {
      const awarded = playR(startRequesterJob(INIT, at(0)).state, [bid(100, 'b1', P1), tick(1000), closed(1000, 'b1', P1)]).state
      assert.deepEqual(stepR(awarded, { type: 'cancel', now: at(1200) }).effects, [{ type: 'cancel', provider: P1, reason: 'cancelled by the requester' }])
      const bidding = stepR(startRequesterJob(INIT, at(0)).state, { type: 'cancel', now: at(10) })
      assert.deepEqual(bidding.effects, [])
      assert.equal(bidding.state.status, 'cancelled')
    })

    scripted('cancel after completion is ignored: the job is settled instead', () => {
      const s = playR(runningRequester(), [receipt(30_000, P1, 56)]).state
      const t = stepR(s, { type: 'cancel', now: at(30_100) })
      assert.equal(t.state, s)
      assert.deepEqual(t.effects, [{ type: 'ignored', reason: 'the job has completed: settle it instead' }])
    })

    scripted('preemption → pays the time run, re-auctions at once, blames nobody', () => {
      const s = runningRequester()
      const t = stepR(s, { type: 'preempted-notice', now: at(30_000), provider: P1, noticeMs: 10_000 })
      assert.deepEqual(t.effects, [
        pay(P1, 1, 56_000, 1, 56, 'preempted'),
        { type: 're-auction', attempt: 2, exclude: [], reason: 'preempted' },
        { type: 'wake', at: at(31_000) }
      ])
      assert.equal(t.state.failures, 0)
      assert.deepEqual(t.state.excluded, [])
      // a `preempted` status does the same
      const viaStatus = stepR(s, hb(30_000, P1, 3, 'preempted'))
      assert.deepEqual(viaStatus.effects, t.effects)
    })

    scripted('preemptions do not use up the failure budget, but the award attempt limit still ends the job', () => {
      let s = runningRequester()
      let ms = 10_000
      while (s.status === 'running') {
        s = stepR(s, { type: 'preempted-notice', now: at(ms), provider: P1, noticeMs: 0 }).state
        if (s.status === 'bidding') s = awardAgain(s, ms + 10, `b${ms}`, P1)
        ms += 10_000
      }
      assert.equal(s.status, 'failed')
      assert.equal(s.failures, 0)
      assert.equal(s.attempt, AWARD_ATTEMPT_LIMIT)
      assert.equal(s.reason, `award attempt limit (${AWARD_ATTEMPT_LIMIT}) reached`)
    })

    scripted('no bids at close: explain, re-open once, then expire', () => {
      const start = startRequesterJob(INIT, at(0))
      traceR(start, [
        [tick(1000), [
          { type: 'explain', round: 1, bids: 0 },
          { type: 're-auction', attempt: 1, exclude: [], reason: 'no-bids' },
          { type: 'wake', at: at(2000) }
        ], 'bidding'],
        [tick(2000), [{ type: 'explain', round: 2, bids: 0 }], 'expired']
      ])
    })

    scripted('bids but no acceptable one: the award logic says so, and the job is explained the same way', () => {
      const s = playR(startRequesterJob(INIT, at(0)).state, [bid(100, 'b1', P1), tick(1000)]).state
      const t = stepR(s, closed(1000))
      assert.deepEqual(t.effects.slice(0, 2), [{ type: 'explain', round: 1, bids: 1 }, { type: 're-auction', attempt: 1, exclude: [], reason: 'no-bids' }])
    })

    scripted('with re-opening off, an empty round expires the job at once', () => {
      const t = stepR(startRequesterJob({ ...INIT, reopenOnNoBids: false }, at(0)).state, tick(1000))
      assert.deepEqual(t.effects, [{ type: 'explain', round: 1, bids: 0 }])
      assert.equal(t.state.status, 'expired')
    })

    scripted('expiry: a job without an award expires at job.expiresAt', () => {
      const start = startRequesterJob({ ...INIT, expiresAt: at(500) }, at(0))
      assert.deepEqual(start.effects, [{ type: 'publish-job' }, { type: 'wake', at: at(500) }])
      const t = stepR(start.state, bid(600, 'b1', P1))
      assert.equal(t.state.status, 'expired')
      assert.equal(t.state.reason, 'job expired before an award')
      assert.deepEqual(t.effects, [{ type: 'ignored', reason: 'job is expired' }])
    })

    scripted('a failure after the job expired ends it as expired instead of re-auctioning', () => {
      const t = stepR(runningRequester({ ...INIT, expiresAt: at(50_000) }), receipt(60_000, P1, 56, false))
      assert.equal(t.state.status, 'expired')
      assert.deepEqual(only(t.effects, 're-auction'), [])
      assert.equal(only(t.effects, 'record-failure').length, 1)
    })

    scripted('a failure while awarded or completed ends the job when it is out of time or attempts', () => {
      const awarded = playR(startRequesterJob({ ...INIT, expiresAt: at(5000) }, at(0)).state, [bid(100, 'b1', P1), tick(1000), closed(1000, 'b1', P1)]).state
      assert.equal(stepR(awarded, { type: 'award-declined', now: at(6000), provider: P1 }).state.status, 'expired')
      const completed = playR(runningRequester({ ...INIT, expiresAt: at(5000) }), [receipt(6000, P1, 8), fetched(6050)]).state
      assert.equal(stepR(completed, { type: 'verification-done', now: at(6100), ok: false }).state.status, 'expired')
      const lastChance = playR(runningRequester({ ...INIT, maxFailedAttempts: 1 }), [receipt(6000, P1, 8), fetched(6050)]).state
      const t = stepR(lastChance, { type: 'verification-done', now: at(6100), ok: false })
      assert.equal(t.state.status, 'failed')
      assert.deepEqual(t.effects.map((e) => e.type), ['record-failure'])
    })

    scripted('a job that runs past its max runtime (plus a lease) is stopped and re-auctioned', () => {
      let s = runningRequester({ ...INIT, maxRuntimeSec: 120 })
      const effects: RequesterEffect[] = []
      for (let ms = 30_000; s.status === 'running'; ms += 30_000) {
        const t = stepR(s, hb(ms, P1, 3 + ms / 30_000, 'running'))
        s = t.state
        effects.push(...t.effects)
      }
      // pays at most the max runtime: two intervals of 60 s
      assert.deepEqual(only(effects, 'pay').map((p) => (p as { cumulative: number }).cumulative), [120_000, 240_000])
      assert.deepEqual(only(effects, 'cancel'), [{ type: 'cancel', provider: P1, reason: 'max runtime exceeded' }])
      assert.equal((only(effects, 'record-failure')[0] as { reason: string }).reason, 'timeout')
      assert.equal(s.status, 'bidding')
    })

    scripted('ignores stray events, never changing the state', () => {
      const bidding = startRequesterJob(INIT, at(0)).state
      const closing = playR(bidding, [bid(100, 'b1', P1), tick(1000)]).state
      const awarded = stepR(closing, closed(1000, 'b1', P1)).state
      const running = runningRequester()
      const settled = traceR({ state: running, effects: [] }, [
        [receipt(3000, P1, 2), [{ type: 'fetch-outputs', provider: P1 }], 'verifying'],
        [fetched(3000), [{ type: 'verify', provider: P1 }], 'completed'],
        [{ type: 'verification-done', now: at(3000), ok: true }, [pay(P1, 1, 2000, 1, 2, 'settled')], 'verified'],
        [{ type: 'payment-sent', now: at(3000), cumulative: 2000 }, [], 'settled']
      ])
      const strays: Array<[RequesterJob, RequesterEvent]> = [
        [bidding, accepted(10, P1)],
        [bidding, hb(10, P1, 1, 'running')],
        [bidding, receipt(10, P1, 5)],
        [bidding, { type: 'verification-done', now: at(10), ok: true }],
        [bidding, { type: 'payment-sent', now: at(10), cumulative: 5 }],
        [bidding, closed(10, 'b-unknown', P1)],
        [bidding, closed(10)],
        [closing, closed(1000, 'b-unknown', P1)],
        [closing, closed(1000, 'b1', P2)],
        [closing, closed(1000, 'b1', P1, 1.5)],
        [closing, { type: 'bidding-closed', now: at(1000), round: 2, winner: { bid: 'b1', provider: P1, price: PRICE } }],
        [closing, bid(1000, 'b3', P3)],
        [bidding, bid(10, '', P1)],
        [bidding, { type: 'preempted-notice', now: at(10), provider: P1, noticeMs: 0 }],
        [awarded, bid(1100, 'b7', P2)],
        [awarded, accepted(1100, P2)],
        [awarded, closed(1100, 'b1', P1)],
        [awarded, hb(1100, P1, 1, 'running')],
        [running, hb(2100, P1, 2, 'running')],
        [running, hb(2100, P2, 9, 'running')],
        [running, receipt(2100, P2, 5)],
        [running, accepted(2100, P1)],
        [running, { type: 'award-declined', now: at(2100), provider: P1 }],
        [running, { type: 'verification-done', now: at(2100), ok: true }],
        [running, fetched(2100)],
        [running, { type: 'outputs-mismatch', now: at(2100), detail: 'x' }],
        [bidding, fetched(10)],
        [running, { type: 'payment-sent', now: at(2100), cumulative: 1 }],
        [running, { type: 'preempted-notice', now: at(2100), provider: P3, noticeMs: 0 }],
        [running, { type: 'bogus', now: at(2100) } as unknown as RequesterEvent],
        [running, { type: 'tick', now: Number.NaN }],
        [settled, { type: 'cancel', now: at(4000) }],
        [settled, receipt(4000, P1, 5)]
      ]
      for (const [state, event] of strays) {
        const t = stepR(state, event)
        assert.equal(t.state, state, `${state.status}: ${event.type}`)
        assert.equal(t.effects.length, 1)
        assert.equal(t.effects[0]?.type, 'ignored', `${state.status}: ${event.type}`)
      }
    })
  })

  describe('provider', () => {
    scripted('happy path: offered → awarded → accepted → running (heartbeats, payments) → completed → settled', () => {
      const start = startProviderJob({ job: JOB, requester: REQ, bid: 'b1', gpus: 2, offerExpiresAt: at(60_000) }, at(0))
      assert.deepEqual(start.effects, [{ type: 'wake', at: at(60_000) }])
      const end = traceP(start, [
        [{ type: 'award-received', now: at(1000), from: REQ, award: TERMS }, [{ type: 'review-award', award: TERMS }], 'awarded'],
        [{ type: 'accept-award', now: at(1100) }, [
          { type: 'respond-award', decision: 'accept' },
          { type: 'heartbeat', seq: 1, state: 'accepted', gpuSeconds: 0 },
          { type: 'fetch-inputs' },
          { type: 'heartbeat', seq: 2, state: 'fetching-inputs', gpuSeconds: 0 },
          { type: 'wake', at: at(31_100) }
        ], 'accepted'],
        [{ type: 'inputs-fetched', now: at(1500) }, [{ type: 'start-job' }], 'accepted'],
        [{ type: 'started', now: at(2000) }, [{ type: 'heartbeat', seq: 3, state: 'running', gpuSeconds: 0 }], 'running'],
        [tick(31_100), [{ type: 'wake', at: at(32_000) }], 'running'],
        [tick(32_000), [{ type: 'heartbeat', seq: 4, state: 'running', gpuSeconds: 60 }, { type: 'wake', at: at(62_000) }], 'running'],
        // interval 1 ends at +62 s; its payment is due within the 6 s grace, so the provider wakes at +68 s
        [tick(62_000), [{ type: 'heartbeat', seq: 5, state: 'running', gpuSeconds: 120 }, { type: 'wake', at: at(68_000) }], 'running'],
        [payment(62_050, 120_000, 1), [], 'running'],
        // paid in time: the next unpaid deadline is +128 s, after the next heartbeat
        [tick(68_000), [{ type: 'wake', at: at(92_000) }], 'running'],
        [tick(92_000), [{ type: 'heartbeat', seq: 6, state: 'running', gpuSeconds: 180 }, { type: 'wake', at: at(122_000) }], 'running'],
        [tick(122_000), [{ type: 'heartbeat', seq: 7, state: 'running', gpuSeconds: 240 }, { type: 'wake', at: at(128_000) }], 'running'],
        [payment(122_050, 240_000, 2), [], 'running'],
        [tick(128_000), [{ type: 'wake', at: at(152_000) }], 'running'],
        [{ type: 'finished', now: at(149_000), exitCode: 0, gpuSeconds: 294 }, [
          { type: 'heartbeat', seq: 8, state: 'completed', gpuSeconds: 294 },
          { type: 'send-receipt', exitCode: 0, gpuSeconds: 294, startedAt: at(2000), endedAt: at(149_000) }
        ], 'completed'],
        [payment(150_700, 294_000, 3), [], 'settled']
      ])
      assert.equal(end.reason, 'paid in full')
    })

    scripted('a bid that wins no award is lost when it expires', () => {
      const start = startProviderJob({ job: JOB, requester: REQ, bid: 'b1', gpus: 1, offerExpiresAt: at(5000) }, at(0))
      const t = stepP(start.state, tick(5000))
      assert.equal(t.state.status, 'lost')
      assert.deepEqual(t.effects, [])
    })

    scripted('declines an award the node no longer wants', () => {
      const s = playP(startProviderJob({ job: JOB, requester: REQ, bid: 'b1', gpus: 1, offerExpiresAt: at(5000) }, at(0)).state,
        [{ type: 'award-received', now: at(1000), from: REQ, award: TERMS }]).state
      const t = stepP(s, { type: 'decline-award', now: at(1100), reason: 'calendar changed' })
      assert.deepEqual(t.effects, [{ type: 'respond-award', decision: 'decline', reason: 'calendar changed' }])
      assert.equal(t.state.status, 'declined')
    })

    scripted('an award left undecided for a lease is declined', () => {
      const s = playP(startProviderJob({ job: JOB, requester: REQ, bid: 'b1', gpus: 1, offerExpiresAt: at(5000) }, at(0)).state,
        [{ type: 'award-received', now: at(1000), from: REQ, award: TERMS }]).state
      const t = stepP(s, tick(91_000))
      assert.deepEqual(t.effects, [{ type: 'respond-award', decision: 'decline', reason: 'no decision in time' }])
      assert.equal(t.state.status, 'declined')
    })

    scripted('requester stops paying → the provider stops when the grace for the missed payment runs out', () => {
      assert.equal(paymentGraceMs(60_000), 6000)
      assert.equal(paymentGraceMs(5000), 2000)
      // interval 1 paid; the payment for interval 2 is due at +122 s, within a 6 s grace; the provider stops at +128 s
      const s = playP(runningProvider(), [payment(62_050, 120_000, 1)]).state
      assert.equal(paidUntil(s), at(128_000))
      const before = stepP(s, tick(127_999))
      assert.equal(before.state.status, 'running')
      const t = stepP(before.state, tick(128_000))
      assert.deepEqual(t.effects, [
        { type: 'stop-work', reason: 'nonpayment' },
        { type: 'record-failure', subject: REQ, reason: 'nonpayment', evidence: ['award', 'last-payment'], detail: 'interval payment not received within the grace after the interval ended' }
      ])
      assert.equal(t.state.status, 'stopped-unpaid')
      assert.equal(t.state.reason, 'interval payment overdue past the grace')
      // unpaid work at the stop: interval 2 and the grace
      assert.equal(t.state.now - (s.startedAt as number) - s.paid.intervals * 60_000, 60_000 + paymentGraceMs(60_000))
    })

    scripted('a requester that never pays is stopped when the grace after the first interval runs out', () => {
      assert.equal(paidUntil(runningProvider()), at(68_000))
      assert.equal(stepP(runningProvider(), tick(67_999)).state.status, 'running')
      const t = stepP(runningProvider(), tick(68_000))
      assert.equal(t.state.status, 'stopped-unpaid')
      assert.deepEqual(only(t.effects, 'record-failure'), [{ type: 'record-failure', subject: REQ, reason: 'nonpayment', evidence: ['award'], detail: 'interval payment not received within the grace after the interval ended' }])
    })

    scripted('a payment counts only for the intervals its amount pays, whatever it claims', () => {
      const s = playP(runningProvider(), [payment(62_050, 119_999, 5)]).state
      assert.equal(s.paid.intervals, 0)
      assert.equal(stepP(s, tick(68_000)).state.status, 'stopped-unpaid')
      const lower = stepP(playP(runningProvider(), [payment(62_050, 120_000, 1)]).state, payment(62_060, 100, 1))
      assert.deepEqual(lower.effects, [{ type: 'ignored', reason: 'payment below an earlier one' }])
    })

    scripted('the final payment is due within one interval plus the output fetch allowance (a lease) of the receipt', () => {
      const s = playP(runningProvider(), [payment(62_050, 120_000, 1), { type: 'finished', now: at(100_000), exitCode: 0, gpuSeconds: 196 }]).state
      assert.equal(s.status, 'completed')
      // no outputs: 60 s interval + 90 s lease after the receipt
      assert.equal(nextProviderDeadline(s)?.at, at(250_000))
      assert.equal(stepP(s, tick(249_999)).state.status, 'completed')
      const t = stepP(s, tick(250_000))
      assert.equal(t.state.status, 'stopped-unpaid')
      assert.deepEqual(t.effects, [{ type: 'record-failure', subject: REQ, reason: 'nonpayment', evidence: ['award', 'receipt', 'last-payment'], detail: 'final payment overdue by one billing interval and the output fetch allowance' }])
      assert.equal(stepP(s, payment(150_000, 195_999, 2)).state.status, 'completed')
      assert.equal(stepP(s, payment(150_000, 196_000, 2)).state.status, 'settled')
    })

    scripted('a cancel after the receipt ends the wait: stopped-unpaid with the non-payment, or settled when already paid', () => {
      const s = playP(runningProvider(), [payment(62_050, 120_000, 1), { type: 'finished', now: at(100_000), exitCode: 0, gpuSeconds: 196 }]).state
      const cancel: ProviderEvent = { type: 'cancel', now: at(101_000), from: REQ }
      const t = stepP(s, cancel)
      assert.equal(t.state.status, 'stopped-unpaid')
      assert.deepEqual(t.effects, [{ type: 'record-failure', subject: REQ, reason: 'nonpayment', evidence: ['award', 'receipt', 'last-payment'], detail: 'the requester cancelled after the receipt without paying for it' }])
      assert.equal(nextProviderDeadline(t.state), undefined)
      // the final payment may still follow the cancel, and counts
      assert.equal(stepP(t.state, payment(102_000, 196_000, 2)).state.paid.cumulative, 196_000)
      // exactly paid: settled, no evidence
      const paid = stepP(s, payment(100_500, 196_000, 2)).state
      assert.equal(paid.status, 'settled')
      const covered = playP(runningProvider(), [payment(62_050, 196_000, 1), { type: 'finished', now: at(100_000), exitCode: 0, gpuSeconds: 196 }]).state
      assert.deepEqual(stepP(covered, cancel), { state: { ...covered, now: at(101_000), status: 'settled', reason: 'paid in full' }, effects: [] })
      const short = playP(runningProvider(), [payment(62_050, 195_999, 1), { type: 'finished', now: at(100_000), exitCode: 0, gpuSeconds: 196 }]).state
      assert.equal(stepP(short, cancel).state.status, 'stopped-unpaid')
      // from anyone else: ignored
      assert.equal(stepP(s, { ...cancel, from: 'someone' }).effects[0]?.type, 'ignored')
    })

    scripted('the output fetch allowance grows with the output size (1 MiB/s): no non-payment while the requester may still be fetching', () => {
      const MiB = 1024 * 1024
      assert.equal(outputFetchAllowanceMs(90_000, 0), 90_000)
      assert.equal(outputFetchAllowanceMs(90_000, 1), 90_001)
      assert.equal(outputFetchAllowanceMs(90_000, MiB), 91_000)
      assert.equal(outputFetchAllowanceMs(90_000, MiB + 1), 91_001)
      assert.equal(outputFetchAllowanceMs(90_000, -5), 90_000)
      const s = playP(runningProvider(), [payment(62_050, 120_000, 1), { type: 'finished', now: at(100_000), exitCode: 0, gpuSeconds: 196, outputBytes: 300 * MiB }]).state
      // 60 s interval + 90 s lease + 300 s for 300 MiB
      const due = 100_000 + 60_000 + 90_000 + 300_000
      assert.equal(nextProviderDeadline(s)?.at, at(due))
      const waiting = stepP(s, tick(due - 1))
      assert.equal(waiting.state.status, 'completed')
      assert.deepEqual(only(waiting.effects, 'record-failure'), [])
      assert.equal(stepP(waiting.state, payment(due - 1, 196_000, 2)).state.status, 'settled')
      const late = stepP(waiting.state, tick(due))
      assert.equal(late.state.status, 'stopped-unpaid')
      assert.equal((only(late.effects, 'record-failure')[0] as { reason: string }).reason, 'nonpayment')
      const malformed = stepP(runningProvider(), { type: 'finished', now: at(2100), exitCode: 0, gpuSeconds: 196, outputBytes: -1 })
      assert.deepEqual(malformed.effects, [{ type: 'ignored', reason: 'malformed output size' }])
    })

    scripted('preemption: notify the requester at once, stop when the notice runs out', () => {
      const s = runningProvider()
      const t = stepP(s, { type: 'preempt', now: at(10_000), noticeMs: 5000 })
      assert.deepEqual(t.effects, [{ type: 'notify-preemption', noticeMs: 5000 }, { type: 'wake', at: at(15_000) }])
      assert.equal(t.state.status, 'running')
      assert.deepEqual(stepP(t.state, { type: 'preempt', now: at(11_000), noticeMs: 0 }).effects, [{ type: 'ignored', reason: 'already being preempted' }])
      const stop = stepP(t.state, tick(15_000))
      assert.deepEqual(stop.effects, [{ type: 'stop-work', reason: 'preempted' }, { type: 'heartbeat', seq: 4, state: 'preempted', gpuSeconds: 26 }])
      assert.equal(stop.state.status, 'preempted')
    })

    scripted('preemption before the job started stops at once', () => {
      const s = playP(startProviderJob({ job: JOB, requester: REQ, bid: 'b1', gpus: 2, offerExpiresAt: at(60_000) }, at(0)).state, [
        { type: 'award-received', now: at(1000), from: REQ, award: TERMS }, { type: 'accept-award', now: at(1100) }
      ]).state
      const t = stepP(s, { type: 'preempt', now: at(1200), noticeMs: 30_000 })
      assert.deepEqual(t.effects, [{ type: 'notify-preemption', noticeMs: 0 }, { type: 'stop-work', reason: 'preempted' }, { type: 'heartbeat', seq: 3, state: 'preempted', gpuSeconds: 0 }])
      assert.equal(t.state.status, 'preempted')
    })

    scripted('cancel from the requester stops the work; from anyone else it is ignored', () => {
      const s = runningProvider()
      assert.deepEqual(stepP(s, { type: 'cancel', now: at(5000), from: STRANGER }).effects, [{ type: 'ignored', reason: 'cancel not from the requester' }])
      const t = stepP(s, { type: 'cancel', now: at(5000), from: REQ })
      assert.deepEqual(t.effects, [{ type: 'stop-work', reason: 'cancelled' }, { type: 'heartbeat', seq: 4, state: 'cancelled', gpuSeconds: 6 }])
      assert.equal(t.state.status, 'cancelled')
    })

    scripted('the requester\'s payment for the time run, arriving after a cancel or preemption, is recorded; the status stays', () => {
      // the requester cancels 48 s into the run, then pays 48 s × 2 GPUs: the provider's ledger must hold the same amount
      const cancelled = stepP(runningProvider(), { type: 'cancel', now: at(50_000), from: REQ }).state
      const late = stepP(cancelled, { type: 'payment-received', now: at(50_100), from: REQ, cumulative: 96_000, interval: 1 })
      assert.deepEqual(late.effects, [])
      assert.equal(late.state.status, 'cancelled')
      assert.deepEqual(late.state.paid, { cumulative: 96_000, intervals: 0, at: at(50_100) })
      // the same amount again is taken (a repeat); less, a stranger's or a malformed one is not
      assert.equal(stepP(late.state, { type: 'payment-received', now: at(50_200), from: REQ, cumulative: 96_000, interval: 1 }).state.paid.cumulative, 96_000)
      for (const [e, reason] of [
        [{ type: 'payment-received', now: at(50_200), from: REQ, cumulative: 95_999, interval: 1 }, 'payment below an earlier one'],
        [{ type: 'payment-received', now: at(50_200), from: STRANGER, cumulative: 500_000, interval: 5 }, 'payment not from the requester'],
        [{ type: 'payment-received', now: at(50_200), from: REQ, cumulative: 0.5, interval: 1 }, 'malformed payment']
      ] as const) {
        const t = stepP(late.state, e)
        assert.equal(t.state, late.state)
        assert.deepEqual(t.effects, [{ type: 'ignored', reason }])
      }
      // preempted: the same
      const s = runningProvider()
      const preempted = playP(s, [{ type: 'preempt', now: at(30_000), noticeMs: 0 }]).state
      assert.equal(preempted.status, 'preempted')
      assert.equal(stepP(preempted, { type: 'payment-received', now: at(30_100), from: REQ, cumulative: 56_000, interval: 1 }).state.paid.cumulative, 56_000)
      // ended before the work began: nothing to pay, the payment is ignored
      const early = playP(startProviderJob({ job: JOB, requester: REQ, bid: 'b1', gpus: 2, offerExpiresAt: at(60_000) }, at(0)).state, [
        { type: 'award-received', now: at(1000), from: REQ, award: TERMS }, { type: 'cancel', now: at(1050), from: REQ }
      ]).state
      assert.deepEqual(stepP(early, { type: 'payment-received', now: at(1100), from: REQ, cumulative: 1000, interval: 1 }).effects, [{ type: 'ignored', reason: 'job is cancelled' }])
    })

    scripted('an executor that cannot start → failed, with a receipt saying so', () => {
      const s = playP(startProviderJob({ job: JOB, requester: REQ, bid: 'b1', gpus: 2, offerExpiresAt: at(60_000) }, at(0)).state, [
        { type: 'award-received', now: at(1000), from: REQ, award: TERMS }, { type: 'accept-award', now: at(1100) }
      ]).state
      const t = stepP(s, { type: 'finished', now: at(1500), exitCode: -1, gpuSeconds: 0 })
      assert.deepEqual(t.effects, [
        { type: 'heartbeat', seq: 3, state: 'failed', gpuSeconds: 0 },
        { type: 'send-receipt', exitCode: -1, gpuSeconds: 0, startedAt: at(1500), endedAt: at(1500) }
      ])
      assert.equal(t.state.status, 'failed')
    })

    scripted('cancel or requester gone before the run; a crash during it', () => {
      const offered = startProviderJob({ job: JOB, requester: REQ, bid: 'b1', gpus: 2, offerExpiresAt: at(60_000) }, at(0)).state
      const awarded = stepP(offered, { type: 'award-received', now: at(1000), from: REQ, award: TERMS }).state
      const cancelled = stepP(awarded, { type: 'cancel', now: at(1050), from: REQ })
      assert.deepEqual([cancelled.state.status, cancelled.effects], ['cancelled', []])
      const accepted = stepP(awarded, { type: 'accept-award', now: at(1100) }).state
      const gone = stepP(accepted, { type: 'requester-gone', now: at(1200) })
      assert.deepEqual([gone.state.status, gone.effects], ['cancelled', [{ type: 'stop-work', reason: 'requester-gone' }]])
      const crashed = stepP(runningProvider(), { type: 'finished', now: at(3000), exitCode: -1, gpuSeconds: 0 })
      assert.equal(crashed.state.status, 'failed')
      assert.deepEqual(crashed.effects.map((e) => e.type), ['heartbeat', 'send-receipt'])
    })

    scripted('requester gone: the work goes on one lease for it to resume, then stops and the unpaid work is recorded', () => {
      const gone = stepP(runningProvider(), { type: 'requester-gone', now: at(30_000) })
      assert.equal(gone.state.status, 'running')
      const t = stepP(gone.state, tick(30_000 + LEASE_MS))
      assert.equal(t.state.status, 'stopped-unpaid')
      assert.deepEqual(t.effects.filter((e) => e.type !== 'heartbeat').map((e) => e.type), ['stop-work', 'record-failure'])
      const offered = startProviderJob({ job: JOB, requester: REQ, bid: 'b1', gpus: 2, offerExpiresAt: at(60_000) }, at(0)).state
      assert.equal(stepP(offered, { type: 'requester-gone', now: at(10) }).state.status, 'cancelled')
    })

    scripted('ignores stray events, never changing the state', () => {
      const offered = startProviderJob({ job: JOB, requester: REQ, bid: 'b1', gpus: 2, offerExpiresAt: at(60_000) }, at(0)).state
      const running = runningProvider()
      const strays: Array<[ProviderJob, ProviderEvent]> = [
        [offered, { type: 'award-received', now: at(10), from: STRANGER, award: TERMS }],
        [offered, { type: 'award-received', now: at(10), from: REQ, award: { ...TERMS, bid: 'b-other' } }],
        [offered, { type: 'award-received', now: at(10), from: REQ, award: { ...TERMS, leaseMs: 1 } }],
        [offered, { type: 'award-received', now: at(10), from: REQ, award: undefined as unknown as AwardTerms }],
        [offered, { type: 'accept-award', now: at(10) }],
        [offered, { type: 'started', now: at(10) }],
        [offered, { type: 'finished', now: at(10), exitCode: 0, gpuSeconds: 1 }],
        [offered, payment(10, 5, 1)],
        [offered, { type: 'preempt', now: at(10), noticeMs: 0 }],
        [running, { type: 'award-received', now: at(2100), from: REQ, award: TERMS }],
        [running, { type: 'inputs-fetched', now: at(2100) }],
        [running, { type: 'started', now: at(2100) }],
        [running, payment(2100, 5, 1, STRANGER)],
        [running, payment(2100, -5, 1)],
        [running, { type: 'finished', now: at(2100), exitCode: 999, gpuSeconds: 1 }],
        [running, { type: 'preempt', now: at(2100), noticeMs: -1 }],
        [running, { type: 'nope', now: at(2100) } as unknown as ProviderEvent],
        [running, null as unknown as ProviderEvent]
      ]
      for (const [state, event] of strays) {
        const t = stepP(state, event)
        assert.equal(t.state, state, `${state.status}: ${event?.type}`)
        assert.equal(t.effects.length, 1)
        assert.equal(t.effects[0]?.type, 'ignored', `${state.status}: ${event?.type}`)
      }
    })
  })

  describe('both machines wired together', () => {
    scripted('settle an honest job for the same amount, the provider never stopping', () => {
      const out = wire({ runMs: 200_000 })
      assert.equal(out.requester.status, 'settled')
      assert.equal(out.provider.status, 'settled')
      assert.equal(out.provider.paid.cumulative, out.paidByRequester)
      assert.deepEqual(out.failures, [])
    })

    scripted('an output fetch longer than a lease (within the allowance) settles on the first provider, nobody blamed', () => {
      // 90 s lease; 200 MiB of outputs: the provider waits 60 s + 90 s + 200 s for the final payment
      const out = wire({ runMs: 100_000, fetchMs: 3 * 90_000, outputBytes: 200 * 1024 * 1024 })
      assert.equal(out.requester.status, 'settled')
      assert.equal(out.requester.attempt, 1)
      assert.equal(out.provider.status, 'settled')
      assert.equal(out.provider.paid.cumulative, out.paidByRequester)
      assert.deepEqual(out.failures, [])
    })

    scripted('a requester still fetching past the allowance is reported for non-payment', () => {
      // no outputs: the allowance is one lease (90 s) after the 60 s interval; a 300 s fetch is past it
      const out = wire({ runMs: 100_000, fetchMs: 300_000 })
      assert.equal(out.provider.status, 'stopped-unpaid')
      assert.deepEqual(out.failures, [{ subject: REQ, reason: 'nonpayment' }])
    })

    scripted('a requester that goes silent is stopped by the provider when the grace for the missed payment runs out', () => {
      const out = wire({ runMs: 1_000_000, requesterSilentAfter: 130_000 })
      assert.equal(out.provider.status, 'stopped-unpaid')
      const stoppedAt = out.provider.now
      const start = out.provider.startedAt as number
      // the last payment covered 2 intervals (sent at start + ~120 s); interval 3's was due at start + 180 s,
      // within the 6 s grace
      assert.equal(out.provider.paid.intervals, 2)
      assert.equal(stoppedAt, start + 3 * 60_000 + paymentGraceMs(60_000))
      assert.deepEqual(out.failures.map((f) => [f.subject, f.reason])[0], [REQ, 'nonpayment'])
    })
  })

  describe('properties', () => {
    it('random requester event sequences never throw, follow the table, and never over-commit', () => {
      fc.assert(fc.property(requesterEvents, (events) => { checkRequesterRun((_, i) => events[i]) }), { numRuns: 200 })
    })

    it('guided requester runs (events mostly fitting the state) keep the same properties and reach every status', () => {
      const reached = new Set<string>()
      let pays = 0
      fc.assert(fc.property(choices, (cs) => {
        const run = guidedRequesterRun(cs, PROP_INIT)
        for (const status of run.statuses) reached.add(status)
        pays += run.pays
      }), { numRuns: 1000 })
      assert.ok(pays > 0, 'some runs paid')
      assert.deepEqual(Object.keys(REQUESTER_TRANSITIONS).filter((st) => !reached.has(st)), [])
    })

    it('guided requester runs over generated settings (0 GPUs, max runtimes and leases that are not whole intervals, any expiry) keep the properties', () => {
      let pays = 0
      let zeroGpuPays = 0
      fc.assert(fc.property(requesterSettings, choices, (init, cs) => {
        const run = guidedRequesterRun(cs, init)
        pays += run.pays
        if (init.gpus === 0) zeroGpuPays += run.pays
      }), { numRuns: 400 })
      assert.ok(pays > 0 && zeroGpuPays > 0, `${pays} payments, ${zeroGpuPays} for 0-GPU jobs`)
    })

    it('random provider event sequences never throw, follow the table, and never run more than one interval plus the grace unpaid', () => {
      fc.assert(fc.property(providerEvents, (events) => { checkProviderRun((_, i) => events[i]) }), { numRuns: 200 })
    })

    it('guided provider runs keep the same properties and reach every status', () => {
      const reached = new Set<string>()
      let paidRunning = 0
      fc.assert(fc.property(choices, (cs) => {
        const run = guidedProviderRun(cs, 2)
        for (const status of run.statuses) reached.add(status)
        paidRunning += run.paidRunning
      }), { numRuns: 400 })
      assert.ok(paidRunning > 0, 'some runs were paid while running')
      assert.deepEqual(Object.keys(PROVIDER_TRANSITIONS).filter((st) => !reached.has(st)), [])
    })

    it('guided provider runs for 0 to 4 GPUs keep the same properties (a 0-GPU job is billed as one unit)', () => {
      let paidRunning = 0
      fc.assert(fc.property(fc.integer({ min: 0, max: 4 }), choices, (gpus, cs) => {
        paidRunning += guidedProviderRun(cs, gpus).paidRunning
      }), { numRuns: 300 })
      assert.ok(paidRunning > 0, 'some runs were paid while running')
    })

    it('the scripted tests exercise every transition in both tables', () => {
      // replayed here, so the check holds alone, under --grep, or in any order
      assert.ok(SCRIPTED.length >= 40, `found ${SCRIPTED.length} scripted tests`)
      seenRequester.clear()
      seenProvider.clear()
      for (const { title, fn } of SCRIPTED) {
        const result: unknown = fn()
        assert.ok(!(result instanceof Promise), `${title}: scripted tests are synchronous`)
      }
      const edges = (table: Readonly<Record<string, readonly string[]>>) => Object.entries(table).flatMap(([from, tos]) => tos.map((to) => `${from}>${to}`))
      assert.deepEqual(edges(REQUESTER_TRANSITIONS).filter((e) => !seenRequester.has(e)), [])
      assert.deepEqual(edges(PROVIDER_TRANSITIONS).filter((e) => !seenProvider.has(e)), [])
    })
  })
})

// ---------------------------------------------------------------------------------------------
// Property generators
// ---------------------------------------------------------------------------------------------

const PROP_INIT: RequesterJobInit = { job: JOB, bidWindowMs: 3000, expiresAt: at(300_000), gpus: 2, maxRuntimeSec: 60, leaseMs: 8000, billingIntervalSec: 3 }

/**
 * Requester settings beyond PROP_INIT: 0 GPUs (billed as one), max runtimes and leases that are not whole
 * billing intervals, bid windows and expiries that may coincide with other deadlines.
 */
const requesterSettings: fc.Arbitrary<RequesterJobInit> = fc.record({
  gpus: fc.oneof(fc.constant(0), fc.integer({ min: 1, max: 4 })),
  billingIntervalSec: fc.constantFrom(1, 2, 3, 5, 7),
  maxRuntimeSec: fc.integer({ min: 1, max: 40 }),
  leaseMs: fc.oneof({ weight: 1, arbitrary: fc.constant(1000) }, { weight: 4, arbitrary: fc.constantFrom(3000, 7000, 8000) }),
  bidWindowMs: fc.constantFrom(50, 1000, 3000),
  expiresInMs: fc.oneof({ weight: 1, arbitrary: fc.constantFrom(1000, 3000, 60_000) }, { weight: 1, arbitrary: fc.integer({ min: 1, max: 300_000 }) }, { weight: 3, arbitrary: fc.constant(300_000) })
}).map(({ expiresInMs, ...c }) => ({ job: JOB, expiresAt: at(expiresInMs), ...c }))

const REQUESTER_EFFECTS = new Set(['publish-job', 're-auction', 'close-auction', 'explain', 'send-award', 'fetch-outputs', 'verify', 'cancel', 'pay', 'record-failure', 'wake', 'ignored'])
const PROVIDER_EFFECTS = new Set(['review-award', 'respond-award', 'fetch-inputs', 'start-job', 'heartbeat', 'send-receipt', 'notify-preemption', 'stop-work', 'record-failure', 'wake', 'ignored'])

const isFinalR = (s: RequesterStatus): boolean => REQUESTER_TRANSITIONS[s].length === 0
const isFinalP = (s: ProviderStatus): boolean => PROVIDER_TRANSITIONS[s].length === 0

const providerArb = fc.constantFrom(P1, P2, P3)
const bidIndex = fc.integer({ min: 0, max: 3 })
const bidOf = (i: number): { bid: string, provider: string, price: number, effectivePrice: number } => ({ bid: `b${i}`, provider: PROVIDERS[i % 3] as string, price: 1000 + i, effectivePrice: 1000 + i })

/** Events without times; times are laid down afterwards (mostly forward, sometimes backwards). */
type Timeless<E> = E extends unknown ? Omit<E, 'now'> : never

const requesterEvent: fc.Arbitrary<Timeless<RequesterEvent>> = fc.oneof(
  { weight: 4, arbitrary: bidIndex.map((i) => ({ type: 'bid-received' as const, ...bidOf(i) })) },
  { weight: 2, arbitrary: fc.option(fc.tuple(bidIndex, fc.integer({ min: 0, max: 10_000_000 })), { nil: undefined }).map((w) =>
    w === undefined ? { type: 'bidding-closed' as const } : { type: 'bidding-closed' as const, winner: { ...bidOf(w[0]), price: w[1] } }) },
  { weight: 3, arbitrary: providerArb.map((provider) => ({ type: 'award-accepted' as const, provider })) },
  { weight: 1, arbitrary: providerArb.map((provider) => ({ type: 'award-declined' as const, provider })) },
  { weight: 8, arbitrary: fc.record({ provider: providerArb, seq: fc.integer({ min: 0, max: 1000 }), state: fc.constantFrom(...jobStates, 'running', 'running', 'running'), gpuSeconds: fc.nat(1000) })
    .map((h) => ({ type: 'heartbeat' as const, ...h })) },
  { weight: 8, arbitrary: fc.constant({ type: 'tick' as const }) },
  { weight: 2, arbitrary: fc.record({ provider: providerArb, exitCode: fc.constantFrom(-1, 0, 1), gpuSeconds: fc.nat(100_000), outputsValid: fc.boolean() })
    .map((r) => ({ type: 'receipt-received' as const, ...r })) },
  { weight: 2, arbitrary: fc.option(fc.array(fc.string(), { maxLength: 3 }), { nil: undefined }).map((m) => ({ type: 'outputs-verified' as const, ...(m !== undefined ? { missingOutputs: m } : {}) })) },
  { weight: 1, arbitrary: fc.string({ maxLength: 600 }).map((detail) => ({ type: 'outputs-mismatch' as const, detail })) },
  { weight: 1, arbitrary: fc.string({ maxLength: 600 }).map((detail) => ({ type: 'outputs-unsaved' as const, detail })) },
  { weight: 2, arbitrary: fc.boolean().map((ok) => ({ type: 'verification-done' as const, ok })) },
  { weight: 2, arbitrary: fc.nat(1_000_000).map((cumulative) => ({ type: 'payment-sent' as const, cumulative })) },
  { weight: 1, arbitrary: fc.constant({ type: 'cancel' as const }) },
  { weight: 1, arbitrary: fc.record({ provider: providerArb, noticeMs: fc.nat(10_000) }).map((p) => ({ type: 'preempted-notice' as const, ...p })) },
  { weight: 1, arbitrary: fc.record({ provider: providerArb, fault: fc.constantFrom('local' as const, 'remote' as const), detail: fc.string({ maxLength: 600 }) })
    .map((f) => ({ type: 'stream-failed' as const, ...f })) }
)

const gap = fc.oneof({ weight: 10, arbitrary: fc.integer({ min: 0, max: 4000 }) }, { weight: 1, arbitrary: fc.integer({ min: -2000, max: 20_000 }) })

function timed<E> (events: fc.Arbitrary<E>): fc.Arbitrary<Array<E & { now: number }>> {
  return fc.array(fc.tuple(events, gap), { maxLength: 120 }).map((steps) => {
    let t = at(0)
    return steps.map(([e, dt]) => {
      t += dt
      return { ...e, now: t }
    })
  })
}

const requesterEvents = timed(requesterEvent) as fc.Arbitrary<RequesterEvent[]>

const termsArb: fc.Arbitrary<AwardTerms> = fc.record({
  award: fc.constant('bafyreiaward'),
  bid: fc.constantFrom('b1', 'b1', 'b2'),
  attempt: fc.integer({ min: 0, max: 17 }),
  price: fc.constantFrom(0, 1, PRICE, 7_777_777),
  leaseMs: fc.constantFrom(500, 3000, 9000),
  billingIntervalSec: fc.constantFrom(1, 3, 5)
})

const providerEvent: fc.Arbitrary<Timeless<ProviderEvent>> = fc.oneof(
  { weight: 3, arbitrary: fc.tuple(fc.constantFrom(REQ, REQ, STRANGER), termsArb).map(([from, award]) => ({ type: 'award-received' as const, from, award })) },
  { weight: 3, arbitrary: fc.constant({ type: 'accept-award' as const }) },
  { weight: 1, arbitrary: fc.constant({ type: 'decline-award' as const }) },
  { weight: 3, arbitrary: fc.constant({ type: 'inputs-fetched' as const }) },
  { weight: 3, arbitrary: fc.constant({ type: 'started' as const }) },
  { weight: 10, arbitrary: fc.constant({ type: 'tick' as const }) },
  { weight: 1, arbitrary: fc.record({ exitCode: fc.constantFrom(-1, 0, 3, 256), gpuSeconds: fc.nat(1000) }).map((f) => ({ type: 'finished' as const, ...f })) },
  { weight: 8, arbitrary: fc.record({ from: fc.constantFrom(REQ, REQ, REQ, STRANGER), cumulative: fc.nat(200_000), interval: fc.nat(40) })
    .map((p) => ({ type: 'payment-received' as const, ...p })) },
  { weight: 1, arbitrary: fc.constantFrom(REQ, STRANGER).map((from) => ({ type: 'cancel' as const, from })) },
  { weight: 1, arbitrary: fc.integer({ min: -1, max: 10_000 }).map((noticeMs) => ({ type: 'preempt' as const, noticeMs })) },
  { weight: 1, arbitrary: fc.constant({ type: 'requester-gone' as const }) }
)

const providerEvents = timed(providerEvent) as fc.Arbitrary<ProviderEvent[]>

// ---------------------------------------------------------------------------------------------
// Property checks: one run of events (chosen up front, or built from the state as it goes)
// ---------------------------------------------------------------------------------------------

/** Steps a requester job through `next(state, i)` until it returns undefined; checks every property on the way. */
function checkRequesterRun (next: (s: RequesterJob, i: number) => RequesterEvent | undefined, init: RequesterJobInit = PROP_INIT): { statuses: Set<string>, pays: number } {
  let state = startRequesterJob(init, at(0)).state
  assert.equal(state.config.gpus, Math.max(1, init.gpus), 'a job is billed for at least one GPU')
  const highest = new Map<number, number>()
  const statuses = new Set<string>([state.status])
  let pays = 0
  for (let i = 0; ; i++) {
    const event = next(state, i)
    if (event === undefined) break
    const t = stepR(state, event)
    for (const e of t.effects) {
      assert.ok(REQUESTER_EFFECTS.has(e.type), e.type)
      if (e.type !== 'pay') continue
      pays++
      // the award paid existed before the event, with its run started (or, for a receipt the job
      // failed on, started by that receipt: the provider ran it)
      const award = state.award
      const started = award?.runStartedAt
      assert.ok(award !== undefined && award.attempt === e.attempt && started !== undefined, 'pays only a running award')
      const bound = requesterCommitBound(award.price, t.state.config.gpus, t.state.config.billingIntervalMs, t.state.now - started)
      assert.ok(e.cumulative <= bound, `pay ${e.cumulative} > bound ${bound}`)
      const cap = chargeFor(award.price, t.state.config.gpus, t.state.config.maxRuntimeMs)
      assert.ok(e.cumulative <= cap, `pay ${e.cumulative} beyond the max runtime's ${cap}`)
      assert.ok(e.cumulative >= (highest.get(e.attempt) ?? 0), 'cumulative never goes down')
      highest.set(e.attempt, e.cumulative)
    }
    if (isFinalR(state.status)) assert.equal(t.state, state, 'a final state never changes')
    assert.ok(t.state.now >= state.now, 'time never runs backwards')
    state = t.state
    statuses.add(state.status)
  }
  return { statuses, pays }
}

/** Steps a provider job through `next(state, i)`; checks every property on the way. */
function checkProviderRun (next: (s: ProviderJob, i: number) => ProviderEvent | undefined, gpus = 2): { statuses: Set<string>, paidRunning: number } {
  let state = startProviderJob({ job: JOB, requester: REQ, bid: 'b1', gpus, offerExpiresAt: at(30_000) }, at(0)).state
  assert.equal(state.gpus, Math.max(1, gpus), 'a job is billed for at least one GPU')
  const statuses = new Set<string>([state.status])
  let bestCumulative = 0
  let bestInterval = 0
  let paidRunning = 0
  for (let i = 0; ; i++) {
    const event = next(state, i)
    if (event === undefined) break
    const t = stepP(state, event)
    for (const e of t.effects) assert.ok(PROVIDER_EFFECTS.has(e.type), e.type)
    if (event?.type === 'payment-received' && !t.effects.some((e) => e.type === 'ignored')) {
      bestCumulative = Math.max(bestCumulative, event.cumulative)
      bestInterval = Math.max(bestInterval, event.interval)
    }
    const s = t.state
    if (s.status === 'running' && s.startedAt !== undefined && s.award !== undefined) {
      // every interval whose end plus the grace has passed must be paid (interval k is due at
      // startedAt + k × interval, within the grace), so unpaid work stays under one interval plus the grace
      const intervalMs = s.award.billingIntervalSec * 1000
      const graceMs = paymentGraceMs(intervalMs)
      const mustBePaid = Math.floor((s.now - s.startedAt - graceMs) / intervalMs)
      if (mustBePaid > 0) {
        paidRunning++
        assert.ok(bestInterval >= mustBePaid, `running at +${s.now - s.startedAt} ms with ${bestInterval} intervals claimed`)
        assert.ok(bestCumulative >= intervalsCharge(s.award.price, s.gpus, intervalMs, mustBePaid), 'running with more than one interval plus the grace unpaid')
      }
      assert.ok(s.now - s.startedAt - s.paid.intervals * intervalMs < intervalMs + graceMs, 'unpaid work under one interval plus the grace')
    }
    if (isFinalP(state.status)) {
      // a final state never changes, but for a late payment from the requester after work began
      if (event.type === 'payment-received' && t.state !== state) {
        assert.deepEqual({ ...t.state, paid: state.paid, now: state.now }, state, 'a late payment changes only what was paid')
        assert.ok(state.startedAt !== undefined && event.from === REQ && t.state.paid.cumulative >= state.paid.cumulative && t.effects.length === 0)
      } else {
        assert.equal(t.state, state, 'a final state never changes')
      }
    }
    state = s
    statuses.add(state.status)
  }
  return { statuses, paidRunning }
}

/** A guided step: which event, whether it fits the state, how much time passes, and two free numbers. */
interface Choice { kind: number, fits: boolean, gap: number, a: number, b: number }

const choices = fc.array(fc.record({
  kind: fc.nat(999),
  fits: fc.nat(9).map((n) => n < 8),
  gap: fc.oneof({ weight: 10, arbitrary: fc.integer({ min: 0, max: 1500 }) }, { weight: 1, arbitrary: fc.integer({ min: -1000, max: 12_000 }) }),
  a: fc.nat(1_000_000),
  b: fc.nat(1_000_000)
}), { minLength: 10, maxLength: 200, size: 'max' })

/** A guided requester run of `init` driven by `cs`. */
function guidedRequesterRun (cs: Choice[], init: RequesterJobInit): { statuses: Set<string>, pays: number } {
  let t = at(0)
  return checkRequesterRun((s, i) => {
    const c = cs[i]
    if (c === undefined) return undefined
    t += c.gap
    return guidedRequesterEvent(s, c, i, t, (next) => { t = next })
  }, init)
}

/** A guided provider run for a bid of `gpus` GPUs driven by `cs`. */
function guidedProviderRun (cs: Choice[], gpus: number): { statuses: Set<string>, paidRunning: number } {
  let t = at(0)
  return checkProviderRun((s, i) => {
    const c = cs[i]
    if (c === undefined) return undefined
    t += c.gap
    return guidedProviderEvent(s, c, t, (next) => { t = next })
  }, gpus)
}

/** Pick an event type by weight with `kind` (0–999). */
function pick<T extends string> (weights: ReadonlyArray<readonly [T, number]>, kind: number): T {
  const total = weights.reduce((sum, [, w]) => sum + w, 0)
  let k = kind % total
  for (const [type, w] of weights) {
    if (k < w) return type
    k -= w
  }
  return (weights[0] as readonly [T, number])[0]
}

const REQUESTER_MIX = [
  ['bid-received', 48], ['bidding-closed', 32], ['award-accepted', 40], ['award-declined', 3], ['heartbeat', 100], ['tick', 80],
  ['receipt-received', 32], ['outputs-verified', 32], ['outputs-mismatch', 3], ['outputs-unsaved', 2], ['verification-done', 32], ['payment-sent', 32], ['cancel', 2], ['preempted-notice', 3], ['stream-failed', 2]
] as const
const STATUS_MIX: JobState[] = [...jobStates, ...Array<JobState>(24).fill('running')]

/** An event for `s`: fitting it (the right provider, the next seq, a bid received, the amount due) when `c.fits`. */
function guidedRequesterEvent (s: RequesterJob, c: Choice, i: number, now: number, setNow: (t: number) => void): RequesterEvent {
  const a = s.award
  const provider = c.fits && a !== undefined ? a.provider : PROVIDERS[c.a % 3] as string
  switch (pick(REQUESTER_MIX, c.kind)) {
    case 'bid-received':
      return c.fits ? { type: 'bid-received', now, bid: `b-${i}`, provider: PROVIDERS[c.a % 3] as string, price: c.b, effectivePrice: c.b } : { type: 'bid-received', now, ...bidOf(c.a % 4) }
    case 'bidding-closed': {
      const bids = s.auction.bids
      const winner = c.fits ? bids[c.a % Math.max(1, bids.length)] : bidOf(c.a % 4)
      const round = c.fits ? s.auction.round : c.b % 3
      return winner === undefined || c.b % 10 === 0 ? { type: 'bidding-closed', now, round } : { type: 'bidding-closed', now, round, winner: { ...winner, price: c.b * 10 } }
    }
    case 'award-accepted': return { type: 'award-accepted', now, provider }
    case 'award-declined': return { type: 'award-declined', now, provider }
    case 'heartbeat': {
      const seq = c.fits ? (a?.lastSeq ?? 0) + 1 : c.b % 50
      return { type: 'heartbeat', now, provider, seq, state: STATUS_MIX[c.a % STATUS_MIX.length] as JobState, gpuSeconds: c.b % 1000 }
    }
    case 'tick': {
      const due = nextRequesterDeadline(s)
      // now and then, jump straight to the next deadline (rarely to one that ends the attempt)
      const fatal = due?.kind === 'expiry' || due?.kind === 'no-show' || due?.kind === 'lease' || due?.kind === 'timeout'
      const jump = c.fits && c.a % 3 === 0 && due !== undefined && due.at > now && (!fatal || c.b % 10 === 0)
      if (jump) setNow(due.at)
      return { type: 'tick', now: jump ? due.at : now }
    }
    case 'receipt-received':
      return { type: 'receipt-received', now, provider, exitCode: c.a % 10 === 0 ? -1 : 0, gpuSeconds: c.b % 100_000, outputsValid: c.a % 5 !== 0 }
    case 'outputs-verified': return { type: 'outputs-verified', now, ...(c.b % 9 === 0 ? { missingOutputs: ['out.txt'] } : {}) }
    case 'outputs-mismatch': return { type: 'outputs-mismatch', now, detail: 'bad output' }
    case 'outputs-unsaved': return { type: 'outputs-unsaved', now, detail: 'disk full' }
    case 'verification-done': return { type: 'verification-done', now, ok: c.a % 5 !== 0 }
    case 'payment-sent': return { type: 'payment-sent', now, cumulative: c.fits ? a?.due?.cumulative ?? a?.committed ?? 0 : c.b }
    case 'cancel': return { type: 'cancel', now }
    case 'preempted-notice': return { type: 'preempted-notice', now, provider, noticeMs: c.b % 10_000 }
    case 'stream-failed': return { type: 'stream-failed', now, provider, fault: c.b % 2 === 0 ? 'local' : 'remote', detail: 'stream' }
  }
}

const PROVIDER_MIX = [
  ['award-received', 20], ['accept-award', 20], ['decline-award', 2], ['inputs-fetched', 20], ['started', 20], ['tick', 100],
  ['finished', 8], ['payment-received', 100], ['cancel', 1], ['preempt', 2], ['requester-gone', 1]
] as const

/** An event for `s`: fitting it (the requester, our bid, honest or slightly short payments) when `c.fits`. */
function guidedProviderEvent (s: ProviderJob, c: Choice, now: number, setNow: (t: number) => void): ProviderEvent {
  const from = c.fits ? REQ : STRANGER
  switch (pick(PROVIDER_MIX, c.kind)) {
    case 'award-received': {
      const award: AwardTerms = {
        award: 'bafyreiaward',
        bid: c.fits ? 'b1' : 'b2',
        attempt: 1 + c.a % 16,
        price: [0, 1, PRICE, 7_777_777, 1_000_003][c.b % 5] as number,
        leaseMs: c.fits ? [3000, 9000][c.a % 2] as number : 1,
        billingIntervalSec: [2, 5, 10][c.b % 3] as number
      }
      return { type: 'award-received', now, from, award }
    }
    case 'accept-award': return { type: 'accept-award', now }
    case 'decline-award': return { type: 'decline-award', now }
    case 'inputs-fetched': return { type: 'inputs-fetched', now }
    case 'started': return { type: 'started', now }
    case 'tick': {
      const due = nextProviderDeadline(s)
      // now and then, jump straight to the next deadline (rarely to the bid's expiry)
      const jump = c.fits && c.a % 3 === 0 && due !== undefined && due.at > now && (due.kind !== 'offer' || c.b % 10 === 0)
      if (jump) setNow(due.at)
      return { type: 'tick', now: jump ? due.at : now }
    }
    case 'finished': {
      const ran = s.startedAt === undefined ? 0 : Math.max(0, Math.ceil((now - s.startedAt) / 1000))
      return { type: 'finished', now, exitCode: [0, 0, 0, 1, -1][c.a % 5] as number, gpuSeconds: c.fits ? s.gpus * ran : c.b % 1000 }
    }
    case 'payment-received': {
      const terms = s.award
      if (!c.fits || terms === undefined || s.startedAt === undefined) return { type: 'payment-received', now, from, cumulative: c.b % 200_000, interval: c.a % 40 }
      const intervalMs = terms.billingIntervalSec * 1000
      const k = Math.max(0, Math.floor((now - s.startedAt) / intervalMs) - c.a % 2)
      const owed = s.status === 'completed' && s.finished !== undefined ? Math.max(s.paid.cumulative, s.finished.owed) : intervalsCharge(terms.price, s.gpus, intervalMs, k)
      return { type: 'payment-received', now, from, cumulative: Math.max(0, owed - (c.b % 7 === 0 ? 1 : 0)), interval: k }
    }
    case 'cancel': return { type: 'cancel', now, from }
    case 'preempt': return { type: 'preempt', now, noticeMs: c.b % 5000 }
    case 'requester-gone': return { type: 'requester-gone', now }
  }
}

// ---------------------------------------------------------------------------------------------
// Two machines over a wire with latency: effects of one become the other's events
// ---------------------------------------------------------------------------------------------

interface WireOptions {
  runMs: number
  latencyMs?: number
  /** The requester's payments stop leaving after this many ms. */
  requesterSilentAfter?: number
  /** How long the requester's output fetch takes (default 100 ms). */
  fetchMs?: number
  /** The outputs' total size, as the provider reports it with `finished`. */
  outputBytes?: number
}

interface WireResult {
  requester: RequesterJob
  provider: ProviderJob
  paidByRequester: number
  failures: Array<{ subject: string, reason: string }>
}

function wire (options: WireOptions): WireResult {
  const latency = options.latencyMs ?? 40
  type Queued = { at: number, seq: number } & ({ to: 'r', event: RequesterEvent } | { to: 'p', event: ProviderEvent })
  const queue: Queued[] = []
  let seq = 0
  const toR = (t: number, event: Timeless<RequesterEvent>): void => { queue.push({ at: t, seq: seq++, to: 'r', event: { ...event, now: t } as RequesterEvent }) }
  const toP = (t: number, event: Timeless<ProviderEvent>): void => { queue.push({ at: t, seq: seq++, to: 'p', event: { ...event, now: t } as ProviderEvent }) }
  const init: RequesterJobInit = { ...INIT, expiresAt: at(3_600_000), maxRuntimeSec: 3600 }
  const r0 = startRequesterJob(init, at(0))
  let requester = r0.state
  let provider = startProviderJob({ job: JOB, requester: REQ, bid: 'b1', gpus: 2, offerExpiresAt: at(60_000) }, at(latency)).state
  let paidByRequester = 0
  const failures: Array<{ subject: string, reason: string }> = []

  const onRequester = (t: number, effects: RequesterEffect[]): void => {
    for (const e of effects) {
      switch (e.type) {
        case 'publish-job': toR(t + 2 * latency, { type: 'bid-received', bid: 'b1', provider: P1, price: PRICE, effectivePrice: PRICE }); break
        case 'close-auction': toR(t, { type: 'bidding-closed', winner: { bid: 'b1', provider: P1, price: PRICE } }); break
        case 'send-award':
          toP(t + latency, {
            type: 'award-received',
            from: REQ,
            award: { award: 'bafyreiaward', bid: e.bid, attempt: e.attempt, price: e.price, leaseMs: e.leaseMs, billingIntervalSec: e.billingIntervalSec }
          })
          break
        case 'wake': toR(e.at, { type: 'tick' }); break
        case 'fetch-outputs': toR(t + (options.fetchMs ?? 100), { type: 'outputs-verified' }); break
        case 'verify': toR(t + 100, { type: 'verification-done', ok: true }); break
        case 'pay':
          if (options.requesterSilentAfter !== undefined && t - at(0) > options.requesterSilentAfter) break
          paidByRequester = e.cumulative
          toR(t, { type: 'payment-sent', cumulative: e.cumulative })
          toP(t + latency, { type: 'payment-received', from: REQ, cumulative: e.cumulative, interval: e.interval })
          break
        case 'cancel': toP(t + latency, { type: 'cancel', from: REQ }); break
        case 'record-failure': failures.push({ subject: e.subject, reason: e.reason }); break
        default: break
      }
    }
  }
  const onProvider = (t: number, effects: ProviderEffect[]): void => {
    for (const e of effects) {
      switch (e.type) {
        case 'review-award': toP(t, { type: 'accept-award' }); break
        case 'respond-award': if (e.decision === 'accept') toR(t + latency, { type: 'award-accepted', provider: P1 }); break
        case 'fetch-inputs': toP(t + 500, { type: 'inputs-fetched' }); break
        case 'start-job':
          toP(t, { type: 'started' })
          toP(t + options.runMs, { type: 'finished', exitCode: 0, gpuSeconds: 2 * Math.ceil(options.runMs / 1000), outputBytes: options.outputBytes ?? 0 })
          break
        case 'heartbeat': toR(t + latency, { type: 'heartbeat', provider: P1, seq: e.seq, state: e.state, gpuSeconds: e.gpuSeconds }); break
        case 'send-receipt': toR(t + latency + 200, { type: 'receipt-received', provider: P1, exitCode: e.exitCode, gpuSeconds: e.gpuSeconds, outputsValid: true }); break
        case 'notify-preemption': toR(t + latency, { type: 'preempted-notice', provider: P1, noticeMs: e.noticeMs }); break
        case 'wake': toP(e.at, { type: 'tick' }); break
        case 'record-failure': failures.push({ subject: e.subject, reason: e.reason }); break
        default: break
      }
    }
  }

  onRequester(at(0), r0.effects)
  for (let i = 0; i < 10_000 && queue.length > 0; i++) {
    queue.sort((a, b) => a.at - b.at || a.seq - b.seq)
    const next = queue.shift() as Queued
    if (next.to === 'r') {
      if (isFinalR(requester.status) && next.event.type === 'tick') continue
      const t = stepR(requester, next.event)
      requester = t.state
      onRequester(next.at, t.effects)
    } else {
      if (isFinalP(provider.status) && next.event.type === 'tick') continue
      const t = stepP(provider, next.event)
      provider = t.state
      onProvider(next.at, t.effects)
    }
    if (isFinalR(requester.status) && isFinalP(provider.status)) break
  }
  return { requester, provider, paidByRequester, failures }
}
