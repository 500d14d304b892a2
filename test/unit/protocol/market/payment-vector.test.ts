/**
 * protocol/README.md §5.7 "What a payment says": the worked example, played through both reference job
 * lifecycles (the requester's that signs the payments, the provider's that checks them), and the spec's
 * table checked line by line against what they computed, so the document and the code cannot drift.
 */
import assert from 'node:assert/strict'
import {
  chargeFor, intervalsPaidBy, reduceProvider, reduceRequester, startProviderJob, startRequesterJob,
  type ProviderEvent, type RequesterEffect, type RequesterEvent
} from '../../../../protocol/market/lifecycle.js'
import { JOB, P1, REQ, at, play } from '../../../helpers/lifecycle-builders.js'
import { specSection } from '../../../helpers/spec-text.js'

const PRICE = 1_234_567
const GPUS = 2
const INTERVAL_SEC = 300
const LEASE_MS = 30_000
/** The requester's anchor: its first `running` status arrives here. */
const ANCHOR = 2000
/** The provider's run takes 700.4 s; the requester receives the receipt 700.9 s after its anchor. */
const RUN_MS = 700_400
const RECEIPT_SEEN = ANCHOR + 700_900

type Pay = Extract<RequesterEffect, { type: 'pay' }>

/** The requester's payments for the example, heartbeats every 10 s, as the spec's table columns. */
function requesterPayments (): Pay[] {
  const events: RequesterEvent[] = [
    { type: 'bid-received', now: at(100), bid: 'b1', provider: P1, price: PRICE, effectivePrice: PRICE },
    { type: 'tick', now: at(1000) },
    { type: 'bidding-closed', now: at(1000), winner: { bid: 'b1', provider: P1, price: PRICE } },
    { type: 'award-accepted', now: at(1200), provider: P1 }
  ]
  let seq = 3 // accepted (1), fetching-inputs (2), then running
  for (let ms = ANCHOR; ms < RECEIPT_SEEN; ms += 10_000) {
    events.push({ type: 'tick', now: at(ms) }, { type: 'heartbeat', now: at(ms), provider: P1, seq: seq++, state: 'running', gpuSeconds: 0 })
  }
  events.push(
    { type: 'receipt-received', now: at(RECEIPT_SEEN), provider: P1, exitCode: 0, gpuSeconds: GPUS * Math.ceil(RUN_MS / 1000), outputsValid: true },
    { type: 'outputs-verified', now: at(RECEIPT_SEEN + 50) },
    { type: 'verification-done', now: at(RECEIPT_SEEN + 60), ok: true }
  )
  const start = startRequesterJob({ job: JOB, bidWindowMs: 1000, expiresAt: at(86_400_000), gpus: GPUS, maxRuntimeSec: 3600, leaseMs: LEASE_MS, billingIntervalSec: INTERVAL_SEC }, at(0)).state
  const { state, effects } = play(start, events, reduceRequester)
  const pays = effects.filter((e): e is Pay => e.type === 'pay')
  const last = pays.at(-1) as Pay
  assert.equal(reduceRequester(state, { type: 'payment-sent', now: at(RECEIPT_SEEN + 70), cumulative: last.cumulative }).state.status, 'settled')
  return pays
}

