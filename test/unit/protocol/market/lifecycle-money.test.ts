/**
 * Money edges of the two job lifecycles that the first mutation audit (issue 9) found untested: each test
 * below was checked against the hand-made mutant its comment names (the mutant applied, the test seen to
 * fail, the mutant reverted). Billing for a 0-GPU job, a max runtime that is not a whole number of
 * billing intervals, deadlines at the same instant, a lease ending exactly on a billing boundary, exactly
 * what is owed paid with no final payment, a payment repeated with the same cumulative amount, and the
 * job's expiry at the exact instant.
 */
import assert from 'node:assert/strict'
import {
  chargeFor, intervalsCharge, nextProviderDeadline, nextRequesterDeadline, paidUntil, paymentGraceMs, outputFetchAllowanceMs,
  reduceProvider, reduceRequester, startRequesterJob,
  type ProviderEffect, type ProviderEvent, type ProviderJob, type RequesterEffect, type RequesterEvent, type RequesterJob, type RequesterJobInit
} from '../../../../protocol/market/lifecycle.js'
import { INIT, LEASE_MS, P1, PRICE, REQ, at, only, playP, playR, hb, payment, runningProvider, runningRequester, tick } from '../../../helpers/lifecycle-builders.js'

const INTERVAL_MS = 60_000

const failureReasons = (effects: Array<RequesterEffect | ProviderEffect>): string[] => effects.flatMap((e) => e.type === 'record-failure' ? [e.reason] : [])


