/**
 * protocol/README.md §5.7 "Job states": the `job-status` messages a provider sends, in order, played
 * through the reference provider lifecycle for each way a job can go, and checked against the spec's
 * table (every state has a row; every change seen is one the table allows; `uploading` is never sent).
 */
import assert from 'node:assert/strict'
import { jobStates, type JobState } from '../../../../protocol/messages/award.js'
import {
  reduceProvider, reduceRequester, restartProviderJob, startProviderJob,
  type ProviderEffect, type ProviderEvent, type ProviderJob
} from '../../../../protocol/market/lifecycle.js'
import { JOB, P1, REQ, TERMS, at, play, runningRequester, tick } from '../../../helpers/lifecycle-builders.js'
import { specSection } from '../../../helpers/spec-text.js'

/** TERMS' 90 s lease: a heartbeat every 30 s. */
const BEAT_MS = TERMS.leaseMs / 3

/** What goes on the wire as `job-status`, in order: heartbeats and the preemption notice (sent as `preempted`). */
function statuses (effects: ProviderEffect[]): Array<[number | 'notice', JobState]> {
  return effects.flatMap((e): Array<[number | 'notice', JobState]> => {
    if (e.type === 'heartbeat') return [[e.seq, e.state]]
    if (e.type === 'notify-preemption') return [['notice', 'preempted']]
    return []
  })
}

function accepted (): { state: ProviderJob, effects: ProviderEffect[] } {
  return play(startProviderJob({ job: JOB, requester: REQ, bid: 'b1', gpus: 2, offerExpiresAt: at(60_000) }, at(0)).state, [
    { type: 'award-received', now: at(1000), from: REQ, award: TERMS },
    { type: 'accept-award', now: at(1100) }
  ], reduceProvider)
}

function continueWith (from: { state: ProviderJob, effects: ProviderEffect[] }, events: ProviderEvent[]): { state: ProviderJob, effects: ProviderEffect[] } {
  const next = play(from.state, events, reduceProvider)
  return { state: next.state, effects: [...from.effects, ...next.effects] }
}

const paid = (ms: number, cumulative: number, interval: number): ProviderEvent => ({ type: 'payment-received', now: at(ms), from: REQ, cumulative, interval })

/** Each way a job goes, as the statuses sent. */
const PLAYS: Record<string, Array<[number | 'notice', JobState]>> = {}