describe('protocol/README.md §5.7: what a payment says (worked example)', () => {
  const pays = requesterPayments()

  it('the requester signs three payments: two intervals and a final one', () => {
    assert.deepEqual(pays.map((p) => [p.interval, p.gpuSeconds, p.cumulative, p.final]), [
      [1, 600, 205_762, false],
      [2, 1200, 411_523, false],
      [3, 1402, 480_796, true]
    ])
    // each is charge() of the whole time, never a sum: the second interval costs one micro less than the first
    assert.equal(chargeFor(PRICE, GPUS, 300_000), 205_762)
    assert.equal(chargeFor(PRICE, GPUS, 600_000), 411_523)
    assert.equal(chargeFor(PRICE, 1, 1_402_000), 480_796)
  })

  it('the spec\'s table shows exactly these rows, seq 1, 2, 3 in order', () => {
    const section = specSection('5.7')
    const rows = section.split('\n').filter((l) => /^\| [0-9]+ \| /.test(l)).map((l) => l.split('|').map((c) => c.trim()))
    const payRows = rows.filter((r) => r[3] !== undefined && /^[0-9]+$/.test(r[3]) && /^[0-9]+$/.test(r[5] ?? ''))
    assert.deepEqual(payRows.map((r) => [Number(r[1]), Number(r[3]), Number(r[4]), Number(r[5])]),
      pays.map((p, i) => [i + 1, p.interval, p.gpuSeconds, p.cumulative]))
    assert.ok(section.includes(`*P* = 1 234 567, \`resources.gpus\` = 2, \`billingIntervalSec\` = 300, \`leaseMs\` = 30000,`))
  })

  it('a cancel 450.2 s after the anchor pays the started seconds for all GPUs, as the spec says', () => {
    const start = startRequesterJob({ job: JOB, bidWindowMs: 1000, expiresAt: at(86_400_000), gpus: GPUS, maxRuntimeSec: 3600, leaseMs: LEASE_MS, billingIntervalSec: INTERVAL_SEC }, at(0)).state
    const events: RequesterEvent[] = [
      { type: 'bid-received', now: at(100), bid: 'b1', provider: P1, price: PRICE, effectivePrice: PRICE },
      { type: 'tick', now: at(1000) },
      { type: 'bidding-closed', now: at(1000), winner: { bid: 'b1', provider: P1, price: PRICE } },
      { type: 'award-accepted', now: at(1200), provider: P1 }
    ]
    for (let ms = ANCHOR, seq = 3; ms < ANCHOR + 450_200; ms += 10_000) events.push({ type: 'tick', now: at(ms) }, { type: 'heartbeat', now: at(ms), provider: P1, seq: seq++, state: 'running', gpuSeconds: 0 })
    events.push({ type: 'cancel', now: at(ANCHOR + 450_200) })
    const pays = play(start, events, reduceRequester).effects.filter((e): e is Pay => e.type === 'pay')
    assert.deepEqual(pays.map((p) => [p.interval, p.gpuSeconds, p.cumulative, p.final]), [[1, 600, 205_762, false], [2, 902, 309_328, true]])
    assert.ok(specSection('5.7').replace(/\s+/g, ' ').includes('*s* = 451, `cumulative` 309328 (⌈1234567 × 2 × 451000 / 3600000⌉ = ⌈309327.62⌉), `interval` 2, `gpuSeconds` 902'))
  })

  it('the provider counts payment 1 as one interval, expects it by its anchor + 330 s, and settles on payment 3', () => {
    assert.equal(intervalsPaidBy(205_762, PRICE, GPUS, INTERVAL_SEC * 1000), 1)
    assert.equal(intervalsPaidBy(205_761, PRICE, GPUS, INTERVAL_SEC * 1000), 0)
    const terms = { award: 'bafyreiaward', bid: 'b1', attempt: 1, price: PRICE, leaseMs: LEASE_MS, billingIntervalSec: INTERVAL_SEC }
    const started = 2000
    const events: ProviderEvent[] = [
      { type: 'award-received', now: at(1000), from: REQ, award: terms },
      { type: 'accept-award', now: at(1100) },
      { type: 'inputs-fetched', now: at(1500) },
      { type: 'started', now: at(started) }
    ]
    const base = play(startProviderJob({ job: JOB, requester: REQ, bid: 'b1', gpus: GPUS, offerExpiresAt: at(60_000) }, at(0)).state, events, reduceProvider).state
    // unpaid, it stops at its anchor + 300 s + the 30 s grace, not a millisecond before
    assert.equal(reduceProvider(base, { type: 'tick', now: at(started + 330_000 - 1) }).state.status, 'running')
    assert.equal(reduceProvider(base, { type: 'tick', now: at(started + 330_000) }).state.status, 'stopped-unpaid')
    const payment = (ms: number, p: Pay): ProviderEvent => ({ type: 'payment-received', now: at(ms), from: REQ, cumulative: p.cumulative, interval: p.interval })
    const run = play(base, [
      payment(started + 300_100, pays[0] as Pay),
      payment(started + 600_100, pays[1] as Pay),
      { type: 'finished', now: at(started + RUN_MS), exitCode: 0, gpuSeconds: GPUS * Math.ceil(RUN_MS / 1000), outputBytes: 0 }
    ], reduceProvider)
    const receipt = run.effects.find((e) => e.type === 'send-receipt')
    assert.deepEqual(receipt, { type: 'send-receipt', exitCode: 0, gpuSeconds: 1402, startedAt: at(started), endedAt: at(started + RUN_MS) })
    assert.equal(run.state.finished?.owed, 480_796)
    assert.equal(run.state.status, 'completed')
    assert.equal(reduceProvider(run.state, { ...payment(started + RUN_MS + 1000, pays[1] as Pay) }).state.status, 'completed')
    assert.equal(reduceProvider(run.state, payment(started + RUN_MS + 1000, pays[2] as Pay)).state.status, 'settled')
  })
})
