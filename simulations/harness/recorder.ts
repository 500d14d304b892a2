/**
 * What happened in a harness run, as plain data: messages by kind (count and bytes, sent and
 * delivered), awards, each node's ledger of each award (the requester's and the provider's view),
 * failure reports, job endings (the requester's) and offer endings (the provider's). `snapshot()`
 * is JSON-ready and ordered, so the same seed gives the same snapshot, byte for byte.
 */
import type { Message, Traffic } from './bus.js'

export interface Count { count: number, bytes: number }

export interface AwardRecord {
  job: string
  attempt: number
  award: string
  requester: string
  provider: string
  price: number
  at: number
  /** The network model's mean round trip between the two (Bus.meanRttMs), ms. */
  rttMs?: number
  /** What the requester's RTT view scored the winner at, and where it came from (absent: unknown, scored at defaultRttMs). */
  scoredRttMs?: number
  rttSource?: 'measured' | 'estimated'
}

/** One side's ledger entry for one award (the daemon's LedgerEntry, node/market/views.ts). */
export interface LedgerLine {
  node: string
  role: 'requester' | 'provider'
  job: string
  award: string
  counterparty: string
  price: number
  /** Latest cumulative payment sent (requester) or accepted (provider), micros. */
  cumulative: number
  /** Payments sent or accepted. */
  payments: number
  /** `open` while the award runs, then how it ended on this side. */
  state: string
  updatedAt: number
}

export interface FailureRecord { reporter: string, subject: string, job: string, reason: string, at: number, counted?: boolean, detail?: string }
/** A run started: `job` on `provider` at `at` (one per attempt that reached the executor). */
export interface StartRecord { job: string, provider: string, at: number }
/** A receipt a provider signed and sent: the output manifest it names (outputs.ts) and the GPU-seconds billed. */
export interface ReceiptRecord { job: string, provider: string, outputs: string, exitCode: number, gpuSeconds: number, at: number }
/**
 * A requester's own run of `job` to verify (issue 11): `reexecute` settles its replicas' split, `proof-check`
 * checks a `wrong-output` fraud proof against `subject` before convicting it.
 */
export interface VerificationRunRecord { job: string, node: string, kind: 'reexecute' | 'proof-check' | 'audit', gpuSeconds: number, at: number, subject?: string }
/**
 * The retroactive audit of a requester's past accepted result changed (protocol/market/result-audit.ts):
 * `disproved` — its re-execution shows the accepted output wrong; `suspect` — a non-deterministic result
 * signed by the convicted `by`; `queued`, `auditing`, `confirmed`, `unaudited`, `failed` otherwise.
 */
export interface AuditRecord { job: string, requester: string, status: string, by: string, at: number }
/** `node` convicted `provider` on a verified fraud proof (`proof`: its id). */
export interface ConvictionRecord { node: string, provider: string, proof: string, job: string, at: number }
/**
 * A requester accepted a provider's outputs: it paid that provider's award a final `settled` payment
 * (the lifecycle's ending for verified outputs), and the receipt it paid for named `outputs`.
 */
export interface AcceptanceRecord { job: string, requester: string, provider: string, attempt: number, outputs: string, at: number }
export interface JobEnding { job: string, requester: string, status: string, reason?: string, at: number }
export interface OfferEnding { node: string, job: string, bid: string, status: string, reason?: string, awarded: boolean, at: number }

/** A disagreement between the two ledgers of one award. */
export interface LedgerMismatch { award: string, job: string, problem: string, requester?: LedgerLine, provider?: LedgerLine }

/** Endings both sides must name alike (protocol/README §7.7); after `failed` each side names its own. */
const SHARED_ENDINGS = new Set(['settled', 'cancelled', 'preempted'])

export interface RunRecord {
  sent: Record<string, Count>
  delivered: Record<string, Count>
  lost: number
  awards: AwardRecord[]
  ledgers: LedgerLine[]
  failures: FailureRecord[]
  jobs: JobEnding[]
  offers: OfferEnding[]
  trace: string[]
}

