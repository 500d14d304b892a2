/**
 * `gpumesh sim --scenario NAME [--nodes N] [--jobs M] [--seed S] [--trace FILE] [--out DIR] [--json]`:
 * runs a simulator scenario (simulations/scenarios/, pure) on the data shipped in simulations/data/ and
 * writes its report — report.json (deterministic: same data, seed and size → the same bytes), report.md,
 * charts as SVG and PNG (cli/sim-charts.ts) — and run.json beside it with what is not deterministic: the
 * run's wall time, CPU time and peak memory. Progress goes to stderr: a bar on a TTY, plain lines otherwise.
 */
import { readFileSync } from 'node:fs'
import { mkdir, writeFile } from 'node:fs/promises'
import { basename, join, resolve } from 'node:path'
import type { Command } from 'commander'
import { SCENARIOS, scenarioNamed, type ScenarioData, type ScenarioResult } from '../simulations/scenarios/index.js'
import { buildReport, charts, faultMetrics, metrics, reportJson, reportMarkdown, type StrategyMetrics } from '../simulations/report/index.js'
import { toJson } from './format.js'
import { writeCharts } from './sim-charts.js'
import { packageVersion } from './version.js'

/** The data shipped with the package (simulations/data/, beside dist/). */
const DATA = new URL('../../simulations/data/', import.meta.url)

function readData (trace: string | undefined, usage: (message: string) => never): ScenarioData {
  const text = (path: string): string => readFileSync(new URL(path, DATA), 'utf8')
  const data: ScenarioData = {
    alibabaNodes: text('traces/alibaba-gpu-2023/openb_node_list_gpu_node.csv'),
    alibabaPods: text('traces/alibaba-gpu-2023/openb_pod_list_default.csv'),
    prices: text('prices/gpu_prices_snapshot.csv'),
    rtt: text('latency/ripe_atlas_country_rtt_stat.csv')
  }
  if (trace !== undefined) {
    let csv: string
    try {
      csv = readFileSync(trace, 'utf8')
    } catch (err) {
      usage(`--trace ${trace}: ${(err as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : (err as Error).message}`)
    }
    data.trace = { text: csv, source: basename(trace) }
  }
  return data
}

function whole (flag: string, value: string | undefined, min: number, usage: (message: string) => never): number | undefined {
  if (value === undefined) return undefined
  const n = Number(value)
  if (!Number.isInteger(n) || n < min) usage(`${flag} must be a whole number ≥ ${min}, got ${JSON.stringify(value)}`)
  return n
}

/** Progress on stderr: one redrawn bar on a TTY, a plain line per tenth otherwise. */
function progress (tty: boolean): (phase: string, done: number, total: number) => void {
  let lastLine = ''
  return (phase, done, total) => {
    const share = total > 0 ? Math.min(1, done / total) : 1
    if (tty) {
      const width = 30
      const filled = Math.round(share * width)
      process.stderr.write(`\r${phase.padEnd(10)} [${'#'.repeat(filled)}${'.'.repeat(width - filled)}] ${done}/${total}${share >= 1 ? '\n' : ''}`)
      return
    }
    const line = `${phase}: ${Math.floor(share * 10) * 10} % (${done}/${total})`
    if (line !== lastLine) process.stderr.write(`${line}\n`)
    lastLine = line
  }
}

