/**
 * Idle cost of real `gpumesh` daemons, each a separate OS process over TCP + Noise, the way users run
 * them: resident memory (VmRSS) and CPU (utime + stime, as % of one core) sampled from /proc over a
 * window after the daemon has settled, plus start-up and SIGTERM shutdown times. Used by bench/dht.ts;
 * `node --import ./dist/node/polyfill.js dist/bench/dht-idle.js` runs it alone.
 *
 * Env: BENCH_IDLE_S (window, default 20), BENCH_IDLE_SETTLE_S (default 5), BENCH_IDLE_NETWORK=0 skips
 * the small-network case, BENCH_IDLE_PEERS (extra selling nodes in it, default 1).
 */
import { spawn, execFileSync, type ChildProcess } from 'node:child_process'
import { rmSync } from 'node:fs'
import { mkdtemp, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { ApiClient } from '../node/api/client.js'
import type { StatusInfo } from '../node/daemon.js'
import type { FindResult } from '../node/discovery.js'

/** dist/cli/bin.js */
export const BIN = join(dirname(fileURLToPath(import.meta.url)), '..', 'cli', 'bin.js')
const GPU = 'NVIDIA H100 80GB HBM3:81559x8'
const READY_LINE = 'press Ctrl+C to stop'

/** Every child this module started, so that an error or Ctrl+C never leaves one behind. */
const children = new Set<ChildProcess>()
process.on('exit', () => { for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL') })

/** Temp dirs in use, removed by cleanupNow() when the benchmark is interrupted. */
export const tempRoots = new Set<string>()

/** On Ctrl+C or SIGTERM: kill every child and remove every temp dir, synchronously. */
export function cleanupNow (): void {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL')
  for (const root of tempRoots) rmSync(root, { recursive: true, force: true })
}

async function tempRoot (): Promise<string> {
  const root = await mkdtemp(join(tmpdir(), 'gpumesh-bench-idle-'))
  tempRoots.add(root)
  return root
}

async function removeRoot (root: string): Promise<void> {
  await rm(root, { recursive: true, force: true })
  tempRoots.delete(root)
}

export interface Started { child: ChildProcess, pid: number, dataDir: string, startMs: number, stdout: string, stderr: () => string }

/** Spawn `gpumesh <args>` and wait for its "press Ctrl+C to stop" line. */
export async function startGpumesh (args: string[], dataDir: string, timeoutMs = 60_000): Promise<Started> {
  const started = performance.now()
  const child = spawn(process.execPath, [BIN, ...args, '--data-dir', dataDir], { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, GPUMESH_DATA_DIR: dataDir } })
  children.add(child)
  child.on('exit', () => { children.delete(child) })
  let stdout = ''
  let stderr = ''
  child.stderr?.setEncoding('utf8').on('data', (d: string) => { stderr += d })
  return await new Promise<Started>((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL')
      reject(new Error(`gpumesh ${args.join(' ')} not ready after ${timeoutMs} ms; stderr: ${stderr.slice(-500)}`))
    }, timeoutMs)
    child.on('error', (err) => { clearTimeout(timer); reject(err) })
    child.on('exit', (code, signal) => {
      clearTimeout(timer)
      reject(new Error(`gpumesh ${args.join(' ')} exited (${code ?? signal}) before it was ready; stderr: ${stderr.slice(-800)}`))
    })
    child.stdout?.setEncoding('utf8').on('data', (d: string) => {
      stdout += d
      if (stdout.includes(READY_LINE)) {
        clearTimeout(timer)
        resolve({ child, pid: child.pid as number, dataDir, startMs: performance.now() - started, stdout, stderr: () => stderr })
      }
    })
  })
}