export class Recorder implements Traffic {
  private readonly sentBy = new Map<string, Count>()
  private readonly deliveredBy = new Map<string, Count>()
  private lostCount = 0
  readonly awards: AwardRecord[] = []
  private readonly lines = new Map<string, LedgerLine>()
  readonly failures: FailureRecord[] = []
  private readonly jobEndings = new Map<string, JobEnding>()
  readonly offers: OfferEnding[] = []
  readonly starts: StartRecord[] = []
  readonly receipts: ReceiptRecord[] = []
  readonly acceptances: AcceptanceRecord[] = []
  readonly verificationRuns: VerificationRunRecord[] = []
  readonly convictions: ConvictionRecord[] = []
  readonly audits: AuditRecord[] = []
  readonly trace: string[] = []
  private readonly byJob = new Map<string, Count>()

  /**
   * `now` gives the time for the trace; `traceOn` false keeps no per-message trace (benchmarks);
   * `perJob` counts each message sent under the job it is about (the simulator's messages per job).
   */
  constructor (private readonly now: () => number, private readonly traceOn = true, private readonly perJob = false) {
    if (!traceOn) this.deliveredMany = (_from, m, count) => { add(this.deliveredBy, m.kind, m.bytes, count) }
  }

  sent (channel: 'gossip' | 'stream', from: string, m: Message): void {
    add(this.sentBy, m.kind, m.bytes)
    if (this.perJob) {
      const job = jobOf(m)
      if (job !== undefined) add(this.byJob, job, m.bytes)
    }
    if (this.traceOn) this.trace.push(`${this.now()} ${channel} ${from} ${m.kind}`)
  }

  delivered (_channel: 'gossip' | 'stream', from: string, to: string, m: Message): void {
    add(this.deliveredBy, m.kind, m.bytes)
    if (this.traceOn) this.trace.push(`${this.now()} ${from}>${to} ${m.kind}`)
  }

  /** Without a trace, a publish's deliveries at one instant are counted at once (the trace needs each). */
  readonly deliveredMany: Traffic['deliveredMany']

  lost (from: string, to: string, m: Message): void {
    this.lostCount++
    if (this.traceOn) this.trace.push(`${this.now()} lost ${from}>${to} ${m.kind}`)
  }

  /**
   * A message the network drops at the first hop (a replay its cache ignores, a forgery its validator
   * rejects): sent once and delivered to `receivers` peers, whose validators stop it there — no handler
   * sees it. Counted under its kind like any message (so it is in the traffic and the job's bytes).
   */
  droppedAtFirstHop (from: string, m: Message, receivers: number): void {
    this.sent('gossip', from, m)
    for (let i = 0; i < receivers; i++) add(this.deliveredBy, m.kind, m.bytes)
  }

  /** Bytes moved outside messages (input and output blobs), counted under `kind`. */
  blob (kind: string, bytes: number): void {
    add(this.sentBy, kind, bytes)
    add(this.deliveredBy, kind, bytes)
  }

  note (line: string): void {
    if (this.traceOn) this.trace.push(`${this.now()} ${line}`)
  }

  /** Messages sent about `job` and their bytes (counted only with `perJob`). */
  jobTraffic (job: string): Count {
    return { ...(this.byJob.get(job) ?? { count: 0, bytes: 0 }) }
  }

  started (s: StartRecord): void {
    this.starts.push(s)
  }

  receipt (r: ReceiptRecord): void {
    this.receipts.push(r)
  }

  verificationRun (r: VerificationRunRecord): void {
    this.verificationRuns.push(r)
  }

  convicted (c: ConvictionRecord): void {
    this.convictions.push(c)
  }

  audited (a: AuditRecord): void {
    this.audits.push(a)
  }

  accepted (a: AcceptanceRecord): void {
    this.acceptances.push(a)
  }

  award (a: AwardRecord): void {
    this.awards.push(a)
  }

  /** Create or update `node`'s ledger line for `award`. */
  ledger (node: string, award: string, init: Omit<LedgerLine, 'node' | 'award' | 'cumulative' | 'payments' | 'state' | 'updatedAt'>, change: Partial<Pick<LedgerLine, 'cumulative' | 'state'>> & { payment?: boolean }): LedgerLine {
    const k = `${node} ${award}`
    const line = this.lines.get(k) ?? { node, award, ...init, cumulative: 0, payments: 0, state: 'open', updatedAt: this.now() }
    if (change.cumulative !== undefined) line.cumulative = Math.max(line.cumulative, change.cumulative)
    if (change.payment === true) line.payments++
    if (change.state !== undefined) line.state = change.state
    line.updatedAt = this.now()
    this.lines.set(k, line)
    return line
  }

