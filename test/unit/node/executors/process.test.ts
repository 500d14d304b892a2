import assert from 'node:assert/strict'
import { chmod, chown, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { createServer, type Server } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { loadOrCreateIdentity } from '../../../../node/keystore.js'
import { ensureApiToken } from '../../../../node/api/credentials.js'
import { collectOutputs } from '../../../../node/executors/jobfs.js'
import { bwrapAvailable, DEFAULT_ENV_ALLOWLIST, prlimitPath, ProcessExecutor, safeRelative } from '../../../../node/executors/process.js'
import type { ExecutionRequest, ExecutionResult } from '../../../../node/executors/types.js'
import { executorCompliance, type ComplianceJob } from './compliance.js'

/** `/bin/sh -c script` with positional args (the job's argv; the executor itself never uses a shell). */
const sh = (script: string, ...args: string[]): string[] => ['/bin/sh', '-c', script, 'sh', ...args]

const shellJob: ComplianceJob = {
  echoArgv: (text) => sh('printf "%s\\n" "$1"', text),
  writeFileArgv: (path, text) => sh('printf "%s" "$2" > "$1"', path, text),
  catArgv: (path) => sh('cat -- "$1"', path),
  exitArgv: (code) => sh('exit "$1"', String(code)),
  sleepArgv: (ms) => sh('exec sleep "$1"', String(ms / 1000)),
  envArgv: (name) => sh('printenv "$1" || true', name)
}

const allowlist = [...DEFAULT_ENV_ALLOWLIST, 'GPUMESH_TEST_ALLOWED']
const bwrap = await bwrapAvailable()
const prlimit = await prlimitPath()

executorCompliance('process (no sandbox)', () => new ProcessExecutor({ sandbox: 'none', envAllowlist: allowlist, killGraceMs: 500 }), shellJob)
if (bwrap !== undefined) {
  executorCompliance('process (bwrap)', () => new ProcessExecutor({ sandbox: 'bwrap', envAllowlist: allowlist, killGraceMs: 500 }), shellJob)
}

const enc = new TextEncoder()
const dec = new TextDecoder()

/** A request with defaults. */
function request (argv: string[], extra: Partial<ExecutionRequest> = {}): ExecutionRequest {
  return { job: 'test', argv, env: {}, inputs: [], outputs: [], timeoutMs: 10_000, network: false, gpus: [], ...extra }
}

/** Runs and returns the result with stdout and stderr as text. */
async function run (executor: ProcessExecutor, req: ExecutionRequest): Promise<ExecutionResult & { stdout: string, stderr: string }> {
  let stdout = ''
  let stderr = ''
  const result = await executor.run(req, {
    onEvent: (e) => { if (e.stream === 'stdout') stdout += dec.decode(e.data); else stderr += dec.decode(e.data) }
  })
  return { ...result, stdout, stderr }
}

describe('process executor', function () {
  this.timeout(20_000)
  const plain = new ProcessExecutor({ sandbox: 'none', killGraceMs: 500 })

  it('rejects input paths that escape the work dir', async () => {
    for (const path of ['../x', '/etc/x', 'a/../../x', '']) {
      const result = await plain.run(request(['/bin/true'], { inputs: [{ path, bytes: enc.encode('x') }] }))
      assert.equal(result.reason, 'start-failed', path)
      assert.equal(result.exitCode, -1)
    }
    assert.equal(safeRelative('a/b.txt'), join('a', 'b.txt'))
    assert.equal(safeRelative('a/../b'), undefined)
  })

  it('does not follow symlinks or escape when collecting outputs', async () => {
    const outside = await mkdtemp(join(tmpdir(), 'gpumesh-outside-'))
    try {
      await writeFile(join(outside, 'secret'), 'secret')
      const result = await plain.run(request(sh('ln -s "$1/secret" link && ln -s "$1" dirlink && mkdir d && printf ok > d/f', outside),
        { outputs: ['link', 'dirlink/secret', '../secret', 'd', 'd/f'] }))
      assert.equal(result.exitCode, 0)
      assert.deepEqual(result.outputs.map((o) => [o.path, dec.decode(o.bytes)]), [['d/f', 'ok']])
    } finally {
      await rm(outside, { recursive: true, force: true })
    }
  })

  it('kills a job that ignores SIGTERM after the grace period (exit 128 + 9)', async () => {
    const t0 = Date.now()
    const result = await plain.run(request(sh('trap "" TERM; while :; do sleep 0.05; done'), { timeoutMs: 200 }))
    assert.equal(result.reason, 'timeout')
    assert.equal(result.exitCode, 137)
    assert.ok(Date.now() - t0 < 5000)
  })

})

describe('process executor sandbox (bwrap)', function () {
  this.timeout(20_000)
  const executor = new ProcessExecutor({ sandbox: 'bwrap', killGraceMs: 500 })
  let server: Server
  let port = 0

  before(async function () {
    if (bwrap === undefined) {
      this.test?.parent?.tests.forEach((t) => { t.title += ' (skipped: bubblewrap unavailable)' })
      this.skip()
    }
    server = createServer((socket) => socket.end('hi'))
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    port = (server.address() as { port: number }).port
  })

  after(async () => { if (server !== undefined) await new Promise((resolve) => server.close(resolve)) })

  it('cannot see host files outside its work dir', async () => {
    const outside = await mkdtemp(join(tmpdir(), 'gpumesh-secret-'))
    try {
      const secret = join(outside, 'secret.txt')
      await writeFile(secret, 'top secret')
      const cat = await run(executor, request(sh('cat -- "$1"', secret)))
      assert.notEqual(cat.exitCode, 0)
      assert.ok(!cat.stdout.includes('top secret'))
      const probe = await run(executor, request(sh('for p in "$@"; do if [ -e "$p" ]; then echo "visible $p"; fi; done',
        secret, '/etc/shadow', '/etc/passwd', '/root', '/home', '/work', process.cwd())))
      assert.equal(probe.exitCode, 0)
      assert.equal(probe.stdout, '')
    } finally {
      await rm(outside, { recursive: true, force: true })
    }
  })

  it('has no network unless the request allows it', async () => {
    const script = `require('net').connect(${port}, '127.0.0.1')
      .on('data', (d) => { console.log('got ' + d); process.exit(0) })
      .on('error', (e) => { console.log('error ' + e.code); process.exit(7) })`
    const off = await run(executor, request(['node', '-e', script]))
    assert.equal(off.exitCode, 7, off.stdout + off.stderr)
    assert.match(off.stdout, /^error /)
    const on = await run(executor, request(['node', '-e', script], { network: true }))
    assert.equal(on.exitCode, 0, on.stdout + on.stderr)
    assert.equal(on.stdout.trim(), 'got hi')
  })

  it('runs node and python3 from the read-only system tree', async function () {
    const node = await run(executor, request(['node', '-e', 'console.log(1 + 1)']))
    assert.equal(node.stdout.trim(), '2', node.stderr)
    const python = await run(executor, request(['/usr/bin/python3', '-c', 'print(2 + 2)']))
    if (python.reason === 'start-failed') return
    assert.equal(python.stdout.trim(), '4', python.stderr)
  })
})

describe('process executor limits (prlimit)', function () {
  this.timeout(20_000)
  const executor = new ProcessExecutor({ sandbox: 'none' })

  before(function () { if (prlimit === undefined) this.skip() })

  it('a memory limit stops an allocation-heavy job but not a small one', async () => {
    const limits = { memoryBytes: 2_000_000_000 }
    const small = await run(executor, request(['node', '-e', 'console.log("ok")'], { limits }))
    assert.equal(small.exitCode, 0, small.stderr)
    const big = await run(executor, request(['node', '-e',
      'const a = []; for (let i = 0; i < 40; i++) a.push(Buffer.alloc(100e6, 1)); console.log("ok")'], { limits }))
    assert.notEqual(big.exitCode, 0)
    assert.equal(big.stdout, '')
  })
})

describe('process executor fails closed without a sandbox', function () {
  this.timeout(20_000)
  const hidden = '/nonexistent-gpumesh-path'

  it('refuses jobs when bwrap is not on its PATH, even after bwrap was found on another PATH', async () => {
    // the probe on the normal PATH ran (and was cached) when this file loaded; it must not answer for another PATH
    const strict = new ProcessExecutor({ sandbox: 'bwrap', searchPath: hidden })
    const report = await strict.sandboxReport()
    assert.equal(report.ready, false)
    assert.equal(report.mode, 'bwrap')
    assert.match(report.detail, /refused: bwrap not found on PATH \(\/nonexistent-gpumesh-path\).*executors\.process\.sandbox to "none"/)
    const marker = join(tmpdir(), `gpumesh-should-not-exist-${process.pid}`)
    const result = await run(strict, request(['/bin/sh', '-c', 'echo ran; touch "$1"', 'sh', marker]))
    assert.equal(result.reason, 'start-failed')
    assert.match(result.detail ?? '', /sandbox required but not available: bwrap not found/)
    assert.equal(result.stdout, '')
    await assert.rejects(readFile(marker))
  })

  it('is required by default', async () => {
    const byDefault = new ProcessExecutor({ searchPath: hidden })
    assert.equal(byDefault.sandbox, 'bwrap')
    assert.equal((await byDefault.run(request(['/bin/true']))).reason, 'start-failed')
  })

  it('runs unsandboxed only when the owner opts out, and says so', async () => {
    const optedOut = new ProcessExecutor({ sandbox: 'none', searchPath: hidden })
    const report = await optedOut.sandboxReport()
    assert.equal(report.ready, true)
    assert.equal(report.mode, 'none')
    assert.match(report.detail, /^UNSANDBOXED \(executors\.process\.sandbox = "none"\)/)
    assert.equal((await optedOut.run(request(['/bin/true']))).exitCode, 0)
  })

  it('a job run as the daemon\'s own user is named as such', async () => {
    const report = await new ProcessExecutor({ sandbox: 'none', runAs: 'self' }).sandboxReport()
    assert.equal(report.user.self, true)
    assert.match(report.detail, /as the daemon's own user \(uid \d+\), who can read identity\.key and api\.token/)
  })
})

describe('process executor never runs a job as root', function () {
  this.timeout(20_000)
  let dataDir: string

  before(async function () {
    if (process.getuid?.() !== 0) {
      this.test?.parent?.tests.forEach((t) => { t.title += ' (skipped: needs root)' })
      this.skip()
    }
    dataDir = await mkdtemp(join(tmpdir(), 'gpumesh-datadir-'))
    await loadOrCreateIdentity(dataDir)
    await ensureApiToken(dataDir)
    // a careless owner's data dir: listable by everyone; the key files themselves stay 0600
    await chmod(dataDir, 0o755)
  })

  after(async () => { if (dataDir !== undefined) await rm(dataDir, { recursive: true, force: true }) })

  const modes: Array<['bwrap' | 'none', () => boolean]> = [['bwrap', () => bwrap !== undefined], ['none', () => true]]
  for (const [mode, available] of modes) {
    it(`sandbox ${mode}: the job runs as nobody and cannot read identity.key or api.token, nor write into the data dir`, async function () {
      if (!available()) this.skip()
      const executor = new ProcessExecutor({ sandbox: mode, workRoot: join(dataDir, 'work'), killGraceMs: 500 })
      const report = await executor.sandboxReport()
      assert.deepEqual([report.ready, report.user.uid, report.user.self], [true, 65534, false])
      const key = join(dataDir, 'identity.key')
      const token = join(dataDir, 'api.token')
      const result = await run(executor, request(sh([
        'id -u; id -g; pwd; printf x > own.txt',
        'cat -- "$1" && echo READ-KEY',
        'cat -- "$2" && echo READ-TOKEN',
        'touch -- "$3/pwned" && echo WROTE-DATADIR',
        'true'
      ].join('\n'), key, token, dataDir), { outputs: ['own.txt'] }))
      assert.equal(result.exitCode, 0, result.stderr)
      const [uid, gid, cwd] = result.stdout.split('\n')
      assert.deepEqual([uid, gid], ['65534', '65534'])
      // its work dir is outside the data dir, which the job's user must not reach
      assert.ok(cwd !== undefined && !cwd.startsWith(dataDir), cwd)
      assert.doesNotMatch(result.stdout, /READ-KEY|READ-TOKEN|WROTE-DATADIR/)
      await assert.rejects(readFile(join(dataDir, 'pwned')))
      assert.deepEqual(result.outputs.map((o) => [o.path, dec.decode(o.bytes)]), [['own.txt', 'x']])
    })
  }

  it('sandbox bwrap: a job cannot write anywhere on the host but its work dir', async function () {
    if (bwrap === undefined) this.skip()
    const executor = new ProcessExecutor({ sandbox: 'bwrap', killGraceMs: 500 })
    const name = `gpumesh-escape-${process.pid}-${Date.now()}`
    const result = await run(executor, request(sh('for d in /tmp /var/tmp /dev/shm "$2"; do touch "$d/$1" 2>/dev/null && echo "wrote $d"; done; true', name, dataDir)))
    assert.equal(result.exitCode, 0, result.stderr)
    for (const dir of ['/tmp', '/var/tmp', '/dev/shm', dataDir]) await assert.rejects(readFile(join(dir, name)), dir)
  })

  it('hands back only outputs owned by the job\'s user (no hard link to a root-owned file)', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'gpumesh-owner-'))
    try {
      await writeFile(join(dir, 'rootfile'), 'secret')
      await writeFile(join(dir, 'jobfile'), 'mine')
      await chown(join(dir, 'jobfile'), 65534, 65534)
      const { outputs } = await collectOutputs(dir, ['rootfile', 'jobfile'], Infinity, Infinity, 65534)
      assert.deepEqual(outputs.map((o) => o.path), ['jobfile'])
      assert.equal((await collectOutputs(dir, ['rootfile', 'jobfile'])).outputs.length, 2)
    } finally {
      await rm(dir, { recursive: true, force: true })
    }
  })
})
