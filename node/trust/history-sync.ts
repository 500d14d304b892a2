/**
 * The asking side of /gpumesh/history/1.0.0 (protocol/README.md §7.11; issue 11): the shell around the
 * pure HistoryAsker. Peers that speak the protocol are met through identify; each met one is offered to
 * the asker (convictions, until a few peers have answered). A provider this node holds no evidence on
 * (a bidder on its job) is offered too (its history, from a couple of peers). Asks run in the
 * background, bounded by the asker; every envelope in an answer is taken by the market
 * (node/market/history.ts) as gossip would take it, and each one refused as the server's fault
 * counts against that server. Never throws into its callers.
 */
import type { IdentifyResult, PeerId } from '@libp2p/interface'
import { peerIdFromString } from '@libp2p/peer-id'
import { PROTOCOLS } from '../../protocol/index.js'
import { HistoryAsker, type HistoryAnswer, type HistoryAsk, type HistoryAskParams } from '../../protocol/trust/history-asker.js'
import type { GpumeshLibp2p } from '../libp2p.js'
import type { Logger } from '../logger.js'
import type { EvidenceHistory } from '../market/history.js'
import { HistoryFetchError } from '../services/history.js'

export interface HistorySyncOptions {
  node: GpumeshLibp2p
  history: Pick<EvidenceHistory, 'take'>
  /** Whether this node holds evidence on `peer` already (its reputation view names it). */
  knows: (peer: string) => boolean
  now: () => number
  log: Logger
  params?: Partial<HistoryAskParams>
}

export class HistorySync {
  readonly asker: HistoryAsker
  private readonly running = new Set<Promise<void>>()
  private readonly stopper = new AbortController()
  private readonly onIdentify = (event: CustomEvent<IdentifyResult>): void => {
    if (event.detail.protocols.includes(PROTOCOLS.history)) this.run(this.asker.onPeer(event.detail.peerId.toString()))
  }

  private started = false

  constructor (private readonly options: HistorySyncOptions) {
    this.asker = new HistoryAsker(options.node.peerId.toString(), options.params)
  }

  /** Listen for peers, and offer those already connected. */
  start (): void {
    if (this.started) return
    this.started = true
    this.options.node.addEventListener('peer:identify', this.onIdentify)
    void this.speakers().then((peers) => { for (const p of peers) this.run(this.asker.onPeer(p)) })
  }

  /** A provider was met (it bid on this node's job): ask about it unless this node knows it already. */
  providerMet (peer: string): void {
    if (!this.started || this.options.knows(peer)) return
    void this.speakers().then((peers) => { this.askAbout(peer, peers) })
  }

  /** Ask some of `peers` (as the asker chooses) what they hold on `subject`, in the background. */
  askAbout (subject: string, peers: readonly string[]): void {
    if (!this.started) return
    this.run(this.asker.onStranger(subject, peers, this.options.now()))
  }

  /** Wait until no ask is out (tests). */
  async idle (): Promise<void> {
    while (this.running.size > 0) await Promise.allSettled([...this.running])
  }

  async stop (): Promise<void> {
    this.options.node.removeEventListener('peer:identify', this.onIdentify)
    this.started = false
    this.stopper.abort(new Error('the node is stopping'))
    await this.idle()
  }

  /** Connected peers that speak the history protocol. */
  private async speakers (): Promise<string[]> {
    const { node } = this.options
    const out: string[] = []
    for (const peer of new Set(node.getConnections().map((c) => c.remotePeer.toString()))) {
      try {
        const known = await node.peerStore.get(peerIdFromString(peer))
        if (known.protocols.includes(PROTOCOLS.history)) out.push(peer)
      } catch {}
    }
    return out
  }

  private run (asks: HistoryAsk[]): void {
    for (const ask of asks) {
      if (this.stopper.signal.aborted) return
      const p = this.carry(ask).finally(() => { this.running.delete(p) })
      this.running.add(p)
    }
  }

  private async carry (ask: HistoryAsk): Promise<void> {
    const { node, history, log } = this.options
    let answer: HistoryAnswer
    try {
      const peer: PeerId = peerIdFromString(ask.peer)
      const response = await node.services.history.fetch(peer, ask.request, { signal: this.stopper.signal })
      let faults = 0
      let taken = 0
      for (const bytes of response.envelopes) {
        const out = await history.take(bytes, ask.request, ask.peer)
        if (out.fault) faults++
        if (out.taken) taken++
      }
      if (faults > 0) log.warn('a history server sent envelopes it was not asked for, or that fail their checks', { peer: ask.peer, faults, of: response.envelopes.length })
      log.debug('history answer', { peer: ask.peer, q: ask.request.q, envelopes: response.envelopes.length, taken, faults })
      answer = { ok: true, faults, ...(response.next !== undefined ? { next: response.next } : {}) }
    } catch (err) {
      const fault = err instanceof HistoryFetchError && err.fault
      if (fault) log.warn('a history server broke the protocol', { peer: ask.peer, error: (err as Error).message })
      else log.debug('no history answer', { peer: ask.peer, error: (err as Error).message })
      answer = { ok: false, fault }
    }
    if (this.stopper.signal.aborted) return
    this.run(this.asker.onAnswer(ask, answer))
  }
}
