/**
 * A node's reputation view of providers from signed evidence (DESIGN §7, issue 11): pure, one per node.
 *
 *   score = (ok + m × k) / (ok + failed + k)          m = prior mean, k = prior weight
 *   ok, failed = own decayed outcomes + Σ over other reporters r of weight(r) × r's decayed outcomes
 *   weight(r)  = min(reporterWeightCap, trust(r) / trust(self))      (reputation-trust.ts)
 *
 * This node's own records count fully; another reporter's count in proportion to this node's trust in
 * it, which comes only from this node's own experience, passed on (damped) along vouches of peers it
 * trusts. A new identity has no weighted evidence and scores the low prior m; identities that only vouch
 * for each other (or for themselves) hold no trust and gain nothing. Every record decays with the
 * half-life (time comes in as an argument, never from a clock).
 *
 * Memory is bounded: evidence is folded into one pair per (reporter, subject) (reputation-pair.ts), and
 * the pairs are capped — 256 other reporters per subject, 1,024 subjects per other reporter, 16,384
 * subjects of this node's own, 131,072 pairs from others in all (reputation-params.ts). A reporter that
 * would exceed a subject's cap displaces the least trusted one only when it is trusted more; one that
 * would exceed its own cap displaces its lightest pair; past the global cap others' new pairs are dropped.
 *
 * A conviction (a verified fraud proof, protocol/README.md §5.9) is final: the subject scores 0 whatever
 * else is known, and its own reports weigh nothing. Convictions are kept in snapshots.
 *
 * `explain` gives what the score is made of as plain data; `snapshot`/`load` carry the store across a
 * restart and give back bit-identical scores (the pairs keep their order, and the trust computation
 * depends only on it).
 */
import { createReputationParams, type ReputationParams } from './reputation-params.js'
import { addToPair, pairWeightsAt, type EvidencePair } from './reputation-pair.js'
import { computeTrust, type TrustMass } from './reputation-trust.js'
import { evidenceOutcome, type Evidence } from './reputation-evidence.js'
import { loadSnapshot, type ReputationSnapshot } from './reputation-snapshot.js'

export type { Evidence } from './reputation-evidence.js'
export type { ReputationSnapshot } from './reputation-snapshot.js'

/** What `add` did with a record. */
export type AddResult = 'own' | 'counted' | 'self-issued' | 'dropped'

/** One other reporter's part in a score. */
export interface ReporterPart { reporter: string, weight: number, ok: number, failed: number }

/** Why a provider scores as it does, as plain data (for `gpumesh providers` and `job status`). */
export interface ReputationExplanation {
  subject: string
  now: number
  /** This node's own outcomes: decayed weights and plain counts. */
  own: { ok: number, failed: number, okCount: number, failedCount: number }
  /** Others' evidence after weighting by trust; `top` holds the five weightiest reporters. */
  others: { ok: number, failed: number, reporters: number, trusted: number, top: ReporterPart[] }
  prior: { mean: number, weight: number }
  score: number
  /** False when no one has reported anything about the subject (the score is then the prior). */
  known: boolean
  /** The id (payload CID) of the fraud proof that convicted the subject; its score is then 0. */
  convicted?: string
}

const TOP_REPORTERS = 5

export class ReputationStore {
  readonly params: ReputationParams
  /** Every pair, in insertion order (the order the trust computation and a snapshot follow). */
  private readonly pairs = new Map<string, EvidencePair>()
  private readonly bySubject = new Map<string, Map<string, EvidencePair>>()
  private readonly bySigner = new Map<string, Map<string, EvidencePair>>()
  private othersPairs = 0
  private version = 0
  private cache: { version: number, now: number, mass: TrustMass } | undefined
  /** The latest trust computed: used to choose whom a full subject displaces (never for scores). */
  private lastMass: TrustMass = new Map()
  private latest = 0
  private droppedRecords = 0
  /** Convicted subjects → the id of the proof that convicted each, in conviction order. */
  private readonly convictions = new Map<string, string>()

  constructor (readonly self: string, params: Partial<ReputationParams> = {}) {
    this.params = createReputationParams(params)
  }

  /** The latest record time seen: the default `now` of queries. */
  get clock (): number {
    return this.latest
  }

  /** Records refused for a cap since the store began (kept across snapshots). */
  get dropped (): number {
    return this.droppedRecords
  }

  /**
   * Convict `subject` on the verified fraud proof `proof` (its id): its score is 0 from now on.
   * Returns false when it was already convicted (the first proof is kept).
   */
  convict (subject: string, proof: string): boolean {
    if (subject === this.self || subject === '' || this.convictions.has(subject)) return false
    this.convictions.set(subject, proof)
    this.version++
    return true
  }

  /** The id of the proof that convicted `subject`, or undefined. */
  convictionOf (subject: string): string | undefined {
    return this.convictions.get(subject)
  }

