/**
 * The demo's network: separate `gpumesh` processes over TCP on 127.0.0.1 (a bootstrap peer, the
 * providers of demoProviders(), a buyer that sells nothing), how to start, wait for and stop them,
 * and the names the demo prints instead of peer ids.
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { ApiClient } from '../node/api/client.js'
import type { StatusInfo } from '../node/daemon.js'
import { UsageError } from './errors.js'

export const BIN = fileURLToPath(new URL('./bin.js', import.meta.url))
export const LOCAL = ['--listen', '/ip4/127.0.0.1/tcp/0', '--allow', '/ip4/127.0.0.1', '--allow-colocation', '--no-community-bootstrap', '--log-level', 'warn', '--log-format', 'json']

export interface DemoProvider {
  name: string
  region: string
  /** As --declare-gpu takes it: memory totals as nvidia-smi reports them. */
  gpus: string
  /** Credits per GPU-hour. */
  price: number
  /** Weekly availability windows (UTC); all week when absent. */
  windows?: string[]
}

const pad = (n: number): string => String(n).padStart(2, '0')

/** A daily window of six hours that opens six hours from `now` (UTC): closed now, whatever the time. */
export function closedWindow (now: number): string {
  const hour = new Date(now).getUTCHours()
  return `Mon-Sun ${pad((hour + 6) % 24)}:00-${pad((hour + 12) % 24)}:00`
}

/** The demo's providers: different hardware, prices, regions and windows. */
export function demoProviders (now: number): DemoProvider[] {
  return [
    { name: 'provider-h100', region: 'eu-west', gpus: 'NVIDIA H100 80GB HBM3:81559x8', price: 2.2 },
    { name: 'provider-a100', region: 'eu-north', gpus: 'NVIDIA A100-SXM4-40GB:40960x4', price: 1.4 },
    { name: 'provider-l40s', region: 'us-east', gpus: 'NVIDIA L40S:46068x2', price: 0.95 },
    { name: 'provider-4090', region: 'ap-south', gpus: 'NVIDIA GeForce RTX 4090:24564x2', price: 0.45 },
    // the cheapest H100s, but sold only six hours a day, and not now: it never bids
    { name: 'provider-h100-spare', region: 'eu-west', gpus: 'NVIDIA H100 80GB HBM3:81559x4', price: 1.2, windows: [closedWindow(now)] }
  ]
}

export function providerArgs (spec: DemoProvider, bootstrap: string): string[] {
  return ['node', 'start', ...LOCAL, '--bootstrap', bootstrap, '--no-detect-gpus', '--declare-gpu', spec.gpus, '--region', spec.region,
    '--price-floor', String(spec.price), ...(spec.windows !== undefined ? ['--time-zone', 'UTC', '--windows', ...spec.windows] : [])]
}

export interface Proc { name: string, dataDir: string, child: ChildProcess, lines: string[], stderr: string }

/** Set by Ctrl+C: every wait gives up at once, and the network is stopped. */
export const signals = { interrupted: false }

export class Interrupted extends Error {}

export function checkInterrupted (): void {
  if (signals.interrupted) throw new Interrupted()
}

export const sleep = async (ms: number): Promise<void> => { await new Promise((resolve) => setTimeout(resolve, ms)) }

export function launch (name: string, dataDir: string, args: string[], env?: NodeJS.ProcessEnv): Proc {
  // own process group: a terminal's Ctrl+C reaches the demo only, which then stops each daemon once
  // (a daemon that got SIGINT from the terminal and SIGTERM from the demo would exit without cleanup)
  const child = spawn(process.execPath, [BIN, ...args, '--data-dir', dataDir], { stdio: ['ignore', 'pipe', 'pipe'], detached: true, env: { ...process.env, ...env } })
  process.once('exit', () => { if (child.exitCode === null) child.kill('SIGKILL') })
  const proc: Proc = { name, dataDir, child, lines: [], stderr: '' }
  child.stdout?.setEncoding('utf8').on('data', (d: string) => { proc.lines.push(...d.split('\n').filter((l) => l !== '')) })
  child.stderr?.setEncoding('utf8').on('data', (d: string) => { proc.stderr = (proc.stderr + d).slice(-4000) })
  return proc
}

export const exited = (proc: Proc): boolean => proc.child.exitCode !== null || proc.child.signalCode !== null

const lastLine = (proc: Proc): string => proc.stderr.trim().split('\n').at(-1) ?? ''

export async function ready (proc: Proc, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs
  while (!proc.lines.some((l) => l.includes('press Ctrl+C to stop'))) {
    checkInterrupted()
    if (exited(proc)) throw new UsageError(`${proc.name} exited (${proc.child.exitCode ?? proc.child.signalCode}): ${lastLine(proc)}`)
    if (Date.now() > deadline) throw new UsageError(`${proc.name} did not start within ${timeoutMs / 1000} s`)
    await sleep(50)
  }
}

/** Wait until every capability key of the provider is on the DHT. */
export async function announced (proc: Proc, timeoutMs = 120_000): Promise<StatusInfo> {
  const api = await ApiClient.fromDataDir(proc.dataDir)
  const deadline = Date.now() + timeoutMs
  for (;;) {
    checkInterrupted()
    const status = await api.get<StatusInfo>('/v1/status')
    if (status.capabilityKeys.length > 0 && status.capabilityKeys.every((k) => k.provided)) return status
    if (Date.now() > deadline) throw new UsageError(`${proc.name} could not announce its capability keys`)
    await sleep(250)
  }
}

/** The first process that died, as an error. */
export function checkAlive (procs: Proc[]): void {
  const dead = procs.find(exited)
  if (dead !== undefined) throw new UsageError(`${dead.name} exited unexpectedly: ${lastLine(dead)}`)
}

/** SIGTERM each process (graceful), SIGKILL after 10 s; resolves with the names of those that did not exit 0. */
export async function stopAll (procs: Proc[]): Promise<string[]> {
  const unclean: string[] = []
  await Promise.all(procs.map(async (p) => {
    if (!exited(p)) {
      const gone = new Promise((resolve) => p.child.once('exit', resolve))
      p.child.kill('SIGTERM')
      const timer = setTimeout(() => p.child.kill('SIGKILL'), 10_000)
      await gone
      clearTimeout(timer)
    }
    if (p.child.exitCode !== 0) unclean.push(`${p.name} (${p.child.exitCode ?? p.child.signalCode})`)
  }))
  return unclean
}

/** Peer ids → the demo's names, for everything the demo prints. */
export class Names {
  private readonly byPeer = new Map<string, string>()

  add (peerId: string, name: string): void {
    this.byPeer.set(peerId, name)
  }

  peerOf (name: string): string | undefined {
    return [...this.byPeer].find(([, n]) => n === name)?.[0]
  }

  of (peerId: string | undefined): string {
    if (peerId === undefined) return '-'
    return this.byPeer.get(peerId) ?? `${peerId.slice(0, 6)}…${peerId.slice(-6)}`
  }

  /** Replace full peer ids and the daemon's `…abcdefgh` short forms in a line of text. */
  text (line: string): string {
    let out = line
    for (const [peer, name] of this.byPeer) out = out.split(peer).join(name).split(`…${peer.slice(-8)}`).join(name)
    return out
  }
}
