/**
 * `gpumesh demo`: a live local network on this machine — one bootstrap peer and four providers with
 * declared GPUs, regions and prices, each a separate `gpumesh` process over TCP on 127.0.0.1, plus a
 * buyer node that sells nothing. It waits for every provider's capability keys to reach the DHT, runs
 * a few discovery queries the way `gpumesh providers` does, then keeps the network up (printing a
 * summary) until Ctrl+C or --duration, and shuts every process down gracefully.
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { mkdir } from 'node:fs/promises'
import { join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import type { Command } from 'commander'
import { ApiClient } from '../node/api/client.js'
import type { StatusInfo } from '../node/daemon.js'
import type { FindResult } from '../node/discovery.js'
import { UsageError } from './errors.js'
import { table } from './format.js'

const BIN = fileURLToPath(new URL('./bin.js', import.meta.url))
const LOCAL = ['--listen', '/ip4/127.0.0.1/tcp/0', '--allow', '/ip4/127.0.0.1', '--allow-colocation', '--no-community-bootstrap', '--log-level', 'warn', '--log-format', 'json']

/** The demo's providers: memory totals as nvidia-smi reports them; prices in credits per GPU-hour. */
export const DEMO_PROVIDERS = [
  { name: 'provider-h100', region: 'eu-west', gpus: 'NVIDIA H100 80GB HBM3:81559x8', price: 2.2 },
  { name: 'provider-a100', region: 'eu-north', gpus: 'NVIDIA A100-SXM4-40GB:40960x4', price: 1.4 },
  { name: 'provider-l40s', region: 'us-east', gpus: 'NVIDIA L40S:46068x2', price: 0.95 },
  { name: 'provider-4090', region: 'ap-south', gpus: 'NVIDIA GeForce RTX 4090:24564x2', price: 0.45 }
]

interface Proc { name: string, dataDir: string, child: ChildProcess, lines: string[], stderr: string }

const say = (text: string): void => { process.stdout.write(`${text}\n`) }

function launch (name: string, dataDir: string, args: string[]): Proc {
  // own process group: a terminal's Ctrl+C reaches the demo only, which then stops each daemon once
  // (a daemon that got SIGINT from the terminal and SIGTERM from the demo would exit without cleanup)
  const child = spawn(process.execPath, [BIN, ...args, '--data-dir', dataDir], { stdio: ['ignore', 'pipe', 'pipe'], detached: true })
  process.once('exit', () => { if (child.exitCode === null) child.kill('SIGKILL') })
  const proc: Proc = { name, dataDir, child, lines: [], stderr: '' }
  child.stdout?.setEncoding('utf8').on('data', (d: string) => { proc.lines.push(...d.split('\n').filter((l) => l !== '')) })
  child.stderr?.setEncoding('utf8').on('data', (d: string) => { proc.stderr = (proc.stderr + d).slice(-4000) })
  return proc
}

/** Set by Ctrl+C: every wait below gives up at once, and the network is stopped. */
let interrupted = false

class Interrupted extends Error {}

const exited = (proc: Proc): boolean => proc.child.exitCode !== null || proc.child.signalCode !== null

async function ready (proc: Proc, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs
  while (!proc.lines.some((l) => l.includes('press Ctrl+C to stop'))) {
    if (interrupted) throw new Interrupted()
    if (exited(proc)) throw new UsageError(`${proc.name} exited (${proc.child.exitCode ?? proc.child.signalCode}): ${proc.stderr.trim().split('\n').at(-1) ?? ''}`)
    if (Date.now() > deadline) throw new UsageError(`${proc.name} did not start within ${timeoutMs / 1000} s`)
    await new Promise((r) => setTimeout(r, 50))
  }
}

async function announced (proc: Proc, timeoutMs = 120_000): Promise<StatusInfo> {
  const api = await ApiClient.fromDataDir(proc.dataDir)
  const deadline = Date.now() + timeoutMs
  for (;;) {
    if (interrupted) throw new Interrupted()
    const status = await api.get<StatusInfo>('/v1/status')
    if (status.capabilityKeys.length > 0 && status.capabilityKeys.every((k) => k.provided)) return status
    if (Date.now() > deadline) throw new UsageError(`${proc.name} could not announce its capability keys`)
    await new Promise((r) => setTimeout(r, 250))
  }
}

async function stopAll (procs: Proc[]): Promise<void> {
  await Promise.all(procs.map(async (p) => {
    if (exited(p)) return
    const gone = new Promise((r) => p.child.once('exit', r))
    p.child.kill('SIGTERM')
    const timer = setTimeout(() => p.child.kill('SIGKILL'), 10_000)
    await gone
    clearTimeout(timer)
  }))
}

