/**
 * Shared compliance suite for every Executor (DESIGN §6): process, wasm and docker run the same checks.
 *
 * Contract for implementations under test:
 * - the executor's env allowlist must include `GPUMESH_TEST_ALLOWED` and must NOT include `GPUMESH_TEST_BLOCKED`;
 * - `job` turns each check's intent into an argv for that executor (for wasm, argv[0] is the module's path in the
 *   work dir, shipped through `job.inputs`, which are added to every request).
 */
import assert from 'node:assert/strict'
import type { ExecutionEvent, ExecutionRequest, ExecutionResult, Executor } from '../../../../node/executors/types.js'

/** How to express each check as a job for one executor. */
export interface ComplianceJob {
  /** Prints `text` (followed by a newline or not) on stdout. */
  echoArgv: (text: string) => string[]
  /** Writes exactly `text` (no newline) to `path`, relative to the work dir. */
  writeFileArgv: (path: string, text: string) => string[]
  /** Prints the contents of `path` (relative to the work dir) on stdout. */
  catArgv: (path: string) => string[]
  /** Exits with `code`. */
  exitArgv: (code: number) => string[]
  /** Sleeps about `ms` milliseconds, then exits 0. */
  sleepArgv: (ms: number) => string[]
  /** Prints the value of env var `name`, or nothing when unset. */
  envArgv: (name: string) => string[]
  /** An argv that cannot be started (default: a program that does not exist). */
  missingArgv?: () => string[]
  /** Files every request carries (e.g. the wasm module). */
  inputs?: Array<{ path: string, bytes: Uint8Array }>
  /** Container image (docker). */
  image?: string
  /** Checks this executor cannot do, by title, skipped with a note. */
  skip?: string[]
}

const enc = new TextEncoder()
const dec = new TextDecoder()

