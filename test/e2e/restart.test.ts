import assert from 'node:assert/strict'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { JobView, LedgerView } from '../../node/market/views.js'
import { RESTART_LOG_LINE } from '../../node/market/provider-io.js'
import { DaemonProcess, LOCAL_FLAGS, eventually, killAll, waitUntilAnnounced } from '../helpers/processes.js'

/**
 * Restart recovery (protocol/README.md §7.7 "Resuming"), for real: separate `gpumesh` processes over
 * TCP, one side killed with SIGKILL in the middle of a job and started again on the same data dir.
 * The job must not be lost: the same award goes on, is paid, and both ledgers agree.
 */
/** What the provider's new run prints at once after its restart: several log windows. */
const BURST = 1_000_000

describe('restart recovery: a daemon killed with SIGKILL mid-job resumes it', function () {
  this.timeout(180_000)
  let root: string
  let bootstrap: string
  let provider: DaemonProcess
  let providerId: string
  let buyer: DaemonProcess

  const buyerArgs = (): string[] => ['node', 'start', ...LOCAL_FLAGS, '--log-level', 'warn', '--bootstrap', bootstrap, '--no-sell']
  const providerArgs = (): string[] => ['node', 'start', ...LOCAL_FLAGS, '--log-level', 'warn', '--bootstrap', bootstrap, '--no-detect-gpus',
    '--declare-gpu', 'NVIDIA L40S:46068x1', '--region', 'eu-west', '--price-floor', '1']

  before(async () => {
    root = await mkdtemp(join(tmpdir(), 'gpumesh-e2e-restart-'))
    const b = await DaemonProcess.start(['bootstrap', ...LOCAL_FLAGS, '--log-level', 'warn'], join(root, 'bootstrap'))
    bootstrap = b.addresses()[0] as string
    ;[provider, buyer] = await Promise.all([
      DaemonProcess.start(providerArgs(), join(root, 'provider')),
      DaemonProcess.start(buyerArgs(), join(root, 'buyer'))
    ])
    providerId = (await waitUntilAnnounced(provider)).peerId
  })

  after(async () => {
    await killAll()
    if (root !== undefined) await rm(root, { recursive: true, force: true })
  })

  const ledgerEntry = async (d: DaemonProcess, job: string): Promise<LedgerView['entries'][number] | undefined> =>
    (await d.api<LedgerView>('/v1/ledger')).entries.find((e) => e.job === job)

  /** Submit `script` (writing out.txt) and wait until the provider runs it. */
  async function runningJob (label: string, script: string): Promise<{ id: string, view: JobView }> {
    const submitted = await buyer.cli(['job', 'submit', '--label', label, '--gpus', '1', '--max-price', '2', '--bid-window', '1s', '--max-runtime', '2m',
      '--outputs', 'out.txt', '--', '/bin/sh', '-c', script])
    assert.equal(submitted.code, 0, submitted.stderr)
    const id = submitted.stdout.trim()
    const view = await eventually('the job to run', async () => {
      const v = await buyer.api<JobView>('/v1/job', { id })
      assert.ok(!['settled', 'failed', 'expired', 'cancelled'].includes(v.status), `${v.status}: ${v.reason ?? ''}`)
      return v.status === 'running' && v.events.some((e) => e.type === 'running' || e.type === 'accepted') ? v : undefined
    })
    assert.equal(view.award?.provider, providerId)
    return { id, view }
  }

  /** Wait for the job to settle on `award` (never failed on the way, nobody blamed), and both ledgers to agree. */
  async function settledOn (id: string, award: string | undefined): Promise<JobView> {
    const done = await eventually('the job to settle after the restart', async () => {
      const v = await buyer.api<JobView>('/v1/job', { id })
      assert.ok(!['failed', 'expired', 'cancelled'].includes(v.status), `${v.status}: ${v.reason ?? ''}\n${JSON.stringify(v.events, null, 1)}`)
      return v.status === 'settled' ? v : undefined
    }, 90_000)
    // the same award, not a re-auction: the provider was never blamed
    assert.equal(done.award?.cid, award)
    assert.equal(done.round, 1)
    assert.ok(!done.events.some((e) => e.type === 'failure'), JSON.stringify(done.events))
    assert.equal(done.receipt?.exitCode, 0)
    assert.equal(done.receipt?.outputsValid, true)
    const spent = await ledgerEntry(buyer, id)
    assert.ok(spent !== undefined && spent.state === 'settled', JSON.stringify(spent))
    const earned = await eventually('the provider to settle', async () => {
      const e = await ledgerEntry(provider, id)
      return e?.state === 'settled' ? e : undefined
    }, 20_000)
    assert.deepEqual([earned.award, earned.cumulative], [spent.award, spent.cumulative])
    assert.ok(spent.cumulative > 0)
    return done
  }

  it('the requester: killed while the job runs, restarted, it re-opens the stream, fetches the outputs and pays', async () => {
    const { id, view } = await runningJob('e2e-restart', 'echo before; sleep 8; echo after; echo resumed > out.txt')
    await buyer.stop('SIGKILL')
    buyer = await DaemonProcess.start(buyerArgs(), join(root, 'buyer'))
    const done = await settledOn(id, view.award?.cid)
    assert.ok(done.events.some((e) => e.type === 'restarted'), JSON.stringify(done.events))
    const logs = await buyer.cli(['job', 'logs', id])
    assert.equal(logs.code, 0, logs.stderr)
    assert.match(logs.stdout, /before/)
    assert.match(logs.stdout, /after/)
    // the output came through the restarted node
    const result = await buyer.cli(['job', 'result', id, '--out', join(root, 'out')])
    assert.equal(result.code, 0, result.stderr)
  })

  it('the provider: killed while the job runs, restarted, it takes the award up again, runs the job anew and is paid', async () => {
    // the new run prints 1 MB at once and ends: the log frames wait for credit behind the receipt, so
    // the buyer takes the rest from the receipt's log blob, which begins where its copy stood
    const { id, view } = await runningJob('e2e-provider-restart', `echo started; sleep 6; head -c ${BURST} /dev/zero | tr '\\0' x; echo; echo finished; echo ran > out.txt`)
    // the first run's first line is on the buyer's side before the provider dies
    await eventually('the first run\'s log', async () => {
      const logs = await buyer.cli(['job', 'logs', id])
      return logs.stdout.includes('started') ? true : undefined
    })
    await provider.stop('SIGKILL')
    provider = await DaemonProcess.start(providerArgs(), join(root, 'provider'))
    const done = await settledOn(id, view.award?.cid)
    assert.ok(done.events.some((e) => e.type === 'stream-failed'), JSON.stringify(done.events))
    // the log goes on: the old run's line, the provider's restart line, then the new run's, whole
    const logs = await buyer.cli(['job', 'logs', id])
    assert.equal(logs.code, 0, logs.stderr)
    assert.equal(logs.stdout.length, 8 + 1 + RESTART_LOG_LINE.length + 8 + BURST + 1 + 9)
    assert.ok(logs.stdout === `started\n\n${RESTART_LOG_LINE}started\n${'x'.repeat(BURST)}\nfinished\n`, logs.stdout.replace(/x{20,}/g, (m) => `x×${m.length}`))
  })
})
