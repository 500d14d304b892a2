/**
 * The retroactive audit after a conviction (protocol/README.md §5.9 "After a conviction", issue 11):
 * when a requester convicts provider P, or takes another node's verified proof against P, it revisits
 * its own past results it accepted (paid as settled) that P signed.
 *
 * - A deterministic (wasm) result is re-executed here: once per job ever, at most `concurrent` at a
 *   time, at most `maxQueued` waiting (beyond it the job is not audited, and the view says so). A run
 *   that names another output than the one accepted disproves the result: every signer of a receipt
 *   for the accepted output — each a co-signer of the same wrong output — is proven wrong by its own
 *   `wrong-output` proof, except those convicted already. A run that agrees confirms the result.
 * - A non-deterministic result cannot be re-run to a verdict: it is marked `suspect` (signed by a
 *   convicted provider), and nobody is accused without a proof.
 *
 * Settled payments are final (they are signed commitments the providers hold): a disproved result is
 * shown to the buyer and convicts its signers, it does not take the payment back.
 *
 * Pure: the agent (requester-agent.ts) feeds convictions and re-execution results in and carries out
 * what comes back (a `reexecute` effect with `audit: true`, `publish-fraud-proof`s, a `result-audited`).
 */

/** The audit's bounds (the params trio: `ResultAuditParams`, `defaultResultAuditParams`, `createResultAuditParams`). */
export interface ResultAuditParams {
  /** Audit re-executions running at once (integer 1 … 64). */
  concurrent: number
  /** Jobs waiting for an audit at most, beside those running (integer 0 … 100,000); beyond it a job is left unaudited. */
  maxQueued: number
}

export const DEFAULT_AUDIT_CONCURRENT = 1
export const DEFAULT_AUDIT_MAX_QUEUED = 1024

export const defaultResultAuditParams: Readonly<ResultAuditParams> = Object.freeze({
  concurrent: DEFAULT_AUDIT_CONCURRENT,
  maxQueued: DEFAULT_AUDIT_MAX_QUEUED
})

/** An audit parameter out of range. */
export class InvalidResultAuditParamsError extends Error {
  override readonly name = 'InvalidResultAuditParamsError'
  readonly code = 'INVALID_AUDIT_PARAMS'
  constructor (readonly field: string, message: string) {
    super(`audit.${field}: ${message}`)
  }
}

export function validateResultAuditParams (p: ResultAuditParams): void {
  const int = (field: keyof ResultAuditParams, min: number, max: number): void => {
    const v = p[field]
    if (typeof v !== 'number' || !Number.isInteger(v) || v < min || v > max) throw new InvalidResultAuditParamsError(field, `expected an integer in ${min} … ${max}, got ${String(v)}`)
  }
  int('concurrent', 1, 64)
  int('maxQueued', 0, 100_000)
}

export function createResultAuditParams (init: Partial<ResultAuditParams> = {}): ResultAuditParams {
  const p = { ...defaultResultAuditParams, ...init }
  validateResultAuditParams(p)
  return p
}

/** A receipt that named the accepted output and was paid as settled. */
export interface AcceptedSigner {
  readonly provider: string
  /** The receipt's CID string (what a `wrong-output` proof embeds). */
  readonly receipt: string
}

/** A past result the requester accepted. */
export interface AcceptedResult {
  readonly job: string
  /** A wasm job: a re-execution settles it. */
  readonly deterministic: boolean
  /** The outputs manifest CID string accepted. */
  readonly outputs: string
  readonly signers: readonly AcceptedSigner[]
}

export type AuditStatus = 'queued' | 'auditing' | 'confirmed' | 'disproved' | 'suspect' | 'unaudited' | 'failed'

/** Where one job's audit stands (the job view shows it). */
export interface AuditRecord {
  status: AuditStatus
  /** The convicted provider whose conviction started it. */
  by: string
  /** One line for the buyer. */
  detail: string
}

/** What the agent carries out. */
export interface AuditStep {
  /** Jobs to re-execute now. */
  start: string[]
  /** Jobs whose audit record changed, with it. */
  changed: Array<{ job: string, record: AuditRecord }>
  /** `wrong-output` proofs to build and publish (a disproved result's co-signers not yet convicted). */
  prove: Array<{ job: string, subject: string, receipt: string }>
}