/** SIGTERM, then the time until the process exits (SIGKILL after `timeoutMs`). */
export async function stopGpumesh (p: Started, timeoutMs = 20_000): Promise<{ ms: number, code: number | null, killed: boolean }> {
  if (p.child.exitCode !== null || p.child.signalCode !== null) return { ms: 0, code: p.child.exitCode, killed: false }
  const started = performance.now()
  return await new Promise((resolve) => {
    let killed = false
    const timer = setTimeout(() => { killed = true; p.child.kill('SIGKILL') }, timeoutMs)
    p.child.once('exit', (code) => {
      clearTimeout(timer)
      resolve({ ms: performance.now() - started, code, killed })
    })
    p.child.kill('SIGTERM')
  })
}

let clockTicks: number | undefined
function ticksPerSecond (): number {
  if (clockTicks === undefined) {
    try {
      clockTicks = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100
    } catch {
      clockTicks = 100
    }
  }
  return clockTicks
}

interface ProcSample { rssKB: number, anonKB: number, fileKB: number, hwmKB: number, cpuTicks: number, at: number }

async function sampleProc (pid: number): Promise<ProcSample> {
  const [status, stat] = await Promise.all([readFile(`/proc/${pid}/status`, 'utf8'), readFile(`/proc/${pid}/stat`, 'utf8')])
  const field = (name: string): number => Number(new RegExp(`^${name}:\\s+(\\d+)`, 'm').exec(status)?.[1] ?? NaN)
  // fields after "(comm)": state is field 3, utime field 14, stime field 15
  const rest = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
  return { rssKB: field('VmRSS'), anonKB: field('RssAnon'), fileKB: field('RssFile'), hwmKB: field('VmHWM'), cpuTicks: Number(rest[11]) + Number(rest[12]), at: performance.now() }
}

export interface IdleStats { rssMeanMB: number, rssMaxMB: number, anonMeanMB: number, fileMeanMB: number, peakRssMB: number, cpuPercent: number, seconds: number, samples: number }

/** Sample several processes once a second for `seconds`. */
export async function sampleIdle (pids: number[], seconds: number): Promise<IdleStats[]> {
  const samples: ProcSample[][] = pids.map(() => [])
  const end = performance.now() + seconds * 1000
  while (true) {
    const round = await Promise.all(pids.map(sampleProc))
    round.forEach((s, i) => samples[i]?.push(s))
    if (performance.now() >= end) break
    await new Promise((resolve) => setTimeout(resolve, Math.min(1000, Math.max(0, end - performance.now()))))
  }
  return samples.map((list) => {
    const first = list[0] as ProcSample
    const last = list[list.length - 1] as ProcSample
    const wall = (last.at - first.at) / 1000
    return {
      rssMeanMB: list.reduce((a, s) => a + s.rssKB, 0) / list.length / 1024,
      rssMaxMB: Math.max(...list.map((s) => s.rssKB)) / 1024,
      anonMeanMB: list.reduce((a, s) => a + s.anonKB, 0) / list.length / 1024,
      fileMeanMB: list.reduce((a, s) => a + s.fileKB, 0) / list.length / 1024,
      peakRssMB: last.hwmKB / 1024,
      cpuPercent: wall > 0 ? (last.cpuTicks - first.cpuTicks) / ticksPerSecond() / wall * 100 : NaN,
      seconds: wall,
      samples: list.length
    }
  })
}

export interface IdleRow {
  name: string
  startMs: number
  stats: IdleStats
  stop: { ms: number, code: number | null, killed: boolean }
  note?: string
}

const sleep = async (ms: number): Promise<void> => { await new Promise((resolve) => setTimeout(resolve, ms)) }

const NODE_ARGS = ['--no-detect-gpus', '--no-community-bootstrap', '--log-level', 'warn']

