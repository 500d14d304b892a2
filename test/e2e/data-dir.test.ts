import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { chmod, chown, cp, mkdtemp, readFile, readdir, rm, stat, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { JobView, LedgerView } from '../../node/market/views.js'
import { BIN, runCli, type CliResult } from '../helpers/cli.js'
import { DaemonProcess, LOCAL_FLAGS, eventually, killAll, waitUntilAnnounced } from '../helpers/processes.js'

/**
 * A data dir damaged the way disks and hands do, on the records a real market wrote: a bootstrap
 * peer, a provider and a buyer (separate `gpumesh` processes over TCP) settle jobs, then stop. Each
 * test damages a copy of the stopped data dirs, checks that `gpumesh node start` refuses with a
 * clear message (and changes nothing), and that `gpumesh repair` brings back every record.
 */
describe('the data dir never loses data silently (separate processes)', function () {
  this.timeout(180_000)
  let root: string
  let provider: DaemonProcess
  let buyer: DaemonProcess
  const truth: { buyerJobs?: JobView[], buyerLedger?: LedgerView, providerLedger?: LedgerView } = {}
  const JOBS = 3

  const start = (dataDir: string, extra: string[] = []): Promise<CliResult> =>
    runCli(['node', 'start', ...LOCAL_FLAGS, '--log-level', 'warn', '--no-sell', '--data-dir', dataDir, ...extra], { timeoutMs: 20_000 })
  const cli = (args: string[], dataDir: string): Promise<CliResult> => runCli([...args, '--data-dir', dataDir], { timeoutMs: 30_000 })
  const json = async <T>(args: string[], dataDir: string): Promise<T> => {
    const result = await cli([...args, '--json'], dataDir)
    assert.equal(result.code, 0, result.stderr)
    return JSON.parse(result.stdout) as T
  }
  let copies = 0
  /** The data dirs as the daemons left them (reading them opens their databases, which folds the logs). */
  const pristine = new Map<string, string>()
  /** A fresh copy of a stopped node's data dir, as its daemon left it, to damage. */
  const copyOf = async (daemon: { dataDir: string }): Promise<string> => {
    const dir = join(root, `copy-${++copies}`)
    await cp(pristine.get(daemon.dataDir) ?? daemon.dataDir, dir, { recursive: true })
    return dir
  }
  const filesIn = async (dir: string): Promise<string[]> => (await readdir(dir)).sort()
  const tree = async (dir: string): Promise<Record<string, number>> => {
    const out: Record<string, number> = {}
    for (const name of await readdir(dir, { recursive: true })) {
      const info = await stat(join(dir, name))
      if (info.isFile()) out[name] = info.size
    }
    return out
  }
  /** The refusal, and proof it changed nothing: the data dir's files are as they were. */
  const refuses = async (dir: string, pattern: RegExp): Promise<CliResult> => {
    const before = await tree(dir)
    const result = await start(dir)
    assert.equal(result.code, 1, `expected a refusal, got ${String(result.code)}: ${result.stdout}\n${result.stderr}\n${JSON.stringify(before)}`)
    assert.match(result.stderr, pattern)
    assert.doesNotMatch(result.stderr, /\n\s+at /, 'no stack trace')
    const after = await tree(dir)
    // LevelDB's own open may fold its log into a table and rotate LOG; nothing else may change
    const stable = (t: Record<string, number>): Record<string, number> =>
      Object.fromEntries(Object.entries(t).filter(([name]) => !/^(db|libp2p)\//.test(name)))
    assert.deepEqual(stable(after), stable(before))
    return result
  }
  /** `gpumesh repair`, then every record of the buyer is back, read from the stopped data dir. */
  const repairsBuyer = async (dir: string): Promise<CliResult> => {
    const result = await cli(['repair'], dir)
    assert.equal(result.code, 0, result.stderr)
    assert.match(result.stdout, /moved the damaged database to .*db\.damaged-/)
    assert.deepEqual(await json<JobView[]>(['job', 'list'], dir), truth.buyerJobs)
    assert.deepEqual(await json<LedgerView>(['ledger'], dir), truth.buyerLedger)
    assert.ok((await filesIn(dir)).some((f) => f.startsWith('db.damaged-')), 'the damaged database is kept')
    return result
  }
  const garble = async (path: string, at: (size: number) => number, length = 16): Promise<void> => {
    const bytes = await readFile(path)
    const from = at(bytes.byteLength)
    for (let i = from; i < Math.min(from + length, bytes.byteLength); i++) bytes[i] = (bytes[i] as number) ^ 0xff
    await writeFile(path, bytes)
  }
  const dbFile = async (dir: string, ext: string): Promise<string> => {
    const name = (await readdir(join(dir, 'db'))).find((f) => f.endsWith(ext))
    assert.ok(name !== undefined, `a *${ext} file in ${dir}/db: ${(await readdir(join(dir, 'db'))).join(' ')}`)
    return join(dir, 'db', name)
  }

  before(async () => {
    root = await mkdtemp(join(tmpdir(), 'gpumesh-e2e-datadir-'))
    const bootstrap = await DaemonProcess.start(['bootstrap', ...LOCAL_FLAGS, '--log-level', 'warn'], join(root, 'bootstrap'))
    const addr = bootstrap.addresses()[0] as string
    ;[provider, buyer] = await Promise.all([
      DaemonProcess.start(['node', 'start', ...LOCAL_FLAGS, '--log-level', 'warn', '--bootstrap', addr, '--no-detect-gpus', '--declare-gpu', 'NVIDIA L4:23034', '--price-floor', '1'], join(root, 'provider')),
      DaemonProcess.start(['node', 'start', ...LOCAL_FLAGS, '--log-level', 'warn', '--bootstrap', addr, '--no-sell'], join(root, 'buyer'))
    ])
    await waitUntilAnnounced(provider)
    for (let i = 0; i < JOBS; i++) {
      const done = await buyer.cli(['job', 'submit', '--wait', '--json', '--label', `job-${i}`, '--gpus', '1', '--max-price', '2', '--bid-window', '1s',
        '--outputs', 'out.txt', '--', '/bin/sh', '-c', `echo ${i} > out.txt`], 60_000)
      assert.equal(done.code, 0, done.stderr)
    }
    await eventually('the provider to settle every job', async () => {
      const ledger = await provider.api<LedgerView>('/v1/ledger')
      return ledger.entries.length === JOBS && ledger.entries.every((e) => e.state === 'settled') ? ledger : undefined
    }, 20_000)
    truth.buyerJobs = await buyer.json<JobView[]>(['job', 'list'])
    truth.buyerLedger = await buyer.json<LedgerView>(['ledger'])
    truth.providerLedger = await provider.json<LedgerView>(['ledger'])
    assert.equal(truth.buyerJobs.length, JOBS)
    assert.equal(truth.buyerLedger.entries.length, JOBS)
    for (const d of [provider, buyer, bootstrap]) assert.equal(await d.stop(), 0, d.stderr)
    for (const d of [provider, buyer]) {
      pristine.set(d.dataDir, `${d.dataDir}.pristine`)
      await cp(d.dataDir, `${d.dataDir}.pristine`, { recursive: true })
    }
  })

  after(async () => {
    await killAll()
    if (root !== undefined && process.env.KEEP === undefined) await rm(root, { recursive: true, force: true })
  })

  it('a stopped node shows its ledger and jobs from the data dir, the same as the daemon did', async () => {
    const ledger = await cli(['ledger', '--json'], provider.dataDir)
    assert.equal(ledger.code, 0, ledger.stderr)
    assert.match(ledger.stderr, /no daemon running; read from .*provider\/db/)
    assert.deepEqual(JSON.parse(ledger.stdout), truth.providerLedger)
    assert.ok((truth.providerLedger?.earned ?? 0) > 0)
    assert.deepEqual(await json<LedgerView>(['ledger'], buyer.dataDir), truth.buyerLedger)
    assert.deepEqual(await json<JobView[]>(['job', 'list'], buyer.dataDir), truth.buyerJobs)
    const human = await cli(['ledger'], provider.dataDir)
    assert.equal(human.code, 0, human.stderr)
    assert.match(human.stdout, /earned: +\d+\.\d+ cr/)
    assert.equal(human.stdout.split('\n').filter((l) => / provider /.test(l)).length, JOBS)
    const jobs = await cli(['job', 'list'], buyer.dataDir)
    assert.match(jobs.stdout, /job-0/)
  })

  it('a node that holds its database but serves no API is not read behind its back', async () => {
    const dir = await copyOf(provider)
    const daemon = await DaemonProcess.start(['node', 'start', ...LOCAL_FLAGS, '--log-level', 'warn', '--no-sell'], dir)
    try {
      const live = await cli(['ledger', '--json'], dir)
      assert.equal(live.code, 0, live.stderr)
      assert.doesNotMatch(live.stderr, /no daemon running/)
      await rm(join(dir, 'api.json'))
      const held = await cli(['ledger'], dir)
      assert.equal(held.code, 1)
      assert.match(held.stderr, /holds the database .* but serves no API/)
    } finally {
      await daemon.stop()
    }
  })

  it('db/CURRENT deleted: start refuses instead of creating an empty database; repair restores every record', async () => {
    const dir = await copyOf(buyer)
    await rm(join(dir, 'db', 'CURRENT'))
    await refuses(dir, /the database is missing \(no db\/CURRENT\) in a data dir in use since .*gpumesh repair --data-dir/)
    const offline = await cli(['ledger'], dir)
    assert.equal(offline.code, 1)
    assert.match(offline.stderr, /the database is missing/)
    const repaired = await repairsBuyer(dir)
    assert.match(repaired.stdout, /LevelDB's repairer|restored from the journal/)
    // and the node starts on it, with every job
    const daemon = await DaemonProcess.start(['node', 'start', ...LOCAL_FLAGS, '--log-level', 'warn', '--no-sell'], dir)
    try {
      assert.deepEqual(await daemon.json<JobView[]>(['job', 'list']), truth.buyerJobs)
    } finally {
      await daemon.stop()
    }
  })

  it('the whole db/ deleted: start refuses; repair rebuilds it from the journal alone', async () => {
    const dir = await copyOf(provider)
    await rm(join(dir, 'db'), { recursive: true })
    await refuses(dir, /the database is missing \(no db\/\)/)
    const result = await cli(['repair'], dir)
    assert.equal(result.code, 0, result.stderr)
    assert.match(result.stdout, /restored from the journal: .*3 ledger entries/)
    assert.deepEqual(await json<LedgerView>(['ledger'], dir), truth.providerLedger)
  })

  /** Garble the write-ahead log where `needle` (a record's key) is written the `nth` time (-1: the last). */
  const garbleLogAt = async (dir: string, needle: string, last: boolean): Promise<void> => {
    const log = await dbFile(dir, '.log')
    const bytes = await readFile(log)
    const at = last ? bytes.lastIndexOf(needle) : bytes.indexOf(needle)
    assert.ok(at > 0, `${needle} in ${log}`)
    await garble(log, () => at, 16)
  }

  it('the write-ahead log garbled in the middle: start refuses, naming what was lost; repair restores it', async () => {
    const dir = await copyOf(buyer)
    // where the middle job's request envelope (written once, never again) lies in the log
    await garbleLogAt(dir, `!market-envelopes!${truth.buyerJobs?.[1]?.id ?? ''}`, false)
    await refuses(dir, /the database lost \d+ of the \d+ records the journal holds \(missing [^)]*signed envelopes[^)]*\); refusing to start on damaged records; run `gpumesh repair --data-dir/)
    await repairsBuyer(dir)
  })

  it('the write-ahead log garbled at its tail: start refuses (the database holds older values); repair restores it', async () => {
    const dir = await copyOf(buyer)
    // the last ledger entry written (the last job settled): its newest value is lost, an older one stays
    await garbleLogAt(dir, '!market-ledger!', true)
    await refuses(dir, /the database lost \d+ of the \d+ records the journal holds \((missing|older values of) /)
    await repairsBuyer(dir)
  })

  it('a table file garbled or deleted: start refuses with a clean message; repair restores every record', async () => {
    const garbled = await copyOf(buyer)
    // an offline read opens the database, which folds the log into a table file (*.ldb)
    assert.equal((await cli(['ledger'], garbled)).code, 0)
    const deleted = await copyOf({ dataDir: garbled })
    // garbled where a live value lies: a table keeps every version a flushed log held, newest first per key, so
    // bytes in the middle may hit only versions that were overwritten since (no record lost, nothing to refuse);
    // the file's first entry is always the newest version of its smallest key
    await garble(await dbFile(garbled, '.ldb'), () => 0, 64)
    await refuses(garbled, /the database (is corrupt|lost \d+ of)/)
    await repairsBuyer(garbled)

    await rm(await dbFile(deleted, '.ldb'))
    await refuses(deleted, /the database is corrupt \(Corruption: 1 missing files/)
    await repairsBuyer(deleted)
  })

  it('identity.key deleted or swapped: start and init refuse, and no new identity is made', async () => {
    const dir = await copyOf(provider)
    const key = await readFile(join(dir, 'identity.key'))
    await rm(join(dir, 'identity.key'))
    await refuses(dir, /the identity key is missing, but this data dir holds the records of 12D3KooW\S+; refusing to make a new identity.*Restore identity\.key from a backup/)
    const init = await cli(['init'], dir)
    assert.equal(init.code, 1)
    assert.match(init.stderr, /the identity key is missing/)
    assert.ok(!(await filesIn(dir)).includes('identity.key'))

    await cp(join(buyer.dataDir, 'identity.key'), join(dir, 'identity.key'))
    await refuses(dir, /the identity key is 12D3KooW\S+, but this data dir holds the records of 12D3KooW\S+/)
    await writeFile(join(dir, 'identity.key'), key, { mode: 0o600 })
    assert.deepEqual(await json<LedgerView>(['ledger'], dir), truth.providerLedger)
  })

  it('a torn last journal line (a crash mid-append) is normal: the node starts and the line is cut', async () => {
    const dir = await copyOf(buyer)
    const journal = join(dir, 'journal.log')
    const whole = await readFile(journal)
    await writeFile(journal, Buffer.concat([whole, Buffer.from('1234abcd {"s":"ledger","k":"tor')]))
    const daemon = await DaemonProcess.start(['node', 'start', ...LOCAL_FLAGS, '--log-level', 'warn', '--no-sell'], dir)
    try {
      assert.deepEqual(await daemon.json<LedgerView>(['ledger']), truth.buyerLedger)
    } finally {
      await daemon.stop()
    }
    const after = await readFile(journal, 'utf8')
    assert.ok(after.endsWith('\n'))
    assert.doesNotMatch(after, /"k":"tor/)
  })

  it('a read-only data dir is refused with the cause named', async () => {
    const asOther = process.getuid?.() === 0
    // root ignores file modes: run the CLI as another user (nobody) over a data dir that user owns
    const run = async (dir: string): Promise<CliResult> => await new Promise((resolve, reject) => {
      const child = spawn(process.execPath, [BIN, 'node', 'start', ...LOCAL_FLAGS, '--no-sell', '--data-dir', dir],
        { stdio: ['ignore', 'pipe', 'pipe'], ...(asOther ? { uid: 65534, gid: 65534 } : {}) })
      let stdout = ''
      let stderr = ''
      child.stdout.setEncoding('utf8').on('data', (d: string) => { stdout += d })
      child.stderr.setEncoding('utf8').on('data', (d: string) => { stderr += d })
      const timer = setTimeout(() => { child.kill('SIGKILL') }, 20_000)
      child.on('error', reject)
      child.on('close', (code) => { clearTimeout(timer); resolve({ code, stdout, stderr }) })
    })
    const prepare = async (readOnly: string[]): Promise<string> => {
      const dir = await copyOf(provider)
      await chmod(root, 0o755)
      for (const name of await readdir(dir, { recursive: true })) {
        if (asOther) await chown(join(dir, name), 65534, 65534)
      }
      if (asOther) await chown(dir, 65534, 65534)
      for (const path of readOnly) {
        const target = join(dir, path)
        for (const name of (await stat(target)).isDirectory() ? await readdir(target) : []) await chmod(join(target, name), 0o444)
        await chmod(target, 0o555)
      }
      return dir
    }
    const whole = await run(await prepare(['']))
    assert.equal(whole.code, 1, whole.stderr)
    assert.match(whole.stderr, /gpumesh: the data dir is not writable \(EACCES( for uid \d+)?\)/)
    const db = await run(await prepare(['db']))
    assert.equal(db.code, 1, db.stderr)
    assert.match(db.stderr, /gpumesh: the database cannot be written: IO error: \S+\/db\/\S+: Permission denied; the data dir must be writable/)
    assert.doesNotMatch(db.stderr, /Database failed to open/)
  })
})
