import assert from 'node:assert/strict'
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { StatusInfo } from '../../node/daemon.js'
import type { JobView, LedgerView } from '../../node/market/views.js'
import { runCli } from '../helpers/cli.js'
import { DaemonProcess, LOCAL_FLAGS, eventually, killAll, waitUntilAnnounced } from '../helpers/processes.js'

const START = ['node', 'start', ...LOCAL_FLAGS, '--log-level', 'warn', '--no-detect-gpus']

async function dataDirWith (root: string, name: string, config: unknown): Promise<string> {
  const dir = join(root, name)
  await mkdir(dir, { recursive: true })
  await writeFile(join(dir, 'config.json'), JSON.stringify(config))
  return dir
}

/** config.json's `market` section, end to end: `gpumesh node start` refuses a bad one and runs on a good one. */
describe('the market section of config.json through the CLI (separate processes)', function () {
  this.timeout(120_000)
  let root: string
  beforeEach(async () => { root = await mkdtemp(join(tmpdir(), 'gpumesh-market-config-')) })
  afterEach(async () => {
    await killAll()
    await rm(root, { recursive: true, force: true })
  })

  it('a lease below 1 s, an unknown key, a bad nested field and a bad type stop the start, all named at once with the file', async () => {
    const dir = await dataDirWith(root, 'bad', { market: { leaseMs: 999, leese: 1, seenBids: { maxPerJob: 0 }, damping: 'yes' } })
    const result = await runCli([...START, '--declare-gpu', 'NVIDIA L4:23034', '--data-dir', dir])
    assert.equal(result.code, 1)
    assert.match(result.stderr, /market\.leese: unknown setting \(from .*config\.json\)/)
    // the ranges come from createMarketParams, which names every bad field, even beside an unknown key
    assert.match(result.stderr, /market\.leaseMs: expected an integer in 1000 … 3600000, got 999 \(from .*config\.json\)/)
    assert.match(result.stderr, /market\.seenBids\.maxPerJob: expected an integer in 1 … 4096, got 0/)
    assert.match(result.stderr, /market\.damping: expected true or false, got yes/)
  })

  it('a good section is in force: status shows it, and a 1 s billing interval makes a 3 s job paid interval by interval', async () => {
    const provider = await DaemonProcess.start([...START, '--declare-gpu', 'NVIDIA L4:23034', '--price-floor', '1'], join(root, 'provider'))
    const market = { leaseMs: 3_000, billingIntervalSec: 1, seenBids: { maxJobs: 100 } }
    const buyerDir = await dataDirWith(root, 'buyer', { market })
    const buyer = await DaemonProcess.start([...START, '--no-sell', '--bootstrap', provider.addresses()[0] as string], buyerDir)
    // the buyer is the provider's only DHT peer
    const { peerId } = await waitUntilAnnounced(provider)

    const status = await buyer.json<StatusInfo>(['status'])
    assert.equal(status.market?.leaseMs, 3_000)
    assert.equal(status.market?.billingIntervalSec, 1)
    assert.deepEqual(status.market?.seenBids, { maxJobs: 100, maxPerJob: 64 })
    assert.deepEqual([status.market?.preemptMarginMs, status.market?.bidHoldMs, status.market?.endedRetentionMs], [5_000, 1_000, 600_000], 'the defaults of the fields not given')
    assert.equal((await provider.json<StatusInfo>(['status'])).market?.billingIntervalSec, 300, 'the provider runs on the defaults')

    const submitted = await buyer.cli(['job', 'submit', '--wait', '--json', '--gpus', '1', '--max-price', '2', '--bid-window', '1s', '--max-runtime', '60s', '--', '/bin/sleep', '3'], 90_000)
    assert.equal(submitted.code, 0, submitted.stderr)
    const view = JSON.parse(submitted.stdout) as JobView
    assert.equal(view.status, 'settled', view.reason)
    assert.equal(view.award?.provider, peerId)
    // the default 300 s interval would pay once, at the end; 1 s intervals pay during the run too
    const spent = (await buyer.json<LedgerView>(['ledger'])).entries.find((e) => e.job === view.id)
    assert.ok(spent !== undefined)
    assert.ok(spent.seq >= 3, `payments: ${spent.seq}`)
    await eventually('the provider\'s ledger entry to settle', async () =>
      (await provider.api<LedgerView>('/v1/ledger')).entries.find((x) => x.job === view.id)?.state === 'settled' ? true : undefined, 10_000)
    const earned = (await provider.json<LedgerView>(['ledger'])).entries.find((x) => x.job === view.id)
    assert.ok(earned !== undefined)
    assert.equal(earned.state, 'settled')
    assert.equal(earned.cumulative, spent.cumulative)
    assert.equal(earned.seq, spent.seq)
  })
})