export async function simCommand (command: Command): Promise<void> {
  const opts = command.opts<{ scenario: string, nodes?: string, jobs?: string, seed?: string, trace?: string, out?: string, json?: boolean, font?: string }>()
  // bad usage: commander's own error line and exit code 2, like an unknown option
  const usage = (message: string): never => command.error(`error: ${message}`, { exitCode: 2, code: 'gpumesh.usage' })
  const scenario = (() => {
    try {
      return scenarioNamed(opts.scenario)
    } catch (err) {
      return usage((err as Error).message)
    }
  })()
  const seed = whole('--seed', opts.seed, 0, usage) ?? 1
  const nodes = whole('--nodes', opts.nodes, 1, usage)
  const jobs = whole('--jobs', opts.jobs, 1, usage)
  const out = resolve(opts.out ?? join('sim-out', scenario.name))
  const data = readData(opts.trace, usage)

  const started = Date.now()
  const cpu0 = process.cpuUsage()
  const result: ScenarioResult = scenario.run(data, {
    seed,
    ...(nodes !== undefined ? { nodes } : {}),
    ...(jobs !== undefined ? { jobs } : {}),
    onProgress: progress(process.stderr.isTTY === true)
  })
  const simulatedMs = Date.now() - started
  const m = metrics(result.workload, result.runs, { listPrice: result.listPrice })
  const faults = faultMetrics(result.workload, result.runs, result.faults ?? [])
  const report = buildReport(result.workload, m, { run: { scenario: result.scenario, seed, nodes: result.nodes, jobs: result.jobs }, faults, ...(result.sections !== undefined ? { sections: result.sections } : {}) })
  await mkdir(out, { recursive: true })
  const files: string[] = []
  const put = async (name: string, text: string): Promise<void> => {
    const path = join(out, name)
    await writeFile(path, text)
    files.push(path)
  }
  // a scenario's own results (scale's rows per N, flash-crowd's burst, the traffic) are its sections: report.json's `sections`
  await put('report.json', reportJson(report))
  await put('report.md', `${reportMarkdown(result.workload, m, report, faults, result.sections)}\n## Assumptions\n\n${result.assumptions.map((a) => `- ${a}`).join('\n')}\n`)
  files.push(...await writeCharts(join(out, 'charts'), charts({ report, runs: result.runs, ...(result.messagesVsN !== undefined ? { messagesVsN: result.messagesVsN } : {}) }), opts.font !== undefined ? { fontFile: opts.font } : {}))
  const cpu = process.cpuUsage(cpu0)
  const run = {
    gpumesh: packageVersion(),
    node: process.version,
    scenario: result.scenario,
    seed,
    nodes: result.nodes,
    jobs: result.jobs,
    startedAt: new Date(started).toISOString(),
    simulateMs: simulatedMs,
    wallMs: Date.now() - started,
    cpuMs: Math.round((cpu.user + cpu.system) / 1000),
    peakRssBytes: process.resourceUsage().maxRSS * 1024,
    market: {
      messages: result.market.messages,
      bytes: result.market.bytes,
      ...(result.market.wire !== undefined ? { wireMessages: result.market.wire.messages, wireBytes: result.market.wire.bytes } : {}),
      bidsPerJob: result.market.bidsPerJob,
      events: result.market.events,
      ledgerMismatches: result.market.ledgerMismatches,
      openAtHorizon: result.market.openAtHorizon,
      endedAtMs: result.market.endedAtMs
    }
  }
  await put('run.json', `${JSON.stringify(run, null, 2)}\n`)

  if (opts.json === true) {
    process.stdout.write(toJson({ report: report.run, strategies: m.map(headline), claims: report.claims, run, files }))
    return
  }
  process.stdout.write(`${result.workload.name}\n\n`)
  process.stdout.write(headlineTable(m))
  process.stdout.write(`\n${report.claims.map((c) => `${c.verdict.padEnd(13)} ${c.claim}`).join('\n')}\n\n`)
  process.stdout.write(`wrote ${files.length} files to ${out} in ${(run.wallMs / 1000).toFixed(1)} s (peak ${Math.round(run.peakRssBytes / 1_048_576)} MiB)\n`)
}

function headline (m: StrategyMetrics): Record<string, unknown> {
  return { strategy: m.strategy, jobs: m.jobs, completed: m.completed, unserved: m.unserved, costPerGpuHour: m.costPerGpuHour, costVsList: m.costVsList, utilizationOffered: m.utilizationOffered, utilizationFleet: m.utilizationFleet }
}

function headlineTable (m: readonly StrategyMetrics[]): string {
  const pct = (x: number | null): string => (x === null ? 'n/a' : `${(x * 100).toFixed(1)} %`)
  const cr = (x: number | null): string => (x === null ? 'n/a' : (x / 1_000_000).toFixed(3))
  const rows = m.map((s) => [s.strategy, cr(s.costPerGpuHour), pct(s.costVsList), pct(s.utilizationFleet), `${s.completed}/${s.jobs}`, String(s.unserved)])
  const header = ['strategy', 'cost/GPU-h', 'vs list', 'fleet util.', 'completed', 'unserved']
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] as string).length)))
  const line = (cells: string[]): string => cells.map((c, i) => (i === 0 ? c.padEnd(widths[i] as number) : c.padStart(widths[i] as number))).join('  ')
  return `${[line(header), ...rows.map(line)].join('\n')}\n`
}

/** `gpumesh sim --help`'s list of scenarios. */
export function scenarioHelp (): string {
  return SCENARIOS.map((s) => `  ${s.name.padEnd(12)} ${s.summary} (default ${s.defaults.nodes} nodes, ${s.defaults.jobs} jobs)`).join('\n')
}