describe('protocol/README.md §5.7: job states, in the order a provider sends them', () => {
  it('a job that runs to the end: accepted, fetching-inputs (until it starts), running…, completed, then the receipt', () => {
    const run = continueWith(accepted(), [
      tick(1100 + BEAT_MS),
      { type: 'inputs-fetched', now: at(40_000) },
      { type: 'started', now: at(41_000) },
      tick(41_000 + BEAT_MS),
      paid(41_000 + 60_100, 120_000, 1),
      { type: 'finished', now: at(41_000 + 70_000), exitCode: 3, gpuSeconds: 140, outputBytes: 0 }
    ])
    PLAYS.completed = statuses(run.effects)
    assert.deepEqual(PLAYS.completed, [[1, 'accepted'], [2, 'fetching-inputs'], [3, 'fetching-inputs'], [4, 'running'], [5, 'running'], [6, 'running'], [7, 'completed']])
    // the acceptance goes out before the first status, and the last status before the receipt
    const kinds = run.effects.map((e) => e.type).filter((t) => t === 'respond-award' || t === 'heartbeat' || t === 'send-receipt' || t === 'fetch-inputs')
    assert.deepEqual(kinds.slice(0, 4), ['respond-award', 'heartbeat', 'fetch-inputs', 'heartbeat'])
    assert.deepEqual(kinds.slice(-2), ['heartbeat', 'send-receipt'])
  })

  it('a preemption: the notice, every heartbeat of the notice and the stop all say preempted', () => {
    const run = continueWith(accepted(), [
      { type: 'inputs-fetched', now: at(1500) },
      { type: 'started', now: at(2000) },
      tick(32_000),
      { type: 'preempt', now: at(40_000), noticeMs: 70_000 },
      tick(62_000),
      paid(62_100, 120_000, 1),
      tick(92_000),
      tick(40_000 + 70_000)
    ])
    PLAYS.preempted = statuses(run.effects)
    assert.deepEqual(PLAYS.preempted, [[1, 'accepted'], [2, 'fetching-inputs'], [3, 'running'], [4, 'running'], ['notice', 'preempted'], [5, 'preempted'], [6, 'preempted'], [7, 'preempted']])
    assert.equal(run.state.status, 'preempted')
  })

  it('a cancel while fetching inputs: cancelled; an executor that cannot start: failed, then the receipt (exit −1)', () => {
    PLAYS.cancelled = statuses(continueWith(accepted(), [{ type: 'cancel', now: at(5000), from: REQ }]).effects)
    assert.deepEqual(PLAYS.cancelled, [[1, 'accepted'], [2, 'fetching-inputs'], [3, 'cancelled']])
    const failed = continueWith(accepted(), [{ type: 'finished', now: at(5000), exitCode: -1, gpuSeconds: 0 }])
    PLAYS.failed = statuses(failed.effects)
    assert.deepEqual(PLAYS.failed, [[1, 'accepted'], [2, 'fetching-inputs'], [3, 'failed']])
    assert.deepEqual(failed.effects.at(-1), { type: 'send-receipt', exitCode: -1, gpuSeconds: 0, startedAt: at(5000), endedAt: at(5000) })
  })

  it('a stop for non-payment sends no status at all', () => {
    const run = continueWith(accepted(), [{ type: 'inputs-fetched', now: at(1500) }, { type: 'started', now: at(2000) }, tick(32_000), tick(62_000)])
    assert.deepEqual(statuses(run.effects).slice(-2), [[4, 'running'], [5, 'running']])
    // interval 1 (60 s) unpaid past its 6 s grace
    const stop = reduceProvider(run.state, tick(2000 + 60_000 + 6000))
    assert.equal(stop.state.status, 'stopped-unpaid')
    assert.deepEqual(statuses(stop.effects), [])
  })

  it('a provider restarted mid-run: seq jumps by 8, then fetching-inputs again and running (§7.7 "Resuming")', () => {
    const run = continueWith(accepted(), [{ type: 'inputs-fetched', now: at(1500) }, { type: 'started', now: at(2000) }, paid(2_100, 240_000, 2)])
    const restarted = restartProviderJob(run.state, at(10_000))
    assert.ok(restarted !== undefined)
    const again = play(restarted.state, [
      { type: 'requester-back', now: at(12_000) },
      { type: 'inputs-fetched', now: at(12_500) },
      { type: 'started', now: at(13_000) },
      { type: 'finished', now: at(20_000), exitCode: 0, gpuSeconds: 14, outputBytes: 0 }
    ], reduceProvider)
    PLAYS.restarted = [...statuses(run.effects), ...statuses(again.effects)]
    assert.deepEqual(PLAYS.restarted, [[1, 'accepted'], [2, 'fetching-inputs'], [3, 'running'], [12, 'fetching-inputs'], [13, 'running'], [14, 'completed']])
  })

  it('the spec\'s table has a row per state, allows every change seen, and says uploading is never sent', () => {
    const section = specSection('5.7')
    const table = new Map<string, { sent: string, next: string[] }>()
    for (const line of section.split('\n')) {
      const m = /^\| `([a-z-]+)` \| (.*) \| (.*) \|$/.exec(line)
      if (m !== null && (jobStates as readonly string[]).includes(m[1] as string)) {
        table.set(m[1] as string, { sent: m[2] as string, next: [...(m[3] as string).matchAll(/`([a-z-]+)`/g)].map((x) => x[1] as string) })
      }
    }
    assert.deepEqual([...table.keys()].sort(), [...jobStates].sort())
    assert.match(table.get('uploading')?.sent ?? '', /\*\*never\*\*/)
    assert.equal(Object.keys(PLAYS).length, 5, 'the plays above ran first')
    for (const [name, seen] of Object.entries(PLAYS)) {
      assert.ok(!seen.some(([, st]) => st === 'uploading'), `${name} sent uploading`)
      for (let i = 1; i < seen.length; i++) {
        const from = (seen[i - 1] as [unknown, JobState])[1]
        const to = (seen[i] as [unknown, JobState])[1]
        if (from !== to) assert.ok(table.get(from)?.next.includes(to), `${name}: ${from} → ${to} is not in the spec's table`)
      }
    }
  })

  it('a requester bills from the first running, uploading or completed status, not from fetching-inputs', () => {
    // runningRequester's anchor is its `running` status at +2000; without it, a later status decides
    const fresh = runningRequester()
    assert.equal(fresh.award?.runStartedAt, at(2000))
    for (const state of ['uploading', 'completed'] as const) {
      const before = { ...fresh, award: fresh.award === undefined ? undefined : { ...fresh.award, runStartedAt: undefined } }
      const t = reduceRequester(before, { type: 'heartbeat', now: at(5000), provider: P1, seq: 9, state, gpuSeconds: 0 })
      assert.equal(t.state.award?.runStartedAt, at(5000), state)
    }
    const unstarted = { ...fresh, award: fresh.award === undefined ? undefined : { ...fresh.award, runStartedAt: undefined } }
    assert.equal(reduceRequester(unstarted, { type: 'heartbeat', now: at(5000), provider: P1, seq: 9, state: 'fetching-inputs', gpuSeconds: 0 }).state.award?.runStartedAt, undefined)
  })
})
