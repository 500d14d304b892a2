/**
 * gpumesh daemons as separate OS processes, started through the CLI exactly as users start them:
 * for end-to-end tests over real TCP on 127.0.0.1. Every process is killed when the test ends.
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { ApiClient } from '../../node/api/client.js'
import { BIN, CLI_TIMEOUT_MS, runCli, type CliResult } from './cli.js'

/** How long DaemonProcess.start waits for a daemon that neither starts nor exits (see there). */
export const START_TIMEOUT_MS = 120_000

/** Settings every local test network needs: loopback only, no community peers, no per-IP limits. */
export const LOCAL_FLAGS = ['--listen', '/ip4/127.0.0.1/tcp/0', '--allow', '/ip4/127.0.0.1', '--allow-colocation', '--no-community-bootstrap', '--log-format', 'json']

export class DaemonProcess {
  readonly stdoutLines: string[] = []
  stderr = ''
  private readonly exited: Promise<number | null>

  private constructor (readonly child: ChildProcess, readonly dataDir: string, readonly prefix: readonly string[] = []) {
    let buffer = ''
    child.stdout?.setEncoding('utf8').on('data', (d: string) => {
      buffer += d
      const lines = buffer.split('\n')
      buffer = lines.pop() ?? ''
      this.stdoutLines.push(...lines)
    })
    child.stderr?.setEncoding('utf8').on('data', (d: string) => { this.stderr += d })
    this.exited = new Promise((resolve) => child.on('exit', (code) => { resolve(code) }))
    running.add(this)
  }

  /**
   * Start `gpumesh <args>` and wait until it prints "press Ctrl+C to stop". `bin`: another entry point than
   * dist/cli/bin.js that runs the same CLI (a test fixture wrapping a part of it). A daemon that exits first fails
   * the start at once, with its stderr; one that neither starts nor exits is killed after `timeoutMs`, which is
   * generous (START_TIMEOUT_MS) because it is no speed target: under load a daemon's start-up takes many seconds.
   * `prefix`: a command to run it (and its `cli`/`json` calls) under, e.g. ['ip', 'netns', 'exec', 'ns1'], which
   * execs node in place, so the child is the daemon; `api()` then cannot reach its loopback API (test/nat).
   */
  static async start (args: string[], dataDir: string, options: { env?: NodeJS.ProcessEnv, timeoutMs?: number, bin?: string, prefix?: readonly string[] } = {}): Promise<DaemonProcess> {
    const prefix = options.prefix ?? []
    const argv = [...prefix, process.execPath, options.bin ?? BIN, ...args, '--data-dir', dataDir]
    const child = spawn(argv[0] as string, argv.slice(1), {
      env: { ...process.env, ...options.env },
      stdio: ['ignore', 'pipe', 'pipe']
    })
    const daemon = new DaemonProcess(child, dataDir, prefix)
    await daemon.started(`gpumesh ${args.join(' ')}`, options.timeoutMs ?? START_TIMEOUT_MS)
    return daemon
  }

  /** Resolves once stdout has the ready line; rejects when the process ends (or errs) before, or after `timeoutMs`. */
  private async started (what: string, timeoutMs: number): Promise<void> {
    const ready = (): boolean => this.stdoutLines.some((l) => l.includes('press Ctrl+C to stop'))
    if (ready()) return
    await new Promise<void>((resolve, reject) => {
      const settle = (error?: Error): void => {
        clearTimeout(timer)
        this.child.stdout?.off('data', onData)
        this.child.off('close', onClose)
        this.child.off('error', settle)
        if (error === undefined) resolve()
        else reject(error)
      }
      // registered after the constructor's listener, so stdoutLines already holds this chunk's lines
      const onData = (): void => { if (ready()) settle() }
      // 'close', not 'exit': by then stderr is read to its end, so the error names the cause
      const onClose = (code: number | null, signal: NodeJS.Signals | null): void => {
        settle(new Error(`${what} exited ${code ?? signal ?? '?'} before it started: ${this.stderr.slice(-2000)}`))
      }
      const timer = setTimeout(() => {
        this.child.kill('SIGKILL')
        settle(new Error(`${what} did not start within ${timeoutMs} ms: ${this.stderr.slice(-2000)}`))
      }, timeoutMs)
      this.child.stdout?.on('data', onData)
      this.child.on('close', onClose)
      this.child.on('error', settle)
    })
  }

