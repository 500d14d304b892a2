/**
 * Tests for the job lifecycles' surviving mutants of the Stryker run of issue 9 (round 10): each one
 * pins an amount, an ending, a deadline or which effect is emitted that no earlier test pinned. The
 * comment above each names the mutant (file:line) it was seen to kill.
 */
import assert from 'node:assert/strict'
import {
  PROVIDER_TRANSITIONS, REQUESTER_TRANSITIONS, ceilSeconds, intervalsCharge, isAllowedTransition, nextProviderDeadline, outputFetchAllowanceMs, reduceProvider, reduceRequester, requesterCommitBound, startProviderJob, startRequesterJob,
  type ProviderEffect, type ProviderEvent, type RequesterEvent, type RequesterJob, type RequesterJobInit
} from '../../../../protocol/market/lifecycle.js'
import { MAX_AWARD_ATTEMPTS, MAX_BILLING_INTERVAL_SEC, MAX_LEASE_MS, MIN_BILLING_INTERVAL_SEC, MIN_LEASE_MS } from '../../../../protocol/limits.js'
import { INIT, LEASE_MS, TERMS, P1, PRICE, REQ, T0, at, only, playP, playR, hb, payment, runningProvider, runningRequester, tick } from '../../../helpers/lifecycle-builders.js'

const failures = (effects: ProviderEffect[]): unknown[] => effects.flatMap((e) => e.type === 'record-failure' ? [[e.subject, e.reason, e.evidence]] : [])


