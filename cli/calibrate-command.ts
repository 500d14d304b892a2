/**
 * `gpumesh sim --calibrate [--nodes 20] [--jobs N] [--seed S] [--latency MS] [--bid-window MS] [--out DIR] [--json]`:
 * the calibration workload on real daemons in this process (memory transport) and on the model,
 * printed side by side with the ratio, and written to calibration.json in --out. A flag, not a
 * scenario: it runs in real time on real daemons (seconds to minutes, not deterministic), where a
 * scenario is a pure, seeded, synchronous experiment on the model alone.
 */
import { mkdir, writeFile } from 'node:fs/promises'
import { join, resolve } from 'node:path'
import type { Command } from 'commander'
import { calibrate, DEFAULT_CALIBRATION_BID_WINDOW_MS, DEFAULT_CALIBRATION_LATENCY_MS, type CalibrationResult } from '../calibration/calibrate.js'
import { MIN_CALIBRATION_NODES, type CalibrationRow } from '../simulations/calibration/index.js'
import { toJson } from './format.js'
import { packageVersion } from './version.js'

function whole (flag: string, value: string | undefined, min: number, usage: (message: string) => never): number | undefined {
  if (value === undefined) return undefined
  const n = Number(value)
  if (!Number.isInteger(n) || n < min) usage(`${flag} must be a whole number ≥ ${min}, got ${JSON.stringify(value)}`)
  return n
}

export async function calibrateCommand (command: Command): Promise<void> {
  const opts = command.opts<{ nodes?: string, jobs?: string, seed?: string, latency?: string, bidWindow?: string, out?: string, json?: boolean }>()
  const usage = (message: string): never => command.error(`error: ${message}`, { exitCode: 2, code: 'gpumesh.usage' })
  const seed = whole('--seed', opts.seed, 0, usage) ?? 1
  const nodes = whole('--nodes', opts.nodes, MIN_CALIBRATION_NODES, usage)
  const jobs = whole('--jobs', opts.jobs, 1, usage)
  const latencyMs = whole('--latency', opts.latency, 0, usage) ?? DEFAULT_CALIBRATION_LATENCY_MS
  const bidWindowMs = whole('--bid-window', opts.bidWindow, 50, usage) ?? DEFAULT_CALIBRATION_BID_WINDOW_MS
  const out = resolve(opts.out ?? join('sim-out', 'calibration'))
  const started = Date.now()
  const result = await calibrate({
    seed,
    latencyMs,
    bidWindowMs,
    ...(nodes !== undefined ? { nodes } : {}),
    ...(jobs !== undefined ? { jobs } : {}),
    onProgress: (phase, done, total) => { if (done === total) process.stderr.write(`${phase}: done (${((Date.now() - started) / 1000).toFixed(1)} s)\n`) }
  })
  await mkdir(out, { recursive: true })
  const file = join(out, 'calibration.json')
  const record = { gpumesh: packageVersion(), node: process.version, wallMs: Date.now() - started, peakRssBytes: process.resourceUsage().maxRSS * 1024, ...withoutWorkload(result) }
  await writeFile(file, `${JSON.stringify(record, null, 2)}\n`)
  if (opts.json === true) {
    process.stdout.write(toJson({ ...record, file }))
  } else {
    process.stdout.write(`${result.workload.name}; memory-transport latency ${latencyMs} ms, bid window ${bidWindowMs} ms\n`)
    process.stdout.write(`real mesh: ${result.network.gossipHops.toFixed(2)} gossip hops on average (${result.network.hopShares.map((s, i) => `${i + 1}: ${(s * 100).toFixed(0)} %`).join(', ')}); model: ${result.modelNetwork.gossipHops.toFixed(2)} hops of ${result.modelNetwork.latencyMs} ms\n\n`)
    process.stdout.write(table(result.comparison.rows))
    const w = result.window
    process.stdout.write(`\nbefore the jobs: ${result.announced.provided} of ${result.announced.keys} capability keys on the DHT; in the market window: ${w.dhtRequests} DHT requests answered, event-loop delay p50 ${w.loopDelayP50Ms} / p99 ${w.loopDelayP99Ms} / max ${w.loopDelayMaxMs} ms (one loop for every daemon: time a message waited for the CPU)\n`)
    process.stdout.write(`\n${result.comparison.ok ? 'WITHIN' : 'OUTSIDE'} ${result.comparison.tolerance * 100} % on time to award and bids per job\n`)
    if (result.stuck.length > 0) process.stdout.write(`${result.stuck.length} real jobs not final when the run gave up: ${result.stuck.slice(0, 5).map((s) => `${s.job} ${s.status}`).join(', ')}\n`)
    process.stdout.write(`wrote ${file} in ${((Date.now() - started) / 1000).toFixed(1)} s\n`)
  }
  if (!result.comparison.ok) process.exitCode = 1
}

function withoutWorkload (r: CalibrationResult): Omit<CalibrationResult, 'workload'> & { workload: string } {
  const { workload, ...rest } = r
  return { ...rest, workload: workload.name }
}

function table (rows: readonly CalibrationRow[]): string {
  const num = (x: number | undefined): string => (x === undefined ? 'n/a' : Math.abs(x) >= 100 ? x.toFixed(0) : x.toFixed(2))
  const cells = rows.map((r) => [r.measure, r.unit, num(r.model), num(r.real), r.ratio === undefined ? 'n/a' : r.ratio.toFixed(2), r.within === undefined ? '' : r.within ? 'ok' : 'OFF'])
  const header = ['measure', 'unit', 'model', 'real', 'model/real', 'check']
  const widths = header.map((h, i) => Math.max(h.length, ...cells.map((c) => (c[i] as string).length)))
  const line = (c: string[]): string => c.map((x, i) => (i < 2 ? x.padEnd(widths[i] as number) : x.padStart(widths[i] as number))).join('  ')
  return `${[line(header), ...cells.map(line)].join('\n')}\n`
}