/** One `gpumesh node start` on its own: no peers, a network of one. */
export async function idleAlone (windowS: number, settleS: number): Promise<IdleRow[]> {
  const root = await tempRoot()
  let node: Started | undefined
  try {
    node = await startGpumesh(['node', 'start', '--listen', '/ip4/127.0.0.1/tcp/0', '--declare-gpu', GPU, ...NODE_ARGS], join(root, 'node'))
    await sleep(settleS * 1000)
    const [stats] = await sampleIdle([node.pid], windowS)
    const status = await (await ApiClient.fromDataDir(node.dataDir)).get<StatusInfo>('/v1/status')
    const provided = status.capabilityKeys.filter((k) => k.provided).length
    const startMs = node.startMs
    const stop = await stopGpumesh(node)
    return [{ name: 'node start, alone', startMs, stats: stats as IdleStats, stop, note: `${status.connections} connections, ${provided}/${status.capabilityKeys.length} keys provided` }]
  } finally {
    if (node !== undefined) await stopGpumesh(node, 5000)
    await removeRoot(root)
  }
}

/**
 * A small real network: one `gpumesh bootstrap`, `extraPeers` selling nodes, then the measured node
 * (all over TCP + Noise on 127.0.0.1). Samples the measured node and the bootstrap peer together;
 * afterwards asks the measured node for providers over its local API.
 */
export async function idleInNetwork (windowS: number, settleS: number, extraPeers: number): Promise<IdleRow[]> {
  const root = await tempRoot()
  const running: Started[] = []
  try {
    const local = ['--listen', '/ip4/127.0.0.1/tcp/0', '--allow', '/ip4/127.0.0.1', '--allow-colocation', ...NODE_ARGS]
    const boot = await startGpumesh(['bootstrap', ...local], join(root, 'bootstrap'))
    running.push(boot)
    const addr = /listening: (\/ip4\/127\.0\.0\.1\/tcp\/\d+\/p2p\/\S+)/.exec(boot.stdout)?.[1]
    if (addr === undefined) throw new Error(`no TCP address in the bootstrap peer's output: ${boot.stdout}`)
    for (let i = 0; i < extraPeers; i++) {
      running.push(await startGpumesh(['node', 'start', ...local, '--bootstrap', addr, '--declare-gpu', GPU, '--region', 'eu-west'], join(root, `peer-${i}`)))
    }
    const node = await startGpumesh(['node', 'start', ...local, '--bootstrap', addr, '--declare-gpu', GPU, '--region', 'eu-west'], join(root, 'node'))
    running.push(node)
    await sleep(settleS * 1000)
    const [nodeStats, bootStats] = await sampleIdle([node.pid, boot.pid], windowS)
    const api = await ApiClient.fromDataDir(node.dataDir)
    const status = await api.get<StatusInfo>('/v1/status')
    const provided = status.capabilityKeys.filter((k) => k.provided).length
    const found = await api.get<FindResult>('/v1/providers', { region: 'eu', minVram: 40 })
    const note = `${status.connections} connections, routing table ${status.dht.routingTable}, ${provided}/${status.capabilityKeys.length} keys provided; ` +
      `find-providers(eu, ≥40 GB) over TCP: ${found.providers.length}/${extraPeers + 1} providers in ${found.elapsedMs.toFixed(0)} ms`
    const nodeStop = await stopGpumesh(node)
    const rows: IdleRow[] = [{ name: `node start, with bootstrap + ${extraPeers} peer(s)`, startMs: node.startMs, stats: nodeStats as IdleStats, stop: nodeStop, note }]
    for (const p of running.slice(1, -1)) await stopGpumesh(p)
    const bootStop = await stopGpumesh(boot)
    rows.push({ name: 'bootstrap peer in that network', startMs: boot.startMs, stats: bootStats as IdleStats, stop: bootStop })
    return rows
  } finally {
    for (const p of running.reverse()) await stopGpumesh(p, 5000)
    await removeRoot(root)
  }
}

