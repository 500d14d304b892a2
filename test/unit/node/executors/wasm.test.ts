import assert from 'node:assert/strict'
import { createHash } from 'node:crypto'
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
  inputs: [boxInput],
  // a module cannot use a GPU, and the allocated GPUs' UUIDs would make two runs of one job differ
  skip: ['exposes allocated GPUs by UUID']
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

  it('passes neither the allocated GPUs nor a job-supplied CUDA_VISIBLE_DEVICES', async () => {
    executor = new WasmExecutor({ tmpRoot: root, envAllowlist: ['CUDA_VISIBLE_DEVICES'] })
    for (const gpus of [[], ['GPU-1']]) {
      for (const name of ['CUDA_VISIBLE_DEVICES', 'NVIDIA_VISIBLE_DEVICES']) {
        const { stdout } = await run(request(['var', name], { env: { CUDA_VISIBLE_DEVICES: 'all' }, gpus }))
        assert.equal(stdout, '', `${name} with gpus ${gpus.join(',')}`)
      }
    }
  })

  describe('host state (protocol/README.md §5.9)', () => {
    let hostState: Uint8Array
    before(async () => { hostState = await assemble('host-state.wat', await readFile(join(FIXTURES, 'host-state.wat'), 'utf8')) })

    async function readHostState (job: string, input = 'hello'): Promise<DataView> {
      const { result } = await run({
        ...request([]),
        job,
        argv: ['host-state.wasm'],
        inputs: [{ path: 'host-state.wasm', bytes: hostState }, { path: 'in.txt', bytes: new TextEncoder().encode(input) }],
        outputs: ['o.bin']
      })
      assert.equal(result.exitCode, 0, result.detail)
      const out = result.outputs[0]?.bytes
      assert.equal(out?.length, 128)
      return new DataView(out.buffer, out.byteOffset, out.byteLength)
    }

    it('gives two runs of one job the same clocks, randomness and file stats, byte for byte', async () => {
      const a = await readHostState('job-a')
      await new Promise((resolve) => setTimeout(resolve, 20))
      const b = await readHostState('job-a')
      assert.deepEqual(new Uint8Array(a.buffer, a.byteOffset, 128), new Uint8Array(b.buffer, b.byteOffset, 128))
    })

    it('starts every clock at 0 and advances it 1 ns per read', async () => {
      const v = await readHostState('job-a')
      assert.equal(v.getBigUint64(0, true), 0n)
      assert.equal(v.getBigUint64(8, true), 1n)
    })

    it('draws randomness from SHA-256 in counter mode over the domain and the job id', async () => {
      const v = await readHostState('job-a')
      const block = (ctr: number): Buffer => {
        const c = Buffer.alloc(8)
        c.writeBigUInt64BE(BigInt(ctr))
        return createHash('sha256').update('gpumesh/wasm-random/1\njob-a').update(c).digest()
      }
      const expected = Buffer.concat([block(0), block(1)]).subarray(0, 48)
      assert.deepEqual(Buffer.from(v.buffer, v.byteOffset + 16, 48), expected)
      const other = await readHostState('job-b')
      assert.notDeepEqual(Buffer.from(other.buffer, other.byteOffset + 16, 48), expected)
    })

    describe('fd_readdir', () => {
      let lister: Uint8Array
      before(async () => { lister = await assemble('readdir.wat', await readFile(join(FIXTURES, 'readdir.wat'), 'utf8')) })

      /** Entries of a WASI dirent buffer: [d_next, d_ino, name, type]; a cut last entry has its name cut. */
      function entries (b: Uint8Array): Array<[bigint, bigint, string, number]> {
        const v = new DataView(b.buffer, b.byteOffset, b.byteLength)
        const out: Array<[bigint, bigint, string, number]> = []
        for (let at = 0; at + 24 <= b.length; at += 24 + v.getUint32(at + 16, true)) {
          out.push([v.getBigUint64(at, true), v.getBigUint64(at + 8, true), Buffer.from(b.subarray(at + 24, Math.min(b.length, at + 24 + v.getUint32(at + 16, true)))).toString(), v.getUint8(at + 20)])
        }
        return out
      }

      async function list (inputs: string[]): Promise<{ whole: Uint8Array, part: Uint8Array }> {
        const text = new TextEncoder()
        const { result } = await run({
          ...request([]),
          argv: ['readdir.wasm'],
          inputs: [...inputs.map((path) => ({ path, bytes: text.encode(path) })), { path: 'readdir.wasm', bytes: lister }],
          outputs: ['o.bin']
        })
        assert.equal(result.exitCode, 0, result.detail)
        const out = result.outputs[0]?.bytes as Uint8Array
        const v = new DataView(out.buffer, out.byteOffset, out.byteLength)
        const wholeLen = v.getUint32(0, true)
        return { whole: out.subarray(8, 8 + wholeLen), part: out.subarray(8 + wholeLen, 8 + wholeLen + v.getUint32(4, true)) }
      }

      it('lists entries sorted by name with inode 0 and d_next their position, whatever order they were created in', async () => {
        const { whole } = await list(['zeta.txt', 'alpha.txt', 'mid.txt'])
        assert.deepEqual(entries(whole), [
          [1n, 0n, 'alpha.txt', 4], [2n, 0n, 'mid.txt', 4], [3n, 0n, 'readdir.wasm', 4], [4n, 0n, 'zeta.txt', 4]
        ])
        const again = await list(['mid.txt', 'zeta.txt', 'alpha.txt'])
        assert.deepEqual(again.whole, whole)
      })

      it('resumes at the cookie as a position in the sorted listing and cuts the last entry at the buffer end', async () => {
        const { part } = await list(['zeta.txt', 'alpha.txt', 'mid.txt'])
        // from cookie 2: readdir.wasm (24 + 12 bytes) whole, then 4 bytes of zeta.txt's header
        assert.equal(part.length, 40)
        assert.deepEqual(entries(part.subarray(0, 36)), [[3n, 0n, 'readdir.wasm', 4]])
        assert.deepEqual([...part.subarray(36)], [4, 0, 0, 0])
      })
    })

    it('zeroes the device, inode and times of a file stat but keeps its type and size', async () => {
      const v = await readHostState('job-a', 'twelve bytes')
      for (const at of [0, 8, 40, 48, 56]) assert.equal(v.getBigUint64(64 + at, true), 0n, `offset ${at}`)
      assert.equal(v.getUint8(64 + 16), 4, 'regular file')
      assert.equal(v.getBigUint64(64 + 32, true), 12n, 'size')
    })
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
