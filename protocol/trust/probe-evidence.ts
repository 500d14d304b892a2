/**
 * What a signed probe-result counts for in a reputation view (README "Trust" → "Attestations and
 * probes"). Each result is one outcome, weighed as one job's receipt or failure is:
 *
 *   pass         the answer was right and the claim held (≤ 2× the expected time) → 1 ok
 *   flagged      the claim is more than 2× faster than measured, right answer or not → 1 failure
 *   failed       a wrong, mismatched or missing answer → 1 failure
 *   unreachable  a reachability probe (kind `ping`) with no answer → 1 failure (of uptime)
 *   reachable    a ping that was answered → 1 ok
 *
 * A refused probe (the provider's rate limit) signs no result and counts for nothing. Pure.
 */
import type { ProbeResult } from '../messages/evidence.js'
import { probeVerdict, type ProbeVerdict } from './probe-result.js'
import type { Evidence } from './reputation-evidence.js'

export type ProbeReading = ProbeVerdict | 'unreachable'

/** How a probe-result reads: a ping nobody answered is `unreachable`, else probeVerdict. */
export function probeReading (result: Pick<ProbeResult, 'kind' | 'ok' | 'durationMs' | 'expectedMs'>): ProbeReading {
  if (result.kind === 'ping' && !result.ok) return 'unreachable'
  return probeVerdict(result)
}

/** The reputation record of a probe-result signed by `signer`: ok only when it reads `pass`. */
export function probeEvidence (signer: string, result: Pick<ProbeResult, 'subject' | 'kind' | 'ok' | 'durationMs' | 'expectedMs' | 'issuedAt'>): Evidence {
  return { signer, subject: result.subject, kind: 'probe', ok: probeReading(result) === 'pass', at: result.issuedAt }
}
