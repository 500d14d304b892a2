/**
 * `gpumesh job submit|status|logs|result|cancel|verify|list`: the requester's side of the market, through
 * the running daemon's local API (node/market/views.ts describes what it returns). A job is
 * validated here before the daemon is contacted, so a bad job file fails without a daemon.
 */
import { constants as fsConstants } from 'node:fs'
import { access, copyFile, mkdir } from 'node:fs/promises'
import { dirname, join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import type { Command } from 'commander'
import { ApiClient, ApiRequestError } from '../node/api/client.js'
import { relativeSegments } from '../node/executors/jobfs.js'
import { JobSpecError, checkInputFiles, normaliseJobSpec, parseJobFile, validateJobSpec, type JobSpec, type JobSpecFields } from '../node/market/job-spec.js'
import type { JobEvent, JobView, LogsView, OutputFileView, ResultView } from '../node/market/views.js'
import type { JobVerifyView } from '../node/trust/convictions.js'
import { INPUT_TRANSFER_BYTES_PER_SEC, formatMicros, type ReplicationView } from '../protocol/index.js'
import { requireConnected } from './client-commands.js'
import { collect } from './config-flags.js'
import { dataDirOf } from './context.js'
import { elapsed, oneLine, reputationText, statusText, table, toJson } from './format.js'
import { marketClient, recordsOf } from './records.js'

/** How long `job verify` waits for the daemon's re-execution. */
const VERIFY_TIMEOUT_MS = 10 * 60_000

/** A job command that could not do what was asked (exit 1): a job that did not succeed, a refused copy. */
export class JobCommandError extends Error {
  override readonly name = 'JobCommandError'
}

/** Statuses after which a job never changes. */
export const FINAL_STATUSES = ['settled', 'failed', 'cancelled', 'expired']
const POLL_MS = 250

export const out = (text: string): void => { process.stdout.write(`${text}\n`) }

/** The client for a market command: a bootstrap peer's API has no market routes, so say so first. */
export async function clientOf (command: Command): Promise<ApiClient> {
  return marketClient(await ApiClient.fromDataDir(dataDirOf(command)), dataDirOf(command))
}

/** Micros as credits with 2–4 decimals (`1.85`, `0.0123`, `-3.50`). */
export function credits (micros: number): string {
  const rounded = Math.round(Math.abs(micros) / 100) * 100
  return `${micros < 0 && rounded > 0 ? '-' : ''}${formatMicros(rounded)}`
}

/** A long id shortened for tables: `bafyre…k3x4qa`. */
export const abbrev = (id: string): string => id.length > 16 ? `${id.slice(0, 6)}…${id.slice(-6)}` : id

const time = (ms: number): string => new Date(ms).toISOString().slice(11, 19)

/** The job flags of `job submit`: flag, friendly key (node/market/job-spec.ts), spec key, help, repeatable. */
const SPEC_FLAGS: Array<[string, string, string, string, boolean?]> = [
  ['--label <text>', 'label', 'label', 'shown in listings'],
  ['--executor <kind>', 'executor', 'executor', 'process (default), docker or wasm'],
  ['--image <image>', 'image', 'image', 'container image (docker)'],
  ['--env <KEY=VALUE>', 'env', 'env', 'environment variable (repeatable)', true],
  ['--inputs <list>', 'inputs', 'inputs', 'input files: "file" or "path=file", comma-separated (repeatable)', true],
  ['--outputs <list>', 'outputs', 'outputs', 'output paths in the job dir, comma-separated (repeatable)', true],
  ['--max-runtime <duration>', 'maxRuntime', 'maxRuntimeSec', '90s, 15m, 2h or seconds (default 1h)'],
  ['--network', 'network', 'network', 'let the job use the network'],
  ['--gpus <n>', 'gpus', 'gpus', 'GPUs (default 1)'],
  ['--min-vram <GB>', 'minVram', 'minVramGB', 'minimum VRAM per GPU'],
  ['--gpu <model>', 'gpu', 'models', 'allowed GPU model: its slug or whole words of it, e.g. h100 or a100-80gb (never a10 for an A100); repeatable or comma list', true],
  ['--tier <tier>', 'tier', 'tier', 'gold (reserved), silver (on-demand, default) or bronze (preemptible)'],
  ['--max-price <credits>', 'maxPrice', 'maxPrice', 'price cap, credits per GPU-hour (default 10)'],
  ['--max-start-delay <duration>', 'maxStartDelay', 'maxStartDelaySec', 'longest wait for a start (default 5m)'],
  ['--region <region>', 'region', 'regions', 'acceptable region, e.g. eu (repeatable or comma list)', true],
  ['--residency <mode>', 'residency', 'residency', 'strict or prefer (default)'],
  ['--latency-sensitive', 'latencySensitive', 'latencySensitive', 'prefer near providers: RTT weighs 25 % of the price per 100 ms (instead of 2 %)'],
  ['--max-rtt <duration>', 'maxRtt', 'maxRttMs', 'consider only providers within this round trip (80ms, or ms), measured or estimated from their country'],
  ['--bid-window <duration>', 'bidWindow', 'bidWindowMs', 'how long bids are collected: 2s or ms (default 2s)'],
  ['--payment-rule <rule>', 'paymentRule', 'paymentRule', 'first-price (default) or second-score'],
  ['--replicate <k>', 'replicate', 'verification', 'run on k (2 … 5) independent providers and compare the outputs'],
  ['--spotcheck <perMille>', 'spotcheck', 'verification', 're-run this share (per mille, 1 … 1000) of jobs on a second provider and compare']
]

const attribute = (flag: string): string => (flag.split(' ')[0] as string).slice(2).replace(/-([a-z])/g, (_, c: string) => c.toUpperCase())

export function addJobSpecFlags (command: Command): Command {
  for (const [flag, , , help, repeatable] of SPEC_FLAGS) {
    if (repeatable === true) command.option(flag, help, collect)
    else command.option(flag, help)
  }
  return command
}

/** Bad usage: commander's own error path (message, help, exit code 2), like an unknown option. */
function usage (command: Command, message: string): never {
  command.error(`error: ${message}`, { exitCode: 2, code: 'gpumesh.usage' })
}

/**
 * The spec fields set by flags (and the argv after `--`), plus how to name each spec key as a flag.
 * Unreadable flag values are usage errors.
 */
function flagFields (command: Command, argv: string[]): { fields: JobSpecFields, names: Map<string, string> } {
  const opts = command.opts()
  const friendly: Record<string, unknown> = {}
  const flagOf = new Map<string, string>()
  const names = new Map<string, string>()
  for (const [flag, key, spec] of SPEC_FLAGS) {
    const value = opts[attribute(flag)]
    if (value === undefined) continue
    const name = flag.split(' ')[0] as string
    friendly[key] = value
    flagOf.set(key, name)
    names.set(spec, name)
  }
  if (argv.length > 0) {
    friendly.command = argv
    names.set('command', 'command (after --)')
  }
  try {
    return { fields: normaliseJobSpec(friendly, { name: (key) => flagOf.get(key) ?? key }), names }
  } catch (err) {
    if (err instanceof JobSpecError) usage(command, err.problems.join('\n'))
    throw err
  }
}

/** The job from --file and flags (flags win), validated, with problems in flag-set keys named as their flags. */
async function jobSpecOf (command: Command, argv: string[]): Promise<JobSpec> {
  const file = command.opts().file as string | undefined
  const { fields, names } = flagFields(command, argv)
  if (file === undefined && fields.command === undefined) {
    usage(command, 'give the command after --, e.g. `gpumesh job submit --gpus 1 -- python train.py`, or a job file with --file')
  }
  try {
    const spec = file !== undefined ? await parseJobFile(file, fields) : validateJobSpec(fields)
    await checkInputFiles(spec)
    return spec
  } catch (err) {
    if (!(err instanceof JobSpecError)) throw err
    // `gpus: Too big…` → `--gpus: Too big…`; `outputs.0: …` → `--outputs (outputs.0): …`
    const renamed = err.problems.map((p) => {
      const path = p.slice(0, p.indexOf(':'))
      const name = names.get(path.split('.')[0] as string)
      return name === undefined ? p : `${name}${path.includes('.') ? ` (${path})` : ''}${p.slice(path.length)}`
    })
    throw new JobSpecError(renamed, err.source)
  }
}

export async function jobSubmitCommand (argv: string[], command: Command): Promise<void> {
  const opts = command.opts<{ wait?: boolean, json?: boolean }>()
  const spec = await jobSpecOf(command, argv)
  const client = await clientOf(command)
  // an auction with nobody to hear it would only expire: say why instead
  await requireConnected(client)
  const { job } = await client.post<{ job: string }>('/v1/jobs', {}, spec)
  if (opts.wait !== true) return out(opts.json === true ? toJson({ job }) : job)
  const final = await waitForJob(client, job, opts.json === true)
  if (opts.json === true) out(toJson(final))
  else {
    out(`job ${job}: ${progressLine(final)}${final.receipt !== undefined ? ` (exit ${final.receipt.exitCode})` : ''}`)
    if (final.receipt !== undefined) printOutputs((await client.get<ResultView>('/v1/job/result', { id: job })).outputs)
  }
  if (final.status !== 'settled' || final.receipt?.exitCode !== 0) throw new JobCommandError(failureOf(final))
}

/** Why a final job did not succeed, in one line. */
function failureOf (job: JobView): string {
  if (job.status === 'settled') return `job ${job.id} ran but exited with code ${job.receipt?.exitCode ?? '?'}`
  return `job ${job.id} ${statusText(job.status, job.reason)}`
}

/** The one progress line for a job's state, e.g. `bidding (3 bids)`. */
export function progressLine (job: JobView): string {
  switch (job.status) {
    case 'bidding': return `bidding (${job.bids.length} bid${job.bids.length === 1 ? '' : 's'}${job.round > 1 ? `, round ${job.round}` : ''})`
    case 'awarded': return job.award !== undefined ? `awarded to ${job.award.provider} at ${credits(job.award.price)} cr/GPU-h: ${job.award.why}` : 'awarded'
    case 'completed': return `completed exit ${job.receipt?.exitCode ?? '?'}`
    case 'settled': return `settled: paid ${credits(job.paid)} cr`
    default: return statusText(job.status, job.reason)
  }
}

/** One event; its text may quote a provider (a decline reason, a status message): no control characters. */
const eventLine = (e: JobEvent): string => `${time(e.at)}  ${oneLine(e.type, 40).padEnd(10)}  ${oneLine(e.text, 2_000)}`

/** How often `--wait` reads the job's log for its tail, and prints a progress line when not on a TTY. */
const LOG_POLL_MS = 1_000
const PLAIN_PROGRESS_MS = 10_000

/** The last line of a job's log so far, read from where the previous read stopped. */
class LogTail {
  last: string | undefined
  private next = 0
  private partial = ''
  private readAt = 0

  constructor (private readonly client: ApiClient, private readonly id: string) {}

  async poll (now: number): Promise<void> {
    if (now - this.readAt < LOG_POLL_MS) return
    this.readAt = now
    try {
      const view = await this.client.get<LogsView>('/v1/job/logs', { id: this.id, from: this.next }, 10_000)
      this.next = view.next
      const lines = (this.partial + view.text).split('\n')
      this.partial = (lines.pop() ?? '').slice(-4096)
      const last = [...lines, this.partial].reverse().find((l) => l.trim() !== '')
      if (last !== undefined) this.last = last
    } catch (err) {
      // no log yet, or not any more: the tail stays as it was
      if (!(err instanceof ApiRequestError)) throw err
    }
  }
}

/** The status line a TTY shows under the events, redrawn in place (`\r`, erase line). */
class LiveLine {
  private drawn = false
  constructor (private readonly tty: boolean) {}
  draw (text: string): void {
    if (!this.tty) return
    // a pseudo-terminal without a size reports 0 columns
    const columns = process.stdout.columns > 0 ? process.stdout.columns : 80
    process.stdout.write(`\r\x1b[K${oneLine(text, Math.max(20, columns - 1))}`)
    this.drawn = true
  }

  clear (): void {
    if (this.drawn) process.stdout.write('\r\x1b[K')
    this.drawn = false
  }
}

/**
 * Poll the job until it is final, printing each new event. While it runs, also its elapsed time and
 * the last line of its log: on a TTY in a status line redrawn in place (and a line per change of
 * state), otherwise as a plain `progress` line every PLAIN_PROGRESS_MS. With `quiet`, nothing.
 */
export async function waitForJob (client: ApiClient, id: string, quiet: boolean): Promise<JobView> {
  const tty = process.stdout.isTTY === true
  const seen = new Set<string>()
  const live = new LiveLine(tty)
  const tail = new LogTail(client, id)
  let last = ''
  let hinted = false
  let progressAt = 0
  for (;;) {
    const job = await client.get<JobView>('/v1/job', { id }, 10_000)
    const final = FINAL_STATUSES.includes(job.status)
    if (!quiet) {
      const line = progressLine(job)
      const fresh = job.events.filter((e) => !seen.has(`${e.at}/${e.type}/${e.text}`))
      if (fresh.length > 0 || (tty && line !== last) || final) live.clear()
      for (const e of fresh) {
        seen.add(`${e.at}/${e.type}/${e.text}`)
        out(eventLine(e))
      }
      if (tty && line !== last) out(`» ${line}`)
      last = line
      const now = Date.now()
      if (job.status === 'running') {
        if (!hinted) out(`${time(now)}  ${'hint'.padEnd(10)}  its whole output: gpumesh job logs --follow ${id}`)
        hinted = true
        await tail.poll(now)
        const started = job.events.findLast((e) => e.type === 'running')?.at ?? job.submittedAt
        const progress = `running for ${elapsed(now - started)}, ${tail.last !== undefined ? `log: ${tail.last}` : 'no output yet'}`
        if (tty) live.draw(`  ${progress}`)
        else if (progressAt === 0) progressAt = now + PLAIN_PROGRESS_MS
        else if (now >= progressAt) {
          out(oneLine(`${time(now)}  ${'progress'.padEnd(10)}  ${progress}`, 200))
          progressAt = now + PLAIN_PROGRESS_MS
        }
      } else if (!final) {
        live.draw(`  ${job.status} for ${elapsed(now - job.submittedAt)} since submitted`)
      }
    }
    if (final) return job
    await sleep(POLL_MS)
  }
}

function printOutputs (outputs: OutputFileView[]): void {
  if (outputs.length === 0) return out('no outputs')
  out(table(['OUTPUT', 'SIZE', 'FILE'], outputs.map((o) => [o.path, String(o.size), o.file])))
}

/** `job status` lines for a replicated or spot-checked job: each replica, the output groups, the outcome. */
export function replicationLines (r: ReplicationView): string[] {
  const lines = [`  verify:    ${r.mode === 'replicate' ? `replicate ${r.k}` : 'spotcheck: drawn, re-run on a second provider'}${r.shortfall !== undefined ? ` (${r.shortfall})` : ''}`]
  for (const x of r.replicas) {
    lines.push(`             ${x.role} ${x.provider !== undefined ? abbrev(x.provider) : '(bidding)'} attempt ${x.attempt}: ${x.status}` +
      (x.outputs !== undefined ? `, outputs ${abbrev(x.outputs)}` : '') + (x.verdict !== undefined ? `, ${x.verdict}` : ''))
  }
  for (const g of r.groups ?? []) lines.push(`  outputs:   ${g.outputs} by ${g.providers.map(abbrev).join(', ')}`)
  if (r.reexecution !== undefined) lines.push(`  re-run:    ${r.reexecution}`)
  if (r.outcome !== undefined) lines.push(`  compared:  ${r.outcome}`)
  return lines
}

export async function jobStatusCommand (id: string, command: Command): Promise<void> {
  const job = await (await clientOf(command)).get<JobView>('/v1/job', { id })
  if (command.opts().json === true) return out(toJson(job))
  const lines = [
    `job ${job.id}${job.label !== undefined ? ` (${job.label})` : ''}`,
    `  status:    ${statusText(job.status, job.reason)}`,
    `  tier:      ${job.tier}, ${job.gpus} GPU${job.gpus === 1 ? '' : 's'}, ${job.executor}, at most ${credits(job.maxPrice)} cr/GPU-h`,
    `  submitted: ${new Date(job.submittedAt).toISOString()}, round ${job.round}`
  ]
  if (job.award !== undefined) {
    const a = job.award
    lines.push(`  award:     ${a.provider} at ${credits(a.price)} cr/GPU-h (${a.paymentRule}, ${a.considered} bid${a.considered === 1 ? '' : 's'} considered)`, `             ${a.why}`)
    if (a.cached !== undefined) lines.push(`  cached:    ${cachedText(a.cached)}`)
    if (job.providerReputation !== undefined) lines.push(`  reputation: ${reputationText(job.providerReputation)}`)
  }
  if (job.receipt !== undefined) {
    const r = job.receipt
    lines.push(`  receipt:   exit ${r.exitCode}, ${r.gpuSeconds} GPU-s, outputs ${r.outputs} (${r.outputsValid ? 'checked' : 'NOT checked'})`)
  }
  lines.push(`  paid:      ${credits(job.paid)} cr`)
  if (job.replication !== undefined) lines.push(...replicationLines(job.replication))
  if (job.audit !== undefined) lines.push(`  audit:     ${job.audit.status === 'disproved' ? 'RESULT DISPROVED — ' : ''}${job.audit.detail}`)
  out(lines.join('\n'))
  if (job.bids.length > 0) {
    out(`\nbids (round ${job.round}):`)
    const rejected = job.bids.some((b) => b.rejected !== undefined)
    const cached = job.bids.some((b) => b.cached !== undefined)
    out(table(['BID', 'PROVIDER', 'PRICE', 'EFFECTIVE', 'RTT', ...(cached ? ['CACHED'] : []), ...(rejected ? ['REJECTED'] : [])], job.bids.map((b) => [
      abbrev(b.cid), b.provider, credits(b.price), b.effectivePrice !== undefined ? credits(b.effectivePrice) : '-', rttText(b),
      ...(cached ? [String(b.cached ?? 0)] : []), ...(rejected ? [b.rejected ?? ''] : [])
    ])))
  }
  if (job.explanation !== undefined) out(`\nno acceptable bids:\n  ${explanationLines(job.explanation).join('\n  ')}`)
  if (job.events.length > 0) out(`\nevents:\n${job.events.map(eventLine).join('\n')}`)
}

/**
 * The winner's cached inputs: `model.bin, data.bin (≈ 11m40s of transfer saved at 1 MiB/s)`; the saving
 * is what the score counted (protocol/README §5.6 "Cached inputs"), not a measurement.
 */
export function cachedText (c: { paths: string[], savedSec: number }): string {
  const shown = c.paths.length > 4 ? [...c.paths.slice(0, 4), `… ${c.paths.length - 4} more`] : c.paths
  const saved = c.savedSec < 1 ? '< 1s' : `≈ ${elapsed(Math.round(c.savedSec * 1000))}`
  return `${shown.join(', ')} (${saved} of transfer saved at ${INPUT_TRANSFER_BYTES_PER_SEC / (1024 * 1024)} MiB/s)`
}

/** `38 ms`, `~38 ms` (estimated from locations) or `-` (unknown: scored at the default). */
function rttText (b: { rttMs?: number, rttSource?: string }): string {
  if (b.rttMs === undefined) return '-'
  return `${b.rttSource === 'estimated' ? '~' : ''}${b.rttMs} ms`
}

/** The explanation's `summary` lines (protocol/market/explain.ts), or its JSON. */
function explanationLines (explanation: unknown): string[] {
  const summary = (explanation as { summary?: unknown } | null)?.summary
  return Array.isArray(summary) && summary.every((s) => typeof s === 'string') ? summary : toJson(explanation).split('\n')
}

export async function jobLogsCommand (id: string, command: Command): Promise<void> {
  const { follow, json } = command.opts<{ follow?: boolean, json?: boolean }>()
  const client = await clientOf(command)
  let view = await client.get<LogsView>('/v1/job/logs', { id, from: 0 })
  let text = view.text
  if (json !== true) process.stdout.write(view.text)
  while (follow === true && !view.done) {
    await sleep(POLL_MS * 2)
    view = await client.get<LogsView>('/v1/job/logs', { id, from: view.next })
    text += view.text
    if (json !== true) process.stdout.write(view.text)
  }
  if (json === true) return out(toJson({ ...view, text }))
  if (view.cut !== undefined) process.stderr.write(`gpumesh: the log was cut at ${view.next} bytes: ${view.cut}\n`)
}

export async function jobResultCommand (id: string, command: Command): Promise<void> {
  const { out: dir, json } = command.opts<{ out?: string, json?: boolean }>()
  const result = await (await clientOf(command)).get<ResultView>('/v1/job/result', { id })
  if (dir !== undefined) await copyOutputs(result, dir)
  if (json === true) return out(toJson(result))
  out(`job ${result.id}: ${result.status}${result.exitCode !== undefined ? `, exit ${result.exitCode}` : ''}`)
  if (result.receipt !== undefined) out(`receipt ${result.receipt.cid} from ${result.receipt.provider}, outputs ${result.receipt.outputs} (${result.receipt.outputsValid ? 'checked' : 'NOT checked'})`)
  printOutputs(result.outputs)
  if (dir !== undefined) out(`copied ${result.outputs.length} file${result.outputs.length === 1 ? '' : 's'} to ${dir}`)
}

/** Copy the outputs into `dir` under their job paths; refuses (before copying anything) if any target exists. */
async function copyOutputs (result: ResultView, dir: string): Promise<void> {
  if (result.outputs.length === 0) throw new JobCommandError(`job ${result.id} has no outputs to copy (status ${result.status})`)
  const targets = result.outputs.map((o) => {
    const segments = relativeSegments(o.path)
    if (segments === undefined) throw new JobCommandError(`refusing output path ${JSON.stringify(o.path)}: not a plain relative path`)
    return { from: o.file, to: join(dir, ...segments) }
  })
  const existing = (await Promise.all(targets.map(async (t) => await access(t.to).then(() => t.to, () => undefined)))).filter((t) => t !== undefined)
  if (existing.length > 0) throw new JobCommandError(`refusing to overwrite ${existing.join(', ')}`)
  for (const t of targets) {
    await mkdir(dirname(t.to), { recursive: true })
    await copyFile(t.from, t.to, fsConstants.COPYFILE_EXCL)
  }
}

/** Cancel a job; exit 1 when there was nothing to cancel (the job was already final, or got there first). */
export async function jobCancelCommand (id: string, command: Command): Promise<void> {
  const client = await clientOf(command)
  const before = await client.get<JobView>('/v1/job', { id })
  if (FINAL_STATUSES.includes(before.status)) {
    throw new JobCommandError(`job ${id} is already ${before.status}: nothing to cancel`)
  }
  const job = await client.post<JobView>('/v1/job/cancel', { id })
  if (command.opts().json === true) out(toJson(job))
  else out(`job ${job.id}: ${progressLine(job)}`)
  if (job.status !== 'cancelled') throw new JobCommandError(`job ${id} was ${job.status} before the cancel took effect: nothing cancelled`)
}

/**
 * Re-execute a finished deterministic job of this node and compare with its receipt; on a mismatch the
 * daemon has published a `wrong-output` fraud proof: print it and exit 1.
 */
export async function jobVerifyCommand (id: string, command: Command): Promise<void> {
  const result = await (await clientOf(command)).post<JobVerifyView>('/v1/job/verify', { id }, undefined, VERIFY_TIMEOUT_MS)
  if (command.opts().json === true) out(toJson(result))
  else if (result.verified) out(`job ${id}: verified by re-execution (outputs ${result.receiptOutputs})${result.audit !== undefined ? `\naudit after a conviction: ${result.audit.detail}` : ''}`)
  else {
    out([
      `job ${id}: WRONG OUTPUT — provider ${result.provider} signed outputs ${result.receiptOutputs}, re-execution gives ${result.reexecutedOutputs}`,
      `fraud proof ${result.proof?.id ?? '?'} (wrong-output) published; the provider is convicted here`,
      `envelope: ${result.proof?.envelope ?? ''}`,
      ...(result.audit !== undefined ? [`audit after a conviction: ${result.audit.detail}`] : [])
    ].join('\n'))
  }
  if (!result.verified) throw new JobCommandError(`job ${id}: the provider's output is wrong (fraud proof ${result.proof?.id ?? '?'} published)`)
}

export async function jobListCommand (command: Command): Promise<void> {
  // a stopped node lists its jobs from its data dir (cli/records.ts)
  const jobs = await recordsOf<JobView[]>(command, '/v1/jobs', (records) => records.jobs)
  if (command.opts().json === true) return out(toJson(jobs))
  if (jobs.length === 0) return out('no jobs')
  out(table(['ID', 'STATUS', 'TIER', 'PROVIDER', 'PRICE', 'PAID', 'LABEL'], jobs.map((j) => [
    j.id, j.status, j.tier, j.award !== undefined ? abbrev(j.award.provider) : '-',
    j.award !== undefined ? credits(j.award.price) : `≤${credits(j.maxPrice)}`, credits(j.paid), j.label ?? ''
  ])))
}
