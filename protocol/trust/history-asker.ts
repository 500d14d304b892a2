/**
 * Whom a node asks for history, and when (protocol/README.md §7.11; issue 11), pure: time comes in as
 * an argument, the asks go out as data, the node's shell (node/trust/history-sync.ts) carries them.
 *
 * - Convictions: each peer that speaks the history protocol, as it is met, until `convictionPeers`
 *   have answered (a node joining learns the network's convictions from a few peers, not from all).
 *   Each peer is asked once; a peer met while `maxInFlight` asks are out waits its turn.
 * - A subject: when the node meets a provider it holds no evidence on (a bidder), ask up to
 *   `subjectPeers` of the peers it has, never the subject itself, at most once per `subjectRetryMs`;
 *   dropped, not queued, when `maxInFlight` asks are out (the next bid asks again).
 * - An answer with a `next` cursor is followed on the same peer, up to `maxPages` pages per ask.
 * - A peer whose answers held `maxFaults` refused envelopes or frames is asked nothing more.
 */
import { BoundedCache } from '../../crypto/index.js'
import { HISTORY_MAX_LIMIT, type HistoryRequest } from './history.js'

export interface HistoryAskParams {
  /** Peers whose conviction lists a node takes (≥ 0; 0: never asks). */
  convictionPeers: number
  /** Peers asked about one subject (≥ 1). */
  subjectPeers: number
  /** Asks out at once, all kinds together (≥ 1). */
  maxInFlight: number
  /** A subject is asked about again only after this long (ms, ≥ 0). */
  subjectRetryMs: number
  /** Pages followed per ask (≥ 1). */
  maxPages: number
  /** Faults after which a peer is no longer asked (≥ 1). */
  maxFaults: number
  /** Envelopes asked for per page (1 … HISTORY_MAX_LIMIT). */
  limit: number
  /** Subjects (and peers) remembered; the least recently used is forgotten first (≥ 1). */
  maxTracked: number
}

export const defaultHistoryAskParams: Readonly<HistoryAskParams> = Object.freeze({
  convictionPeers: 3,
  subjectPeers: 2,
  maxInFlight: 4,
  subjectRetryMs: 10 * 60_000,
  maxPages: 4,
  maxFaults: 3,
  limit: HISTORY_MAX_LIMIT,
  maxTracked: 10_000
})

export class InvalidHistoryAskParamsError extends Error {
  override readonly name = 'InvalidHistoryAskParamsError'
  readonly code = 'INVALID_HISTORY_ASK_PARAMS'
  constructor (readonly field: string, message: string) {
    super(`${field}: ${message}`)
  }
}

const RANGES: Record<keyof HistoryAskParams, [number, number]> = {
  convictionPeers: [0, 64],
  subjectPeers: [1, 64],
  maxInFlight: [1, 1024],
  subjectRetryMs: [0, Number.MAX_SAFE_INTEGER],
  maxPages: [1, 1024],
  maxFaults: [1, 1024],
  limit: [1, HISTORY_MAX_LIMIT],
  maxTracked: [1, 10_000_000]
}

/** Throw InvalidHistoryAskParamsError unless every parameter is a whole number in its range. */
export function validateHistoryAskParams (p: HistoryAskParams): void {
  for (const [field, [min, max]] of Object.entries(RANGES)) {
    const v = p[field as keyof HistoryAskParams]
    if (!Number.isSafeInteger(v) || v < min || v > max) throw new InvalidHistoryAskParamsError(field, `expected a whole number in ${min} … ${max}, got ${v}`)
  }
}

export function createHistoryAskParams (partial: Partial<HistoryAskParams> = {}): HistoryAskParams {
  const params = { ...defaultHistoryAskParams, ...partial }
  validateHistoryAskParams(params)
  return params
}

/** One ask to carry out: a request to one peer (`page` counts from 1). */
export interface HistoryAsk {
  peer: string
  request: HistoryRequest
  page: number
}

/** How an ask went: answered (with the answer's `next` cursor and how many of its envelopes were refused as the server's fault), or failed. */
export type HistoryAnswer =
  | { ok: true, next?: string, faults: number }
  /** No answer: `fault` when the server broke the protocol (a bad or oversized frame), not when it was unreachable or refused. */
  | { ok: false, fault: boolean }

