import assert from 'node:assert/strict'
import { mkdtemp, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import wabt from 'wabt'
import { cidOfRaw, cidOfValue } from '../../../../crypto/index.js'
import { BlobStore } from '../../../../node/blobs/store.js'
import { WasmExecutor } from '../../../../node/executors/wasm.js'
import { storeResult } from '../../../../node/market/provider-io.js'
import { ReexecuteError, reexecuteJob } from '../../../../node/market/requester-reexecute.js'
import { jobIdOf, type JobRequest } from '../../../../protocol/index.js'
import { jobPayload } from '../../../helpers/requester-agent-driver.js'

const FIXTURES = fileURLToPath(new URL('../../../../../test/fixtures/wasm/', import.meta.url))

async function assemble (text: string): Promise<Uint8Array> {
  const toolkit = await wabt()
  const module = toolkit.parseWat('box.wat', text)
  try {
    module.validate()
    return module.toBinary({}).buffer
  } finally {
    module.destroy()
  }
}

describe('reexecuteJob (node/market/requester-reexecute.ts)', function () {
  this.timeout(30_000)
  let root: string
  let blobs: BlobStore
  let box: Uint8Array
  let job: JobRequest

  before(async () => { box = await assemble(await readFile(join(FIXTURES, 'box.wat'), 'utf8')) })
  beforeEach(async () => {
    root = await mkdtemp(join(tmpdir(), 'gpumesh-reexec-test-'))
    blobs = await BlobStore.open(join(root, 'blobs'))
    const stored = await blobs.put(box)
    const base = jobPayload({ verification: { mode: 'replicate', k: 2 } })
    job = { ...base, workload: { executor: 'wasm', argv: ['box.wasm', 'write', 'out.txt', 'hello'], env: {}, inputs: [{ path: 'box.wasm', cid: stored.cid, size: stored.size }], outputs: ['out.txt', 'never.txt'], maxRuntimeSec: 10, network: false } }
  })
  afterEach(async () => { await rm(root, { recursive: true, force: true }) })

  it('runs the wasm job on this node\'s own blobs and gives the outputs manifest CID an honest provider\'s receipt names', async () => {
    const cid = await reexecuteJob(job, blobs, { tmpRoot: root })
    const hello = new TextEncoder().encode('hello')
    // from the content alone: the one produced output, in declared order (never.txt was not written)
    assert.equal(cid.toString(), cidOfValue({ files: [{ path: 'out.txt', size: 5, cid: cidOfRaw(hello) }] }).cid.toString())
    // and as the provider builds it (provider-jobs.ts runs the executor, provider-io.ts stores the result)
    const ran = await new WasmExecutor({ tmpRoot: root }).run({ job: jobIdOf(job).toString(), argv: job.workload.argv, env: {}, inputs: [{ path: 'box.wasm', bytes: box }], outputs: job.workload.outputs, timeoutMs: 10_000, network: false, gpus: [] })
    const provider = await storeResult(blobs, job.workload.outputs, ran.outputs, new Uint8Array(0), 'requester')
    assert.equal(cid.toString(), provider.manifest.toString())
  })

  it('refuses a job that is not wasm, and one whose input this node does not hold', async () => {
    await assert.rejects(reexecuteJob({ ...job, workload: { ...job.workload, executor: 'process' } }, blobs), ReexecuteError)
    const missing = cidOfRaw(new TextEncoder().encode('not stored'))
    await assert.rejects(reexecuteJob({ ...job, workload: { ...job.workload, inputs: [{ path: 'box.wasm', cid: missing, size: 10 }] } }, blobs), /not held by this node/)
  })

  it('a run that did not end on its own (killed at its max runtime) gives no output to compare', async () => {
    await assert.rejects(reexecuteJob({ ...job, workload: { ...job.workload, argv: ['box.wasm', 'loop'], maxRuntimeSec: 1 } }, blobs, { tmpRoot: root }), /ended with exit code 137 \(timeout\)/)
  })
})
