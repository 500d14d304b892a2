/**
 * One operator's Sybil identities vouching for each other (issue 11): every `periodMs` each member signs
 * a payment commitment to each of the next `fanout` members of the ring (in the order given, wrapping) and
 * gossips it on the evidence topic, as a requester's payment to a provider that delivered. The jobs and
 * awards they name never existed (made-up CIDs): no honest node can tell from the message alone, so the
 * evidence is modelled as admitted (node/market/market.ts admitEvidence lets through evidence about a peer
 * the node is connected to, and Sybils connect to everyone) and reaches every requester's reputation view
 * (requester-node.ts `evidence`), where it counts only as far as that requester trusts its signer.
 */
import { EVIDENCE_TOPIC } from '../../protocol/constants.js'
import { message } from './messages.js'
import { header } from './payloads.js'
import type { World } from './world.js'

export interface SybilRingSpec {
  /** The Sybils' peer ids, in ring order. */
  members: readonly string[]
  /** Time between two rounds of vouching, ms (> 0). */
  periodMs: number
  /** Payments each member signs per round (to the next members; capped at members − 1). */
  fanout: number
  /** The first and the last round's times, ms since the epoch (the run's clock). */
  fromMs: number
  untilMs: number
  /** Micros each payment says it paid (default 1 credit). */
  amount?: number
}

/** A made-up payment is valid this long (as the requester shell seals payments). */
const PAYMENT_LIFETIME_MS = 30 * 24 * 3_600_000 - 1

/** Schedule the ring's rounds on the world's clock; returns how many payments it will send. */
export function scheduleSybilRing (world: World, spec: SybilRingSpec): number {
  const n = spec.members.length
  const fanout = Math.max(0, Math.min(spec.fanout, n - 1))
  if (fanout === 0 || !(spec.periodMs > 0)) return 0
  let sent = 0
  let round = 0
  for (let t = spec.fromMs; t <= spec.untilMs; t += spec.periodMs) {
    round++
    const seq = round
    world.scheduler.at(t, () => {
      const now = world.scheduler.now()
      spec.members.forEach((signer, i) => {
        for (let d = 1; d <= fanout; d++) {
          const payee = spec.members[(i + d) % n] as string
          const payload = {
            ...header(now, PAYMENT_LIFETIME_MS),
            job: world.ids.cid('sybil-job'),
            award: world.ids.cid('sybil-award'),
            payee,
            seq,
            interval: 1,
            cumulative: spec.amount ?? 1_000_000,
            gpuSeconds: 3_600
          }
          world.bus.publish(signer, [EVIDENCE_TOPIC], message('payment', { cid: world.ids.cid('payment'), signer, payload }))
        }
      })
    })
    sent += n * fanout
  }
  return sent
}