/** Registers a mocha `describe` block with the compliance checks for one executor. */
export function executorCompliance (name: string, make: () => Promise<Executor> | Executor, job: ComplianceJob): void {
  describe(`executor compliance: ${name}`, function () {
    this.timeout(20_000)
    let executor: Executor

    before(async () => { executor = await make() })

    /** A request with sane defaults and the job's common inputs. */
    function request (argv: string[], extra: Partial<ExecutionRequest> = {}): ExecutionRequest {
      const base: ExecutionRequest = {
        job: 'compliance', argv, env: {}, inputs: [...(job.inputs ?? [])], outputs: [], timeoutMs: 10_000,
        network: false, gpus: []
      }
      if (job.image !== undefined) base.image = job.image
      return { ...base, ...extra, inputs: [...base.inputs, ...(extra.inputs ?? [])] }
    }

    /** Runs and gathers stdout as text. */
    async function run (req: ExecutionRequest, signal?: AbortSignal): Promise<{ result: ExecutionResult, stdout: string }> {
      const chunks: Uint8Array[] = []
      const onEvent = (e: ExecutionEvent): void => { if (e.stream === 'stdout') chunks.push(e.data) }
      const result = await executor.run(req, signal === undefined ? { onEvent } : { onEvent, signal })
      return { result, stdout: chunks.map((c) => dec.decode(c, { stream: true })).join('') }
    }

    /** `it`, or a skip with a note when the executor opted out of this check. */
    function check (title: string, fn: () => Promise<void>): void {
      it(title, async function () {
        if (job.skip?.includes(title) === true) this.skip()
        await fn()
      })
    }

    check('streams stdout as log events', async () => {
      const { result, stdout } = await run(request(job.echoArgv('hello compliance')))
      assert.equal(result.exitCode, 0)
      assert.equal(result.reason, undefined)
      assert.equal(stdout.trim(), 'hello compliance')
      assert.ok(result.startedAt <= result.endedAt)
    })

    check('collects a declared output with exact bytes and leaves out a missing one', async () => {
      const { result } = await run(request(job.writeFileArgv('out.txt', 'exact-bytes\u00e9'), { outputs: ['out.txt', 'missing.txt'] }))
      assert.equal(result.exitCode, 0)
      assert.deepEqual(result.outputs.map((o) => o.path), ['out.txt'])
      assert.deepEqual(Buffer.from(result.outputs[0]?.bytes ?? []), Buffer.from(enc.encode('exact-bytes\u00e9')))
    })

    check('places inputs in the work dir before the run', async () => {
      const { result, stdout } = await run(request(job.catArgv('in.txt'), { inputs: [{ path: 'in.txt', bytes: enc.encode('input-data') }] }))
      assert.equal(result.exitCode, 0)
      assert.equal(stdout.trim(), 'input-data')
    })

    check('reports the exit code', async () => {
      const { result } = await run(request(job.exitArgv(3)))
      assert.equal(result.exitCode, 3)
      assert.equal(result.reason, undefined)
    })

    check('stops a job over its timeout', async () => {
      const t0 = Date.now()
      const { result } = await run(request(job.sleepArgv(15_000), { timeoutMs: 300 }))
      assert.equal(result.reason, 'timeout')
      assert.notEqual(result.exitCode, 0)
      assert.ok(Date.now() - t0 < 8_000, `took ${Date.now() - t0} ms`)
    })

    check('cancels through the signal', async () => {
      const ac = new AbortController()
      setTimeout(() => ac.abort(), 300)
      const t0 = Date.now()
      const { result } = await run(request(job.sleepArgv(15_000)), ac.signal)
      assert.equal(result.reason, 'cancelled')
      assert.notEqual(result.exitCode, 0)
      assert.ok(Date.now() - t0 < 8_000, `took ${Date.now() - t0} ms`)
    })

    check('cancels a run aborted while it is being prepared (before the job starts)', async () => {
      const ac = new AbortController()
      const t0 = Date.now()
      // run() has checked the signal and is preparing the work dir when the abort comes
      const running = run(request(job.sleepArgv(15_000)), ac.signal)
      ac.abort()
      const { result } = await running
      assert.equal(result.reason, 'cancelled')
      assert.notEqual(result.exitCode, 0)
      assert.ok(Date.now() - t0 < 8_000, `took ${Date.now() - t0} ms`)
    })

    check('passes only allow-listed env names', async () => {
      const env = { GPUMESH_TEST_ALLOWED: 'yes', GPUMESH_TEST_BLOCKED: 'no' }
      const allowed = await run(request(job.envArgv('GPUMESH_TEST_ALLOWED'), { env }))
      assert.equal(allowed.stdout.trim(), 'yes')
      const blocked = await run(request(job.envArgv('GPUMESH_TEST_BLOCKED'), { env }))
      assert.equal(blocked.stdout.trim(), '')
    })

    check('exposes allocated GPUs by UUID', async () => {
      const gpus = ['GPU-aaaa-1111', 'GPU-bbbb-2222']
      const cuda = await run(request(job.envArgv('CUDA_VISIBLE_DEVICES'), { gpus }))
      assert.equal(cuda.stdout.trim(), gpus.join(','))
      const nvidia = await run(request(job.envArgv('NVIDIA_VISIBLE_DEVICES'), { gpus }))
      assert.equal(nvidia.stdout.trim(), gpus.join(','))
    })

    check('gives each run a fresh work dir', async () => {
      const first = await run(request(job.writeFileArgv('leftover.txt', 'x'), { outputs: ['leftover.txt'] }))
      assert.equal(first.result.outputs.length, 1)
      const second = await run(request(job.exitArgv(0), { outputs: ['leftover.txt'] }))
      assert.deepEqual(second.result.outputs, [])
    })

    check('never throws for a job that cannot start', async () => {
      const argv = job.missingArgv?.() ?? ['/nonexistent/gpumesh-no-such-program']
      const { result } = await run(request(argv))
      assert.equal(result.exitCode, -1)
      assert.equal(result.reason, 'start-failed')
    })
  })
}