  /** Pairs held (own and others'), subjects and reporters. */
  size (): { pairs: number, own: number, subjects: number, reporters: number } {
    return { pairs: this.pairs.size, own: this.bySigner.get(this.self)?.size ?? 0, subjects: this.bySubject.size, reporters: this.bySigner.size }
  }

  /** Fold in one verified record. Throws InvalidEvidenceError for a record out of shape. */
  add (e: Evidence): AddResult {
    const ok = evidenceOutcome(e)
    if (e.signer === e.subject) return 'self-issued'
    let pair = this.pairs.get(key(e.signer, e.subject))
    if (pair === undefined) {
      if (!this.admit(e.signer, e.subject, e.at)) { this.droppedRecords++; return 'dropped' }
      pair = { signer: e.signer, subject: e.subject, ok: 0, failed: 0, at: e.at, okCount: 0, failedCount: 0 }
      this.insert(pair)
    }
    addToPair(pair, ok, e.at, this.params.halfLifeMs)
    if (e.at > this.latest) this.latest = e.at
    this.version++
    return e.signer === this.self ? 'own' : 'counted'
  }

  /** 0..1; the prior for a subject no one has reported on. */
  score (subject: string, now = this.latest): number {
    return this.explain(subject, now).score
  }

  /** 0..1, or undefined for a subject no one has reported anything about. */
  reliability (subject: string, now = this.latest): number | undefined {
    return this.bySubject.has(subject) || this.convictions.has(subject) ? this.score(subject, now) : undefined
  }

  /** This node's own plain counts for `subject`, or undefined when it has none. */
  own (subject: string): { ok: number, failed: number } | undefined {
    const p = this.bySigner.get(this.self)?.get(subject)
    return p === undefined ? undefined : { ok: p.okCount, failed: p.failedCount }
  }

  /** This node's own record of `subject` at `now`: decayed weights and plain counts (zeros when it has none). */
  ownAt (subject: string, now = this.latest): { ok: number, failed: number, okCount: number, failedCount: number } {
    const p = this.bySigner.get(this.self)?.get(subject)
    if (p === undefined) return { ok: 0, failed: 0, okCount: 0, failedCount: 0 }
    const w = pairWeightsAt(p, now, this.params.halfLifeMs)
    return { ok: w.ok, failed: w.failed, okCount: p.okCount, failedCount: p.failedCount }
  }

  /** How much `reporter`'s evidence counts at `now`: 1 for this node, 0..reporterWeightCap for others. */
  trustIn (reporter: string, now = this.latest): number {
    if (reporter === this.self) return 1
    return this.weightOf(this.trust(now), reporter)
  }

  explain (subject: string, now = this.latest): ReputationExplanation {
    const { halfLifeMs, priorMean, priorWeight } = this.params
    const reports = this.bySubject.get(subject)
    const own = { ok: 0, failed: 0, okCount: 0, failedCount: 0 }
    const others = { ok: 0, failed: 0, reporters: 0, trusted: 0, top: [] as ReporterPart[] }
    if (reports !== undefined) {
      let mass: TrustMass | undefined
      for (const pair of reports.values()) {
        const w = pairWeightsAt(pair, now, halfLifeMs)
        if (pair.signer === this.self) {
          Object.assign(own, { ok: w.ok, failed: w.failed, okCount: pair.okCount, failedCount: pair.failedCount })
          continue
        }
        mass ??= this.trust(now)
        const weight = this.weightOf(mass, pair.signer)
        others.reporters++
        if (weight === 0) continue
        others.trusted++
        const part = { reporter: pair.signer, weight, ok: weight * w.ok, failed: weight * w.failed }
        others.ok += part.ok
        others.failed += part.failed
        others.top.push(part)
      }
    }
    others.top.sort((a, b) => (b.ok + b.failed) - (a.ok + a.failed) || (a.reporter < b.reporter ? -1 : 1))
    others.top.length = Math.min(others.top.length, TOP_REPORTERS)
    const ok = own.ok + others.ok
    const failed = own.failed + others.failed
    const convicted = this.convictions.get(subject)
    const score = convicted !== undefined ? 0 : (ok + priorMean * priorWeight) / (ok + failed + priorWeight)
    return { subject, now, own, others, prior: { mean: priorMean, weight: priorWeight }, score, known: reports !== undefined || convicted !== undefined, ...(convicted !== undefined ? { convicted } : {}) }
  }

  /** Grows with every change of the contents (an add, a load): a shell saves a snapshot when it moved. */
  get changes (): number {
    return this.version
  }

  /** Plain data (survives structuredClone and JSON) from which `load` rebuilds this store exactly. */
  snapshot (): ReputationSnapshot {
    const pairs: ReputationSnapshot['pairs'] = []
    for (const p of this.pairs.values()) pairs.push([p.signer, p.subject, p.ok, p.failed, p.at, p.okCount, p.failedCount])
    return { v: 1, self: this.self, clock: this.latest, dropped: this.droppedRecords, pairs, ...(this.convictions.size > 0 ? { convicted: [...this.convictions] } : {}) }
  }

