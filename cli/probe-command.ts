/**
 * `gpumesh probe <peer-id>`: the running daemon challenges a provider now with a timed matrix product
 * sized to what its ad claims (protocol/README.md §7.10), and prints measured against claimed, the
 * device label and `flagged` when the claim is more than 2× faster than measured. The daemon signs the
 * result, enters it in its reputation view and publishes it on `gpumesh/2/evidence`.
 */
import type { Command } from 'commander'
import { ApiClient } from '../node/api/client.js'
import type { ProbeSummary } from '../node/trust/prober.js'
import { dataDirOf } from './context.js'
import { UsageError } from './errors.js'
import { toJson } from './format.js'
import { marketClient } from './records.js'

/** The daemon waits for the ad (10 s), the ping (10 s), the digest and the product (10 s): give it that and some. */
const PROBE_API_TIMEOUT_MS = 60_000

const out = (text: string): void => { process.stdout.write(`${text}\n`) }

/** 1.68e13 */
function rate (macPerSec: number): string {
  return `${macPerSec.toExponential(2)} MAC/s`
}

/** A probe in a few words (the PROBE column of `gpumesh providers`). */
export function probeText (p: ProbeSummary, now: number): string {
  const age = `${Math.max(0, Math.round((now - p.at) / 60_000))} min ago`
  if (p.kind === 'ping') return `${p.reading} (${p.reading === 'unreachable' ? 'no answer' : `rtt ${p.measuredMs} ms`}, ${age})`
  const what = `${p.measuredMs} ms vs ${p.expectedMs ?? '?'} ms expected for ${p.model ?? '?'}${p.device !== undefined ? `, ran on ${p.device}` : ''}`
  return `${p.flagged ? 'FLAGGED' : p.reading} (${what}, ${age})`
}

export async function probeCommand (peer: string, command: Command): Promise<void> {
  const opts = command.opts<{ model?: string, json?: boolean }>()
  if (peer.trim() === '') throw new UsageError('a peer id is required: gpumesh probe <peer-id>')
  const dataDir = dataDirOf(command)
  const api = marketClient(await ApiClient.fromDataDir(dataDir), dataDir)
  const p = await api.post<ProbeSummary & { adFetched: boolean }>('/v1/probe', { peer: peer.trim(), model: opts.model }, undefined, PROBE_API_TIMEOUT_MS)
  if (opts.json === true) return out(toJson(p))
  if (p.kind === 'ping') {
    out([
      `probe of ${p.peer}`,
      `  verdict:   ${p.reading.toUpperCase()} — it did not answer the probe's ping (${p.detail ?? 'no detail'})`,
      `  result:    ${p.cid} (signed; counts as a failure of uptime; published on gpumesh/2/evidence)`
    ].join('\n'))
    return
  }
  const verdict = p.flagged
    ? 'FLAGGED — the claim is more than 2× faster than measured'
    : p.reading === 'pass' ? 'pass — computes at least half as fast as claimed' : `FAILED — ${p.detail ?? 'no right answer'}`
  out([
    `probe of ${p.peer} against ${p.model ?? '?'} (${p.claimedDevice ?? '?'}${p.adFetched ? ', from its ad' : ''})`,
    `  verdict:   ${verdict}`,
    `  measured:  ${p.measuredMs} ms for n = ${p.size ?? '?'}${p.measuredMacPerSec !== undefined ? ` (${rate(p.measuredMacPerSec)})` : ''}, computed on ${p.device ?? 'unknown (no answer)'}`,
    `  claimed:   ${p.expectedMs ?? '?'} ms expected${p.claimedMacPerSec !== undefined ? ` (${rate(p.claimedMacPerSec)})` : ''}; flagged above ${2 * (p.expectedMs ?? 0)} ms`,
    ...(p.rttMs !== undefined ? [`  rtt:       ${p.rttMs} ms (not timed)`] : []),
    ...(p.flagged && p.detail !== undefined ? [`  detail:    ${p.detail}`] : []),
    `  result:    ${p.cid} (signed; in this node's reputation view; published on gpumesh/2/evidence)`,
    ...(p.reused === true ? [`  note:      this node's own probe of ${Math.round((Date.now() - p.at) / 1000)} s ago (${p.reason}); the provider takes one probe per peer a minute`] : [])
  ].join('\n'))
}
