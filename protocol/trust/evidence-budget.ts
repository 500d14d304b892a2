/**
 * Which evidence a node keeps (issue 11; protocol/README §7.9 "Budgets"), pure. Any peer could make
 * every node store signed failure reports about unrelated jobs forever (300 reports of 120 KiB grew
 * each node's db/ by 35 MiB and were relayed 300×). A node keeps, and relays, evidence only when it
 * is about a job, an award or a peer it knows, and only within a byte quota per signer and in total.
 */
import type { Kind } from '../kinds.js'
import { BudgetRefusal } from './budget.js'

/** Bytes of evidence kept per signer: fourteen failure reports at their largest (144 KiB), hundreds of receipts. */
export const EVIDENCE_BYTES_PER_SIGNER = 2 * 1024 * 1024
/** Bytes of other peers' evidence kept in all. */
export const EVIDENCE_BYTES_TOTAL = 256 * 1024 * 1024

/** The kinds the evidence topic carries (protocol/README §7.2). */
export const EVIDENCE_KINDS = ['receipt', 'failure-report', 'attestation', 'probe-result', 'fraud-proof'] as const satisfies readonly Kind[]
export type EvidenceKind = typeof EVIDENCE_KINDS[number]

/**
 * Kinds a node takes whatever they concern (still within the quotas): a fraud proof's subject may bid
 * on any node's next job, and the proof is verified, or re-executed, before it counts (§5.9).
 */
export const ALWAYS_RELEVANT_KINDS: readonly EvidenceKind[] = ['fraud-proof']

/** What a piece of evidence is about: the jobs and peers it names (its signer among them only where it speaks of itself). */
export interface EvidenceSubjects {
  jobs: string[]
  peers: string[]
}

interface Named { toString: () => string }

/** The subjects of `kind`'s `payload`, signed by `signer`. */
export function evidenceSubjects (kind: EvidenceKind, payload: Record<string, unknown>, signer: string): EvidenceSubjects {
  const id = (field: string): string[] => payload[field] === undefined ? [] : [(payload[field] as Named).toString()]
  switch (kind) {
    // the provider's own statement of a job it ran, for a requester
    case 'receipt': return { jobs: id('job'), peers: [signer, ...id('requester')] }
    case 'failure-report': return { jobs: id('job'), peers: id('subject') }
    // a provider about its own hardware
    case 'attestation': return { jobs: [], peers: [signer] }
    case 'probe-result': return { jobs: [], peers: id('subject') }
    case 'fraud-proof': return { jobs: id('job'), peers: id('subject') }
  }
}

/** What a node knows: the jobs it took part in or watched, the peers it deals with (itself included). */
export interface Knowledge {
  job: (id: string) => boolean
  peer: (id: string) => boolean
}

/** Whether evidence about `subjects` concerns anything `knows` holds. */
export function isRelevant (subjects: EvidenceSubjects, knows: Knowledge): boolean {
  return subjects.jobs.some((j) => knows.job(j)) || subjects.peers.some((p) => knows.peer(p))
}

export interface EvidenceQuotaOptions {
  perSigner?: number
  total?: number
}

/**
 * Bytes of evidence kept per signer and in all. `charge` admits and records, or refuses with a
 * reason; `load` restores what a store already holds (a restart keeps the quota used).
 */
export class EvidenceQuota {
  readonly perSigner: number
  readonly total: number
  private readonly used = new Map<string, number>()
  private sum = 0

  constructor (options: EvidenceQuotaOptions = {}) {
    this.perSigner = options.perSigner ?? EVIDENCE_BYTES_PER_SIGNER
    this.total = options.total ?? EVIDENCE_BYTES_TOTAL
    for (const [name, v] of [['perSigner', this.perSigner], ['total', this.total]] as const) {
      if (!Number.isInteger(v) || v < 1) throw new RangeError(`an evidence quota's ${name} must be a positive integer, got ${v}`)
    }
  }

  /** Record `bytes` already kept for `signer` (at load; over the quota is kept, and blocks more). */
  load (signer: string, bytes: number): void {
    this.used.set(signer, (this.used.get(signer) ?? 0) + bytes)
    this.sum += bytes
  }

  /** Admit `bytes` more from `signer`: undefined (and recorded) when both quotas allow it, else why not. */
  charge (signer: string, bytes: number): BudgetRefusal | undefined {
    const mine = this.used.get(signer) ?? 0
    if (mine + bytes > this.perSigner) return BudgetRefusal.SIGNER_QUOTA
    if (this.sum + bytes > this.total) return BudgetRefusal.STORE_FULL
    this.used.set(signer, mine + bytes)
    this.sum += bytes
    return undefined
  }

  /** Bytes kept for `signer` (or, without one, in all). */
  usedBy (signer?: string): number {
    return signer === undefined ? this.sum : (this.used.get(signer) ?? 0)
  }
}
