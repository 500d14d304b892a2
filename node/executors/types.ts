/**
 * One interface for every way a job runs (DESIGN §6): `process` (argv, no shell, in a bubblewrap
 * sandbox unless the owner opts out), `wasm` (node:wasi, deterministic), `docker`. A shared compliance suite
 * (test/unit/node/executors/compliance.ts) runs against each implementation.
 */
export interface ExecutionRequest {
  /** Job id (CID string), for logs and work-dir names. */
  job: string
  /** argv, never through a shell. For wasm, argv[0] is the module's path inside the work dir. */
  argv: string[]
  /** Container image (docker only). */
  image?: string
  /** Environment the job asked for; only allow-listed names pass (see ExecutorOptions.envAllowlist). */
  env: Record<string, string>
  /** Input files to place in the fresh work dir before the run: relative path → bytes. */
  inputs: Array<{ path: string, bytes: Uint8Array }>
  /** Relative paths to collect after the run. */
  outputs: string[]
  /** Wall-clock limit. */
  timeoutMs: number
  /** Let the job reach the network (off unless the job asked for it and the provider allows it). */
  network: boolean
  /** GPUs allocated to this job, by UUID: exposed as CUDA_VISIBLE_DEVICES / NVIDIA_VISIBLE_DEVICES. */
  gpus: string[]
  /** Resource limits (best effort per executor; documented there). */
  limits?: { cpuSeconds?: number, memoryBytes?: number }
}

export type ExecutionEvent =
  | { type: 'log', stream: 'stdout' | 'stderr', data: Uint8Array }

export interface ExecutionResult {
  /** Exit code; 128 + n when killed by signal n; -1 when the job could not be started. */
  exitCode: number
  /** Why it ended, when not by itself: 'timeout' | 'cancelled' | 'start-failed'. */
  reason?: 'timeout' | 'cancelled' | 'start-failed'
  detail?: string
  startedAt: number
  endedAt: number
  /** Collected outputs that exist, relative path → bytes (missing ones are left out). */
  outputs: Array<{ path: string, bytes: Uint8Array }>
}

export interface Executor {
  readonly kind: 'process' | 'wasm' | 'docker'
  /** Run one job in a fresh work dir; logs stream through `onEvent`; `signal` cancels. Never throws for job failures. */
  run (request: ExecutionRequest, options?: { signal?: AbortSignal, onEvent?: (event: ExecutionEvent) => void }): Promise<ExecutionResult>
}
