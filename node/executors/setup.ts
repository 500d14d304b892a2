/**
 * The executors a provider offers (DESIGN §6), decided once at start: one per kind in
 * `provider.workloads`, except that a `process` executor whose required sandbox cannot run is left out,
 * so buyers' process jobs are refused (fail closed) and the ad stops offering them. `sandbox: none` is
 * the owner's explicit opt-out; the start-up log, `status` and the capability ad all say so.
 */
import type { CapabilityAd, ProcessSandbox } from '../../protocol/index.js'
import type { Config } from '../config/schema.js'
import type { Logger } from '../logger.js'
import { DockerExecutor } from './docker.js'
import { ProcessExecutor, type SandboxReport } from './process.js'
import { ProcessGroupRegistry } from './orphans.js'
import type { Executor } from './types.js'
import { WasmExecutor } from './wasm.js'

export type ExecutorKind = CapabilityAd['workloads'][number]

export interface ExecutorSetup {
  /** The executors jobs may use, by kind. */
  executors: Partial<Record<ExecutorKind, Executor>>
  /** The workloads offered in the ad: provider.workloads less the ones refused. */
  workloads: ExecutorKind[]
  /** How process jobs are isolated, for the ad (only when process is offered). */
  processSandbox?: ProcessSandbox
  /** What happens to each configured kind, one line each, for `status`. */
  notes: Partial<Record<ExecutorKind, string>>
  /** The process executor's sandbox, when process is configured. */
  process?: SandboxReport
}

export interface SetupOptions {
  /** Where fresh work dirs are made (the data dir's work/). */
  workRoot: string
  /**
   * Where running process jobs are recorded (the data dir's run/process-jobs/): the jobs a killed
   * daemon left running there are ended here, before any job runs (orphans.ts).
   */
  runDir?: string
  /** PATH searched for bwrap and prlimit (default: this process's PATH). */
  searchPath?: string
}

/** The executors for `config`, with the process sandbox probed; logs a refusal or an opt-out as a warning. */
export async function setupExecutors (config: Config, options: SetupOptions, log?: Logger): Promise<ExecutorSetup> {
  const setup: ExecutorSetup = { executors: {}, workloads: [], notes: {} }
  for (const kind of new Set(config.provider.workloads)) {
    if (kind === 'process') {
      const executor = new ProcessExecutor({
        workRoot: options.workRoot,
        sandbox: config.executors.process.sandbox,
        ...(options.searchPath !== undefined ? { searchPath: options.searchPath } : {}),
        ...(options.runDir !== undefined ? { registry: new ProcessGroupRegistry(options.runDir) } : {})
      })
      const swept = await executor.sweepOrphans()
      if (swept !== undefined && swept.killed.length > 0) {
        log?.warn('ended job processes a previous run left behind (the daemon was killed without stopping them)', { groups: swept.killed.length, pids: swept.killed })
      }
      const report = await executor.sandboxReport()
      setup.process = report
      setup.notes.process = report.detail
      if (!report.ready) {
        log?.warn('refusing buyers\' process jobs: the required sandbox cannot run', { reason: report.detail })
        continue
      }
      if (report.mode === 'none') log?.warn('process jobs run WITHOUT a sandbox (executors.process.sandbox = "none")', { detail: report.detail })
      else log?.info('process jobs sandboxed', { detail: report.detail })
      setup.executors.process = executor
      setup.processSandbox = report.mode
    } else if (kind === 'wasm') {
      setup.executors.wasm = new WasmExecutor({ tmpRoot: options.workRoot })
      setup.notes.wasm = 'node:wasi'
    } else {
      setup.executors.docker = new DockerExecutor({ tmpRoot: options.workRoot })
      setup.notes.docker = 'docker'
    }
    setup.workloads.push(kind)
  }
  return setup
}