export class HistoryAsker {
  readonly params: HistoryAskParams
  private readonly asked = new Set<string>()
  private readonly waiting: string[] = []
  private answered = 0
  private inFlight = 0
  private convictionsOut = 0
  private readonly faults: BoundedCache<string, number>
  private readonly subjects: BoundedCache<string, number>

  constructor (readonly self: string, params: Partial<HistoryAskParams> = {}) {
    this.params = createHistoryAskParams(params)
    this.faults = new BoundedCache(this.params.maxTracked)
    this.subjects = new BoundedCache(this.params.maxTracked)
  }

  /** A peer that speaks the history protocol was met: whether to ask it for its convictions now. */
  onPeer (peer: string): HistoryAsk[] {
    if (peer === this.self || this.asked.has(peer) || this.waiting.includes(peer) || this.faulty(peer)) return []
    if (this.answered + this.convictionsOut >= this.params.convictionPeers) return []
    if (this.inFlight >= this.params.maxInFlight) {
      if (this.waiting.length < this.params.convictionPeers) this.waiting.push(peer)
      return []
    }
    return [this.convictionAsk(peer)]
  }

  /**
   * A provider this node holds no evidence on was met, with these `peers` to ask (those that speak
   * the protocol): the asks to make now, or none (asked recently, nobody to ask, too many out).
   */
  onStranger (subject: string, peers: readonly string[], now: number): HistoryAsk[] {
    if (subject === this.self) return []
    const last = this.subjects.get(subject)
    if (last !== undefined && now - last < this.params.subjectRetryMs) return []
    const chosen = [...new Set(peers)].filter((p) => p !== subject && p !== this.self && !this.faulty(p)).sort()
      .slice(0, Math.min(this.params.subjectPeers, this.params.maxInFlight - this.inFlight))
    if (chosen.length === 0) return []
    this.subjects.set(subject, now)
    this.inFlight += chosen.length
    return chosen.map((peer) => ({ peer, request: { v: 1, q: 'subject', subject, limit: this.params.limit }, page: 1 }))
  }

  /** An ask ended: the follow-up asks (the next page, a waiting peer's convictions). */
  onAnswer (ask: HistoryAsk, answer: HistoryAnswer): HistoryAsk[] {
    const faults = answer.ok ? answer.faults : (answer.fault ? 1 : 0)
    if (faults > 0) this.faults.set(ask.peer, (this.faults.get(ask.peer) ?? 0) + faults)
    const out: HistoryAsk[] = []
    const more = answer.ok && answer.next !== undefined && ask.page < this.params.maxPages && !this.faulty(ask.peer)
    if (more) {
      // the same slot carries on with the next page
      out.push({ peer: ask.peer, request: { ...ask.request, after: answer.next as string }, page: ask.page + 1 })
      return out
    }
    this.inFlight--
    if (ask.request.q === 'convicted') {
      this.convictionsOut--
      if (answer.ok && faults === 0) this.answered++
    }
    while (this.waiting.length > 0 && this.inFlight < this.params.maxInFlight && this.answered + this.convictionsOut < this.params.convictionPeers) {
      const peer = this.waiting.shift() as string
      if (!this.faulty(peer)) out.push(this.convictionAsk(peer))
    }
    return out
  }

  /** Whether `peer` is asked nothing more. */
  faulty (peer: string): boolean {
    return (this.faults.get(peer) ?? 0) >= this.params.maxFaults
  }

  /** Faults counted against `peer`. */
  faultsOf (peer: string): number {
    return this.faults.get(peer) ?? 0
  }

  /** Peers whose conviction lists were taken. */
  get convictionAnswers (): number {
    return this.answered
  }

  get outstanding (): number {
    return this.inFlight
  }

  private convictionAsk (peer: string): HistoryAsk {
    this.asked.add(peer)
    this.inFlight++
    this.convictionsOut++
    return { peer, request: { v: 1, q: 'convicted', limit: this.params.limit }, page: 1 }
  }
}
