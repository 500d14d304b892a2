import assert from 'node:assert/strict'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { createServer, type Server } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
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

  it('fails to start a required sandbox when bubblewrap is missing, or runs with it', async () => {
    const strict = new ProcessExecutor({ sandbox: 'bwrap' })
    const result = await strict.run(request(['/bin/true']))
    if (bwrap === undefined) assert.equal(result.reason, 'start-failed')
    else assert.equal(result.exitCode, 0)
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
  const executor = new ProcessExecutor({ sandbox: 'auto' })

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
