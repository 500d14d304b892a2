/**
 * Builders for the job lifecycle tests (test/unit/protocol/market/lifecycle*.test.ts): the instants,
 * ids and award terms they share, `play` over a list of events (through any step function, so a test
 * may check every transition on the way), and a provider job running since +2000.
 */
import {
  reduceProvider, reduceRequester, startProviderJob, startRequesterJob,
  type AwardTerms, type ProviderEffect, type ProviderEvent, type ProviderJob, type RequesterEffect, type RequesterEvent, type RequesterJob, type RequesterJobInit
} from '../../protocol/market/lifecycle.js'

/** 2026-01-01T00:00:00Z */
export const T0 = 1_767_225_600_000
export const at = (ms: number): number => T0 + ms

export const JOB = 'bafyreijob'
export const REQ = 'req-peer'
export const P1 = 'provider-1'
/** 1000 micros per GPU-second: 2 GPUs × 60 s = 120_000 micros per interval. */
export const PRICE = 3_600_000
export const LEASE_MS = 90_000

/** A 2-GPU job for up to an hour, a 1 s bid window, 90 s leases and 60 s billing intervals. */
export const INIT: RequesterJobInit = { job: JOB, bidWindowMs: 1000, expiresAt: at(3_600_000), gpus: 2, maxRuntimeSec: 3600, leaseMs: LEASE_MS, billingIntervalSec: 60 }

export const TERMS: AwardTerms = { award: 'bafyreiaward', bid: 'b1', attempt: 1, price: PRICE, leaseMs: LEASE_MS, billingIntervalSec: 60 }

type Step<S, E, F> = (s: S, e: E) => { state: S, effects: F[] }

/** Reduce `events` in order from `state` through `step`; the last state and every effect. */
export function play<S, E, F> (state: S, events: E[], step: Step<S, E, F>): { state: S, effects: F[] } {
  const effects: F[] = []
  for (const e of events) {
    const t = step(state, e)
    state = t.state
    effects.push(...t.effects)
  }
  return { state, effects }
}

export function playR (state: RequesterJob, events: RequesterEvent[], step: Step<RequesterJob, RequesterEvent, RequesterEffect> = reduceRequester): { state: RequesterJob, effects: RequesterEffect[] } {
  return play(state, events, step)
}

export function playP (state: ProviderJob, events: ProviderEvent[], step: Step<ProviderJob, ProviderEvent, ProviderEffect> = reduceProvider): { state: ProviderJob, effects: ProviderEffect[] } {
  return play(state, events, step)
}

export const tick = (ms: number): { type: 'tick', now: number } => ({ type: 'tick', now: at(ms) })

export function only<E extends { type: string }> (effects: E[], type: E['type']): E[] {
  return effects.filter((e) => e.type === type)
}

/** A provider job for bid b1 with `gpus` GPUs, awarded `terms` at +1000, accepted at +1100, started at +2000. */
export function runningProvider (gpus = 2, terms: AwardTerms = TERMS, step?: Step<ProviderJob, ProviderEvent, ProviderEffect>): ProviderJob {
  return playP(startProviderJob({ job: JOB, requester: REQ, bid: 'b1', gpus, offerExpiresAt: at(60_000) }, at(0)).state, [
    { type: 'award-received', now: at(1000), from: REQ, award: terms },
    { type: 'accept-award', now: at(1100) },
    { type: 'inputs-fetched', now: at(1500) },
    { type: 'started', now: at(2000) }
  ], step).state
}

/** A running-status heartbeat from P1 at +ms with status seq `seq`. */
export const hb = (ms: number, seq: number, gpuSeconds = 0): RequesterEvent => ({ type: 'heartbeat', now: at(ms), provider: P1, seq, state: 'running', gpuSeconds })

/** A payment from the requester at +ms: `cumulative` micros through billing interval `interval`. */
export const payment = (ms: number, cumulative: number, interval: number): ProviderEvent => ({ type: 'payment-received', now: at(ms), from: REQ, cumulative, interval })

/** A requester job awarded to P1 at +1000, accepted at +1200, reported running at +2000 (the billing anchor). */
export function runningRequester (init: Partial<RequesterJobInit> = {}): RequesterJob {
  return playR(startRequesterJob({ ...INIT, ...init }, at(0)).state, [
    { type: 'bid-received', now: at(100), bid: 'b1', provider: P1, price: PRICE, effectivePrice: PRICE },
    tick(1000),
    { type: 'bidding-closed', now: at(1000), winner: { bid: 'b1', provider: P1, price: PRICE } },
    { type: 'award-accepted', now: at(1200), provider: P1 },
    hb(2000, 1)
  ]).state
}
