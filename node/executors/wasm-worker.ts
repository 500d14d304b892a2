/**
 * Worker thread body for the wasm executor: node:wasi runs a module synchronously, so it runs here,
 * where the parent can stop it with `worker.terminate()`. The parent owns the stdio file descriptors
 * (so they are closed even when this thread is terminated); this thread only compiles, instantiates
 * and starts the module, then posts one {@link WasmWorkerReply}.
 */
import { readFile } from 'node:fs/promises'
import { WASI } from 'node:wasi'
import { parentPort, workerData } from 'node:worker_threads'
import { deterministicImports } from './wasm-determinism.js'

/** What the parent sends through `workerData`. */
export interface WasmWorkerData {
  /** Host path of the module. */
  modulePath: string
  /** The job id: seeds the module's random stream (wasm-determinism.ts). */
  job: string
  args: string[]
  env: Record<string, string>
  /** Host path mapped to the guest's `/work` preopen. */
  workdir: string
  stdin: number
  stdout: number
  stderr: number
}

/** The slice of the WebAssembly global used here (the project's libs carry no WebAssembly types). */
interface WasmApi {
  compile: (bytes: Uint8Array) => Promise<object>
  instantiate: (module: object, imports: object) => Promise<{ exports: Record<string, unknown> }>
  Memory: abstract new (...args: never[]) => object
}
const wasm = (globalThis as unknown as { WebAssembly: WasmApi }).WebAssembly

/** What this thread posts back once. */
export type WasmWorkerReply =
  | { type: 'exit', code: number }
  | { type: 'trap', message: string }
  | { type: 'start-failed', message: string }

/** Compile, instantiate and run the module; a reply for every outcome short of termination. */
async function runModule (data: WasmWorkerData): Promise<WasmWorkerReply> {
  let instance: { exports: Record<string, unknown> }
  let wasi: WASI
  try {
    // node:wasi is experimental on Node 20 and warns once per thread; the job's own logs are what matter.
    process.removeAllListeners('warning')
    wasi = new WASI({
      version: 'preview1',
      args: data.args,
      env: data.env,
      preopens: { '/work': data.workdir },
      returnOnExit: true,
      stdin: data.stdin,
      stdout: data.stdout,
      stderr: data.stderr
    })
    const module = await wasm.compile(await readFile(data.modulePath))
    let memory: { buffer: ArrayBuffer } | undefined
    const imports = wasi.getImportObject() as Parameters<typeof deterministicImports>[0]
    instance = await wasm.instantiate(module, deterministicImports(imports, data.job, () => memory))
    if (typeof instance.exports._start !== 'function') return { type: 'start-failed', message: 'module exports no _start function' }
    if (!(instance.exports.memory instanceof wasm.Memory)) return { type: 'start-failed', message: 'module exports no memory' }
    memory = instance.exports.memory as unknown as { buffer: ArrayBuffer }
  } catch (err) {
    return { type: 'start-failed', message: (err as Error).message }
  }
  try {
    return { type: 'exit', code: wasi.start(instance) }
  } catch (err) {
    return { type: 'trap', message: (err as Error).message }
  }
}

if (parentPort !== null) {
  const port = parentPort
  void runModule(workerData as WasmWorkerData).then((reply) => { port.postMessage(reply) })
}