describe('job lifecycle survivors (issue 9, round-10 Stryker run)', () => {
  describe('the requester', () => {
    // requester-lifecycle.ts:638 (c.maxRuntimeMs / 1000 → * 1000): the cap on a cancel's final payment
    it('a cancel after the max runtime pays for the max runtime, not for the time past it', () => {
      const s = playR(runningRequester({ maxRuntimeSec: 60 }), [hb(30_000, 2), hb(60_000, 3), hb(80_000, 4)]).state
      assert.equal(s.status, 'running')
      const t = reduceRequester(s, { type: 'cancel', now: at(82_000) })
      assert.equal(t.state.status, 'cancelled')
      const pays = only(t.effects, 'pay')
      // 2 GPUs × 60 s at 1000 micros per GPU-second, although it ran 80 s
      assert.deepEqual(pays, [{ type: 'pay', payee: P1, attempt: 1, cumulative: 120_000, interval: 1, gpuSeconds: 120, final: true, ending: 'cancelled' }])
    })

    // requester-lifecycle.ts:727 (elapsed / interval → elapsed * interval): the requester's commit bound
    it('the commit bound is the whole intervals elapsed plus one, at and around a boundary', () => {
      const interval = 60_000
      const perInterval = 120_000 // 2 GPUs × 60 s × 1000 micros
      assert.equal(requesterCommitBound(PRICE, 2, interval, 0), perInterval)
      assert.equal(requesterCommitBound(PRICE, 2, interval, interval - 1), perInterval)
      assert.equal(requesterCommitBound(PRICE, 2, interval, interval), 2 * perInterval)
      assert.equal(requesterCommitBound(PRICE, 2, interval, 3 * interval + 1), 4 * perInterval)
    })

    // requester-lifecycle.ts:573 (award: { ...award, due, committed } → {}): a job whose outputs are
    // missing fails, but its ledger still holds what was paid for the work
    it('a job with missing outputs keeps the final payment on its award', () => {
      const s = playR(runningRequester(), [hb(30_000, 2)]).state
      const r = playR(s, [
        { type: 'receipt-received', now: at(40_000), provider: P1, exitCode: 0, gpuSeconds: 76, outputsValid: true },
        { type: 'outputs-verified', now: at(41_000), missingOutputs: ['out/model.bin'] }
      ])
      assert.equal(r.state.status, 'failed')
      const pays = only(r.effects, 'pay')
      assert.equal(pays.length, 1)
      assert.equal(pays[0]?.type === 'pay' ? pays[0].cumulative : undefined, 76_000)
      assert.equal(r.state.award?.committed, 76_000)
      assert.deepEqual(r.state.award?.due, pays[0])
      assert.equal(r.state.award?.provider, P1)
    })

    // requester-lifecycle.ts:537 (the effects of an expired re-auction): a no-show past the job's expiry
    // records the failure and ends the job, and emits nothing else
    it('a no-show after the expiry ends the job expired with only the failure record', () => {
      const awarded = playR(startRequesterJob({ ...INIT, expiresAt: at(50_000) }, at(0)).state, [
        { type: 'bid-received', now: at(100), bid: 'b1', provider: P1, price: PRICE, effectivePrice: PRICE },
        tick(1000),
        { type: 'bidding-closed', now: at(1000), winner: { bid: 'b1', provider: P1, price: PRICE } }
      ]).state
      assert.equal(awarded.status, 'awarded')
      const t = reduceRequester(awarded, tick(1000 + LEASE_MS))
      assert.equal(t.state.status, 'expired')
      assert.deepEqual(t.effects.filter((e) => e.type !== 'wake').map((e) => e.type), ['record-failure'])
    })

    // requester-lifecycle.ts:538 (the new round's reopened flag): after a no-show the next round may
    // still re-open once on no bids; the provider that did not show stays excluded
    it('a re-auction after a no-show re-opens once on no bids, and the no-show provider cannot win again', () => {
      const award = (ms: number): RequesterEvent[] => [
        { type: 'bid-received', now: at(ms - 900), bid: `b${ms}`, provider: P1, price: PRICE, effectivePrice: PRICE },
        tick(ms),
        { type: 'bidding-closed', now: at(ms), winner: { bid: `b${ms}`, provider: P1, price: PRICE } }
      ]
      const first = playR(startRequesterJob(INIT, at(0)).state, [...award(1000), tick(1000 + LEASE_MS)])
      assert.equal(first.state.status, 'bidding')
      assert.deepEqual(first.state.excluded, [P1])
      const closesAt = first.state.auction.closesAt - at(0)
      const empty = playR(first.state, [tick(closesAt), { type: 'bidding-closed', now: at(closesAt) }])
      assert.equal(empty.state.status, 'bidding')
      assert.deepEqual(only(empty.effects, 're-auction').map((e) => e.type === 're-auction' ? e.reason : undefined), ['no-bids'])
      const again = empty.state.auction.closesAt - at(0)
      const second = playR(empty.state, award(again))
      assert.notEqual(second.state.status, 'awarded')
      assert.deepEqual(only(second.effects, 'send-award'), [])
      assert.deepEqual(second.state.excluded, [P1])
    })
    // requester-lifecycle.ts:472 (the states that start the run): a first status of 'uploading' or
    // 'completed' (the 'running' one lost) still anchors the billing, so the provider is paid on time
    for (const state of ['uploading', 'completed'] as const) {
      it(`a first status of '${state}' starts the billing clock`, () => {
        const s = playR(startRequesterJob(INIT, at(0)).state, [
          { type: 'bid-received', now: at(100), bid: 'b1', provider: P1, price: PRICE, effectivePrice: PRICE },
          tick(1000),
          { type: 'bidding-closed', now: at(1000), winner: { bid: 'b1', provider: P1, price: PRICE } },
          { type: 'award-accepted', now: at(1200), provider: P1 },
          { type: 'heartbeat', now: at(2000), provider: P1, seq: 1, state, gpuSeconds: 0 },
          hb(30_000, 2), hb(60_000, 3)
        ]).state
        assert.equal(s.award?.runStartedAt, at(2000))
        const t = reduceRequester(s, tick(62_000))
        assert.deepEqual(only(t.effects, 'pay'), [{ type: 'pay', payee: P1, attempt: 1, cumulative: 120_000, interval: 1, gpuSeconds: 120, final: false }])
      })
    }

    // requester-lifecycle.ts:705 (the failure recorded on a timeout): a job past its max runtime plus
    // a lease is cancelled and its provider blamed for a timeout, with the award and last status as evidence
    it('no receipt within the max runtime plus a lease records a timeout against the provider', () => {
      const beats: RequesterEvent[] = []
      for (let i = 1; i <= 4; i++) beats.push(hb(2000 + i * 30_000, i + 1))
      const s = playR(runningRequester({ maxRuntimeSec: 60 }), beats).state
      assert.equal(s.status, 'running')
      const t = reduceRequester(s, tick(2000 + 60_000 + LEASE_MS))
      assert.deepEqual(only(t.effects, 'cancel'), [{ type: 'cancel', provider: P1, reason: 'max runtime exceeded' }])
      const failures = t.effects.flatMap((e) => e.type === 'record-failure' ? [[e.subject, e.reason, e.evidence]] : [])
      assert.deepEqual(failures, [[P1, 'timeout', ['award', 'last-status']]])
    })
  })

  describe('the provider', () => {
    // provider-lifecycle.ts:376 (Math.max → Math.min in onLatePayment): a late payment that claims
    // fewer intervals never lowers the intervals already paid
    it('a payment after a cancel that claims fewer intervals keeps the intervals paid', () => {
      const paid = playP(runningProvider(), [payment(62_000, 120_000, 1), payment(122_000, 240_000, 2)]).state
      assert.equal(paid.paid.intervals, 2)
      const cancelled = reduceProvider(paid, { type: 'cancel', now: at(130_000), from: REQ }).state
      assert.equal(cancelled.status, 'cancelled')
      const late = reduceProvider(cancelled, payment(131_000, 240_000, 1))
      assert.equal(late.state.status, 'cancelled')
      assert.deepEqual({ cumulative: late.state.paid.cumulative, intervals: late.state.paid.intervals }, { cumulative: 240_000, intervals: 2 })
    })

    // provider-lifecycle.ts:349 (the endings that still take a payment): a settled job's ledger is closed
    it('a payment after the job settled changes nothing on the provider\'s ledger', () => {
      const done = reduceProvider(runningProvider(), { type: 'finished', now: at(10_000), exitCode: 0, gpuSeconds: 16 }).state
      const settled = reduceProvider(done, payment(11_000, 16_000, 1)).state
      assert.equal(settled.status, 'settled')
      const again = reduceProvider(settled, payment(12_000, 999_000, 9))
      assert.equal(again.state.status, 'settled')
      assert.deepEqual({ cumulative: again.state.paid.cumulative, intervals: again.state.paid.intervals }, { cumulative: 16_000, intervals: settled.paid.intervals })
    })

    // provider-lifecycle.ts:258, 259 (the inputs-ready guard): a second inputs-fetched starts nothing
    it('inputs fetched twice start the job once', () => {
      const job = playP(startProviderJobAccepted(), [{ type: 'inputs-fetched', now: at(1500) }, { type: 'inputs-fetched', now: at(1600) }])
      assert.equal(only(job.effects, 'start-job').length, 1)
      assert.equal(job.state.inputsReady, true)
    })

    // provider-lifecycle.ts:270 (the exit-code range): an exit code outside -1..255 sends no receipt
    for (const exitCode of [256, -2, 1.5]) {
      it(`an exit code of ${exitCode} is ignored: no receipt, still running`, () => {
        const t = reduceProvider(runningProvider(), { type: 'finished', now: at(10_000), exitCode, gpuSeconds: 16 })
        assert.equal(t.state.status, 'running')
        assert.deepEqual(only(t.effects, 'send-receipt'), [])
      })
    }
    it('exit codes 255 and -1 are at the edge and accepted', () => {
      assert.equal(reduceProvider(runningProvider(), { type: 'finished', now: at(10_000), exitCode: 255, gpuSeconds: 16 }).state.status, 'completed')
      assert.equal(reduceProvider(runningProvider(), { type: 'finished', now: at(10_000), exitCode: -1, gpuSeconds: 0 }).state.status, 'failed')
    })

    // provider-lifecycle.ts:455 (the heartbeat's state while accepted): before the start the provider
    // says 'fetching-inputs', never 'running' (which would start the requester's billing clock early)
    it('an accepted job that has not started heartbeats fetching-inputs', () => {
      const accepted = startProviderJobAccepted()
      const t = reduceProvider(accepted, tick(1100 + LEASE_MS / 3))
      assert.deepEqual(only(t.effects, 'heartbeat').map((e) => e.type === 'heartbeat' ? e.state : undefined), ['fetching-inputs'])
    })

    // provider-lifecycle.ts:297 (offered → ''): a cancel before an award stops no work either
    it('a cancel while offered ends the job without a stop-work or a status message', () => {
      const offered = playP(startProviderJob({ job: 'bafyreijob', requester: REQ, bid: 'b1', gpus: 2, offerExpiresAt: at(60_000) }, at(0)).state, []).state
      const t = reduceProvider(offered, { type: 'cancel', now: at(500), from: REQ })
      assert.equal(t.state.status, 'cancelled')
      assert.deepEqual(t.effects.filter((e) => e.type !== 'ignored'), [])
    })

    // provider-lifecycle.ts:297 (offered/awarded → false): a cancel before accepting stops no work
    it('a cancel while awarded ends the job without a stop-work or a status message', () => {
      const awarded = playP(startProviderJobAccepted(false), []).state
      assert.equal(awarded.status, 'awarded')
      const t = reduceProvider(awarded, { type: 'cancel', now: at(1050), from: REQ })
      assert.equal(t.state.status, 'cancelled')
      assert.deepEqual(t.effects.filter((e) => e.type !== 'ignored'), [])
    })

    // provider-lifecycle.ts:298 (completed → false): a cancel after the receipt keeps the final-payment claim
    it('a cancel after completion stops nothing (the work is done) and a final payment after it still counts', () => {
      const done = reduceProvider(runningProvider(), { type: 'finished', now: at(10_000), exitCode: 0, gpuSeconds: 16 }).state
      const t = reduceProvider(done, { type: 'cancel', now: at(10_500), from: REQ })
      assert.equal(t.state.status, 'stopped-unpaid')
      assert.deepEqual(only(t.effects, 'stop-work'), [])
      assert.equal(reduceProvider(t.state, payment(11_000, 16_000, 1)).state.paid.cumulative, 16_000)
    })

    // provider-lifecycle.ts:313, 318 (the effects → []): a requester gone with work unpaid is reported
    it('a requester gone while running is waited for one lease, then reported as a non-payer', () => {
      // paid two intervals ahead, so the lease, not a payment, is the deadline
      const paid = reduceProvider(runningProvider(), payment(5_000, intervalsCharge(PRICE, 2, 60_000, 2), 2)).state
      const gone = reduceProvider(paid, { type: 'requester-gone', now: at(10_000) })
      assert.equal(gone.state.status, 'running')
      assert.equal(gone.state.requesterGoneAt, at(10_000))
      assert.deepEqual([...only(gone.effects, 'stop-work'), ...failures(gone.effects)], [])
      // a second notice does not move the wait
      assert.equal(reduceProvider(gone.state, { type: 'requester-gone', now: at(20_000) }).state.requesterGoneAt, at(10_000))
      const before = reduceProvider(gone.state, tick(10_000 + LEASE_MS - 1))
      assert.equal(before.state.status, 'running')
      const lost = reduceProvider(before.state, tick(10_000 + LEASE_MS))
      assert.equal(lost.state.status, 'stopped-unpaid')
      assert.deepEqual(only(lost.effects, 'stop-work'), [{ type: 'stop-work', reason: 'requester-gone' }])
      assert.deepEqual(failures(lost.effects), [[REQ, 'nonpayment', ['award', 'last-payment']]])
      // back at the last moment: a status at once, and the wait is over
      const back = reduceProvider(before.state, { type: 'requester-back', now: at(10_000 + LEASE_MS - 1) })
      assert.equal(back.state.requesterGoneAt, undefined)
      assert.deepEqual(only(back.effects, 'heartbeat').map((e) => e.type === 'heartbeat' ? [e.state, e.seq] : []), [['running', before.state.statusSeq + 1]])
      assert.equal(reduceProvider(back.state, tick(10_000 + LEASE_MS)).state.status, 'running')
    })

    it('a requester gone after the receipt is waited for until the final-payment deadline, then reported', () => {
      const done = reduceProvider(runningProvider(), { type: 'finished', now: at(10_000), exitCode: 0, gpuSeconds: 16 }).state
      const gone = reduceProvider(done, { type: 'requester-gone', now: at(11_000) })
      assert.equal(gone.state.status, 'completed')
      assert.deepEqual(failures(gone.effects), [])
      const deadline = nextProviderDeadline(gone.state)
      assert.equal(deadline?.kind, 'final-payment')
      const back = reduceProvider(gone.state, { type: 'requester-back', now: at(12_000) })
      assert.deepEqual([back.state.status, back.state.requesterGoneAt, only(back.effects, 'heartbeat')], ['completed', undefined, []])
      assert.equal(reduceProvider(back.state, payment(13_000, 16_000, 1)).state.status, 'settled')
      const late = reduceProvider(gone.state, tick((deadline?.at ?? 0) - T0))
      assert.equal(late.state.status, 'stopped-unpaid')
      assert.deepEqual(failures(late.effects), [[REQ, 'nonpayment', ['award', 'receipt']]])
    })

    it('a requester back is ignored before the award is taken on and after the end', () => {
      const offered = startProviderJob({ job: 'bafyreijob', requester: REQ, bid: 'b1', gpus: 2, offerExpiresAt: at(60_000) }, at(0)).state
      assert.deepEqual(reduceProvider(offered, { type: 'requester-back', now: at(10) }).effects.map((e) => e.type), ['ignored'])
      const ended = reduceProvider(runningProvider(), { type: 'cancel', now: at(3_000), from: REQ }).state
      assert.equal(reduceProvider(ended, { type: 'requester-back', now: at(3_100) }).state, ended)
    })
  })

  describe('edges of the inputs', () => {
    // provider-lifecycle.ts:226-228 (the award terms' ranges): terms exactly at a bound are taken, one past it ignored
    const offered = (): ReturnType<typeof runningProvider> => startProviderJob({ job: 'bafyreijob', requester: REQ, bid: 'b1', gpus: 2, offerExpiresAt: at(60_000) }, at(0)).state
    const cases: Array<[string, Partial<typeof TERMS>, boolean]> = [
      ['attempt 1', { attempt: 1 }, true], ['attempt 0', { attempt: 0 }, false],
      ['attempt at the limit', { attempt: MAX_AWARD_ATTEMPTS }, true], ['attempt past the limit', { attempt: MAX_AWARD_ATTEMPTS + 1 }, false],
      ['the shortest lease', { leaseMs: MIN_LEASE_MS }, true], ['a lease below it', { leaseMs: MIN_LEASE_MS - 1 }, false],
      ['the longest lease', { leaseMs: MAX_LEASE_MS }, true], ['a lease past it', { leaseMs: MAX_LEASE_MS + 1 }, false],
      ['the shortest billing interval', { billingIntervalSec: MIN_BILLING_INTERVAL_SEC }, true], ['a billing interval below it', { billingIntervalSec: MIN_BILLING_INTERVAL_SEC - 1 }, false],
      ['the longest billing interval', { billingIntervalSec: MAX_BILLING_INTERVAL_SEC }, true], ['a billing interval past it', { billingIntervalSec: MAX_BILLING_INTERVAL_SEC + 1 }, false]
    ]
    for (const [name, terms, taken] of cases) {
      it(`an award with ${name} is ${taken ? 'taken' : 'ignored'}`, () => {
        const t = reduceProvider(offered(), { type: 'award-received', now: at(1000), from: REQ, award: { ...TERMS, ...terms } })
        assert.equal(t.state.status, taken ? 'awarded' : 'offered')
        assert.equal(only(t.effects, 'review-award').length, taken ? 1 : 0)
      })
    }

    // provider-lifecycle.ts:306 (the 'awarded' case of requester-gone): nothing to stop before accepting
    it('a requester gone while awarded cancels without a stop-work or a failure report', () => {
      const t = reduceProvider(startProviderJobAccepted(false), { type: 'requester-gone', now: at(1050) })
      assert.equal(t.state.status, 'cancelled')
      assert.deepEqual(t.effects.filter((e) => e.type !== 'ignored'), [])
    })

    // requester-lifecycle.ts:383 (effectivePrice < 0): a free bid is a bid; a negative effective price is not
    it('a bid at an effective price of 0 is held, one below 0 is ignored', () => {
      const open = startRequesterJob(INIT, at(0)).state
      const free = reduceRequester(open, { type: 'bid-received', now: at(100), bid: 'b0', provider: P1, price: 0, effectivePrice: 0 })
      assert.equal(free.state.auction.bids.length, 1)
      const negative = reduceRequester(open, { type: 'bid-received', now: at(100), bid: 'b0', provider: P1, price: 0, effectivePrice: -1 })
      assert.equal(negative.state.auction.bids.length, 0)
    })

    // requester-lifecycle.ts:399 (no decision before the window closes): an early decision awards nothing
    it('a decision before the bid window closed is ignored', () => {
      const t = playR(startRequesterJob(INIT, at(0)).state, [
        { type: 'bid-received', now: at(100), bid: 'b1', provider: P1, price: PRICE, effectivePrice: PRICE },
        { type: 'bidding-closed', now: at(500), winner: { bid: 'b1', provider: P1, price: PRICE } }
      ])
      assert.equal(t.state.status, 'bidding')
      assert.deepEqual(only(t.effects, 'send-award'), [])
    })

    // requester-lifecycle.ts:471 (unknown job states): a status in no known state does not hold the lease
    it('a heartbeat with an unknown state does not extend the lease', () => {
      const s = reduceRequester(runningRequester(), { type: 'heartbeat', now: at(60_000), provider: P1, seq: 2, state: 'bogus' as 'running', gpuSeconds: 0 }).state
      const t = reduceRequester(s, tick(2000 + LEASE_MS))
      assert.equal(t.state.status, 'bidding')
      assert.deepEqual(t.effects.flatMap((e) => e.type === 'record-failure' ? [e.reason] : []), ['no-heartbeat'])
    })

    // lifecycle-shared.ts:233 (value < min): a job below a configuration minimum is refused
    it('a job with a lease one below the minimum or a 0-second runtime is refused', () => {
      assert.throws(() => startRequesterJob({ ...INIT, leaseMs: MIN_LEASE_MS - 1 }, at(0)), { name: 'InvalidLifecycleConfigError' })
      assert.throws(() => startRequesterJob({ ...INIT, maxRuntimeSec: 0 }, at(0)), { name: 'InvalidLifecycleConfigError' })
      assert.equal(startRequesterJob({ ...INIT, leaseMs: MIN_LEASE_MS }, at(0)).state.config.leaseMs, MIN_LEASE_MS)
    })
  })

  describe('shared arithmetic', () => {
    // lifecycle-shared.ts:91 (from === to → true): the transition tables refuse what they do not list
    it('a settled job may not go back to running, on either side; staying put is allowed', () => {
      assert.equal(isAllowedTransition(PROVIDER_TRANSITIONS, 'settled', 'running'), false)
      assert.equal(isAllowedTransition(REQUESTER_TRANSITIONS, 'settled', 'running'), false)
      assert.equal(isAllowedTransition(PROVIDER_TRANSITIONS, 'settled', 'settled'), true)
    })

    // lifecycle-shared.ts:47 (the output-size guard): a malformed size never shortens the fetch allowance
    it('the output fetch allowance ignores negative, fractional and non-finite sizes', () => {
      for (const bad of [-1, -5_000_000_000, Number.NaN, Number.POSITIVE_INFINITY, 1_000_000_000.5]) {
        assert.equal(outputFetchAllowanceMs(LEASE_MS, bad), LEASE_MS, String(bad))
      }
      assert.equal(outputFetchAllowanceMs(LEASE_MS, 0), LEASE_MS)
      assert.ok(outputFetchAllowanceMs(LEASE_MS, 1_000_000_000) > LEASE_MS)
    })

    // lifecycle-shared.ts:162 (the ceilSeconds guard): no negative or NaN seconds are ever billed
    it('ceilSeconds is 0 for 0, negatives and non-finite, and rounds a partial second up', () => {
      assert.equal(ceilSeconds(0), 0)
      assert.equal(ceilSeconds(-1500), 0)
      assert.equal(ceilSeconds(Number.NaN), 0)
      assert.equal(ceilSeconds(Number.POSITIVE_INFINITY), 0)
      assert.equal(ceilSeconds(1), 1)
      assert.equal(ceilSeconds(1000), 1)
      assert.equal(ceilSeconds(1001), 2)
    })
  })
})

/** A provider job for bid b1 awarded at +1000 and, unless `accept` is false, accepted at +1100. */
function startProviderJobAccepted (accept = true): ReturnType<typeof runningProvider> {
  const events: ProviderEvent[] = [{ type: 'award-received', now: at(1000), from: REQ, award: { award: 'bafyreiaward', bid: 'b1', attempt: 1, price: PRICE, leaseMs: LEASE_MS, billingIntervalSec: 60 } }]
  if (accept) events.push({ type: 'accept-award', now: at(1100) })
  return playP(startProviderJob({ job: 'bafyreijob', requester: REQ, bid: 'b1', gpus: 2, offerExpiresAt: at(60_000) }, at(0)).state, events).state
}
