import assert from 'node:assert/strict'
import { existsSync } from 'node:fs'
import { mkdir, mkdtemp, readdir, readFile, rm, symlink, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import wabt from 'wabt'
import { collectOutputs } from '../../../../node/executors/jobfs.js'
import type { ExecutionEvent, ExecutionRequest, ExecutionResult } from '../../../../node/executors/types.js'
import { WASM_KILLED_EXIT_CODE, WASM_TRAP_EXIT_CODE, WasmExecutor } from '../../../../node/executors/wasm.js'
import { executorCompliance } from './compliance.js'

// dist/test/unit/node/executors → repository root
const FIXTURES = fileURLToPath(new URL('../../../../../test/fixtures/wasm/', import.meta.url))

/** Assemble WebAssembly text into a binary module. */
async function assemble (name: string, text: string): Promise<Uint8Array> {
  const toolkit = await wabt()
  const module = toolkit.parseWat(name, text)
  try {
    module.validate()
    return module.toBinary({}).buffer
  } finally {
    module.destroy()
  }
}

const box = await assemble('box.wat', await readFile(join(FIXTURES, 'box.wat'), 'utf8'))
const boxInput = { path: 'box.wasm', bytes: box }

executorCompliance('wasm', () => new WasmExecutor({ envAllowlist: ['GPUMESH_TEST_ALLOWED'] }), {
  echoArgv: (text) => ['box.wasm', 'echo', text],
  writeFileArgv: (path, text) => ['box.wasm', 'write', path, text],
  catArgv: (path) => ['box.wasm', 'cat', path],
  exitArgv: (code) => ['box.wasm', 'xit', String(code)],
  // A busy wait on WASI's monotonic clock: the worker can be terminated mid-wait.
  sleepArgv: (ms) => ['box.wasm', 'sleep', String(ms)],
  envArgv: (name) => ['box.wasm', 'var', name],
  inputs: [boxInput]
})

const dec = new TextDecoder()

describe('WasmExecutor', function () {
  this.timeout(20_000)
  let root: string
  let executor: WasmExecutor

  beforeEach(async () => {
    root = await mkdtemp(join(tmpdir(), 'gpumesh-wasm-test-'))
    executor = new WasmExecutor({ tmpRoot: root })
  })
  afterEach(async () => { await rm(root, { recursive: true, force: true }) })

  /** A request running box.wasm with `args`. */
  function request (args: string[], extra: Partial<ExecutionRequest> = {}): ExecutionRequest {
    return { job: 'wasm-test', argv: ['box.wasm', ...args], env: {}, inputs: [boxInput], outputs: [], timeoutMs: 10_000, network: false, gpus: [], ...extra }
  }

  /** Run and gather stdout. */
  async function run (req: ExecutionRequest): Promise<{ result: ExecutionResult, stdout: string, events: ExecutionEvent[] }> {
    const events: ExecutionEvent[] = []
    const result = await executor.run(req, { onEvent: (e) => { events.push(e) } })
    const stdout = events.filter((e) => e.stream === 'stdout').map((e) => dec.decode(e.data)).join('')
    return { result, stdout, events }
  }

  it('stops a module that loops forever at the timeout', async () => {
    const t0 = Date.now()
    const { result } = await run(request(['loop'], { timeoutMs: 200 }))
    assert.equal(result.reason, 'timeout')
    assert.equal(result.exitCode, WASM_KILLED_EXIT_CODE)
    assert.ok(Date.now() - t0 < 5_000)
  })

  it('tightens the wall clock to limits.cpuSeconds', async () => {
    const { result } = await run(request(['loop'], { timeoutMs: 10_000, limits: { cpuSeconds: 0.2 } }))
    assert.equal(result.reason, 'timeout')
  })

  it('cannot open files outside /work', async () => {
    await writeFile(join(root, 'outside.txt'), 'secret')
    const control = await run(request(['open', 'box.wasm']))
    assert.equal(control.stdout, 'opened\n')
    for (const path of ['../outside.txt', 'sub/../../outside.txt', '/etc/passwd']) {
      const { result, stdout } = await run(request(['open', path], { inputs: [boxInput, { path: 'sub/x', bytes: new Uint8Array() }] }))
      assert.equal(stdout, 'denied\n', path)
      assert.equal(result.exitCode, 1, path)
    }
  })

  it('cannot write files outside /work', async () => {
    const { result } = await run(request(['write', '../escape.txt', 'x']))
    assert.equal(result.exitCode, 1)
    assert.equal(existsSync(join(root, 'escape.txt')), false)
  })

  it('removes the work dir and log dir after the run', async () => {
    await run(request(['write', 'out.txt', 'x'], { outputs: ['out.txt'] }))
    assert.deepEqual(await readdir(root), [])
  })

  it('is deterministic for a module without clock or randomness', async () => {
    const a = await run(request(['write', 'o.bin', 'same'], { outputs: ['o.bin'] }))
    const b = await run(request(['write', 'o.bin', 'same'], { outputs: ['o.bin'] }))
    assert.deepEqual(a.result.outputs, b.result.outputs)
    assert.equal(a.result.exitCode, b.result.exitCode)
  })

  it('reports a trap as exit code 134 with the message', async () => {
    const trap = await assemble('trap.wat', '(module (memory (export "memory") 1) (func (export "_start") unreachable))')
    const { result } = await run({ ...request([]), argv: ['trap.wasm'], inputs: [{ path: 'trap.wasm', bytes: trap }] })
    assert.equal(result.exitCode, WASM_TRAP_EXIT_CODE)
    assert.equal(result.reason, undefined)
    assert.match(result.detail ?? '', /trap: .*unreachable/)
  })

  it('reports start-failed for a missing, invalid or misplaced module and a bad input path', async () => {
    const cases: Array<Partial<ExecutionRequest>> = [
      { argv: ['missing.wasm'] },
      { argv: ['bad.wasm'], inputs: [{ path: 'bad.wasm', bytes: new TextEncoder().encode('not wasm') }] },
      { argv: ['../box.wasm'] },
      { argv: [] },
      { inputs: [boxInput, { path: '../evil', bytes: new Uint8Array() }] }
    ]
    for (const extra of cases) {
      const { result } = await run(request(['echo', 'x'], extra))
      assert.equal(result.exitCode, -1, JSON.stringify(extra.argv))
      assert.equal(result.reason, 'start-failed')
      assert.ok((result.detail ?? '').length > 0)
    }
  })

  it('reports -1 / cancelled for a signal aborted before the start', async () => {
    const result = await executor.run(request(['echo', 'x']), { signal: AbortSignal.abort() })
    assert.equal(result.exitCode, -1)
    assert.equal(result.reason, 'cancelled')
  })

  it('leaves out outputs over the size cap and says so', async () => {
    executor = new WasmExecutor({ tmpRoot: root, maxOutputBytes: 3 })
    const { result } = await run(request(['write', 'big.txt', 'four'], { outputs: ['big.txt'] }))
    assert.deepEqual(result.outputs, [])
    assert.match(result.detail ?? '', /big\.txt/)
  })

  it('passes GPU UUIDs but not a job-supplied CUDA_VISIBLE_DEVICES', async () => {
    executor = new WasmExecutor({ tmpRoot: root, envAllowlist: ['CUDA_VISIBLE_DEVICES'] })
    const none = await run(request(['var', 'CUDA_VISIBLE_DEVICES'], { env: { CUDA_VISIBLE_DEVICES: 'all' } }))
    assert.equal(none.stdout, '')
    const some = await run(request(['var', 'CUDA_VISIBLE_DEVICES'], { env: { CUDA_VISIBLE_DEVICES: 'all' }, gpus: ['GPU-1'] }))
    assert.equal(some.stdout, 'GPU-1')
  })
})

describe('collectOutputs', () => {
  it('leaves out symlinks, directories, escaping paths and files reached through a symlinked parent', async () => {
    const root = await mkdtemp(join(tmpdir(), 'gpumesh-collect-test-'))
    try {
      const work = join(root, 'work')
      await mkdir(join(work, 'dir'), { recursive: true })
      await writeFile(join(root, 'secret.txt'), 'secret')
      await writeFile(join(work, 'ok.txt'), 'ok')
      await symlink(join(root, 'secret.txt'), join(work, 'link.txt'))
      await symlink(root, join(work, 'up'))
      const paths = ['ok.txt', 'link.txt', 'up/secret.txt', '../secret.txt', '/etc/passwd', 'dir', 'missing']
      const { outputs } = await collectOutputs(work, paths)
      assert.deepEqual(outputs.map((o) => o.path), ['ok.txt'])
    } finally {
      await rm(root, { recursive: true, force: true })
    }
  })
})