  /** Replace the contents with a snapshot's. Throws InvalidReputationSnapshotError (and changes nothing) for a bad one. */
  load (snapshot: unknown): void {
    const s = loadSnapshot(snapshot, this.self)
    this.pairs.clear()
    this.convictions.clear()
    for (const [subject, proof] of s.convicted ?? []) this.convictions.set(subject, proof)
    this.bySubject.clear()
    this.bySigner.clear()
    this.othersPairs = 0
    this.lastMass = new Map()
    this.cache = undefined
    this.version++
    let lost = 0
    for (const [signer, subject, ok, failed, at, okCount, failedCount] of s.pairs) {
      // a snapshot taken under larger caps than these loses what these do not hold
      if (this.pairs.has(key(signer, subject)) || !this.admit(signer, subject, at)) { lost++; continue }
      this.insert({ signer, subject, ok, failed, at, okCount, failedCount })
    }
    this.latest = s.clock
    this.droppedRecords = s.dropped + lost
  }

  // ------------------------------------------------------------------------------------------

  private trust (now: number): TrustMass {
    const c = this.cache
    if (c !== undefined && c.version === this.version && c.now === now) return c.mass
    const mass = computeTrust(this.pairs.values(), this.self, now, this.params)
    this.cache = { version: this.version, now, mass }
    this.lastMass = mass
    return mass
  }

  private weightOf (mass: TrustMass, reporter: string): number {
    const t = mass.get(reporter)
    if (t === undefined || this.convictions.has(reporter)) return 0
    return Math.min(this.params.reporterWeightCap, t / (mass.get(this.self) as number))
  }

  /** Whether a new pair may enter, evicting one to make room where the caps say so. */
  private admit (signer: string, subject: string, at: number): boolean {
    const p = this.params
    const mine = this.bySigner.get(signer)
    if (signer === this.self) {
      if ((mine?.size ?? 0) >= p.maxOwnSubjects) this.remove(lightest(mine as Map<string, EvidencePair>, at, p.halfLifeMs))
      return true
    }
    if (this.othersPairs >= p.maxOthersPairs) return false
    const reports = this.bySubject.get(subject)
    const ownHere = reports?.has(this.self) === true ? 1 : 0
    if (reports !== undefined && reports.size - ownHere >= p.maxReportersPerSubject) {
      const trustOf = (peer: string): number => this.lastMass.get(peer) ?? 0
      let victim: EvidencePair | undefined
      for (const pair of reports.values()) {
        if (pair.signer === this.self) continue
        if (victim === undefined || trustOf(pair.signer) < trustOf(victim.signer)) victim = pair
      }
      if (victim === undefined || !(trustOf(signer) > trustOf(victim.signer))) return false
      this.remove(victim)
    }
    const theirs = this.bySigner.get(signer)
    if (theirs !== undefined && theirs.size >= p.maxSubjectsPerReporter) this.remove(lightest(theirs, at, p.halfLifeMs))
    return true
  }

  private insert (pair: EvidencePair): void {
    this.pairs.set(key(pair.signer, pair.subject), pair)
    inner(this.bySubject, pair.subject).set(pair.signer, pair)
    inner(this.bySigner, pair.signer).set(pair.subject, pair)
    if (pair.signer !== this.self) this.othersPairs++
  }

  private remove (pair: EvidencePair): void {
    this.pairs.delete(key(pair.signer, pair.subject))
    drop(this.bySubject, pair.subject, pair.signer)
    drop(this.bySigner, pair.signer, pair.subject)
    if (pair.signer !== this.self) this.othersPairs--
    this.version++
  }
}

function key (signer: string, subject: string): string {
  return `${signer}\n${subject}`
}

function inner (outer: Map<string, Map<string, EvidencePair>>, k: string): Map<string, EvidencePair> {
  let m = outer.get(k)
  if (m === undefined) { m = new Map(); outer.set(k, m) }
  return m
}

function drop (outer: Map<string, Map<string, EvidencePair>>, k: string, j: string): void {
  const m = outer.get(k)
  if (m === undefined) return
  m.delete(j)
  if (m.size === 0) outer.delete(k)
}

/** The pair with the least decayed evidence at `now` (the first of equals). */
function lightest (pairs: Map<string, EvidencePair>, now: number, halfLifeMs: number): EvidencePair {
  let best: EvidencePair | undefined
  let least = Infinity
  for (const pair of pairs.values()) {
    const w = pairWeightsAt(pair, now, halfLifeMs)
    if (w.ok + w.failed < least) { least = w.ok + w.failed; best = pair }
  }
  return best as EvidencePair
}