export async function demoCommand (command: Command): Promise<void> {
  const opts = command.opts<{ dir: string, duration?: string }>()
  const duration = opts.duration !== undefined ? Number(opts.duration) : undefined
  if (duration !== undefined && !(duration >= 0)) throw new UsageError(`--duration must be a number of seconds, got "${opts.duration}"`)
  const root = resolve(opts.dir)
  await mkdir(root, { recursive: true })
  const procs: Proc[] = []
  interrupted = false
  const onSignal = (): void => { interrupted = true }
  process.on('SIGINT', onSignal)
  process.on('SIGTERM', onSignal)
  try {
    say(`gpumesh demo: a local network in ${root} (separate processes over TCP on 127.0.0.1)\n`)
    const boot = launch('bootstrap', join(root, 'bootstrap'), ['bootstrap', ...LOCAL])
    procs.push(boot)
    await ready(boot)
    const bootAddr = (boot.lines.find((l) => l.includes('listening:')) ?? '').split('listening:')[1]?.trim() ?? ''
    say(`bootstrap peer  ${bootAddr}`)

    for (const spec of DEMO_PROVIDERS) {
      procs.push(launch(spec.name, join(root, spec.name), ['node', 'start', ...LOCAL, '--bootstrap', bootAddr, '--no-detect-gpus',
        '--declare-gpu', spec.gpus, '--region', spec.region, '--price-floor', String(spec.price)]))
    }
    const buyer = launch('buyer', join(root, 'buyer'), ['node', 'start', ...LOCAL, '--bootstrap', bootAddr, '--no-sell'])
    procs.push(buyer)
    await Promise.all(procs.map(async (p) => { await ready(p) }))

    const started = performance.now()
    const statuses = await Promise.all(procs.slice(1, 1 + DEMO_PROVIDERS.length).map(async (p) => await announced(p)))
    say(`\n${DEMO_PROVIDERS.length} providers announced ${statuses.reduce((n, s) => n + s.capabilityKeys.length, 0)} capability keys on the DHT in ${Math.round(performance.now() - started)} ms:`)
    say(table(['PROVIDER', 'PEER ID', 'REGION', 'GPUS', 'KEYS'], statuses.map((s, i) => [
      DEMO_PROVIDERS[i]?.name ?? '', s.peerId, DEMO_PROVIDERS[i]?.region ?? '', DEMO_PROVIDERS[i]?.gpus ?? '', String(s.capabilityKeys.length)
    ])))

    const api = await ApiClient.fromDataDir(buyer.dataDir)
    const queries: Array<[string, Record<string, string | number>]> = [
      ['--min-vram 40', { minVram: 40 }],
      ['--region eu', { region: 'eu' }],
      ['--region eu --min-vram 80', { region: 'eu', minVram: 80 }],
      ['--gpu 4090', { gpu: '4090' }]
    ]
    for (const [flags, query] of queries) {
      const result = await api.get<FindResult>('/v1/providers', query)
      const names = result.providers.map((p) => DEMO_PROVIDERS[statuses.findIndex((s) => s.peerId === p.peerId)]?.name ?? p.peerId)
      say(`\n$ gpumesh providers ${flags}   → DHT key ${result.key}, ${Math.round(result.elapsedMs)} ms`)
      say(names.length === 0 ? '  (none)' : names.map((n, i) => `  ${n}  floor ${((result.providers[i]?.ad.price.floor ?? 0) / 1e6).toFixed(2)} credits/GPU-h`).join('\n'))
    }

    say(`\nThe network stays up${duration !== undefined ? ` for ${duration} s` : ' until Ctrl+C'}. From another terminal, try:`)
    say(`  node ${BIN} providers --data-dir ${buyer.dataDir} --min-vram 40`)
    say(`  node ${BIN} status --data-dir ${join(root, DEMO_PROVIDERS[0]?.name ?? '')}`)
    const until = duration !== undefined ? Date.now() + duration * 1000 : Infinity
    let lastSummary = Date.now()
    while (!interrupted && Date.now() < until) {
      await new Promise((r) => setTimeout(r, 200))
      const dead = procs.find(exited)
      if (dead !== undefined) throw new UsageError(`${dead.name} exited unexpectedly: ${dead.stderr.trim().split('\n').at(-1) ?? ''}`)
      if (Date.now() - lastSummary >= 15_000) {
        lastSummary = Date.now()
        const peers = await Promise.all(procs.map(async (p) => (await (await ApiClient.fromDataDir(p.dataDir)).get<unknown[]>('/v1/peers')).length))
        say(`${new Date().toISOString().slice(11, 19)}  connections per process: ${procs.map((p, i) => `${p.name} ${peers[i]}`).join(', ')}`)
      }
    }
  } catch (err) {
    if (!(err instanceof Interrupted)) throw err
  } finally {
    process.off('SIGINT', onSignal)
    process.off('SIGTERM', onSignal)
    say('\nstopping the network…')
    await stopAll(procs)
    say('stopped.')
  }
}