  ledgerOf (node: string, award: string): LedgerLine | undefined {
    return this.lines.get(`${node} ${award}`)
  }

  get ledgers (): LedgerLine[] {
    return [...this.lines.values()]
  }

  failure (f: FailureRecord): void {
    this.failures.push(f)
  }

  jobEnded (e: JobEnding): void {
    this.jobEndings.set(e.job, e)
  }

  jobEnding (job: string): JobEnding | undefined {
    return this.jobEndings.get(job)
  }

  offerEnded (e: OfferEnding): void {
    this.offers.push(e)
  }

  count (kind: string, which: 'sent' | 'delivered' = 'sent'): Count {
    return { ...((which === 'sent' ? this.sentBy : this.deliveredBy).get(kind) ?? { count: 0, bytes: 0 }) }
  }

  /**
   * Every award whose both sides keep a ledger (`keepsLedger` says which nodes do: adversaries that
   * run no honest code keep none) checked: both lines exist, hold the same amount, are both closed,
   * and name the same ending when the requester's is settled, cancelled or preempted. A provider that
   * never took the award (it was gone before it came) has no line: that agrees with a requester's
   * line closed at 0.
   */
  ledgerMismatches (keepsLedger: (node: string) => boolean = () => true): LedgerMismatch[] {
    const out: LedgerMismatch[] = []
    for (const a of this.awards) {
      if (!keepsLedger(a.requester) || !keepsLedger(a.provider)) continue
      const r = this.ledgerOf(a.requester, a.award)
      const p = this.ledgerOf(a.provider, a.award)
      const problem = r === undefined
        ? 'the requester has no ledger line'
        : p === undefined
          ? (r.cumulative === 0 && r.state !== 'open' && r.state !== 'settled' ? undefined : 'the provider has no ledger line')
          : r.cumulative !== p.cumulative
            ? `amounts differ: requester ${r.cumulative}, provider ${p.cumulative}`
            : r.state === 'open' || p.state === 'open'
              ? `still open: requester ${r.state}, provider ${p.state}`
              : SHARED_ENDINGS.has(r.state) && r.state !== p.state
                ? `endings differ: requester ${r.state}, provider ${p.state}`
                : undefined
      if (problem !== undefined) out.push({ award: a.award, job: a.job, problem, ...(r !== undefined ? { requester: r } : {}), ...(p !== undefined ? { provider: p } : {}) })
    }
    return out
  }

  snapshot (): RunRecord {
    return {
      sent: sorted(this.sentBy),
      delivered: sorted(this.deliveredBy),
      lost: this.lostCount,
      awards: this.awards.map((a) => ({ ...a })),
      ledgers: this.ledgers.map((l) => ({ ...l })).sort((a, b) => (a.award < b.award ? -1 : a.award > b.award ? 1 : a.role < b.role ? -1 : 1)),
      failures: this.failures.map((f) => ({ ...f })),
      jobs: [...this.jobEndings.values()].map((j) => ({ ...j })).sort((a, b) => (a.job < b.job ? -1 : 1)),
      offers: this.offers.map((o) => ({ ...o })),
      trace: [...this.trace]
    }
  }
}

/** The job a message is about: the request's own id, a round's request, or the payload's `job`. */
/** The job a market message is about (its request's CID string), if any. */
export function jobOf (m: Message): string | undefined {
  const body = m.body as { cid?: { toString: () => string }, request?: { cid: { toString: () => string } }, payload?: { job?: { toString: () => string } } }
  if (m.kind === 'job-request') return body.cid?.toString()
  if (m.kind === 'auction-round') return body.request?.cid.toString()
  return body.payload?.job?.toString()
}

/** Count `n` messages of `bytes` each under `kind`. */
function add (map: Map<string, Count>, kind: string, bytes: number, n = 1): void {
  const c = map.get(kind)
  if (c === undefined) map.set(kind, { count: n, bytes: bytes * n })
  else { c.count += n; c.bytes += bytes * n }
}

function sorted (map: Map<string, Count>): Record<string, Count> {
  const out: Record<string, Count> = {}
  for (const k of [...map.keys()].sort()) out[k] = { ...(map.get(k) as Count) }
  return out
}
