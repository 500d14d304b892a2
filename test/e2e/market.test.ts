import assert from 'node:assert/strict'
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { ApiClient } from '../../node/api/client.js'
import type { ProviderMarketStatus } from '../../node/market/provider.js'
import type { JobView, LedgerView } from '../../node/market/views.js'
import { DaemonProcess, LOCAL_FLAGS, eventually, killAll, waitUntilAnnounced } from '../helpers/processes.js'

/**
 * The market end to end, the way users drive it: a bootstrap peer, two providers and a buyer, each a
 * separate `gpumesh` process over TCP on 127.0.0.1, and every step a `gpumesh` command.
 */
describe('the market through the CLI: separate processes over TCP', function () {
  this.timeout(120_000)
  let root: string
  let cheap: DaemonProcess
  let pricey: DaemonProcess
  let buyer: DaemonProcess
  const peers = new Map<string, DaemonProcess>()

  const provider = (args: string[], name: string, bootstrap: string): Promise<DaemonProcess> =>
    DaemonProcess.start(['node', 'start', ...LOCAL_FLAGS, '--log-level', 'warn', '--bootstrap', bootstrap, '--no-detect-gpus', ...args], join(root, name))

  before(async () => {
    root = await mkdtemp(join(tmpdir(), 'gpumesh-e2e-market-'))
    const bootstrap = await DaemonProcess.start(['bootstrap', ...LOCAL_FLAGS, '--log-level', 'warn'], join(root, 'bootstrap'))
    const addr = bootstrap.addresses()[0] as string
    ;[cheap, pricey, buyer] = await Promise.all([
      provider(['--declare-gpu', 'NVIDIA L40S:46068x2', '--region', 'us-east', '--price-floor', '0.8'], 'cheap', addr),
      provider(['--declare-gpu', 'NVIDIA A100-SXM4-40GB:40960x2', '--region', 'eu-west', '--price-floor', '1.5'], 'pricey', addr),
      DaemonProcess.start(['node', 'start', ...LOCAL_FLAGS, '--log-level', 'warn', '--bootstrap', addr, '--no-sell'], join(root, 'buyer'))
    ])
    for (const p of [cheap, pricey]) peers.set((await waitUntilAnnounced(p)).peerId, p)
  })

  after(async () => {
    await killAll()
    if (root !== undefined) await rm(root, { recursive: true, force: true })
  })

  const peerOf = (d: DaemonProcess): string => [...peers].find(([, p]) => p === d)?.[0] ?? ''
  const status = async (id: string): Promise<JobView> => await buyer.json<JobView>(['job', 'status', id])
  /** The ledger entry through `gpumesh ledger --json`, or (`via: 'api'`, for polling) the local API. */
  const ledgerEntry = async (d: DaemonProcess, job: string, via: 'cli' | 'api' = 'cli'): Promise<LedgerView['entries'][number] | undefined> =>
    (via === 'cli' ? await d.json<LedgerView>(['ledger']) : await d.api<LedgerView>('/v1/ledger')).entries.find((e) => e.job === job)

  it('a job file with an input: submitted, won by the cheaper provider, run, verified, copied out, logged and paid', async () => {
    const dir = join(root, 'work')
    await mkdir(dir, { recursive: true })
    await writeFile(join(dir, 'words.txt'), 'the quick brown fox\njumps over the lazy dog\n')
    await writeFile(join(dir, 'job.yaml'), [
      'label: e2e-upper',
      'command: ["/bin/sh", "-c", "tr a-z A-Z < data/words.txt > out.txt; echo job says hello"]',
      'inputs: ["data/words.txt=words.txt"]',
      'outputs: [out.txt]',
      'gpus: 1',
      'minVram: 40GB',
      'maxPrice: 2',
      'bidWindow: 1500ms',
      'maxRuntime: 60s',
      ''
    ].join('\n'))
    const submitted = await buyer.cli(['job', 'submit', '--file', join(dir, 'job.yaml'), '--wait', '--json'], 60_000)
    assert.equal(submitted.code, 0, submitted.stderr)
    const view = JSON.parse(submitted.stdout) as JobView
    assert.equal(view.status, 'settled', view.reason)
    assert.equal(view.label, 'e2e-upper')
    assert.equal(view.award?.provider, peerOf(cheap))
    assert.equal(view.award?.price, 800_000)
    assert.match(view.award?.why ?? '', /^lowest effective price/)
    assert.ok(view.bids.some((b) => b.provider === peerOf(cheap)), JSON.stringify(view.bids))
    assert.equal(view.receipt?.exitCode, 0)
    assert.equal(view.receipt?.outputsValid, true)
    assert.equal(view.receipt?.provider, peerOf(cheap))

    const out = join(root, 'results')
    const copied = await buyer.cli(['job', 'result', view.id, '--out', out])
    assert.equal(copied.code, 0, copied.stderr)
    assert.match(copied.stdout, /copied 1 file to /)
    assert.equal(await readFile(join(out, 'out.txt'), 'utf8'), 'THE QUICK BROWN FOX\nJUMPS OVER THE LAZY DOG\n')

    const logs = await buyer.cli(['job', 'logs', view.id])
    assert.equal(logs.code, 0, logs.stderr)
    assert.match(logs.stdout, /job says hello/)

    const human = await buyer.cli(['job', 'status', view.id])
    assert.equal(human.code, 0, human.stderr)
    assert.match(human.stdout, /status: +settled/)
    assert.match(human.stdout, new RegExp(`award: +${peerOf(cheap)} at 0\\.80 cr/GPU-h`))
    // why the buyer scores the winner as it does: its own receipt from this job counts
    assert.match(human.stdout, /reputation: +0\.\d\d \(own [1-9]\d* ok \/ \d+ failed/)

    // both sides hold the same signed amount for the job
    const spent = await ledgerEntry(buyer, view.id)
    await eventually('the provider\'s ledger entry to settle', async () => (await ledgerEntry(cheap, view.id, 'api'))?.state === 'settled' ? true : undefined, 10_000)
    const earned = await ledgerEntry(cheap, view.id)
    assert.ok(spent !== undefined)
    assert.ok(earned !== undefined)
    assert.equal(earned.state, 'settled')
    assert.equal(spent.role, 'requester')
    assert.equal(earned.role, 'provider')
    assert.equal(spent.counterparty, peerOf(cheap))
    assert.ok(spent.cumulative > 0)
    assert.equal(earned.cumulative, spent.cumulative)
    assert.equal(earned.award, spent.award)
    assert.equal(await ledgerEntry(pricey, view.id), undefined)
  })

  it('a job nobody can take: --wait exits 1, says it expired and explains why no one bid', async () => {
    const result = await buyer.cli(['job', 'submit', '--wait', '--gpus', '1', '--max-price', '0.5', '--bid-window', '2s', '--', '/bin/true'], 60_000)
    assert.equal(result.code, 1, `${result.stdout}\n${result.stderr}`)
    assert.match(result.stderr, /gpumesh: job \S+ expired: no acceptable bids/)
    assert.match(result.stdout, /no-bids +no bids in the window/)
    assert.match(result.stdout, /No bids: 0 of 2 known providers meet every constraint/)
    assert.match(result.stdout, /Cheapest floor among them: 0\.8\d* credits\/GPU-h \(provider 12D3KooW\w+\); your max price is 0\.5/)
  })

  it('cancelling a running job stops it on the provider, which records it and keeps running', async () => {
    const submitted = await buyer.cli(['job', 'submit', '--label', 'e2e-sleep', '--gpus', '1', '--max-price', '2', '--bid-window', '1s', '--max-runtime', '2m', '--', '/bin/sleep', '30'])
    assert.equal(submitted.code, 0, submitted.stderr)
    const id = submitted.stdout.trim()
    const isRunning = (v: JobView): boolean => {
      assert.ok(!['settled', 'failed', 'expired', 'cancelled'].includes(v.status), `${v.status}: ${v.reason ?? ''}`)
      return v.status === 'running' && v.events.some((e) => e.type === 'accepted')
    }
    await eventually('the job to run', async () => isRunning(await buyer.api<JobView>('/v1/job', { id })) ? true : undefined)
    const running = await status(id)
    assert.ok(isRunning(running), running.status)
    const winner = peers.get(running.award?.provider ?? '')
    assert.ok(winner !== undefined, 'a known provider won')

    const cancelled = await buyer.cli(['job', 'cancel', id])
    assert.equal(cancelled.code, 0, cancelled.stderr)
    assert.match(cancelled.stdout, new RegExp(`job ${id}: cancelled`))
    assert.equal((await status(id)).status, 'cancelled')

    // both ledgers, through the CLI: the same award, amount and ending (the time run is paid)
    const spent = await ledgerEntry(buyer, id)
    assert.ok(spent !== undefined, 'the buyer records the award')
    const recorded = (e: LedgerView['entries'][number] | undefined): boolean => e?.state === 'cancelled' && e.cumulative === spent.cumulative
    await eventually('the provider to record the cancel and the payment for the time run', async () => recorded(await ledgerEntry(winner, id, 'api')) ? true : undefined, 15_000)
    const entry = await ledgerEntry(winner, id)
    assert.ok(entry !== undefined && recorded(entry), JSON.stringify(entry))
    assert.equal(entry.role, 'provider')
    assert.equal(spent.role, 'requester')
    assert.deepEqual([spent.award, spent.cumulative, spent.state], [entry.award, entry.cumulative, entry.state])
    assert.ok(spent.cumulative > 0, 'the time run is paid')
    // the work was stopped: nothing of the job is left running on the provider
    const market = await (await ApiClient.fromDataDir(winner.dataDir)).get<ProviderMarketStatus>('/v1/market')
    assert.ok(!market.jobs.some((j) => j.job === id), JSON.stringify(market.jobs))
    assert.equal(market.ended.cancelled, 1)
    assert.ok(winner.running)
    const alive = await winner.cli(['status'])
    assert.equal(alive.code, 0, alive.stderr)
    assert.match(alive.stdout, /^node 12D3KooW/)
  })

  it('a job that never writes its declared output: --wait exits 1 with missing-output, the provider is paid and not blamed', async () => {
    const result = await buyer.cli(['job', 'submit', '--wait', '--gpus', '1', '--max-price', '2', '--bid-window', '1s', '--max-runtime', '60s', '--outputs', 'result.txt', '--', '/bin/sh', '-c', 'echo no result here'], 60_000)
    assert.equal(result.code, 1, `${result.stdout}\n${result.stderr}`)
    const match = /gpumesh: job (\S+) failed: missing-output: result\.txt/.exec(result.stderr)
    assert.ok(match !== null, result.stderr)
    const id = match[1] as string
    const view = await status(id)
    const events = view.events.map((e) => `${e.type}: ${e.text}`).join('\n')
    assert.equal(view.status, 'failed')
    assert.equal(view.reason, 'missing-output: result.txt')
    // the provider ran the command it was given: one award, no failure report, no re-auction
    assert.equal(view.award?.attempt, 1, events)
    assert.ok(!view.events.some((e) => e.type === 'failure' || e.type === 're-auction'), events)
    assert.equal(view.receipt?.exitCode, 0)
    assert.equal(view.receipt?.outputsValid, true)

    const human = await buyer.cli(['job', 'status', id])
    assert.match(human.stdout, /status: +failed/)
    assert.match(human.stdout, /missing-output: result\.txt/)

    // paid for the work done: both sides hold the same amount
    const winner = peers.get(view.award?.provider ?? '')
    assert.ok(winner !== undefined)
    const spent = await ledgerEntry(buyer, id)
    await eventually('the provider\'s ledger entry to settle', async () => (await ledgerEntry(winner, id, 'api'))?.state === 'settled' ? true : undefined, 10_000)
    const earned = await ledgerEntry(winner, id)
    assert.ok(earned !== undefined)
    // the award is settled on both sides (the job failed by its own fault, not the award)
    assert.equal(spent?.state, 'settled')
    assert.equal(earned.state, spent?.state)
    assert.equal(earned.cumulative, spent?.cumulative)
  })

  it('a job that prints more log than the cap: it settles, and job logs prints the 8 MiB kept and says the log was cut', async () => {
    const cap = 8 * 1024 * 1024
    const result = await buyer.cli(['job', 'submit', '--wait', '--json', '--gpus', '1', '--max-price', '2', '--bid-window', '1s', '--max-runtime', '60s', '--outputs', 'out.txt', '--',
      '/bin/sh', '-c', `head -c ${cap + 500_000} /dev/zero | tr '\\0' x; echo done > out.txt`], 60_000)
    assert.equal(result.code, 0, result.stderr)
    const view = JSON.parse(result.stdout) as JobView
    const events = view.events.map((e) => `${e.type}: ${e.text}`).join('\n')
    assert.equal(view.status, 'settled', events)
    assert.equal(view.award?.attempt, 1, events)
    assert.ok(!view.events.some((e) => e.type === 'failure' || e.type === 'stream-failed'), events)
    const logs = await buyer.cli(['job', 'logs', view.id])
    assert.equal(logs.code, 0, logs.stderr)
    assert.equal(logs.stdout.length, cap)
    assert.match(logs.stdout, /^x+$/)
    assert.match(logs.stderr, new RegExp(`gpumesh: the log was cut at ${cap} bytes: this node keeps at most ${cap} bytes of log per job`))
  })
})
