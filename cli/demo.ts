/**
 * `gpumesh demo`: a live market on this machine. One bootstrap peer, five providers with declared
 * GPUs, different prices, regions and availability windows (one sells only at hours that are not
 * now, so it never bids), and a buyer that sells nothing, each a separate `gpumesh` process over
 * TCP on 127.0.0.1. The buyer finds the providers on the DHT, submits jobs of every tier through its
 * local API, and the demo shows each auction (bids, who did not bid and why, the winner and why),
 * the run, the receipt and output, a bronze job preempted by a gold one and finished elsewhere, and
 * the ledgers of both sides. Then the network stays up until Ctrl+C or --duration, and every
 * process is stopped gracefully.
 *
 * demo-network.ts starts and stops the processes, demo-jobs.ts holds the jobs, demo-report.ts prints.
 */
import { mkdir } from 'node:fs/promises'
import { join, resolve } from 'node:path'
import type { Command } from 'commander'
import { ApiClient } from '../node/api/client.js'
import { ProcessExecutor } from '../node/executors/process.js'
import type { StatusInfo } from '../node/daemon.js'
import type { FindResult } from '../node/discovery.js'
import type { JobView, LedgerView } from '../node/market/views.js'
import { PREEMPTIBLE, URGENT, cr, firstJobs, submit, until, writeInput, type DemoJob } from './demo-jobs.js'
import {
  BIN, Interrupted, LOCAL, Names, announced, checkAlive, demoProviders, launch, providerArgs, ready, signals, sleep, stopAll, type Proc
} from './demo-network.js'
import { printJob, printLedgers, printSummary, type Market } from './demo-report.js'
import { UsageError } from './errors.js'
import { table } from './format.js'
import { onOutputClosed } from './output.js'

const say = (text: string): void => { process.stdout.write(`${text}\n`) }

/** The providers, as the buyer finds them on the DHT, and a couple of the queries `gpumesh providers` runs. */
async function discover (buyer: ApiClient, market: Market): Promise<void> {
  const all = await buyer.get<FindResult>('/v1/providers', {})
  for (const p of all.providers) market.ads.set(market.names.of(p.peerId), p)
  say(`\nthe buyer finds ${all.providers.length} providers on the DHT (key ${all.key}, ${Math.round(all.elapsedMs)} ms) and fetches their signed ads:`)
  say(table(['PROVIDER', 'REGION', 'GPUS', 'FLOOR/GPU-H', `SELLS (UTC; now ${new Date().toISOString().slice(11, 16)})`], market.providers.map((p) => {
    const ad = market.ads.get(p.name)?.ad
    const gpus = ad === undefined ? 'not found' : `${ad.gpus.length}× ${ad.gpus[0]?.name ?? ''}`
    return [p.name, p.region, gpus, ad !== undefined ? cr(ad.price.floor) : '-', p.windows?.join(', ') ?? 'always']
  })))
  const queries: Array<[string, Record<string, string | number>]> = [['--region eu --min-vram 80', { region: 'eu', minVram: 80 }], ['--gpu 4090', { gpu: '4090' }]]
  for (const [flags, query] of queries) {
    const result = await buyer.get<FindResult>('/v1/providers', query)
    say(`$ gpumesh providers ${flags}   → DHT key ${result.key}: ${result.providers.map((p) => market.names.of(p.peerId)).join(', ') || '(none)'}`)
  }
}

/** The jobs of every tier, and the preemption; returns them in the order they were submitted. */
async function trade (buyer: ApiClient, root: string, market: Market): Promise<Array<{ job: DemoJob, id: string }>> {
  const first = firstJobs(await writeInput(root))
  say(`\nthe buyer submits ${first.length} jobs at once (bid window 1.5 s each):`)
  const jobs: Array<{ job: DemoJob, id: string }> = []
  for (const job of first) {
    jobs.push({ job, id: await submit(buyer, job) })
    say(`  ${job.label.padEnd(16)} ${job.shows}`)
  }
  await Promise.all(jobs.map(async ({ id }) => await until(buyer, id)))
  say(`  … all ${first.length} final.`)
  say('  (EFFECTIVE below = price × (1 + tier weight × (1 − reliability)) × distance factor, lowest wins; the buyer')
  say('   starts every provider at reliability 0.25 and raises it with each good receipt; gold weighs it ×1.0, bronze ×0.15)')

  say(`\npreemption: ${PREEMPTIBLE.label} (${PREEMPTIBLE.shows})`)
  const bronze = await submit(buyer, PREEMPTIBLE)
  jobs.push({ job: PREEMPTIBLE, id: bronze })
  const running = await until(buyer, bronze, (v) => v.status === 'running' && v.events.some((e) => e.type === 'accepted'))
  say(`  it runs on ${market.names.of(running.award?.provider)}; now ${URGENT.label} (${URGENT.shows})`)
  const gold = await submit(buyer, URGENT)
  jobs.push({ job: URGENT, id: gold })
  const preempted = await until(buyer, bronze, (v) => v.events.some((e) => e.type === 're-auction' && e.text.includes('preempted')))
  const at = (v: JobView, type: string): number => v.events.find((e) => e.type === type)?.at ?? v.updatedAt
  const worked = (at(preempted, 're-auction') - at(running, 'running')) / 1000
  say(`  ${PREEMPTIBLE.label} was preempted on ${market.names.of(running.award?.provider)} after ${worked.toFixed(1)} s of work and is auctioned again`)
  await Promise.all([until(buyer, gold), until(buyer, bronze)])
  return jobs
}

/**
 * The demo's providers run the demo's own jobs, so where bubblewrap cannot run here (providers refuse buyers'
 * process jobs by default then) the demo opts them out of the sandbox — explicitly, and it says so.
 */