describe('job lifecycle money edges (issue 9 mutation audit)', () => {
  describe('a job that asks for no GPU is billed as one unit on both sides', () => {
    // mutant: billedGpus without its Math.max(1, …) — CPU jobs were free on both sides
    it('the requester pays one unit per interval', () => {
      const s = runningRequester({ gpus: 0 })
      assert.equal(s.config.gpus, 1)
      const t = reduceRequester(s, tick(62_000))
      assert.deepEqual(only(t.effects, 'pay'), [{ type: 'pay', payee: P1, attempt: 1, cumulative: 60_000, interval: 1, gpuSeconds: 60, final: false }])
      assert.equal(chargeFor(PRICE, 1, INTERVAL_MS), 60_000)
    })

    it('the provider counts GPU-seconds, and a payment of nothing pays no interval', () => {
      const s = runningProvider(0)
      assert.equal(s.gpus, 1)
      const beat = reduceProvider(s, tick(2000 + 30_000))
      assert.deepEqual(only(beat.effects, 'heartbeat'), [{ type: 'heartbeat', seq: 4, state: 'running', gpuSeconds: 30 }])
      // a zero payment that claims an interval covers none: the provider still stops when the grace ends
      const claimed = reduceProvider(beat.state, payment(62_500, 0, 1))
      assert.equal(claimed.state.paid.intervals, 0)
      const due = 2000 + INTERVAL_MS + paymentGraceMs(INTERVAL_MS)
      assert.equal(paidUntil(claimed.state), at(due))
      const stopped = reduceProvider(claimed.state, tick(due))
      assert.equal(stopped.state.status, 'stopped-unpaid')
      assert.deepEqual(failureReasons(stopped.effects), ['nonpayment'])
      // one interval's worth for one unit does pay it
      const paid = reduceProvider(beat.state, payment(62_500, 60_000, 1))
      assert.equal(paid.state.paid.intervals, 1)
      assert.equal(reduceProvider(paid.state, tick(due)).state.status, 'running')
    })
  })

  describe('a max runtime that is not a whole number of billing intervals', () => {
    // mutants: intervalPayment without its Math.min(…, maxRuntimeMs) (the last interval paid whole), and
    // intervalCap rounding up once more (one interval beyond the max runtime)
    it('pays the last, partial interval only up to the max runtime, and never beyond it', () => {
      // 150 s max runtime, 60 s intervals: boundaries at +62 s and +122 s, the third capped at 150 s
      let s = runningRequester({ maxRuntimeSec: 150 })
      const pays: RequesterEffect[] = []
      for (let ms = 2000 + 30_000; ms <= 2000 + 150_000 + LEASE_MS; ms += 30_000) {
        const step = playR(s, [tick(ms), hb(ms, ms / 1000)])
        s = step.state
        pays.push(...only(step.effects, 'pay'))
      }
      assert.deepEqual(pays.map((p) => p.type === 'pay' && [p.cumulative, p.interval, p.gpuSeconds, p.final]), [
        [120_000, 1, 120, false],
        [240_000, 2, 240, false],
        [300_000, 3, 300, false]
      ])
      assert.equal(chargeFor(PRICE, 2, 150_000), 300_000)
      // the job then times out (no receipt within the max runtime and a lease): nothing more is paid
      assert.notEqual(s.status, 'running')
    })

    it('a receipt claiming more than the max runtime is paid for the max runtime', () => {
      const s = playR(runningRequester({ maxRuntimeSec: 150 }), [hb(60_000, 2), hb(120_000, 3), hb(151_000, 4)]).state
      const done = playR(s, [
        { type: 'receipt-received', now: at(152_500), provider: P1, exitCode: 0, gpuSeconds: 1_000, outputsValid: true },
        { type: 'outputs-verified', now: at(152_600) },
        { type: 'verification-done', now: at(152_700), ok: true }
      ])
      const final = only(done.effects, 'pay').at(-1)
      assert.deepEqual(final, { type: 'pay', payee: P1, attempt: 1, cumulative: 300_000, interval: 3, gpuSeconds: 300, final: true, ending: 'settled' })
    })
  })

  describe('deadlines at the same instant: the first listed wins', () => {
    // mutant: earliest() taking the later of two equal deadlines (`<=` for `<`)
    it('a bid window closing exactly at the job\'s expiry expires the job without a decision', () => {
      const s = playR(startRequesterJob({ ...INIT, expiresAt: at(1000) }, at(0)).state, [
        { type: 'bid-received', now: at(100), bid: 'b1', provider: P1, price: PRICE, effectivePrice: PRICE }
      ]).state
      assert.deepEqual(nextRequesterDeadline(s), { kind: 'expiry', at: at(1000) })
      const t = reduceRequester(s, tick(1000))
      assert.equal(t.state.status, 'expired')
      assert.deepEqual(only(t.effects, 'close-auction'), [])
    })

    it('an unpaid interval and a preemption due together stop the provider for nonpayment', () => {
      const s = runningProvider()
      const unpaid = paidUntil(s) as number
      const noticed = reduceProvider(s, { type: 'preempt', now: at(10_000), noticeMs: unpaid - at(10_000) })
      assert.equal(noticed.state.preemptAt, unpaid)
      const beaten = reduceProvider(noticed.state, tick(62_000)).state // the heartbeats before it
      assert.deepEqual(nextProviderDeadline(beaten), { kind: 'unpaid', at: unpaid })
      const t = reduceProvider(beaten, { type: 'tick', now: unpaid })
      assert.equal(t.state.status, 'stopped-unpaid')
      assert.deepEqual(failureReasons(t.effects), ['nonpayment'])
    })
  })

  describe('a lease ending exactly on a billing boundary', () => {
    // mutants: payIntervals counting the boundary at the lease's end (Math.floor for Math.ceil … − 1), and the
    // billing deadline winning its tie with the lease
    const lapsing = (): RequesterJob => playR(runningRequester(), [hb(32_000, 2)]).state // lease ends at +122 s, boundary 2

    it('a punctual tick at that instant fails the attempt and pays nothing for the boundary', () => {
      const s = playR(lapsing(), [tick(62_000)]).state
      assert.equal(s.award?.paidIntervals, 1)
      const t = reduceRequester(s, tick(122_000))
      assert.deepEqual(only(t.effects, 'pay'), [])
      assert.deepEqual(failureReasons(t.effects), ['no-heartbeat'])
      assert.equal(t.state.status, 'bidding')
    })

    it('a late tick pays the boundaries before the lease ended, not the one at its end', () => {
      const t = reduceRequester(lapsing(), tick(200_000))
      assert.deepEqual(only(t.effects, 'pay'), [{ type: 'pay', payee: P1, attempt: 1, cumulative: 120_000, interval: 1, gpuSeconds: 120, final: false }])
      assert.deepEqual(failureReasons(t.effects), ['no-heartbeat'])
    })

    // mutant: Math.floor for Math.ceil in payIntervals' boundary count before the lease's end
    it('a late tick pays every boundary that came while the lease held', () => {
      // the last heartbeat at +60 s: the lease ends at +150 s, between boundaries 2 (+122 s) and 3 (+182 s)
      const t = reduceRequester(playR(runningRequester(), [hb(60_000, 2)]).state, tick(300_000))
      assert.deepEqual(only(t.effects, 'pay'), [{ type: 'pay', payee: P1, attempt: 1, cumulative: 240_000, interval: 2, gpuSeconds: 240, final: false }])
      assert.deepEqual(failureReasons(t.effects), ['no-heartbeat'])
    })
  })

  describe('exactly what is owed', () => {
    /** Paid one interval (120,000) while running; finished at +62.2 s with a receipt worth exactly that. */
    const paidUp = (): ProviderJob => {
      const s = playP(runningProvider(), [payment(62_100, intervalsCharge(PRICE, 2, INTERVAL_MS, 1), 1), { type: 'finished', now: at(62_200), exitCode: 0, gpuSeconds: 120 }]).state
      assert.equal(s.status, 'completed')
      assert.equal(s.finished?.owed, 120_000)
      return s
    }

    // mutant: the final-payment deadline settling only on `paid > owed` — a false non-payment report against
    // an honest requester whose interval payments already covered the receipt
    it('paid before the receipt, with no final payment: settled at the deadline, nobody reported', () => {
      const s = paidUp()
      const deadline = 62_200 + INTERVAL_MS + outputFetchAllowanceMs(LEASE_MS, 0)
      assert.deepEqual(nextProviderDeadline(s), { kind: 'final-payment', at: at(deadline) })
      assert.equal(reduceProvider(s, tick(deadline - 1)).state.status, 'completed')
      const t = reduceProvider(s, tick(deadline))
      assert.equal(t.state.status, 'settled')
      assert.deepEqual(only(t.effects, 'record-failure'), [])
    })

    // mutant: onPayment refusing a payment equal to the best one (`<=` for `<`)
    it('a final payment repeating the same cumulative amount settles at once', () => {
      const t = reduceProvider(paidUp(), payment(62_400, 120_000, 2))
      assert.deepEqual(t.effects, [])
      assert.equal(t.state.status, 'settled')
      assert.equal(t.state.paid.at, at(62_400))
    })

    it('one micro short of what is owed does not settle', () => {
      const s = playP(runningProvider(), [payment(62_100, 119_999, 1), { type: 'finished', now: at(62_200), exitCode: 0, gpuSeconds: 120 }]).state
      assert.equal(reduceProvider(s, payment(62_300, 119_999, 2)).state.status, 'completed')
      const deadline = 62_200 + INTERVAL_MS + outputFetchAllowanceMs(LEASE_MS, 0)
      assert.equal(reduceProvider(s, tick(deadline)).state.status, 'stopped-unpaid')
    })

    // mutant: onLatePayment refusing a payment equal to the best one — the cancel's final payment repeats what
    // the interval payments committed, and must close the award on the provider's ledger too
    it('after a cancel, the final payment repeating the committed amount is recorded', () => {
      const s = playP(runningProvider(), [payment(62_100, 120_000, 1), { type: 'cancel', now: at(70_000), from: REQ }]).state
      assert.equal(s.status, 'cancelled')
      const t = reduceProvider(s, payment(70_100, 120_000, 2))
      assert.deepEqual(t.effects, [])
      assert.equal(t.state.paid.at, at(70_100))
      assert.equal(t.state.paid.cumulative, 120_000)
    })

    // mutant: onPaymentSent treating a repeat of the committed amount as unexpected (`<` for `<=`)
    it('the requester takes a repeat of the committed amount as news of nothing, not a stray payment', () => {
      const s = playR(runningRequester(), [tick(62_000)]).state
      assert.equal(s.award?.committed, 120_000)
      const t = reduceRequester(s, { type: 'payment-sent', now: at(62_050), cumulative: 120_000 })
      assert.deepEqual(t.effects, [])
      assert.equal(reduceRequester(s, { type: 'payment-sent', now: at(62_050), cumulative: 120_001 }).effects[0]?.type, 'ignored')
    })
  })

  describe('malformed amounts from the shell are ignored, never counted', () => {
    // survivors of the first Stryker run: the guards on a payment's interval and on a run's GPU-seconds
    it('a payment with a malformed interval changes nothing', () => {
      const s = runningProvider()
      for (const interval of [-1, 1.5, Number.NaN]) {
        const t = reduceProvider(s, payment(10_000, 120_000, interval))
        assert.equal(t.state, s)
        assert.deepEqual(t.effects, [{ type: 'ignored', reason: 'malformed payment' }])
      }
    })

    it('a finish with an exit code beyond 255 or malformed GPU-seconds changes nothing', () => {
      const s = runningProvider()
      for (const [exitCode, gpuSeconds] of [[256, 10], [0, -1], [0, 1.5]] as const) {
        const t = reduceProvider(s, { type: 'finished', now: at(10_000), exitCode, gpuSeconds })
        assert.equal(t.state, s)
        assert.deepEqual(t.effects, [{ type: 'ignored', reason: 'malformed exit code or GPU-seconds' }])
      }
      assert.equal(reduceProvider(s, { type: 'finished', now: at(10_000), exitCode: 255, gpuSeconds: 16 }).state.status, 'completed')
    })
  })

  describe('the job\'s expiry at the exact instant', () => {
    // mutants: the expiry deadline at expiresAt ± 1, and reauction's `now >= expiresAt` as `>`
    it('a job in bidding is live one ms before expiresAt and expired at it', () => {
      const s = startRequesterJob({ ...INIT, bidWindowMs: 600_000, expiresAt: at(5000) }, at(0)).state
      assert.equal(reduceRequester(s, tick(4999)).state.status, 'bidding')
      assert.equal(reduceRequester(s, tick(5000)).state.status, 'expired')
    })

    it('a no-show exactly at expiresAt expires the job instead of re-auctioning it', () => {
      // awarded at +1000: the no-show deadline is +91,000, the job's expiry too
      const awarded = (expiresAt: number): RequesterJob => playR(startRequesterJob({ ...INIT, expiresAt: at(expiresAt) }, at(0)).state, [
        { type: 'bid-received', now: at(100), bid: 'b1', provider: P1, price: PRICE, effectivePrice: PRICE },
        tick(1000),
        { type: 'bidding-closed', now: at(1000), winner: { bid: 'b1', provider: P1, price: PRICE } }
      ]).state
      const atExpiry = reduceRequester(awarded(91_000), tick(91_000))
      assert.equal(atExpiry.state.status, 'expired')
      assert.deepEqual(only(atExpiry.effects, 're-auction'), [])
      assert.deepEqual(failureReasons(atExpiry.effects), ['no-show'])
      const before = reduceRequester(awarded(91_001), tick(91_000))
      assert.equal(before.state.status, 'bidding')
    })

    // (`now < expiresAt` in noWinner as `<=` is equivalent: at expiresAt the expiry deadline, listed first, has
    // already ended the job)
    it('an empty round closing one ms before expiresAt re-opens; one closing at it expires', () => {
      const empty = (expiresAt: number) => reduceRequester(startRequesterJob({ ...INIT, expiresAt: at(expiresAt) }, at(0)).state, tick(1000))
      assert.equal(empty(1001).state.status, 'bidding')
      assert.deepEqual(only(empty(1001).effects, 're-auction').map((e) => e.type === 're-auction' && e.reason), ['no-bids'])
      assert.equal(empty(1000).state.status, 'expired')
    })
  })
})