/** The audits of one requester: which jobs wait, which run, and every job's record. */
export class ResultAudits {
  private readonly records = new Map<string, AuditRecord>()
  private readonly waiting: string[] = []
  private readonly running = new Set<string>()
  private readonly results = new Map<string, AcceptedResult>()

  constructor (readonly params: ResultAuditParams = defaultResultAuditParams) {
    validateResultAuditParams(params)
  }

  /** The job's audit record, if it was ever revisited. */
  recordOf (job: string): AuditRecord | undefined {
    const r = this.records.get(job)
    return r === undefined ? undefined : { ...r }
  }

  /** An audit re-execution of `job` is running (its `reexecuted` answer is the audit's). */
  isRunning (job: string): boolean {
    return this.running.has(job)
  }

  /**
   * `provider` was convicted: queue a re-execution of each deterministic result it signed that was
   * never revisited, mark each such non-deterministic one suspect, and start what the bound allows.
   */
  onConvicted (provider: string, accepted: Iterable<AcceptedResult>): AuditStep {
    const step: AuditStep = { start: [], changed: [], prove: [] }
    for (const result of accepted) {
      if (!result.signers.some((s) => s.provider === provider)) continue
      const before = this.records.get(result.job)
      // once per job: a job audited, queued, running or left out stays as it is; a suspect one stays suspect
      if (before !== undefined) continue
      let record: AuditRecord
      if (!result.deterministic) {
        record = { status: 'suspect', by: provider, detail: `suspect: signed by ${provider}, a convicted provider; not deterministic, so not re-executed, and nobody else is accused without a proof` }
      } else if (this.running.size >= this.params.concurrent && this.waiting.length >= this.params.maxQueued) {
        record = { status: 'unaudited', by: provider, detail: `signed by ${provider}, a convicted provider; not re-executed: the audit queue is full (${this.params.maxQueued})` }
      } else {
        record = { status: 'queued', by: provider, detail: `signed by ${provider}, a convicted provider: waiting to be re-executed` }
        this.waiting.push(result.job)
        this.results.set(result.job, result)
      }
      this.records.set(result.job, record)
      step.changed.push({ job: result.job, record: { ...record } })
      // a job that starts at once does not hold a place in the queue
      this.fill(step)
    }
    return step
  }

  /**
   * The audit re-execution of `job` gave `output` (undefined: it failed, `detail` says why).
   * `convicted`: whether a provider is convicted in this node's view now.
   */
  onReexecuted (job: string, output: string | undefined, convicted: (provider: string) => boolean, detail = ''): AuditStep {
    const step: AuditStep = { start: [], changed: [], prove: [] }
    const result = this.results.get(job)
    const record = this.records.get(job)
    if (!this.running.has(job) || result === undefined || record === undefined) return step
    this.running.delete(job)
    this.results.delete(job)
    let next: AuditRecord
    if (output === undefined) {
      next = { ...record, status: 'failed', detail: `signed by ${record.by}, a convicted provider; the re-execution failed: ${detail.slice(0, 200)}` }
    } else if (output === result.outputs) {
      next = { ...record, status: 'confirmed', detail: `re-executed after ${record.by} was convicted: the same outputs ${output}` }
    } else {
      const subjects = result.signers.filter((s) => !convicted(s.provider))
      for (const s of subjects) step.prove.push({ job, subject: s.provider, receipt: s.receipt })
      next = {
        ...record,
        status: 'disproved',
        detail: `result disproved: re-executed after ${record.by} was convicted, the job gives ${output}, not the ${result.outputs} accepted; ` +
          `${subjects.length} signer(s) proven wrong; the settled payment${result.signers.length > 1 ? 's' : ''} cannot be taken back`
      }
    }
    this.records.set(job, next)
    step.changed.push({ job, record: { ...next } })
    this.fill(step)
    return step
  }

  /** Start queued audits while fewer than `concurrent` run. */
  private fill (step: AuditStep): void {
    while (this.running.size < this.params.concurrent) {
      const job = this.waiting.shift()
      if (job === undefined) return
      const record = this.records.get(job) as AuditRecord
      const running: AuditRecord = { ...record, status: 'auditing', detail: `signed by ${record.by}, a convicted provider: being re-executed` }
      this.records.set(job, running)
      this.running.add(job)
      step.start.push(job)
      const i = step.changed.findIndex((c) => c.job === job)
      if (i >= 0) step.changed.splice(i, 1)
      step.changed.push({ job, record: { ...running } })
    }
  }
}