  /** The multiaddrs printed on "listening:" lines. */
  addresses (): string[] {
    return this.stdoutLines.filter((l) => l.includes('listening:')).map((l) => l.split('listening:')[1]?.trim() ?? '')
  }

  /** SIGTERM (graceful); resolves with the exit code. */
  async stop (signal: NodeJS.Signals = 'SIGTERM', timeoutMs = 15_000): Promise<number | null> {
    if (this.child.exitCode === null && this.child.signalCode === null) this.child.kill(signal)
    const timer = setTimeout(() => { this.child.kill('SIGKILL') }, timeoutMs)
    const code = await this.exited
    clearTimeout(timer)
    running.delete(this)
    return code
  }

  /** `gpumesh <command>` against this daemon's data dir (exit code and output, never throws); --data-dir goes before a `--`. */
  async cli (command: string[], timeoutMs = CLI_TIMEOUT_MS): Promise<CliResult> {
    const dashes = command.indexOf('--')
    const at = dashes === -1 ? command.length : dashes
    return await runCli([...command.slice(0, at), '--data-dir', this.dataDir, ...command.slice(at)], { timeoutMs, prefix: this.prefix })
  }

  /** True while the process runs. */
  get running (): boolean {
    return this.child.exitCode === null && this.child.signalCode === null
  }

  /**
   * GET `path` from this daemon's local API from inside the test process: for polling until something
   * happens, where a `gpumesh` process per poll (≈2 s of CPU each to load the CLI) would starve the daemons
   * being waited on; read the result the test checks through `json`/`cli`.
   */
  async api<T> (path: string, query: Record<string, string | number | undefined> = {}): Promise<T> {
    return await (await ApiClient.fromDataDir(this.dataDir)).get<T>(path, query)
  }

  /** `gpumesh <command> --json` against this daemon's data dir. */
  async json<T> (command: string[]): Promise<T> {
    const result = await runCli([...command, '--data-dir', this.dataDir, '--json'], { timeoutMs: CLI_TIMEOUT_MS, prefix: this.prefix })
    if (result.code !== 0) throw new Error(`gpumesh ${command.join(' ')} failed (${result.code}): ${result.stderr}`)
    return JSON.parse(result.stdout) as T
  }
}

const running = new Set<DaemonProcess>()

/** Kill every daemon a test left running (call from an `after` hook). */
export async function killAll (): Promise<void> {
  await Promise.all([...running].map(async (d) => await d.stop('SIGKILL')))
}

interface StatusJson { peerId: string, capabilityKeys: Array<{ provided: boolean }>, selling: boolean }

const announced = (status: StatusJson): boolean => status.capabilityKeys.length > 0 && status.capabilityKeys.every((k) => k.provided)

/**
 * Wait until every capability key of the daemon is on the DHT (polling its API), then return what
 * `gpumesh status --json` says, which must agree.
 */
export async function waitUntilAnnounced (daemon: DaemonProcess, timeoutMs = 60_000): Promise<StatusJson> {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const polled = await daemon.api<StatusJson>('/v1/status')
    if (announced(polled)) {
      const status = await daemon.json<StatusJson>(['status'])
      if (announced(status)) return status
    }
    if (Date.now() > deadline) throw new Error(`${polled.peerId} did not announce its keys: ${JSON.stringify(polled.capabilityKeys.filter((k) => !k.provided).length)} pending`)
    await new Promise((resolve) => setTimeout(resolve, 250))
  }
}

/** Call `probe` until it returns a value other than undefined (or throw after `timeoutMs`, with `what`). */
export async function eventually<T> (what: string, probe: () => Promise<T | undefined>, timeoutMs = 30_000, everyMs = 250): Promise<T> {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const value = await probe()
    if (value !== undefined) return value
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`)
    await new Promise((resolve) => setTimeout(resolve, everyMs))
  }
}
