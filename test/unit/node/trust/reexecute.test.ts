import assert from 'node:assert/strict'
import { mkdtemp, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import wabt from 'wabt'
import type { JobRequest } from '../../../../protocol/index.js'
import { BlobStore } from '../../../../node/blobs/store.js'
import { storeResult } from '../../../../node/market/provider-io.js'
import { ReexecutionError, outputsManifestCid, reexecuteJob } from '../../../../node/trust/reexecute.js'
import { jobPayload } from '../../../helpers/trust-fixtures.js'

const FIXTURES = fileURLToPath(new URL('../../../../../test/fixtures/wasm/', import.meta.url))

async function assemble (name: string): Promise<Uint8Array> {
  const module = (await wabt()).parseWat(name, await readFile(join(FIXTURES, name), 'utf8'))
  try { module.validate(); return module.toBinary({}).buffer } finally { module.destroy() }
}

const enc = (s: string): Uint8Array => new TextEncoder().encode(s)

describe('node/trust/reexecute', function () {
  this.timeout(30_000)
  let root: string
  let box: Uint8Array
  let hostState: Uint8Array
  before(async () => { box = await assemble('box.wat'); hostState = await assemble('host-state.wat') })
  beforeEach(async () => { root = await mkdtemp(join(tmpdir(), 'gpumesh-reexec-test-')) })
  afterEach(async () => { await rm(root, { recursive: true, force: true }) })

  function job (argv: string[], outputs: string[], extra: Partial<JobRequest['workload']> = {}): JobRequest {
    return jobPayload({ argv, outputs, inputs: [], ...extra })
  }

  it('gives the manifest CID the provider\'s storeResult builds for the same outputs', async () => {
    const request = job(['box.wasm', 'write', 'out.txt', 'hello'], ['missing.txt', 'out.txt'])
    const cid = await reexecuteJob(request, [{ path: 'box.wasm', bytes: box }], { job: 'job-1', tmpRoot: root })
    const blobs = await BlobStore.open(join(root, 'blobs'))
    const stored = await storeResult(blobs, request.workload.outputs, [{ path: 'out.txt', bytes: enc('hello') }], new Uint8Array(0), 'someone')
    assert.equal(cid.toString(), stored.manifest.toString())
    assert.equal(cid.toString(), outputsManifestCid(['out.txt'], [{ path: 'out.txt', bytes: enc('hello') }]).toString())
    // another output content is another CID
    assert.notEqual(cid.toString(), outputsManifestCid(['out.txt'], [{ path: 'out.txt', bytes: enc('hellp') }]).toString())
  })

  it('is deterministic: clocks, randomness and file stats give the same CID per job id, another job id another', async () => {
    const request = job(['host-state.wasm'], ['o.bin'])
    const inputs = [{ path: 'host-state.wasm', bytes: hostState }, { path: 'in.txt', bytes: enc('x') }]
    const a = await reexecuteJob(request, inputs, { job: 'job-a', tmpRoot: root })
    const b = await reexecuteJob(request, inputs, { job: 'job-a', tmpRoot: root })
    const c = await reexecuteJob(request, inputs, { job: 'job-b', tmpRoot: root })
    assert.equal(a.toString(), b.toString())
    assert.notEqual(a.toString(), c.toString())
  })

  it('refuses a job that is not wasm, a run that does not end on its own, and one past the wall cap', async () => {
    await assert.rejects(reexecuteJob(job(['sh'], [], { executor: 'process' }), [], { job: 'j', tmpRoot: root }), (err: unknown) => err instanceof ReexecutionError && err.reason === 'not-deterministic')
    await assert.rejects(reexecuteJob(job(['box.wasm', 'xit', '128'], []), [{ path: 'box.wasm', bytes: box }], { job: 'j', tmpRoot: root }), (err: unknown) => err instanceof ReexecutionError && err.reason === 'incomplete')
    await assert.rejects(reexecuteJob(job(['box.wasm', 'loop'], []), [{ path: 'box.wasm', bytes: box }], { job: 'j', tmpRoot: root, maxWallMs: 300 }), (err: unknown) => err instanceof ReexecutionError && err.reason === 'incomplete' && /timeout/.test(err.message))
    // exit code 127 is a run that ended on its own
    const at127 = await reexecuteJob(job(['box.wasm', 'xit', '127'], []), [{ path: 'box.wasm', bytes: box }], { job: 'j', tmpRoot: root })
    assert.equal(at127.toString(), outputsManifestCid([], []).toString())
  })

  it('refuses a module whose declared memory is over the cap (box declares 4 pages = 256 KiB)', async () => {
    const request = job(['box.wasm', 'xit', '0'], [])
    await assert.rejects(reexecuteJob(request, [{ path: 'box.wasm', bytes: box }], { job: 'j', tmpRoot: root, maxMemoryBytes: 4 * 65536 - 1 }), (err: unknown) => err instanceof ReexecutionError && err.reason === 'over-memory')
    const atCap = await reexecuteJob(request, [{ path: 'box.wasm', bytes: box }], { job: 'j', tmpRoot: root, maxMemoryBytes: 4 * 65536 })
    assert.equal(atCap.toString(), outputsManifestCid([], []).toString())
  })
})
