import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { access, mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { JobView } from '../../node/market/views.js'
import { BIN } from '../helpers/cli.js'
import { runWithClosedOutput } from '../helpers/closed-output.js'
import { DaemonProcess, LOCAL_FLAGS, eventually, killAll, waitUntilAnnounced } from '../helpers/processes.js'

/** `args` with --data-dir before any `--` (after it, it would be part of the job's command). */
const withDir = (args: string[], dir: string): string[] => {
  const at = args.includes('--') ? args.indexOf('--') : args.length
  return [...args.slice(0, at), '--data-dir', dir, ...args.slice(at)]
}

/** Single-quote for sh. */
const q = (s: string): string => `'${s.replace(/'/g, `'\\''`)}'`

/** Run a command on a pseudo-terminal (util-linux `script`), so the CLI sees a TTY on stdout. */
async function onTty (args: string[], timeoutMs = 60_000): Promise<{ code: number | null, output: string }> {
  return await new Promise((resolve, reject) => {
    const child = spawn('script', ['-qfec', [process.execPath, BIN, ...args].map(q).join(' '), '/dev/null'], { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, COLUMNS: '120' } })
    let output = ''
    child.stdout.setEncoding('utf8').on('data', (d: string) => { output += d })
    child.stderr.setEncoding('utf8').on('data', (d: string) => { output += d })
    const timer = setTimeout(() => { child.kill('SIGKILL') }, timeoutMs)
    child.on('error', reject)
    child.on('close', (code) => { clearTimeout(timer); resolve({ code, output }) })
  })
}

/**
 * The rough edges a user meets at the command line (issue 8), against a real network: a bootstrap
 * peer, one provider and a buyer, each a separate `gpumesh` process over TCP on 127.0.0.1.
 */
describe('CLI edges: output closed early, --wait progress, cancel, events, bootstrap peers (separate processes)', function () {
  this.timeout(120_000)
  let root: string
  let boot: DaemonProcess
  let buyer: DaemonProcess
  const submit = (args: string[]): string[] => ['job', 'submit', '--gpus', '1', '--max-price', '2', '--bid-window', '1s', '--max-runtime', '2m', ...args]

  before(async () => {
    root = await mkdtemp(join(tmpdir(), 'gpumesh-e2e-edges-'))
    boot = await DaemonProcess.start(['bootstrap', ...LOCAL_FLAGS, '--log-level', 'warn'], join(root, 'bootstrap'))
    const addr = boot.addresses()[0] as string
    let provider: DaemonProcess
    ;[provider, buyer] = await Promise.all([
      DaemonProcess.start(['node', 'start', ...LOCAL_FLAGS, '--log-level', 'warn', '--bootstrap', addr, '--no-detect-gpus', '--declare-gpu', 'NVIDIA L40S:46068x2', '--price-floor', '0.8'], join(root, 'provider')),
      DaemonProcess.start(['node', 'start', ...LOCAL_FLAGS, '--log-level', 'warn', '--bootstrap', addr, '--no-sell'], join(root, 'buyer'))
    ])
    await waitUntilAnnounced(provider)
  })

  after(async () => {
    await killAll()
    if (root !== undefined) await rm(root, { recursive: true, force: true })
  })

  it('market commands sent to a bootstrap peer say it runs no market', async () => {
    for (const command of [['job', 'list'], ['job', 'status', 'bafyx'], ['ledger'], submit(['--', '/bin/true'])]) {
      const result = await boot.cli(command)
      assert.equal(result.code, 1, command.join(' '))
      assert.match(result.stderr, /^gpumesh: the daemon for data dir \S+ is a bootstrap peer: it runs no market/, command.join(' '))
      assert.doesNotMatch(result.stderr, /no route/)
    }
    const status = await boot.cli(['status'])
    assert.match(status.stdout, /^bootstrap 12D3KooW/)
    assert.match(status.stdout, /\n +bootstrap: +none configured\n/)
  })

  it('submit --wait without a TTY: events, a hint for `job logs --follow`, then plain progress lines with the elapsed time and the log tail', async () => {
    const result = await buyer.cli(submit(['--wait', '--', '/bin/sh', '-c', 'for i in 1 2 3 4 5 6 7; do echo step $i; sleep 2; done']), 90_000)
    assert.equal(result.code, 0, `${result.stdout}\n${result.stderr}`)
    const id = /^job (\S+): settled/m.exec(result.stdout)?.[1] ?? ''
    assert.match(result.stdout, new RegExp(`\\d\\d:\\d\\d:\\d\\d  hint +its whole output: gpumesh job logs --follow ${id}\\n`))
    assert.match(result.stdout, /\d\d:\d\d:\d\d  progress +running for 1\ds, log: step \d\n/)
    assert.doesNotMatch(result.stdout, /\x1b/, 'no terminal control sequences in plain mode')

    // job status: one event per fact
    const status = await buyer.json<JobView>(['job', 'status', id])
    const types = status.events.map((e) => e.type)
    assert.ok(types.includes('award') && !types.includes('awarded'), types.join(' '))
    assert.equal(types.filter((t) => t === 'completed').length, 1, types.join(' '))
    const text = await buyer.cli(['job', 'status', id])
    assert.equal(text.stdout.match(/ completed /g)?.length, 1, text.stdout)

    // cancelling a settled job: nothing happens, and it says so
    const cancel = await buyer.cli(['job', 'cancel', id])
    assert.equal(cancel.code, 1)
    assert.match(cancel.stderr, new RegExp(`^gpumesh: job ${id} is already settled: nothing to cancel\\n$`))
  })

  it('submit --wait on a TTY redraws one status line with the elapsed time and the log tail', async () => {
    const result = await onTty(withDir(submit(['--wait', '--', '/bin/sh', '-c', 'echo tty-hello; sleep 4; echo tty-bye']), buyer.dataDir))
    assert.equal(result.code, 0, result.output)
    assert.match(result.output, /\r\x1b\[K +running for \ds, log: tty-hello/)
    assert.match(result.output, /» settled: paid/)
    assert.match(result.output, /hint +its whole output: gpumesh job logs --follow/)
  })

  it('cancelling a running job: the events say "cancelled by the requester" once per line', async () => {
    const submitted = await buyer.cli(submit(['--', '/bin/sleep', '30']))
    assert.equal(submitted.code, 0, submitted.stderr)
    const id = submitted.stdout.trim()
    await eventually('the job to run', async () => (await buyer.api<JobView>('/v1/job', { id })).events.some((e) => e.type === 'accepted') ? true : undefined)
    const cancelled = await buyer.cli(['job', 'cancel', id])
    assert.equal(cancelled.code, 0, cancelled.stderr)
    assert.equal(cancelled.stdout, `job ${id}: cancelled by the requester\n`)
    const reported = (v: JobView): boolean => v.events.some((e) => e.type === 'cancelled' && e.peer !== undefined)
    await eventually('the provider to report the cancel', async () => reported(await buyer.api<JobView>('/v1/job', { id })) ? true : undefined, 15_000)
    const view = await buyer.json<JobView>(['job', 'status', id])
    assert.ok(reported(view), JSON.stringify(view.events))
    const lines = view.events.filter((e) => e.type === 'cancelled').map((e) => e.text)
    assert.deepEqual(lines, ['cancelled by the requester', 'provider reports cancelled: cancelled by the requester'])
    const again = await buyer.cli(['job', 'cancel', id])
    assert.equal(again.code, 1)
    assert.match(again.stderr, /is already cancelled: nothing to cancel/)
  })

  describe('every command exits quietly when its output is closed (| head -1)', () => {
    let id = ''
    before(async () => {
      id = (await buyer.cli(submit(['--', '/bin/true']))).stdout.trim()
      await eventually('the job to settle', async () => (await buyer.api<JobView>('/v1/job', { id })).status === 'settled' ? true : undefined)
    })

    for (const [name, args, first] of [
      ['job status <id>', () => ['job', 'status', id], 'none'],
      ['job status <id> after its first line', () => ['job', 'status', id], 'line'],
      ['status', () => ['status'], 'none'],
      ['peers', () => ['peers'], 'none'],
      ['job submit --wait after its first line', () => submit(['--wait', '--', '/bin/sh', '-c', 'sleep 2']), 'line']
    ] as Array<[string, () => string[], 'none' | 'line']>) {
      it(name, async () => {
        const result = await runWithClosedOutput(withDir(args(), buyer.dataDir), first, 60_000)
        assert.equal(result.stderr, '', 'no stack trace')
        assert.equal(result.code, 0)
        if (first === 'line') assert.notEqual(result.firstLine, '')
      })
    }

    it('node start whose output is closed: the daemon shuts down gracefully (api.json removed), quietly', async () => {
      const dir = join(root, 'piped')
      const result = await runWithClosedOutput(['node', 'start', ...LOCAL_FLAGS, '--log-level', 'warn', '--no-sell', '--data-dir', dir], 'none', 30_000)
      assert.equal(result.code, 0, result.stderr)
      assert.match(result.stderr, /^gpumesh: output closed, shutting down\n$/)
      await assert.rejects(access(join(dir, 'api.json')), 'stopped cleanly: api.json is gone')
    })
  })
})