export function printIdleRows (rows: IdleRow[]): void {
  const width = Math.max(...rows.map((r) => r.name.length))
  console.log(`${'process'.padEnd(width)}  ${'start'.padStart(8)}  ${'RSS mean'.padStart(9)}  ${'RSS max'.padStart(8)}  ${'anon/file mean'.padStart(15)}  ${'peak (HWM)'.padStart(10)}  ${'CPU'.padStart(7)}  ${'window'.padStart(7)}  ${'SIGTERM→exit'.padStart(12)}`)
  for (const r of rows) {
    const stop = `${r.stop.ms.toFixed(0)} ms${r.stop.killed ? ' KILLED' : r.stop.code !== 0 ? ` rc=${String(r.stop.code)}` : ''}`
    console.log(`${r.name.padEnd(width)}  ${(Number.isNaN(r.startMs) ? '—' : `${r.startMs.toFixed(0)} ms`).padStart(8)}  ${`${r.stats.rssMeanMB.toFixed(1)} MB`.padStart(9)}  ${`${r.stats.rssMaxMB.toFixed(1)} MB`.padStart(8)}  ${`${r.stats.anonMeanMB.toFixed(0)}/${r.stats.fileMeanMB.toFixed(0)} MB`.padStart(15)}  ${`${r.stats.peakRssMB.toFixed(1)} MB`.padStart(10)}  ${`${r.stats.cpuPercent.toFixed(2)} %`.padStart(7)}  ${`${r.stats.seconds.toFixed(0)} s`.padStart(7)}  ${stop.padStart(12)}`)
    if (r.note !== undefined) console.log(`${''.padEnd(width)}  ${r.note}`)
  }
}

export interface IdleOptions { windowS: number, settleS: number, network: boolean, extraPeers: number }

export function idleOptionsFromEnv (): IdleOptions {
  return {
    windowS: Number(process.env.BENCH_IDLE_S ?? 20),
    settleS: Number(process.env.BENCH_IDLE_SETTLE_S ?? 5),
    network: process.env.BENCH_IDLE_NETWORK !== '0',
    extraPeers: Number(process.env.BENCH_IDLE_PEERS ?? 1)
  }
}

/** For reference: a bare Node.js process doing nothing, sampled the same way (shorter window). */
export async function idleBareNode (windowS: number): Promise<IdleRow> {
  const child = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { stdio: 'ignore' })
  children.add(child)
  child.on('exit', () => { children.delete(child) })
  try {
    await sleep(1000)
    const [stats] = await sampleIdle([child.pid as number], windowS)
    const p: Started = { child, pid: child.pid as number, dataDir: '', startMs: 0, stdout: '', stderr: () => '' }
    const stop = await stopGpumesh(p)
    return { name: 'bare node (reference)', startMs: NaN, stats: stats as IdleStats, stop: { ...stop, code: 0 } }
  } finally {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL')
  }
}

export async function runIdle (options: IdleOptions): Promise<IdleRow[]> {
  console.log(`idle daemons: separate processes (${BIN}), TCP + Noise on 127.0.0.1, settle ${options.settleS} s, sample /proc once a second for ${options.windowS} s`)
  const rows = await idleAlone(options.windowS, options.settleS)
  if (options.network) rows.push(...await idleInNetwork(options.windowS, options.settleS, options.extraPeers))
  printIdleRows([...rows, await idleBareNode(Math.min(5, options.windowS))])
  return rows
}

export const IDLE_RSS_TARGET_MB = 120

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const onSignal = (): void => { cleanupNow(); process.exit(130) }
  process.on('SIGINT', onSignal)
  process.on('SIGTERM', onSignal)
  const rows = await runIdle(idleOptionsFromEnv())
  const alone = rows[0] as IdleRow
  console.log(`\ntarget: idle daemon ≤ ${IDLE_RSS_TARGET_MB} MB RSS — ${alone.stats.rssMaxMB.toFixed(1)} MB: ${alone.stats.rssMaxMB <= IDLE_RSS_TARGET_MB ? 'met' : 'NOT met'}`)
}
