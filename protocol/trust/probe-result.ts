/**
 * The probe-result a challenger signs after a probe (protocol/README.md "Attestations and probes"), and
 * how anyone reads one: `pass`, `flagged` (the claim is more than 2× faster than measured, including a
 * probe that ran past that deadline) or `failed` (a wrong, missing or refused answer in time). Pure.
 */
import { DAY_MS } from '../limits.js'
import type { ProbeResult } from '../messages/evidence.js'
import { isFlagged, type ProbeClaim } from './probe-throughput.js'

/** How long a probe-result stays valid: a week (the kind allows 30 days); a provider is probed again long before. */
export const PROBE_RESULT_LIFETIME_MS = 7 * DAY_MS

export interface ProbeMeasurement {
  /** The provider that was probed. */
  readonly subject: string
  readonly nonce: Uint8Array
  readonly claim: ProbeClaim
  /** Matrix dimension of the challenge. */
  readonly n: number
  readonly expectedMs: number
  /** True when the answer arrived and passed Freivalds' check. */
  readonly ok: boolean
  readonly rttMs: number
  /** Time from the challenge to the provider's digest, less one round trip. */
  readonly durationMs: number
  /** The device the provider said it used; absent when it never said. */
  readonly device?: 'cpu' | 'gpu'
  /** Why it failed (a ProbeError code and message), for a failed probe. */
  readonly detail?: string
  /** The challenger's clock when it signs. */
  readonly now: number
  readonly lifetimeMs?: number
}

/** The fields every probe-result starts with: header, subject, nonce and kind. */
function resultHead (m: { subject: string, nonce: Uint8Array, now: number, lifetimeMs?: number }, kind: ProbeResult['kind']): Pick<ProbeResult, 'v' | 'issuedAt' | 'expiresAt' | 'subject' | 'nonce' | 'kind'> {
  return { v: 1, issuedAt: m.now, expiresAt: m.now + (m.lifetimeMs ?? PROBE_RESULT_LIFETIME_MS), subject: m.subject, nonce: m.nonce, kind }
}

/** The payload to sign as `probe-result` (kind `freivalds-matmul`). */
export function probeResultPayload (m: ProbeMeasurement): ProbeResult {
  return {
    ...resultHead(m, 'freivalds-matmul'),
    ok: m.ok,
    rttMs: Math.max(0, Math.round(m.rttMs)),
    durationMs: Math.max(0, Math.round(m.durationMs)),
    size: m.n,
    ...(m.device !== undefined ? { device: m.device } : {}),
    model: m.claim.model,
    expectedMs: m.expectedMs,
    ...(m.detail !== undefined ? { detail: m.detail.slice(0, 256) } : {})
  }
}

/** A reachability probe (kind `ping`): did `subject` answer, and how fast. A run of these is its uptime. */
export function pingResultPayload (m: { subject: string, nonce: Uint8Array, ok: boolean, rttMs: number, now: number, detail?: string, lifetimeMs?: number }): ProbeResult {
  const rttMs = Math.max(0, Math.round(m.rttMs))
  return {
    ...resultHead(m, 'ping'),
    ok: m.ok,
    ...(m.ok ? { rttMs } : {}),
    durationMs: rttMs,
    ...(m.detail !== undefined ? { detail: m.detail.slice(0, 256) } : {})
  }
}

export type ProbeVerdict = 'pass' | 'flagged' | 'failed'

/** How a probe-result reads. A matmul result without expectedMs cannot be flagged, only passed or failed. */
export function probeVerdict (result: Pick<ProbeResult, 'ok' | 'durationMs' | 'expectedMs'>): ProbeVerdict {
  if (result.expectedMs !== undefined && isFlagged(result.expectedMs, result.durationMs)) return 'flagged'
  return result.ok ? 'pass' : 'failed'
}