async function demoSandbox (): Promise<NodeJS.ProcessEnv> {
  const report = await new ProcessExecutor({ sandbox: 'bwrap' }).sandboxReport()
  if (report.ready) {
    say(`process jobs: ${report.detail}`)
    return {}
  }
  say(`process jobs: bubblewrap cannot run here (${report.detail.replace(/^refused: /, '').replace(/\. Set executors\.process\.sandbox.*$/, '')})`)
  say('  so the demo starts its providers with executors.process.sandbox = "none": they run the demo\'s own jobs')
  say('  WITHOUT a sandbox. A provider started with `gpumesh node start` refuses buyers\' process jobs in this state.')
  return { GPUMESH_PROCESS_SANDBOX: 'none' }
}

/** The `gpumesh dashboard` commands for the buyer's view and a provider's. */
function dashboardLines (buyerDir: string, root: string): string {
  return [`  node ${BIN} dashboard --data-dir ${buyerDir}                  # the buyer: jobs, bids, spend, live logs`,
    `  node ${BIN} dashboard --data-dir ${join(root, 'provider-4090')}   # a provider: earnings, bids won and lost`].join('\n')
}

export async function demoCommand (command: Command): Promise<void> {
  const opts = command.opts<{ dir: string, duration?: string }>()
  const duration = opts.duration !== undefined ? Number(opts.duration) : undefined
  if (duration !== undefined && !(duration >= 0)) throw new UsageError(`--duration must be a number of seconds, got "${opts.duration}"`)
  const root = resolve(opts.dir)
  await mkdir(root, { recursive: true })
  const procs: Proc[] = []
  signals.interrupted = false
  const onSignal = (): void => { signals.interrupted = true }
  process.on('SIGINT', onSignal)
  process.on('SIGTERM', onSignal)
  onOutputClosed(onSignal)
  const started = Date.now()
  const market: Market = { names: new Names(), providers: demoProviders(started), ads: new Map() }
  try {
    say(`gpumesh demo: a local market in ${root} (separate processes over TCP on 127.0.0.1)\n`)
    const sellerEnv = await demoSandbox()
    const boot = launch('bootstrap', join(root, 'bootstrap'), ['bootstrap', ...LOCAL])
    procs.push(boot)
    await ready(boot)
    const bootAddr = (boot.lines.find((l) => l.includes('listening:')) ?? '').split('listening:')[1]?.trim() ?? ''
    say(`bootstrap peer  ${bootAddr}`)
    const sellers = market.providers.map((spec) => launch(spec.name, join(root, spec.name), providerArgs(spec, bootAddr), sellerEnv))
    // the demo's GPUs are declared and compute on this CPU: the buyer's own probes would flag every one
    // (README "Attestations and probes"), so it runs without them and the awards show the market alone
    const buyerProc = launch('buyer', join(root, 'buyer'), ['node', 'start', ...LOCAL, '--bootstrap', bootAddr, '--no-sell'], { GPUMESH_PROBES: 'false' })
    procs.push(...sellers, buyerProc)
    await Promise.all(procs.map(async (p) => { await ready(p) }))
    const statuses = await Promise.all(sellers.map(async (p) => await announced(p)))
    for (const [i, s] of statuses.entries()) market.names.add(s.peerId, sellers[i]?.name ?? '')
    const buyer = await ApiClient.fromDataDir(buyerProc.dataDir)
    market.names.add((await buyer.get<StatusInfo>('/v1/status')).peerId, 'buyer')
    say(`${sellers.length} providers and a buyer up; ${statuses.reduce((n, s) => n + s.capabilityKeys.length, 0)} capability keys on the DHT after ${((Date.now() - started) / 1000).toFixed(1)} s`)
    say('watch it live in a browser, from another terminal (each prints a login link and opens it):')
    say(dashboardLines(buyerProc.dataDir, root))

    await discover(buyer, market)
    const jobs = await trade(buyer, root, market)
    const views: Array<{ job: DemoJob, view: JobView }> = []
    for (const { job, id } of jobs) {
      const view = await buyer.get<JobView>('/v1/job', { id })
      views.push({ job, view })
      await printJob(buyer, job, view, market)
    }
    printSummary(views, market.names)
    // the provider's side of the last payment may still be on its way
    await sleep(500)
    const ledgers: Array<{ name: string, ledger: LedgerView }> = []
    for (const p of [buyerProc, ...sellers]) ledgers.push({ name: p.name, ledger: await (await ApiClient.fromDataDir(p.dataDir)).get<LedgerView>('/v1/ledger') })
    printLedgers(ledgers, new Map(views.map(({ job, view }) => [view.id, job.label])), market.names)
    say(`\nthe market part took ${((Date.now() - started) / 1000).toFixed(1)} s.`)

    say(`\nThe network stays up${duration !== undefined ? ` for ${duration} s` : ' until Ctrl+C'}. From another terminal, try:`)
    say(`  node ${BIN} job list --data-dir ${buyerProc.dataDir}`)
    say(`  node ${BIN} job status ${jobs.at(-1)?.id ?? ''} --data-dir ${buyerProc.dataDir}`)
    say(`  node ${BIN} ledger --data-dir ${join(root, 'provider-4090')}`)
    say(`  node ${BIN} providers --data-dir ${buyerProc.dataDir} --min-vram 40`)
    say(dashboardLines(buyerProc.dataDir, root))
    const endAt = duration !== undefined ? Date.now() + duration * 1000 : Infinity
    let lastSummary = Date.now()
    while (!signals.interrupted && Date.now() < endAt) {
      await sleep(200)
      checkAlive(procs)
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
    const unclean = await stopAll(procs)
    say(unclean.length === 0 ? `stopped: all ${procs.length} processes exited cleanly.` : `stopped; not cleanly: ${unclean.join(', ')}`)
  }
}
